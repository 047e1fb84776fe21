"""Outputs replaced in one step: only regular files are replaced, stale temporary files of
killed writers are cleaned, directories are swapped in whole, and `compile --out` killed at
any moment leaves the old model or the new one, never a mix."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time

import pytest

from rasplab.cli import main


def run(capsys, *argv):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_data_out_follows_a_symlink_to_a_regular_file(capsys, tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    code, _, err = run(capsys, "data", "parity", "--bin", "3-3", "--n", "2", "--out", str(link))
    assert code == 0, err
    assert link.is_symlink() and real.read_text().count("\n") == 2 and "old" not in real.read_text()


@pytest.mark.parametrize("kind", ["fifo", "socket", "directory"])
def test_data_out_refuses_anything_but_a_regular_file(capsys, tmp_path, kind):
    path = tmp_path / "target"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    else:
        path.mkdir()
    code, out, err = run(capsys, "data", "parity", "--bin", "3-3", "--n", "2", "--out", str(path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert ("not a regular file" in err) if kind != "directory" else ("directory" in err)
    assert [p.name for p in tmp_path.iterdir()] == ["target"]  # left as it was
    assert not path.is_file()


def test_stale_temporary_files_of_dead_writers_are_cleaned(capsys, tmp_path):
    out = tmp_path / "d.jsonl"
    stale = tmp_path / f".d.jsonl.{_dead_pid()}.abc123.tmp"
    stale.write_text("half")
    stale_dir = tmp_path / f".d.jsonl.{_dead_pid()}.def456.tmp"
    stale_dir.mkdir()
    live = tmp_path / f".d.jsonl.{os.getpid()}.xyz789.tmp"  # a writer still at work
    live.write_text("busy")
    code, _, err = run(capsys, "data", "parity", "--bin", "3-3", "--n", "2", "--out", str(out))
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, live.name])


def test_replace_dir_swaps_a_whole_directory(tmp_path):
    from rasplab.files import replace_dir, temp_dir

    target = tmp_path / "model"
    target.mkdir()
    (target / "a").write_text("old")
    (target / "b").write_text("old")
    new = temp_dir(target)
    (new / "a").write_text("new")
    replace_dir(new, target)
    assert sorted(p.name for p in target.iterdir()) == ["a"]
    assert (target / "a").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


SAVER = """
import sys
from rasplab.compiler import compile_program
from rasplab.compiler.export import save_compiled
from rasplab.programs import get_program
entry = get_program("parity_sum_mod_2")
models = [compile_program(entry.program(max_length=n)) for n in (8, 16)]
print("ready", flush=True)
k = 0
while True:
    save_compiled(models[k % 2], sys.argv[1], entry=entry.name)
    k += 1
"""


def test_compile_out_killed_at_any_moment_keeps_a_whole_model(tmp_path):
    from rasplab.compiler.export import load_compiled

    target = tmp_path / "model"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    rng = random.Random(0)
    for _ in range(4):
        proc = subprocess.Popen(
            [sys.executable, "-c", SAVER, str(target)], env=env, stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not target.exists():  # killed before the very first save finished
            continue
        assert sorted(p.name for p in target.iterdir()) == ["model.json", "model.safetensors"]
        model = load_compiled(target)  # the digest binds the pair: never old + new
        assert model.spec["rules"] in (9, 17)  # one of the two models, whole
    assert target.exists()
