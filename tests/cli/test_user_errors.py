"""One line and exit 2 for every user error the reliability pass found (through the real
entry point), and quiet exits when the reader of stdout goes away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from rasplab.cli import main


def run(capsys, *argv):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def one_line(code, out, err, *words):
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1 and err.startswith("rasplab: error:"), err
    assert all(w in err for w in words), err


SEEDED = [
    ["data", "parity", "--n", "2"],
    ["verify", "parity_sum_mod_2", "--lengths", "1-4", "--samples", "3"],
    ["minimal", "parity_sum_mod_2", "--train-lengths", "1-3", "--test-lengths", "4-5"],
    ["compile", "parity_sum_mod_2", "--minimal-lengths", "1-3"],
]


@pytest.mark.parametrize("seed", ["-1", str(2**64)])
@pytest.mark.parametrize(
    "argv", SEEDED, ids=lambda a: a[0] + ("-minimal" if "--minimal-lengths" in a else "")
)
def test_bad_seeds_are_one_line_everywhere(capsys, argv, seed):
    one_line(*run(capsys, *argv, "--seed", seed), "seed must be an integer from 0 to 2**63-1")


def test_train_seed_uses_the_same_check(capsys, tmp_path):
    code, out, err = run(capsys, "train", "task=parity", "seed=-1", "--db", str(tmp_path / "r"))
    one_line(code, out, err, "seed must be an integer from 0 to 2**63-1")


def test_a_huge_bin_is_refused_at_once(capsys):
    start = time.perf_counter()
    one_line(*run(capsys, "data", "parity", "--bin", "100000000-100000001"), "100,000")
    assert time.perf_counter() - start < 60  # refused up front, not after generating


def test_a_compiled_run_too_large_for_memory_is_refused_first():
    from rasplab.compiler import compile_program, run_compiled
    from rasplab.errors import RasplabError
    from rasplab.lang import input_var, program, v_relative, var

    def step(x):
        if x["left"] == 1:
            x["out"] = 1

    p = program(
        {"tok": input_var(2), "out": var(2)},
        {"left": v_relative("tok", -1)},
        step,
        "out",
        2,
        max_layers=1,
        undefined="no_match",
    )
    model = compile_program(p)
    with pytest.raises(
        RasplabError, match=r"30000 positions needs about .* GiB .* at most about \d+"
    ):
        run_compiled(model, [[1] * 30_000])


SHIFT_FILE = """
from rasplab.lang import input_var, program, v_relative, var

def step(x):
    if x["left"] == 1:
        x["out"] = 1

SHIFT = program(
    {"tok": input_var(2), "out": var(2)}, {"left": v_relative("tok", -1)}, step, "out", 2,
    max_layers=1, undefined="no_match",
)
"""


def test_a_compiled_run_too_large_for_memory_is_one_line_through_the_cli(capsys, tmp_path):
    user = tmp_path / "shift.py"
    user.write_text(SHIFT_FILE)
    tokens = " ".join(["1"] * 30_000)
    code, out, err = run(capsys, "run", f"{user}:SHIFT", "--tokens", tokens, "--compiled")
    one_line(code, out, err, "30000 positions needs about", "give inputs of at most about")


def test_report_on_a_directory(capsys, tmp_path):
    one_line(*run(capsys, "report", "--db", str(tmp_path)), "is a directory")


@pytest.mark.parametrize(
    "edit, words",
    [
        ({"causal": "yes"}, ["'causal'", "true or false"]),
        ({"exact_dtypes": ["float16"]}, ["'exact_dtypes'"]),
        ({"max_layers": "many"}, ["'max_layers'"]),
        ({"mlp_widths": None}, ["'mlp_widths'"]),
        ({"halt": None}, ["do not belong together"]),  # right type; the digest catches it
    ],
)
def test_a_hand_edited_model_json_is_one_line(capsys, tmp_path, edit, words):
    model = tmp_path / "m"
    assert run(capsys, "compile", "parity_sequential_relative", "--out", str(model))[0] == 0
    spec = json.loads((model / "model.json").read_text())
    (model / "model.json").write_text(json.dumps({**spec, **edit}))
    one_line(*run(capsys, "run", "--model", str(model), "--input", "1 0 1"), *words)


def test_a_model_json_without_digest_is_refused(capsys, tmp_path):
    """A model saved before digests existed, with ``halt: null`` edited into it (a value of
    the right type that the type checks cannot catch): refused, one line, compile again."""
    model = tmp_path / "m"
    assert run(capsys, "compile", "parity_sequential_relative", "--out", str(model))[0] == 0
    spec = json.loads((model / "model.json").read_text())
    assert spec["halt"] is not None  # a halting program
    old = {k: v for k, v in spec.items() if k != "digest"}
    (model / "model.json").write_text(json.dumps({**old, "halt": None}))
    one_line(*run(capsys, "run", "--model", str(model), "--input", "1 0 1"), "no digest", "compile")
    (model / "model.json").write_text(json.dumps(old))  # unedited, but still without a digest
    one_line(*run(capsys, "run", "--model", str(model), "--input", "1 0 1"), "no digest")


def test_a_hand_edited_checkpoint_state_is_one_line(capsys, tmp_path):
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    small = ["task=binary_majority", "model.layers=1", "model.heads=1", "model.width=8"]
    small += ["train.steps=2", "train.batch_size=4", "train.eval_every=2", "train.bin=1-8"]
    small += ["eval.size=8", "eval.bins=[1-8]", "--no-progress"]
    db = tmp_path / "r.sqlite"
    code, out, err = run(capsys, "train", *small, "--db", str(db), "--json")
    assert code == 0, err
    final = tmp_path / "r-runs" / json.loads(out)["run_id"] / "model.safetensors"
    with safe_open(str(final), framework="pt") as handle:
        metadata = handle.metadata()
    state = json.loads(metadata["state"])
    save_file(
        load_file(str(final)), str(final), {**metadata, "state": json.dumps({**state, "step": "2"})}
    )
    one_line(*run(capsys, "train", *small, "--db", str(db)), "'step'", "--fresh")


def _cli(*argv: str) -> list[str]:
    return [sys.executable, "-c", "from rasplab.cli import main; main()", *argv]


@pytest.mark.parametrize(
    "argv", [["data", "parity", "--n", "20000"], ["programs"], ["tasks", "--json"]]
)
def test_a_closed_pipe_exits_0_quietly(argv):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(_cli(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert len(proc.stdout.read(10)) == 10
    proc.stdout.close()  # like `| head -c 10`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and err == ""


def test_a_full_disk_on_stdout_is_one_line():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            _cli("data", "parity", "--n", "20000"),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        "rasplab: error: cannot write the output: No space left on device"
    ]


def test_a_large_grid_says_its_size_at_once(tmp_path):
    config = tmp_path / "big.yaml"
    grid = {"seed": list(range(1000)), "train.lr": [1e-3 * (k + 1) for k in range(100)]}
    config.write_text(
        yaml.safe_dump({"name": "big", "base": {"task": "binary_majority"}, "grid": grid})
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        _cli("sweep", str(config), "--db", str(tmp_path / "r.sqlite")),
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = proc.stderr.readline()
    finally:
        proc.kill()
        proc.wait()
    assert "100,000 grid points" in first
