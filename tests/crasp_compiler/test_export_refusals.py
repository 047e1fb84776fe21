"""Saving and loading a compiled C-RASP model: a foreign folder, a sparse matrix that does not
fit its recorded shape (digest made to match) and a failed write are one line each, and a
failed save leaves nothing behind."""

from __future__ import annotations

import errno
import json

import pytest
import safetensors.torch
from safetensors.torch import load_file, save_file

from rasplab.compiler.modelspec import spec_digest
from rasplab.crasp.library import program
from rasplab.crasp_compiler.compile import compile_program
from rasplab.crasp_compiler.export import load_compiled, save_compiled
from rasplab.errors import RasplabError


@pytest.fixture(scope="module")
def model():
    return compile_program(program("tomita1"), 16)


def _saved_with(model, folder, edit):
    """``model`` saved to ``folder``, then its spec and weights edited, the digest rewritten."""
    save_compiled(model, folder)
    spec = json.loads((folder / "model.json").read_text())
    flat = load_file(str(folder / "model.safetensors"))
    edit(spec, flat)
    save_file(flat, str(folder / "model.safetensors"))
    spec["digest"] = spec_digest(spec, folder / "model.safetensors")
    (folder / "model.json").write_text(json.dumps(spec))
    return folder


def test_a_foreign_format_is_refused(model, tmp_path):
    d = _saved_with(model, tmp_path / "m", lambda spec, flat: spec.update(format="other/1"))
    with pytest.raises(RasplabError, match="is not a rasplab compiled C-RASP model$"):
        load_compiled(d)


def test_a_sparse_matrix_beyond_its_recorded_shape_is_inconsistent(model, tmp_path):
    def shrink(spec, flat):
        name = next(iter(spec["sparse_shapes"]))
        spec["sparse_shapes"][name] = [1, 1]

    d = _saved_with(model, tmp_path / "m", shrink)
    with pytest.raises(RasplabError) as caught:
        load_compiled(d)
    message = str(caught.value)
    assert message.startswith(f"model in {str(d)!r} is inconsistent: RuntimeError: ")
    assert "\n" not in message


def test_saving_below_a_file_is_one_line(model, tmp_path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(RasplabError, match="^cannot write to .*plain/sub/m'"):
        save_compiled(model, tmp_path / "plain" / "sub" / "m")


def test_a_failed_write_leaves_nothing_behind(model, tmp_path, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safetensors.torch, "save_file", full_disk)  # files.write_model_dir
    with pytest.raises(
        RasplabError, match="cannot write the model to .*: No space left on device$"
    ):
        save_compiled(model, tmp_path / "m")
    assert list(tmp_path.iterdir()) == []
