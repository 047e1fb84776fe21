"""A saved compiled model whose files agree with their digest but not with each other (written
by hand or by another tool) is refused with one line naming the part, never loaded half-way."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from rasplab.compiler import compile_program
from rasplab.compiler.export import load_compiled, save_compiled
from rasplab.compiler.modelspec import spec_digest
from rasplab.errors import RasplabError
from rasplab.programs import get_program


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A model saved once; each test edits a copy."""
    model = compile_program(get_program("parity_sequential_relative").program())
    return save_compiled(model, tmp_path_factory.mktemp("saved") / "m")


def _rewrite(saved, tmp_path, edit_tensors=None, edit_spec=None):
    """A copy of ``saved`` with its tensors and spec edited and the digest made to match."""
    d = tmp_path / "edited"
    shutil.copytree(saved, d)
    tensors = load_file(str(d / "model.safetensors"))
    spec = json.loads((d / "model.json").read_text())
    if edit_tensors:
        edit_tensors(tensors)
    if edit_spec:
        edit_spec(spec)
    save_file(tensors, str(d / "model.safetensors"))
    spec["digest"] = spec_digest(spec, d / "model.safetensors")
    (d / "model.json").write_text(json.dumps(spec))
    return d


def _set(name, value):
    return lambda tensors: tensors.__setitem__(name, value)


def _far_index(tensors):
    tensors["mlp1_indices"] = torch.full((2, 1), 10**6)
    tensors["mlp1_values"] = torch.ones(1)


def _nan(tensors):
    tensors["tok_emb"] = tensors["tok_emb"].clone()
    tensors["tok_emb"][0, 0] = float("nan")


@pytest.mark.parametrize(
    ("edit_tensors", "message"),
    [
        (lambda t: t.pop("sink"), "weights file lacks sink"),
        (_set("tok_emb", torch.zeros(1, 1)), "tok_emb has shape [1, 1], expected ["),
        (_set("W_Q", torch.zeros(1, 1, 1)), "W_Q has shape [1, 1, 1], expected ["),
        (_set("pos_emb", torch.zeros(4, 1)), "pos_emb width does not match the layout"),
        (
            _set("mlp1_indices", torch.zeros(2, 0, dtype=torch.int32)),
            "malformed sparse matrix mlp1",
        ),
        (_far_index, "mlp1 indices fall outside its shape"),
        (_nan, "tok_emb holds non-finite values"),
    ],
)
def test_tensors_that_do_not_fit_the_spec_are_refused(saved, tmp_path, edit_tensors, message):
    d = _rewrite(saved, tmp_path, edit_tensors=edit_tensors)
    with pytest.raises(RasplabError) as caught:
        load_compiled(d)
    assert f"{d}: {message}" in str(caught.value) and "\n" not in str(caught.value)


def test_a_foreign_format_or_a_spec_that_is_no_object_is_refused(saved, tmp_path):
    d = _rewrite(saved, tmp_path, edit_spec=lambda s: s.update(format="other"))
    with pytest.raises(RasplabError, match="is not a rasplab compiled model \\(unknown format\\)"):
        load_compiled(d)
    (d / "model.json").write_text("[1, 2]")
    with pytest.raises(RasplabError, match="model.json is not a JSON object$"):
        load_compiled(d)


def test_saving_below_a_file_is_refused_and_creates_nothing(saved, tmp_path):
    (tmp_path / "plain").write_text("x")
    model = load_compiled(saved)
    with pytest.raises(RasplabError, match="cannot create model directory .*plain/sub/m"):
        save_compiled(model, tmp_path / "plain" / "sub" / "m")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]
