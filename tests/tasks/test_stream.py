"""Streamed datasets: ``Task.stream`` and ``rasplab data`` give the bytes of the eager
generator they replaced, consume examples lazily, and leave nothing behind when stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rasplab.bins import Bin
from rasplab.cli import main
from rasplab.seeding import generator
from rasplab.tasks import Task, get_task, task_names
from rasplab.tasks import base as task_base


def eager_dataset(task: Task, split: str, n: int, seed: int = 0) -> list:
    """The eager generator ``Task.dataset`` was before streaming: every length at once, then
    one ``sample_many`` (train); one growing list and a set of token tuples (other splits)."""
    bin = task.default_bin(split)
    rng = generator(seed, task.name, split, str(bin))
    if split == "train":
        return task.sample_many(rng, task.draw_lengths(rng, bin, n)) if n else []
    every = task.exhaustive(bin, n)
    if every is not None and len(every) <= n:
        return [every[i] for i in rng.permutation(len(every))]
    seen, out, misses = set(), [], 0
    while len(out) < n and misses < 2000:
        lengths = task.draw_lengths(rng, bin, max(n - len(out), 64))
        batch = task.sample_many(rng, lengths)
        before = len(out)
        for ex in batch:
            if ex.tokens in seen:
                misses += 1
                if misses >= 2000:
                    break
                continue
            misses = 0
            seen.add(ex.tokens)
            out.append(ex)
            if len(out) == n:
                break
        if len(out) == before:
            misses += len(lengths) - len(batch)
    return out


def _generic(name: str) -> bool:
    """Tasks whose splits come from ``Task.stream`` itself (not a family's own override)."""
    return type(get_task(name)).stream is Task.stream


@pytest.mark.parametrize("name", [n for n in task_names() if _generic(n)])
def test_stream_matches_the_eager_generator(name):
    task = get_task(name)
    for split in ("train", "test"):
        streamed = list(task.stream(split, n=150, seed=7))
        assert streamed == eager_dataset(task, split, 150, seed=7), split


def run(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_data_writes_the_eager_bytes_to_stdout_and_to_a_file(tmp_path, capsys):
    task = get_task("majority")
    for split, n in (("train", 3000), ("test", 2000)):
        expected = "".join(
            json.dumps(task.record(ex)) + "\n" for ex in eager_dataset(task, split, n, seed=5)
        )
        code, out, _ = run(
            ["data", "majority", "--split", split, "--n", str(n), "--seed", "5"], capsys
        )
        assert code == 0 and out == expected
        path = tmp_path / f"{split}.jsonl"
        argv = ["data", "majority", "--split", split, "--n", str(n), "--seed", "5"]
        code, _, _ = run([*argv, "--out", str(path)], capsys)
        assert code == 0 and path.read_text() == expected


@pytest.mark.parametrize("task", ["parity", "ptg", "scan", "rasp_sort"])
def test_errors_known_up_front_come_before_any_output(tmp_path, capsys, task):
    out = tmp_path / "x.jsonl"
    for bad in (["--seed", "-1"], ["--n", "0"], ["--bin", "100001-100002"], ["-o", "nope=1"]):
        code, _, err = run(["data", task, *bad, "--out", str(out)], capsys)
        assert code == 2 and err.startswith("rasplab: error: ") and len(err.splitlines()) == 1
        assert list(tmp_path.iterdir()) == []


def test_batches_beyond_one_keep_the_rules(monkeypatch):
    monkeypatch.setattr(task_base, "STREAM_EXAMPLES", 16)
    task = get_task("majority")
    assert task.batch_size("1-50") == 16
    train = list(task.stream("train", "3-9", n=100, seed=1))
    assert len(train) == 100 and all(ex.length in Bin(3, 9) for ex in train)
    assert len({ex.tokens for ex in train}) > 90  # fresh draws per batch, not one batch repeated
    test = list(task.stream("test", "20-30", n=100, seed=1))
    assert len(test) == 100 and len({ex.tokens for ex in test}) == 100
    assert all(ex.length in Bin(20, 30) for ex in test)


class _Recorder:
    """A stdout that notes how many examples had been sampled when each write came."""

    def __init__(self, counter):
        self.counter, self.lines, self.at = counter, 0, []

    def write(self, text):
        self.lines += text.count("\n")
        self.at.append(self.counter[0])

    def flush(self):
        pass


def _count_samples(monkeypatch, task_class, stop_at=None, on_stop=None):
    """Patch ``task_class.sample_many`` to count the examples it makes (and, once ``stop_at``
    were made, to call ``on_stop`` and raise KeyboardInterrupt, as Ctrl-C would)."""
    counter = [0]
    original = task_class.sample_many

    def counting(self, rng, lengths):
        if stop_at is not None and counter[0] >= stop_at:
            on_stop()
            raise KeyboardInterrupt
        counter[0] += len(lengths)
        return original(self, rng, lengths)

    monkeypatch.setattr(task_class, "sample_many", counting)
    return counter


def test_data_writes_the_first_line_before_generating_the_rest(monkeypatch, capsys):
    monkeypatch.setattr(task_base, "STREAM_EXAMPLES", 100)
    counter = _count_samples(monkeypatch, type(get_task("parity")))
    recorder = _Recorder(counter)
    monkeypatch.setattr(sys, "stdout", recorder)
    with pytest.raises(SystemExit) as done:
        main(["data", "parity", "--n", "5000"])
    assert done.value.code == 0 and recorder.lines == 5000 and counter[0] == 5000
    assert recorder.at[0] == 100  # the first line went out after one batch of 100, not 5000


def test_an_interrupted_file_write_leaves_nothing_behind(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(task_base, "STREAM_EXAMPLES", 100)
    target = tmp_path / "data.jsonl"
    target.write_text("old\n")
    written = {}

    def look():  # at Ctrl-C: the examples so far are in a hidden file beside the target
        written.update({p.name: p.stat().st_size for p in tmp_path.iterdir() if p != target})

    _count_samples(monkeypatch, type(get_task("parity")), stop_at=300, on_stop=look)
    with pytest.raises(SystemExit) as done:
        main(["data", "parity", "--n", "5000", "--out", str(target)])
    assert done.value.code != 0
    [(name, size)] = written.items()
    assert name.startswith(".data.jsonl.") and name.endswith(".tmp") and size > 0
    assert target.read_text() == "old\n" and list(tmp_path.iterdir()) == [target]


def test_streamed_lines_reach_a_pipe_before_the_end(tmp_path):
    """``rasplab data ... | head -1``: the reader gets a line and the writer exits 0."""
    code = "import sys; from rasplab.cli import main; main(sys.argv[1:])"
    writer = subprocess.Popen(
        [sys.executable, "-c", code, "data", "parity", "--n", "100000", "--bin", "40-50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    first = writer.stdout.readline()
    writer.stdout.close()
    assert writer.wait(timeout=120) == 0
    assert json.loads(first)["task"] == "parity"
    assert writer.stderr.read() == b""


def test_a_killed_streaming_write_is_cleaned_by_the_next(tmp_path, capsys):
    """``kill -9`` while ``data --out`` streams: the target keeps its old bytes; the hidden
    temporary file left behind is removed by the next write to the same target."""
    target = tmp_path / "data.jsonl"
    target.write_text("old\n")
    code = "import sys; from rasplab.cli import main; main(sys.argv[1:])"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", code, "data", "parity", "--n", "5000000", "--out", str(target)]
    writer = subprocess.Popen(argv, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # streaming: the temporary file grows at once
            temps = [p for p in tmp_path.iterdir() if p != target and p.stat().st_size > 0]
            if temps:
                break
            time.sleep(0.05)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert temps and target.read_text() == "old\n"
    assert run(["data", "parity", "--n", "5", "--out", str(target)], capsys)[0] == 0
    assert list(tmp_path.iterdir()) == [target] and len(target.read_text().splitlines()) == 5
