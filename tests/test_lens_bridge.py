"""TransformerLens bridges (:mod:`rasplab.lens_bridge`): a missing or too old TransformerLens,
weights that do not fit the native model, and exports that cannot be written or read are one
line each; a saved export loads back computing the same function."""

from __future__ import annotations

import errno
import json
import sys
from importlib.metadata import PackageNotFoundError

import pytest
import torch

from rasplab import lens_bridge
from rasplab.errors import RasplabError
from rasplab.lens_bridge import boot_bridge, load_bridge, save_bridge
from rasplab.models import ModelConfig, build_model, lens

pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")

IDS = torch.tensor([[1, 2, 3, 4, 0]])


@pytest.fixture(scope="module")
def parts():
    """The native config and tensors of a tiny trained-model export, and the model."""
    model = build_model(ModelConfig(width=16, heads=2, layers=1), 7, 5, 12, seed=0).eval()
    seen = {}

    def record(config, tensors, dtype):
        seen.update(config=config, tensors=tensors, dtype=dtype)
        return boot_bridge(config, tensors, dtype)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lens, "boot_bridge", record)
        bridge = lens.to_transformer_lens(model)
    return seen, bridge, model


def test_a_missing_or_old_transformer_lens_is_one_line(monkeypatch):
    monkeypatch.setattr(lens_bridge, "version", lambda name: "3.2.0")
    with pytest.raises(RasplabError, match="TransformerLens 4.x is needed .TransformerBridge."):
        lens_bridge.transformer_lens()

    def unknown(name):
        raise PackageNotFoundError(name)

    monkeypatch.setattr(lens_bridge, "version", unknown)  # a source checkout: ask the module
    assert hasattr(lens_bridge.transformer_lens(), "TransformerBridge")
    monkeypatch.setitem(sys.modules, "transformer_lens", None)
    with pytest.raises(RasplabError, match="TransformerLens is not installed; install the interp"):
        lens_bridge.transformer_lens()


def test_weights_that_do_not_fit_the_native_model_are_refused(parts):
    seen, _, _ = parts
    config, tensors, dtype = seen["config"], dict(seen["tensors"]), seen["dtype"]
    name = next(iter(tensors))
    with pytest.raises(RasplabError, match=f"^native parameter '{name}' has shape "):
        boot_bridge(config, {**tensors, name: torch.zeros(1)}, dtype)
    del tensors[name]
    with pytest.raises(RasplabError, match=f"^no tensor given for the native parameter '{name}'$"):
        boot_bridge(config, tensors, dtype)


def test_an_export_round_trips_and_bad_targets_are_refused(parts, tmp_path):
    _, bridge, model = parts
    out = save_bridge(bridge, tmp_path / "tl")
    with torch.no_grad():
        assert torch.allclose(load_bridge(out)(IDS), model(IDS), atol=1e-5)
    (tmp_path / "plain").write_text("x")
    with pytest.raises(RasplabError, match="cannot write the export to .*plain': it is a file$"):
        save_bridge(bridge, tmp_path / "plain")
    with pytest.raises(RasplabError, match="cannot write the export to .*plain/sub/tl'"):
        save_bridge(bridge, tmp_path / "plain" / "sub" / "tl")
    foreign = torch.nn.Linear(1, 1)
    with pytest.raises(RasplabError, match="saves a bridge made by boot_bridge or load_bridge"):
        save_bridge(foreign, tmp_path / "other")


def test_a_failed_write_is_one_line_and_keeps_the_old_export(parts, tmp_path, monkeypatch):
    _, bridge, _ = parts
    out = save_bridge(bridge, tmp_path / "tl")
    before = (out / "config.json").read_text()

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(lens_bridge, "save_file", full_disk)
    with pytest.raises(
        RasplabError, match="cannot write the export to .*: No space left on device"
    ):
        save_bridge(bridge, out)
    assert (out / "config.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tl"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c.pop("n_layers"), "config.json' is not a TransformerLens config$"),
        (lambda c: c.update(dtype="float128"), "config.json' names no torch dtype$"),
        (lambda c: c.update(d_mlp=c["d_mlp"] + 1), "does not match its config: "),
    ],
)
def test_an_export_with_an_edited_config_is_refused(parts, tmp_path, edit, message):
    _, bridge, _ = parts
    out = save_bridge(bridge, tmp_path / "tl")
    config = json.loads((out / "config.json").read_text())
    edit(config)
    (out / "config.json").write_text(json.dumps(config))
    with pytest.raises(RasplabError, match=message):
        load_bridge(out)


def test_a_folder_without_an_export_is_one_line(tmp_path):
    with pytest.raises(RasplabError, match="holds no TransformerLens export: "):
        load_bridge(tmp_path)
