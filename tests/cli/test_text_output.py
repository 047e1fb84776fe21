"""The plain-text (non ``--json``) output of the small commands, ``python -m rasplab.cli`` and
``rasplab version``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

import rasplab
from rasplab.cli import main
from rasplab.cli.verify import _dtype
from rasplab.errors import RasplabError


def cli(capsys, *args):
    """Run the CLI in this process; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_python_dash_m_runs_the_same_cli():
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "rasplab.cli", "version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, rasplab.__version__ + "\n")


def test_version_prints_the_package_version(capsys):
    assert cli(capsys, "version") == (0, rasplab.__version__ + "\n", "")


def test_check_optimum_text_has_one_line_per_json_field(capsys):
    args = ("check-optimum", "parity_sequential_relative", "--train-lengths", "0-3")
    code, text, _ = cli(capsys, *args)
    _, as_json, _ = cli(capsys, *args, "--json")
    record = json.loads(as_json)
    assert code == 0
    keys = ["minimal", "strict_optimum", "agrees_with_theorems", "removable_rules"]
    keys.append("removable_constraints")
    lines = text.splitlines()
    assert lines[: len(keys)] == [f"{k:22} {record[k]}" for k in keys]
    assert len(lines) == len(keys) + len(record["descent_directions"]) + len(
        record["constraint_directions"]
    )


def test_minimal_text_reports_rules_and_test_accuracy(capsys):
    args = ("minimal", "parity_sum_mod_2", "--train-lengths", "1-3", "--test-lengths", "4-5")
    code, text, err = cli(capsys, *args)
    _, as_json, _ = cli(capsys, *args, "--json")
    record = json.loads(as_json)
    assert code == 0 and "running on training inputs of lengths 1-3" in err
    lines = text.splitlines()
    assert lines[0] == "program          parity_sum_mod_2"
    full, minimal = record["rules_full"], record["rules_minimal"]
    assert lines[1].startswith(f"rules (full)     {full}  ") and minimal < full
    assert lines[2].startswith(f"rules (minimal)  {minimal}  ") and "(all of them)" in lines[2]
    assert lines[3].startswith(f"test accuracy    {record['test_accuracy']:.4f}  on ")


def test_verify_dtype_names_a_torch_dtype_or_is_refused():
    assert _dtype(None) is None and _dtype("float64") is torch.float64
    with pytest.raises(RasplabError, match="^--dtype 'float16' unknown; choose one of"):
        _dtype("float16")
