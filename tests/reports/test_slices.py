"""Accuracy by slice in reports and in the Figure-5 picture, from hand-built sliced runs."""

from __future__ import annotations

import csv
import io
import json

import pytest

from rasplab.analysis.trace_figure import by_value
from rasplab.cli import main
from rasplab.harness.config import config_hash
from rasplab.harness.store import ResultsStore
from rasplab.harness.train import RunResult
from rasplab.reports import build_report

LIMIT = 4  # train.bin 1-4

# per seed: test set -> ones value -> (right, count)
SEEDS = {
    0: {"1-4": {0: (2, 2), 3: (1, 2)}, "5-8": {3: (1, 1), 6: (0, 4)}},
    1: {"1-4": {0: (1, 2), 3: (2, 2)}, "5-8": {3: (1, 1), 6: (3, 4)}},
}


class FakeConfig:
    """Just enough of an ExperimentConfig for ResultsStore.register."""

    def __init__(self, seed):
        self.task, self.variant, self.seed = "parity", "rope", seed

    def to_dict(self):
        return {"task": "parity", "variant": "rope", "seed": self.seed,
                "model": {"layers": 2}, "train": {"bin": f"1-{LIMIT}"}}  # fmt: skip

    def hash(self):
        return config_hash(self.to_dict())

    def setting_hash(self):
        return config_hash({k: v for k, v in self.to_dict().items() if k != "seed"})


def sliced(tables):
    """The stored form: test set -> slice -> value -> [right, count] (here every example with
    k ones has length k + 2)."""
    return {
        name: {
            "ones": {str(v): list(c) for v, c in t.items()},
            "length": {str(v + 2): list(c) for v, c in t.items()},
        }
        for name, t in tables.items()
    }


def side(tables, above: bool) -> float:
    """Accuracy of one seed at ones <= LIMIT (or above), pooled over its test sets."""
    cells = [c for t in tables.values() for v, c in t.items() if (v > LIMIT) == above]
    return sum(r for r, _ in cells) / sum(n for _, n in cells)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultsStore(path) as store:
        for seed, tables in SEEDS.items():
            config = FakeConfig(seed)
            run_id = store.register(config, sweep="hand")
            counts = {k: sum(n for _, n in t.values()) for k, t in tables.items()}
            bins = {k: sum(r for r, _ in t.values()) / counts[k] for k, t in tables.items()}
            store.finish(RunResult(
                run_id=run_id, config_hash=run_id, task="parity", variant="rope", seed=seed,
                status="done", bins=bins, counts=counts, mse=None, fitted=False, steps=1,
                stopped_early=False, wall_time=0.1, config=config.to_dict(),
                slices=sliced(tables),
            ))  # fmt: skip
    return path


def test_report_splits_each_slice_at_the_training_length(db, tmp_path):
    report = build_report(db, tmp_path / "rep")
    names = {p.split("/")[-1] for p in report.files}
    assert {"slices.csv", "accuracy_by_slice.png"} <= names
    summary = (tmp_path / "rep" / "summary.md").read_text()
    (row,) = [line for line in summary.splitlines() if "ones (T=4)" in line]
    for above in (False, True):
        values = [100 * side(SEEDS[s], above) for s in SEEDS]
        mean = sum(values) / 2
        std = (sum((v - mean) ** 2 for v in values)) ** 0.5  # sample std of two values
        assert f"{mean:.1f} ± {std:.1f}" in row
    rows = list(csv.DictReader(io.StringIO((tmp_path / "rep" / "slices.csv").read_text())))
    for seed, tables in SEEDS.items():
        mine = {int(r["value"]): (int(r["right"]), int(r["count"])) for r in rows
                if int(r["seed"]) == seed}  # fmt: skip
        for value in (0, 3, 6):
            cells = [t[value] for t in tables.values() if value in t]
            assert mine[value] == (sum(c[0] for c in cells), sum(c[1] for c in cells))


def test_trace_figure_draws_trace_and_harness_runs_side_by_side(db, tmp_path, capsys):
    with ResultsStore(db, create=False) as store:
        record = store.runs()[0]
    harness = tmp_path / "standard"
    harness.mkdir()
    result = {"run_id": record.run_id, "variant": "rope", "config": record.config,
              "slices": record.metrics["slices"]}  # fmt: skip
    (harness / "result.json").write_text(json.dumps(result))
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "result.json").write_text(json.dumps({
        "program": "p", "split": LIMIT, "lengths": [1, 2, 6], "ones": [0, 1, 5],
        "correct": [True, True, False]}))  # fmt: skip
    xs, acc = by_value(result, "ones")
    tables = SEEDS[record.seed]
    want = {v: [0, 0] for t in tables.values() for v in t}
    for t in tables.values():
        for v, (r, n) in t.items():
            want[v][0] += r
            want[v][1] += n
    assert xs == sorted(want) and acc == [want[v][0] / want[v][1] for v in xs]
    out = tmp_path / "fig.png"
    with pytest.raises(SystemExit) as done:
        main(["trace-figure", str(trace), str(harness), "--out", str(out)])
    assert done.value.code == 0 and out.read_bytes()[:4] == b"\x89PNG"

    result.pop("slices")
    (harness / "result.json").write_text(json.dumps(result))
    with pytest.raises(SystemExit) as done:
        main(["trace-figure", str(harness), "--out", str(tmp_path / "no.png")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "eval.slices=[length, ones]" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "no.png").exists()
