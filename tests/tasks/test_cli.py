"""``rasplab tasks`` and ``rasplab data``: output, determinism across hash seeds, bad input."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from rasplab.cli import main
from rasplab.tasks import get_task, task_names


def run(argv, capsys):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_tasks_lists_every_task(capsys):
    code, out, _ = run(["tasks"], capsys)
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == len(task_names())
    for name, line in zip(task_names(), lines):
        task = get_task(name)
        assert (
            line.split()[0] == name
            and f"vocab {len(task.vocab)};" in line
            and str(task.train_bin) in line
        )
    code, out, _ = run(["tasks", "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["name"] for r in rows} == set(task_names()) and all("vocab_size" in r for r in rows)


def test_data_jsonl_matches_the_library(tmp_path, capsys):
    path = tmp_path / "parity.jsonl"
    code, out, err = run(
        [
            "data",
            "parity",
            "--split",
            "test",
            "--bin",
            "51-100",
            "--n",
            "40",
            "--seed",
            "3",
            "--out",
            str(path),
        ],
        capsys,
    )
    assert code == 0 and out == "" and "wrote 40 examples" in err
    records = [json.loads(line) for line in path.read_text().splitlines()]
    expected = [
        ex.to_json("parity") for ex in get_task("parity").dataset("test", "51-100", n=40, seed=3)
    ]
    assert records == expected
    assert set(records[0]) == {"task", "length", "tokens", "targets"}
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left
    code, out, _ = run(
        ["data", "parity", "--split", "test", "--bin", "51-100", "--n", "40", "--seed", "3"], capsys
    )
    assert out == path.read_text()


def test_next_set_and_regression_records(capsys):
    _, out, _ = run(["data", "tomita3", "--bin", "4-4", "--n", "1"], capsys)
    rec = json.loads(out)
    assert rec["targets"][-1] is None and all(isinstance(t, list) for t in rec["targets"][:-1])
    _, out, _ = run(
        ["data", "modp_task", "-o", "p=3", "-o", "k=2", "--bin", "5-5", "--n", "1"], capsys
    )
    rec = json.loads(out)
    assert rec["targets"][:-1] == [None] * 4 and isinstance(rec["targets"][-1], float)


def test_scan_all_text_prints_the_canonical_lines(capsys):
    code, out, err = run(["data", "scan", "--split", "all", "--format", "text"], capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 20910 and len(set(lines)) == 20910
    assert lines[0] == "IN: walk OUT: I_WALK" and all(
        line.startswith("IN: ") and " OUT: " in line for line in lines
    )


def test_compat_option(capsys):
    _, out, _ = run(
        [
            "data",
            "tomita2",
            "--compat",
            "huang",
            "--split",
            "test",
            "--bin",
            "101-150",
            "--format",
            "text",
        ],
        capsys,
    )
    assert len(out.splitlines()) == 25


@pytest.mark.parametrize(
    "argv, message",
    [
        (["data", "no_such_task"], "unknown task"),
        (["data", "parity", "--bin", "1-x"], "malformed bin"),
        (["data", "parity", "--bin", "9-3"], "empty"),
        (["data", "aaaa_star", "--bin", "5-7"], "no strings"),
        (["data", "sort", "--bin", "151-200"], "no examples"),
        (["data", "parity", "--split", "val"], "split"),
        (["data", "parity", "--format", "csv"], "format"),
        (["data", "parity", "-o", "p=3"], "does not accept"),
        (["data", "parity", "-o", "p"], "KEY=VALUE"),
        (["data", "parity", "--n", "0"], "--n must be a positive"),
        (["data", "ptg", "--split", "id_short", "--n", "-3"], "--n must be a positive"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_file(argv, message, tmp_path, capsys):
    out_file = tmp_path / "out.jsonl"
    code, out, err = run([*argv, "--out", str(out_file)], capsys)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
    assert not out_file.exists() and list(tmp_path.iterdir()) == []


def test_unwritable_output_path(tmp_path, capsys):
    code, _, err = run(["data", "parity", "--out", str(tmp_path / "missing" / "x.jsonl")], capsys)
    assert code == 2 and "cannot write" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(["data", "parity", "--out", str(tmp_path)], capsys)
    assert code == 2 and "directory" in err
    assert list(tmp_path.iterdir()) == []


def test_failed_run_keeps_an_existing_file_intact(tmp_path, capsys):
    path = tmp_path / "keep.jsonl"
    path.write_text("old\n")
    code, _, _ = run(["data", "tomita2", "--bin", "3-3", "--out", str(path)], capsys)
    assert code == 2 and path.read_text() == "old\n" and list(tmp_path.iterdir()) == [path]


class _FakeDataset:
    """Stands in for ``datasets.Dataset``: saves its records as JSON in the directory."""

    def __init__(self, records):
        self.records = records

    @classmethod
    def from_file(cls, path):
        with open(path) as f:
            return cls(json.load(f))

    def save_to_disk(self, path):
        with open(os.path.join(path, "records.json"), "w") as f:
            json.dump(self.records, f)


class _FakeArrowWriter:
    """Stands in for ``datasets.arrow_writer.ArrowWriter``: records to a JSON file."""

    def __init__(self, path):
        self.path, self.records = path, []

    def write(self, record):
        self.records.append(record)

    def finalize(self):
        with open(self.path, "w") as f:
            json.dump(self.records, f)

    def close(self):
        pass


def _fake_datasets(monkeypatch):
    fake, writer = type(sys)("datasets"), type(sys)("datasets.arrow_writer")
    fake.Dataset, writer.ArrowWriter = _FakeDataset, _FakeArrowWriter
    monkeypatch.setitem(sys.modules, "datasets", fake)
    monkeypatch.setitem(sys.modules, "datasets.arrow_writer", writer)


def test_hf_writes_a_directory_atomically(tmp_path, capsys, monkeypatch):
    _fake_datasets(monkeypatch)
    target = tmp_path / "hf"
    for seed in ("1", "2"):  # the second run replaces the first directory
        code, out, _ = run(
            [
                "data",
                "rasp_sort",
                "--split",
                "test",
                "--n",
                "7",
                "--seed",
                seed,
                "--format",
                "hf",
                "--out",
                str(target),
            ],
            capsys,
        )
        assert code == 0 and out == ""
    records = json.loads((target / "records.json").read_text())
    assert records == [
        ex.to_json("rasp_sort") for ex in get_task("rasp_sort").dataset("test", n=7, seed=2)
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["hf"]
    code, _, err = run(["data", "parity", "--format", "hf"], capsys)
    assert code == 2 and "--out" in err


def test_hf_without_datasets_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError
    code, _, err = run(["data", "parity", "--format", "hf", "--out", str(tmp_path / "hf")], capsys)
    assert code == 2 and "pip install" in err and "rasplab[hf]" in err
    assert list(tmp_path.iterdir()) == []


SCRIPT = """
import json, sys
from rasplab.cli import main
for argv in json.loads(sys.argv[1]):
    try:
        main(argv)
    except SystemExit as done:
        assert done.code == 0, (argv, done.code)
    sys.stdout.write("\\n----\\n")
    sys.stdout.flush()
