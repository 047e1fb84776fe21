"""`rasplab trace-supervise`, `trace-figure` and `check-optimum` through the real entry point."""

from __future__ import annotations

import json

import pytest

from rasplab.cli import main

SMALL = ["--set", "steps=20", "--set", "train_samples=50", "--set", "test_samples=40"]


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_trace_supervise_json_files_and_figure(capsys, tmp_path):
    out = tmp_path / "rel"
    code, stdout, _ = cli(
        capsys, "trace-supervise", "parity_sequential_relative", *SMALL, "--out", str(out), "--json"
    )
    assert code == 0
    record = json.loads(stdout)
    assert set(record) == {
        "length_le_20",
        "length_gt_20",
        "ones_gt_20",
        "mlp_train_loss",
        "seconds",
    }
    assert all(0.0 <= record[k] <= 1.0 for k in ("length_le_20", "length_gt_20", "ones_gt_20"))
    saved = json.loads((out / "result.json").read_text())
    assert saved["record"] == record and len(saved["correct"]) == 40
    assert saved["config"]["steps"] == 20
    assert (out / "trace_supervision.png").read_bytes()[:4] == b"\x89PNG"
    code, _, _ = cli(capsys, "trace-figure", str(out), "--out", str(tmp_path / "f.png"))
    assert code == 0 and (tmp_path / "f.png").stat().st_size > 1000


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope"], "unknown program 'nope'"),
        (["parity_sequential_relative", "--set", "steps=0"], "trace.steps must be > 0"),
        (["parity_sequential_relative", "--set", "depth=3"], "unknown trace config key 'depth'"),
        (["parity_sequential_relative", "--set", "test_lengths=0-5"], "must reach past"),
        (["parity_sequential_relative", "--config", "/no/such.yaml"], "cannot read trace config"),
    ],
)
def test_trace_supervise_bad_input_is_one_line_exit_2(capsys, tmp_path, args, message):
    code, stdout, err = cli(capsys, "trace-supervise", *args, "--out", str(tmp_path / "o"))
    assert code == 2 and stdout == ""
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_check_optimum_json(capsys):
    code, stdout, _ = cli(
        capsys, "check-optimum", "parity_sequential_relative", "--train-lengths", "0-4", "--json"
    )
    record = json.loads(stdout)
    assert code == 0 and record["minimal"] and record["strict_optimum"]
    assert record["agrees_with_theorems"] and record["parameters"] == 57
    code, _, err = cli(capsys, "check-optimum", "parity_sum_mod_2", "--train-lengths", "0-4")
    assert code == 2 and "all categorical" in err
