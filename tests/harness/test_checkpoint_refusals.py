"""A training checkpoint that is foreign, hand-edited or from another optimizer is one line
telling the user to delete it (or pass --fresh); a failed save leaves no temporary file."""

from __future__ import annotations

import errno

import pytest
import torch
from safetensors.torch import save_file

from rasplab.errors import RasplabError
from rasplab.harness import checkpoint
from rasplab.harness.checkpoint import load_checkpoint, save_checkpoint

STATE = {
    "step": 3,
    "curves": [],
    "metrics": None,
    "done": False,
    "stopped_early": False,
    "wall_time": 0.5,
}


def _model_and_optimizer():
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(1, 2)).sum().backward()
    optimizer.step()
    return model, optimizer


def test_a_checkpoint_round_trips_model_optimizer_and_state(tmp_path):
    model, optimizer = _model_and_optimizer()
    save_checkpoint(tmp_path / "c.safetensors", model, optimizer, STATE)
    again = torch.nn.Linear(2, 2)
    again_opt = torch.optim.Adam(again.parameters(), lr=0.1)
    assert load_checkpoint(tmp_path / "c.safetensors", again, again_opt) == STATE
    assert torch.equal(again.weight, model.weight)
    assert again_opt.state_dict()["state"][0]["step"] == optimizer.state_dict()["state"][0]["step"]


def _foreign(path, metadata):
    save_file(
        {"model/weight": torch.zeros(2, 2), "model/bias": torch.zeros(2)}, str(path), metadata
    )


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"format": "other"}, "is not a rasplab checkpoint; delete it (or pass --fresh)"),
        ({"format": checkpoint.FORMAT, "state": "{oops"}, "has corrupt metadata; delete it"),
        ({"format": checkpoint.FORMAT, "state": "[1]"}, "its trainer state is not an object"),
        (
            {
                "format": checkpoint.FORMAT,
                "state": '{"step": -1, "curves": [], "metrics": null,'
                ' "done": false, "stopped_early": false, "wall_time": 0}',
            },
            "inconsistent trainer state; delete it",
        ),
    ],
)
def test_a_foreign_or_edited_checkpoint_is_one_line(tmp_path, metadata, message):
    path = tmp_path / "c.safetensors"
    _foreign(path, metadata)
    with pytest.raises(RasplabError) as caught:
        load_checkpoint(path, torch.nn.Linear(2, 2))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_resuming_needs_a_fitting_optimizer_state(tmp_path):
    path = tmp_path / "c.safetensors"
    model = torch.nn.Linear(2, 2)
    save_checkpoint(path, model, None, STATE)
    optimizer = torch.optim.Adam(model.parameters())
    with pytest.raises(RasplabError, match="holds no optimizer state; cannot resume$"):
        load_checkpoint(path, model, optimizer)
    model, optimizer = _model_and_optimizer()
    save_checkpoint(path, model, optimizer, STATE)
    two_groups = torch.optim.Adam([{"params": [model.weight]}, {"params": [model.bias]}])
    with pytest.raises(RasplabError, match="optimizer state does not fit"):
        load_checkpoint(path, model, two_groups)


def test_a_failed_save_removes_its_temporary_file(tmp_path, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoint, "save_file", full_disk)
    with pytest.raises(OSError, match="No space left"):
        save_checkpoint(tmp_path / "run" / "c.safetensors", torch.nn.Linear(2, 2), state=STATE)
    assert list((tmp_path / "run").iterdir()) == []
