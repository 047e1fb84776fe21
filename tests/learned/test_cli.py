"""`rasplab learn` through the real entry point: a tiny run, re-verification, sweeps, errors."""

from __future__ import annotations

import json
import re

import pytest

from rasplab.cli import main

TINY = [
    "cat_heads=0",
    "count_heads=1",
    "mlps=0",
    "epochs=3",
    "train_n=400",
    "val_n=100",
    "test_n=100",
    "verify_length=2",
    "random_checks=30",
]


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("learned") / "hist"
    with pytest.raises(SystemExit) as done:
        main(["learn", "rasp_hist", *TINY, "--out", str(out), "--json", "--quiet"])
    assert done.value.code == 0
    return out


def test_learn_writes_program_weights_config_and_result(run_dir):
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "config.json",
        "model.safetensors",
        "program.py",
        "program_lang.txt",
        "result.json",
    ]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["agreement"] == 1.0
    assert result["lang"]["exported"] and result["lang"]["heads"] in ({}, {"count_0_0": "count"})
    assert 0.0 <= result["test_accuracy"] <= 1.0 and 0.0 <= result["program_accuracy"] <= 1.0
    assert json.loads((run_dir / "config.json").read_text())["epochs"] == 3


def test_learn_json_prints_the_four_numbers(capsys, tmp_path):
    code, out, _ = cli(
        capsys, "learn", "rasp_hist", *TINY, "--out", str(tmp_path / "r"), "--json", "--quiet"
    )
    rec = json.loads(out)
    assert code == 0 and {"test_accuracy", "program_accuracy", "agreement", "seconds"} <= set(rec)


def test_verify_rechecks_a_saved_run_and_catches_an_edited_program(capsys, run_dir, tmp_path):
    code, out, _ = cli(capsys, "learn", "--verify", str(run_dir), "--json")
    assert code == 0 and json.loads(out)["agreement"] == 1.0
    edited = tmp_path / "edited"
    edited.mkdir()
    for p in run_dir.iterdir():
        (edited / p.name).write_bytes(p.read_bytes())
    program = edited / "program.py"
    program.write_text(program.read_text().replace("CAP = ", "CAP = 1 + ", 1))
    code, _, err = cli(capsys, "learn", "--verify", str(edited))
    assert code == 1 and "is not the program of" in err


def test_lang_exports_a_trained_run_and_writes_its_listing(capsys, run_dir, tmp_path):
    listing = tmp_path / "program_lang.txt"
    code, out, _ = cli(capsys, "learn", "--lang", str(run_dir), "--out", str(listing), "--json")
    rec = json.loads(out)
    assert code == 0 and rec["exported"] and rec["compiled_inputs_checked"] > 0
    assert sum(rec["positions_checked"].values()) > 0
    assert listing.read_text() == (run_dir / "program_lang.txt").read_text()


@pytest.mark.parametrize(
    "args,message",
    [
        (["learn", "parity", "--out", "X"], "unknown task 'parity' for learn"),
        (["learn", "rasp_hist", "layer=2", "--out", "X"], "unknown learn key 'layer'"),
        (["learn", "rasp_hist", "layers=0", "--out", "X"], "learn.layers must be an integer >= 1"),
        (["learn", "rasp_hist", "task_options.q=1", "--out", "X"], "does not accept options"),
        (["learn", "rasp_hist"], "give --out DIR"),
        (["learn", "epochs=3", "--out", "X"], "give a task first, e.g. rasplab learn rasp_hist"),
        (["learn", "rasp_hist", "train.lr=1", "--out", "X"], "only task_options.* may be dotted"),
        (["learn", "--sweep", "s.yaml"], "give --out DIR for the sweep's run directories"),
        (["learn", "--verify", "NOPE"], "not a run directory"),
        (["learn", "--lang", "NOPE"], "not a run directory"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    capsys, tmp_path, monkeypatch, args, message
):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_an_occupied_out_folder_is_refused_before_training(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    code, _, err = cli(capsys, "learn", "rasp_hist", "--out", str(tmp_path))
    assert code == 2 and "exists and is not a learned run directory" in err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_corrupt_run_directory_is_exit_2(capsys, run_dir, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    for p in run_dir.iterdir():
        (broken / p.name).write_bytes(p.read_bytes())
    (broken / "model.safetensors").write_bytes(b"not safetensors")
    code, _, err = cli(capsys, "learn", "--verify", str(broken))
    assert code == 2 and "model.safetensors" in err
    (broken / "program.py").unlink()
    code, _, err = cli(capsys, "learn", "--verify", str(broken))
    assert code == 2 and "missing program.py" in err


def test_sweep_runs_every_point_once_and_resumes(capsys, tmp_path):
    sweep = tmp_path / "s.yaml"
    base = ", ".join(a.replace("=", ": ") for a in TINY)
    sweep.write_text(
        f"name: s\nbase: {{task: rasp_hist, {base}}}\ngrid: {{lr: [0.05]}}\nseeds: [0, 1]\n"
    )
    code, out, _ = cli(
        capsys, "learn", "--sweep", str(sweep), "--out", str(tmp_path / "runs"), "--json", "--quiet"
    )
    row = json.loads(out)
    assert code == 0 and row["seeds"] == 2 and row["min_agreement"] == 1.0
    assert row["lang_exported"] == 2
    stamp = (tmp_path / "runs" / "lr=0.05,seed=0" / "result.json").stat().st_mtime_ns
    code, out2, _ = cli(
        capsys, "learn", "--sweep", str(sweep), "--out", str(tmp_path / "runs"), "--json", "--quiet"
    )
    assert code == 0 and out2 == out
    assert (tmp_path / "runs" / "lr=0.05,seed=0" / "result.json").stat().st_mtime_ns == stamp
    plot = tmp_path / "by_length.png"
    code, text, err = cli(
        capsys, "learn", "--sweep", str(sweep), "--out", str(tmp_path / "runs"), "--plot", str(plot)
    )
    assert code == 0 and f"wrote {plot}" in err and plot.read_bytes()[:4] == b"\x89PNG"
    assert text == (
        f"rasp_hist L{row['setting']['layers']} cat0 count1 mlp0: best-by-val "
        f"{row['best_val_test_accuracy']:.4f}, mean {row['mean_test_accuracy']:.4f} ± "
        f"{row['sd_test_accuracy']:.4f} over 2 seeds, program {row['best_program_accuracy']:.4f}"
        ", agreement 1.0000, rasplab.lang export 2/2\n"
    )


def test_verify_and_lang_print_one_line_without_json(capsys, run_dir):
    code, out, _ = cli(capsys, "learn", "--verify", str(run_dir))
    assert code == 0 and re.fullmatch(r"program == model on [1-9]\d* positions\n", out)
    code, out, _ = cli(capsys, "learn", "--lang", str(run_dir))
    assert code == 0 and out.startswith(f"rasplab.lang export of {run_dir}: ")
    assert " rules, " in out and out.count("\n") == 1
