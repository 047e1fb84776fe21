"""A saved C-RASP model whose ``model.json`` was edited by hand and re-digested (so the digest
check passes) but contradicts itself or its weights is refused on load with one line naming
the field, at the CLI with exit 2, instead of running wrongly (a head dropped from
``head_offsets``) or failing deep in a run (a ``decode`` entry added)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from rasplab.cli import main
from rasplab.compiler.modelspec import spec_digest
from rasplab.crasp.library import program
from rasplab.crasp_compiler.compile import compile_program
from rasplab.crasp_compiler.export import load_compiled, save_compiled
from rasplab.errors import RasplabError


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """tomita4 at length 16: five layers, the first with three heads (offsets None, 1, 2)."""
    model = compile_program(program("tomita4"), 16)
    return save_compiled(model, tmp_path_factory.mktemp("crasp") / "m")


def _edited(saved, tmp_path, edit_spec=None, edit_tensors=None):
    """A copy of ``saved`` edited, with the digest recomputed so that it matches."""
    d = tmp_path / "edited"
    shutil.copytree(saved, d)
    spec = json.loads((d / "model.json").read_text())
    if edit_tensors:
        flat = load_file(str(d / "model.safetensors"))
        edit_tensors(flat)
        save_file(flat, str(d / "model.safetensors"))
    if edit_spec:
        edit_spec(spec)
    spec["digest"] = spec_digest(spec, d / "model.safetensors")
    (d / "model.json").write_text(json.dumps(spec))
    return d


def _drop_head(spec):
    spec["head_offsets"][0].pop()
    spec["heads"] -= 1


def _drop_layer(spec):
    spec["head_offsets"].pop()
    spec["layers"] -= 1


def _wider(spec):
    spec["width"] += 1
    spec["coords"].append("extra")


SPEC_EDITS = [
    (_drop_head, "the weights hold l0_h2_W_K, l0_h2_W_O, l0_h2_W_Q, l0_h2_W_V, which model."),
    (_drop_layer, "the weights hold l4_mlp_W_1, l4_mlp_W_2, l4_mlp_b_1, which model.json's"),
    (lambda s: s["head_offsets"][0].pop(), "model.json heads is 4, but head_offsets lists 3"),
    (lambda s: s.update(layers=9), "model.json layers is 9, but head_offsets lists 5"),
    (
        lambda s: s["decode"].update(ghost=True),
        "decode_matrix has shape [11, 16], expected [12, 16]",
    ),
    (lambda s: s["decode"].popitem(), "decode_matrix has shape [11, 16], expected [10, 16]"),
    (lambda s: s["symbols"].pop(), "tok_emb has shape ["),
    (lambda s: s.update(width=s["width"] + 1), "coords names "),
    (_wider, "tok_emb has shape ["),
    (lambda s: s.update(dtype="float64"), "tok_emb is float32, but model.json dtype is float64"),
    (lambda s: s.update(dtype="float16"), "field 'dtype' must be float32 or float64"),
    (lambda s: s.update(max_length=-3), "field 'max_length' must be a positive integer; got -3"),
    (lambda s: s["head_offsets"][0].__setitem__(1, "x"), "field 'head_offsets' must be a list"),
    (lambda s: s.update(decode=["a"]), "field 'decode' must be an object of operation names"),
]


@pytest.mark.parametrize(("edit", "message"), SPEC_EDITS)
def test_a_spec_that_contradicts_itself_or_the_weights_is_refused(saved, tmp_path, edit, message):
    d = _edited(saved, tmp_path, edit_spec=edit)
    with pytest.raises(RasplabError) as caught:
        load_compiled(d)
    text = str(caught.value)
    assert text.startswith(f"{str(d)!r}: ") and message in text and "\n" not in text


def _w_o_out_of_range(flat):
    flat["l0_h0_W_O"] = torch.full_like(flat["l0_h0_W_O"], 10**6)


def _bad_pos_coords(flat):
    flat["pos_coords"] = torch.tensor([[0, 0, 0]])  # modulus 0


def _missing(flat):
    del flat["l1_mlp_b_1"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_w_o_out_of_range, "l0_h0_W_O must hold int64 coordinates in 0.."),
        (_bad_pos_coords, "pos_coords must hold int64 rows"),
        (_missing, "the weights lack l1_mlp_b_1$"),
    ],
)
def test_weights_out_of_range_or_missing_are_refused(saved, tmp_path, edit, message):
    d = _edited(saved, tmp_path, edit_tensors=edit)
    with pytest.raises(RasplabError, match=message):
        load_compiled(d)


def test_the_cli_reports_a_dropped_head_in_one_line_with_exit_2(saved, tmp_path, capsys):
    d = _edited(saved, tmp_path, edit_spec=_drop_head)
    with pytest.raises(SystemExit) as done:
        main(["crasp", "verify", "tomita4", "--model", str(d)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1 and "l0_h2_W_K" in err


@pytest.mark.parametrize(
    ("name", "dtype"), [("tomita4", "float32"), ("abab_star", "float64"), ("aa_star", "float32")]
)
def test_unedited_models_load_and_decode_as_compiled(name, dtype, tmp_path):
    """Positional coordinates (abab_star), no layers at all (aa_star), several heads."""
    model = compile_program(program(name), 16, dtype=dtype)
    loaded = load_compiled(save_compiled(model, tmp_path / "m"))
    ids = torch.tensor([[0, 1, 2, 1, 2, 1]])
    a, b = model.decode(model(ids)), loaded.decode(loaded(ids))
    assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)
