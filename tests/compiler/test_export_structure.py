"""A saved compiled model whose ``model.json`` was edited by hand and re-digested (so the digest
check passes) but contradicts itself or its weights is refused on load with one line naming
the field, at the CLI with exit 2; an unedited model of every shape in the tests still loads."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from rasplab.cli import main
from rasplab.compiler import compile_program
from rasplab.compiler.export import load_compiled, save_compiled
from rasplab.compiler.modelspec import spec_digest
from rasplab.compiler.structure import check_heads
from rasplab.errors import RasplabError
from rasplab.programs import get_program

ENTRY = "parity_sequential_relative"  # two program heads sharing one compiled head


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    model = compile_program(get_program(ENTRY).program())
    return save_compiled(model, tmp_path_factory.mktemp("saved") / "m", entry=ENTRY)


def _edited(saved, tmp_path, edit_spec=None, edit_tensors=None):
    """A copy of ``saved`` edited, with the digest recomputed so that it matches."""
    d = tmp_path / "edited"
    shutil.copytree(saved, d)
    spec = json.loads((d / "model.json").read_text())
    if edit_tensors:
        tensors = load_file(str(d / "model.safetensors"))
        edit_tensors(tensors)
        save_file(tensors, str(d / "model.safetensors"))
    if edit_spec:
        edit_spec(spec)
    spec["digest"] = spec_digest(spec, d / "model.safetensors")
    (d / "model.json").write_text(json.dumps(spec))
    return d


def _unknown_in_group(spec):
    spec["head_groups"][0].append("ghost")


def _drop_head(spec):
    del spec["heads"]["done_left"]


def _enlarge_mlp(spec):
    rows, cols = spec["mlp_shapes"][1]
    spec["mlp_shapes"][1] = [rows + 5, cols]


def _twice(spec):
    spec["head_groups"][0].append(spec["head_groups"][0][0])


def _ungrouped(spec):
    spec["head_groups"][0].remove("done_left")


def _foreign_key(spec):
    spec["heads"]["done_left"]["key"] = "nowhere"


def _extra_head(spec):
    spec["heads"]["parity"] = dict(spec["heads"]["done_left"])


def _widths(spec):
    spec["mlp_widths"][0] += 1


def _rules(spec):
    spec["rules"] += 1


def _ghost_output(spec):
    """The output renamed to a variable with no dims: the old checks saw only ``variables``."""
    spec["variables"]["ghost"] = "categorical"
    spec["output"] = "ghost"


def _drop_variable(spec):
    del spec["variables"]["relative_qk"]


def _kind(spec):
    spec["variables"]["done"] = "numerical"


def _reorder(spec):
    spec["variables"] = dict(reversed(spec["variables"].items()))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_unknown_in_group, "model.json head_groups names 'ghost', which is not in heads"),
        (_drop_head, "model.json heads lacks 'done_left', a head output of the layout"),
        (_enlarge_mlp, "model.json mlp_shapes entry 2 is [16, 13]; the residual width 12 and "),
        (_twice, "model.json head_groups lists 'parity_left' twice"),
        (_ungrouped, "model.json head_groups leaves out head 'done_left'"),
        (_foreign_key, "heads entry 'done_left' has key 'nowhere', which is not a variable"),
        (_extra_head, "model.json heads entry 'parity' is not a head output of the layout"),
        (_widths, "model.json mlp_widths [14, 11, 9] do not match the biases mlp_b1..3"),
        (_rules, "rule_units must be 4 int64 entries (model.json rules)"),
        (_ghost_output, "model.json variables names 'ghost', which is not a layout slot"),
        (_drop_variable, "model.json variables lacks 'relative_qk', a layout slot"),
        (_kind, "variables gives 'done' kind 'numerical'; its layout slot is categorical"),
        (_reorder, "model.json variables are not in the layout's slot order"),
        (lambda s: s.pop("heads"), "is not a rasplab compiled model (missing heads)"),
        (lambda s: s["heads"].update(x=[]), "field 'heads' must be an object of heads"),
    ],
)
def test_a_spec_that_contradicts_itself_is_refused(saved, tmp_path, edit, message):
    d = _edited(saved, tmp_path, edit_spec=edit)
    with pytest.raises(RasplabError) as caught:
        load_compiled(d)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def _rule_writes_out_of_range(tensors):
    tensors["rule_writes"] = torch.full_like(tensors["rule_writes"], 99)


def _narrow_w_o(tensors):
    tensors["W_O"] = tensors["W_O"][:, :-1]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_rule_writes_out_of_range, "rule_writes entries fall outside 0.."),
        (_narrow_w_o, "W_O has shape [1, 5, 12], expected [1, 6, 12]"),
    ],
)
def test_weights_that_contradict_the_spec_are_refused(saved, tmp_path, edit, message):
    d = _edited(saved, tmp_path, edit_tensors=edit)
    with pytest.raises(RasplabError, match=message.replace("[", "\\[")):
        load_compiled(d)


def test_an_empty_head_group_is_refused(saved):
    """On disk the weights' shapes already refuse an added group; the check itself here."""
    spec = json.loads((saved / "model.json").read_text())
    spec["head_groups"].append([])
    with pytest.raises(RasplabError, match="^m: model.json head_groups entry 1 is empty$"):
        check_heads(spec, "m")
    spec["head_groups"].pop()
    check_heads(spec, "m")


@pytest.mark.parametrize(
    ("edit", "field"), [(_unknown_in_group, "head_groups"), (_ghost_output, "variables")]
)
def test_the_cli_reports_an_edited_spec_in_one_line_with_exit_2(
    saved, tmp_path, capsys, edit, field
):
    d = _edited(saved, tmp_path, edit_spec=edit)
    with pytest.raises(SystemExit) as done:
        main(["run", "--model", str(d), "--input", "1 0 1"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1 and "'ghost'" in err
    assert f"model.json {field} " in err


@pytest.mark.parametrize("name", ["addition", "scan", "parity_sum_mod_2", ENTRY])
def test_unedited_models_pass_the_structure_checks(name, tmp_path):
    model = compile_program(get_program(name).program())
    loaded = load_compiled(save_compiled(model, tmp_path / "m", entry=name))
    assert loaded.spec["head_groups"] == model.spec["head_groups"]