"""


def _cli_bytes(argvs, hash_seed):
    """Run several CLI commands in one fresh interpreter; returns each command's stdout."""
    env = dict(os.environ, PYTHONHASHSEED=str(hash_seed), OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(argvs)], env=env, capture_output=True, check=True
    )
    return done.stdout.split(b"\n----\n")[:-1]


def test_same_seed_same_bytes_across_hash_seeds():
    argvs = [
        ["tasks", "--json"],
        ["data", "tomita3", "--split", "test", "--bin", "1-12", "--n", "300", "--seed", "4"],
        ["data", "majority", "--bin", "1-30", "--n", "200"],
        ["data", "rasp_most_freq", "--split", "val", "--n", "200"],
        ["data", "simple_task", "-o", "omega=3", "--n", "100"],
        ["data", "scan", "--split", "test", "--n", "100", "--format", "text"],
    ]
    first, second = _cli_bytes(argvs, 0), _cli_bytes(argvs, 12345)
    assert len(first) == len(argvs) and all(len(out) > 1000 for out in first)
    assert [hashlib.sha256(b).hexdigest() for b in first] == [
        hashlib.sha256(b).hexdigest() for b in second
    ]


def test_written_files_get_the_umask_mode_not_owner_only(tmp_path):
    import os

    from rasplab.cli import main
    from rasplab.files import current_umask

    out = tmp_path / "parity.jsonl"
    with pytest.raises(SystemExit) as done:
        main(["data", "parity", "--split", "test", "--bin", "1-5", "--n", "3", "--out", str(out)])
    assert done.value.code == 0
    assert os.stat(out).st_mode & 0o777 == 0o666 & ~current_umask()
