"""The run page's data: attention weights that reproduce the model's attention, predictions."""

from __future__ import annotations

import shutil

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.explore.run_view import attention_maps, run_view
from rasplab.harness.setup import load_run


def test_attention_weights_times_values_give_the_attention_output(run_dir):
    _, setup = load_run(run_dir)
    model = setup.model
    example = setup.task.example("1 1 1 1 1".split())
    batch = setup.encoder.encode([example])
    seen = []

    def keep(module, args, output):
        seen.append((args[3][0], output[0]))  # v [H, T, Dh], out [H, T, Dh]

    handles = [b.attn.kind.register_forward_hook(keep) for b in model.blocks]
    try:
        maps, outputs = attention_maps(model, batch)
    finally:
        for h in handles:
            h.remove()
    assert len(maps) == len(seen) == model.config.layers
    for weights, (v, out) in zip(maps, seen):
        assert torch.allclose(weights @ v, out, atol=1e-5)
        assert torch.allclose(weights.sum(-1), torch.ones(weights.shape[:2]), atol=1e-5)
    assert torch.equal(outputs, model(batch.input_ids, batch.pad_mask))


def test_predictions_and_targets_line_up_with_the_example(run_dir):
    data = run_view(run_dir, "1 1 1")
    assert data["tokens"][1:4] == ["1", "1", "1"]
    assert len(data["predictions"]) == len(data["targets"]) == len(data["tokens"])
    scored = [p for p, y in enumerate(data["targets"]) if y is not None]
    right = sum(data["predictions"][p] == data["targets"][p] for p in scored)
    assert data["summary"]["right"] == right and data["summary"]["scored"] == len(scored)
    assert [b["bin"] for b in data["bins"]] == ["1-50", "51-100", "101-150"]
    assert data["curve"] and all(c["loss"] >= 0 for c in data["curve"])


def test_drawn_example_and_refusals(run_dir, tmp_path):
    data = run_view(run_dir, length=7, seed=2)
    assert len(data["tokens"]) >= 7 and len(data["layers"]) == 2
    with pytest.raises(RasplabError, match="exactly one of --input"):
        run_view(run_dir)
    with pytest.raises(RasplabError, match="holds no finished run"):
        run_view(tmp_path)


def test_an_input_outside_the_task_is_refused(run_dir):
    with pytest.raises(RasplabError, match="^input '1 x 1' is not an input of task 'tomita1': "):
        run_view(run_dir, "1 x 1")


def test_a_run_whose_result_file_is_damaged_still_shows_its_attention(run_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    (copy / "result.json").write_text("{cut off")
    data = run_view(copy, "1 1")
    assert data["bins"] == [] and len(data["layers"]) == 2
