"""Issue #39 on saved C-RASP models and ``crasp verify``: a digest binds model.json to its
weights (an edited field or another model's JSON is refused, not run); the folder is swapped in
whole and a folder holding other files is refused; ``--model`` refuses a file and a
``--max-length`` it cannot honour; a length beyond the precision gets compile's message; the
first divergence reported is a shortest one."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from rasplab.cli import main
from rasplab.crasp.library import program
from rasplab.crasp_compiler.compile import compile_program
from rasplab.crasp_compiler.export import load_compiled, save_compiled
from rasplab.crasp_compiler.verify import verify
from rasplab.errors import RasplabError


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("crasp_models")
    save_compiled(compile_program(program("tomita1"), 64), root / "m64")
    save_compiled(compile_program(program("tomita1"), 3000), root / "m3000")
    return root


@pytest.mark.parametrize(
    "field, value", [("max_length", 3000), ("dtype", "float64"), ("symbols", ["x", "y"])]
)
def test_an_edited_field_is_refused(saved, tmp_path, field, value):
    d = tmp_path / "m"
    shutil.copytree(saved / "m64", d)
    spec = json.loads((d / "model.json").read_text())
    spec[field] = value
    (d / "model.json").write_text(json.dumps(spec))
    with pytest.raises(RasplabError, match="do not belong together"):
        load_compiled(d)


def test_weights_with_another_models_json_are_refused_as_inconsistent(saved, tmp_path, capsys):
    d = tmp_path / "mixed"
    shutil.copytree(saved / "m64", d)
    shutil.copy(saved / "m3000" / "model.json", d / "model.json")
    code, out, err = cli(capsys, "crasp", "verify", "tomita1", "--model", str(d))
    assert code == 2 and out == "" and "do not belong together" in err and err.count("\n") == 1


def test_a_model_without_a_digest_is_refused(saved, tmp_path):
    d = tmp_path / "old"
    shutil.copytree(saved / "m64", d)
    spec = json.loads((d / "model.json").read_text())
    del spec["digest"]
    (d / "model.json").write_text(json.dumps(spec))
    with pytest.raises(RasplabError, match="has no digest"):
        load_compiled(d)


def test_save_refuses_a_folder_with_other_files_and_swaps_whole(saved, tmp_path, capsys):
    d = tmp_path / "busy"
    d.mkdir()
    (d / "notes.txt").write_text("mine")
    code, out, err = cli(capsys, "crasp", "compile", "tomita1", "--out", str(d))
    assert code == 2 and "holds other files (notes.txt" in err
    assert sorted(p.name for p in d.iterdir()) == ["notes.txt"]
    again = tmp_path / "again"
    shutil.copytree(saved / "m64", again)
    real, seen = shutil.rmtree, []

    def rmtree(path, *args, **kwargs):  # whenever anything is deleted, a whole model is there
        real(path, *args, **kwargs)
        seen.append(sorted(p.name for p in again.iterdir()) == ["model.json", "model.safetensors"])

    shutil.rmtree = rmtree
    try:
        save_compiled(compile_program(program("tomita1"), 32), again)
    finally:
        shutil.rmtree = real
    assert all(seen) and load_compiled(again).spec["max_length"] == 32
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again", "busy"]


def test_model_option_refusals(saved, capsys):
    code, _, err = cli(
        capsys, "crasp", "verify", "tomita1", "--model", str(saved / "m64"), "--max-length", "512"
    )
    assert code == 2 and "--max-length 512 does not apply to --model" in err
    assert "exact up to 64 symbols" in err
    code, _, err = cli(
        capsys, "crasp", "verify", "tomita1", "--model", str(saved / "m64"), "--lengths", "0-100"
    )
    assert code == 2 and "compile it again with a larger --max-length" in err
    code, _, err = cli(
        capsys, "crasp", "verify", "tomita1", "--model", str(saved / "m64" / "model.json")
    )
    assert code == 2 and "is a file, not a folder" in err


def test_verify_and_compile_give_the_same_precision_message(capsys):
    messages = []
    for command in ("verify", "compile"):
        code, _, err = cli(capsys, "crasp", command, "tomita1", "--max-length", "100000000")
        assert code == 2
        messages.append(err)
    assert messages[0] == messages[1] and "beyond what float64 can certify" in messages[0]


def test_the_first_divergence_is_a_shortest_one():
    p = program("majority_ab")
    m = compile_program(p, max_length=64)
    w = m.l0_mlp_W_1
    values = w.values().clone()
    values[0] = -values[0]  # flip the sign of one weight: many strings disagree
    m.l0_mlp_W_1 = torch.sparse_coo_tensor(w.indices(), values, w.shape).coalesce()
    report = verify(p, exhaustive_up_to=0, lengths="3-30", samples=200, model=m)
    assert report.agree < report.total - 1
    assert len(report.first_divergence["input"].split()) == 3  # the shortest length drawn
