"""Reports from a hand-built results store: files, aggregates over all vs fitted seeds."""

from __future__ import annotations

import csv
import io

import pytest

from rasplab.errors import RasplabError
from rasplab.harness.config import config_hash
from rasplab.harness.store import ResultsStore
from rasplab.harness.train import RunResult
from rasplab.reports import build_report, spread


class FakeConfig:
    """Just enough of an ExperimentConfig for ResultsStore.register."""

    def __init__(self, task, variant, seed, lr=0.001):
        self.task, self.variant, self.seed, self.lr = task, variant, seed, lr

    def to_dict(self):
        return {
            "task": self.task,
            "variant": self.variant,
            "seed": self.seed,
            "train": {"lr": self.lr},
        }

    def hash(self):
        return config_hash(self.to_dict())

    def setting_hash(self):
        data = self.to_dict()
        data.pop("seed")
        return config_hash(data)


# (task, variant, seed, lr, accuracies by bin or None for a failed run)
RUNS = [
    ("majority", "ape", 0, 0.001, {"1-50": 1.0, "51-100": 0.8}),
    ("majority", "ape", 1, 0.001, {"1-50": 1.0, "51-100": 0.6}),
    ("majority", "ape", 2, 0.001, {"1-50": 0.9, "51-100": 0.1}),  # did not fit
    ("majority", "nope", 0, 0.001, {"1-50": 1.0, "51-100": 1.0}),
    ("majority", "nope", 1, 0.001, None),  # failed
    ("majority", "nope", 0, 0.01, {"1-50": 0.5, "51-100": 0.5}),  # another learning rate
]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "results.sqlite"
    with ResultsStore(path) as store:
        for task, variant, seed, lr, bins in RUNS:
            config = FakeConfig(task, variant, seed, lr)
            run_id = store.register(config, sweep="hand")
            store.mark_running(run_id)
            if bins is None:
                store.fail(run_id, "RuntimeError: boom")
                continue
            curves = [
                {"step": 10, "loss": 0.5, "bins": {b: a / 2 for b, a in bins.items()}},
                {"step": 20, "loss": 0.1, "bins": bins},
            ]
            store.finish(
                RunResult(
                    run_id=run_id,
                    config_hash=run_id,
                    task=task,
                    variant=variant,
                    seed=seed,
                    status="done",
                    bins=bins,
                    counts={"1-50": 2000, "51-100": 1500},
                    mse=None,
                    fitted=bins["1-50"] == 1.0,
                    steps=20,
                    stopped_early=False,
                    wall_time=1.5,
                    curves=curves,
                    config=config.to_dict(),
                    run_dir=None,
                    code_version="test",
                )
            )
    return path


def _csv(path):
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_report_writes_every_file(db, tmp_path):
    report = build_report(db, tmp_path / "out")
    names = sorted(p.rsplit("/", 1)[-1] for p in report.files)
    assert names == [
        "accuracy_by_bin.png",
        "accuracy_table.png",
        "runs.csv",
        "summary.csv",
        "summary.md",
        "training_curves.png",
    ]
    for name in names:
        data = (tmp_path / "out" / name).read_bytes()
        assert data
        if name.endswith(".png"):
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert report.runs == 6 and report.finished == 5


def test_runs_csv_has_one_row_per_run(db, tmp_path):
    build_report(db, tmp_path)
    rows = _csv(tmp_path / "runs.csv")
    assert len(rows) == 6
    assert {
        "run_id",
        "config_hash",
        "task",
        "variant",
        "seed",
        "status",
        "acc_1-50",
        "acc_51-100",
    } <= set(rows[0])
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["acc_1-50"] == "" and "boom" in failed[0]["error"]
    ape2 = next(r for r in rows if r["variant"] == "ape" and r["seed"] == "2")
    assert float(ape2["acc_51-100"]) == pytest.approx(0.1) and ape2["fitted"] == "0"


def test_summary_separates_all_seeds_from_fitted_seeds(db, tmp_path):
    build_report(db, tmp_path)
    rows = {(r["variant"], r["bin"]): r for r in _csv(tmp_path / "summary.csv")}
    ape = rows[("ape", "51-100")]
    assert ape["seeds"] == "3" and ape["fitted_seeds"] == "2"
    assert float(ape["mean_all"]) == pytest.approx(0.5)
    assert float(ape["std_all"]) == pytest.approx(spread([0.8, 0.6, 0.1]).std, abs=1e-4)
    assert float(ape["std_all"]) == pytest.approx(0.3606, abs=1e-4)
    assert (float(ape["min_all"]), float(ape["max_all"])) == (
        pytest.approx(0.1),
        pytest.approx(0.8),
    )
    assert float(ape["mean_fitted"]) == pytest.approx(0.7)
    assert float(ape["std_fitted"]) == pytest.approx(0.1414, abs=1e-4)
    assert float(rows[("ape", "1-50")]["mean_all"]) == pytest.approx(0.9667, abs=1e-4)
    assert ape["test_examples"] == "1500"
    # two NoPE settings (learning rates) are kept apart and labelled by what differs
    labels = sorted({v for v, _ in rows if v.startswith("nope")})
    assert labels == ["nope (train.lr=0.001)", "nope (train.lr=0.01)"]
    nope = rows[("nope (train.lr=0.001)", "51-100")]
    assert nope["seeds"] == "1" and float(nope["mean_all"]) == 1.0  # the failed seed is not a 0


def test_summary_markdown_shows_both_tables_and_failures(db, tmp_path):
    build_report(db, tmp_path)
    text = (tmp_path / "summary.md").read_text()
    assert "All seeds" in text and "Fitted seeds" in text
    assert "| ape | 2/3 | 96.7 ± 5.8 | 50.0 ± 36.1 |" in text
    assert "| ape | 2/3 | 100.0 ± 0.0 | 70.0 ± 14.1 |" in text
    assert "(+1 failed/unfinished)" in text and "RuntimeError: boom" in text
    assert "accuracy_by_bin.png" in text


def test_missing_or_foreign_database_is_a_clear_error(tmp_path):
    with pytest.raises(RasplabError, match="does not exist"):
        build_report(tmp_path / "none.sqlite", tmp_path / "out")
    (tmp_path / "text.sqlite").write_text("not a database at all, just text " * 40)
    with pytest.raises(RasplabError, match="not a rasplab results store"):
        build_report(tmp_path / "text.sqlite", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_report_write_failure_removes_what_it_created(db, tmp_path, monkeypatch):
    """A write error midway removes the files and folders this report created."""
    from rasplab.reports import plots

    def broken(fig, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(plots, "save_figure", broken)
    out = tmp_path / "new" / "report"
    with pytest.raises(RasplabError, match="No space left"):
        build_report(db, out)
    assert not (tmp_path / "new").exists()


def test_named_splits_come_after_the_bins_in_config_order(tmp_path):
    """Runs with named splits (``eval.splits``) next to runs without: bins first, then splits."""
    path = tmp_path / "splits.sqlite"
    runs = [
        (0, {"1-50": 1.0, "51-100": 0.5}),  # no splits (an older run)
        (1, {"51-100": 0.25, "1-50": 1.0, "longer_lists": 0.5, "id_short": 0.75}),
        (2, {"1-50": 0.5, "51-100": 0.0, "longer_lists": 0.0, "id_short": 0.25}),
    ]
    with ResultsStore(path) as store:
        for seed, bins in runs:
            config = FakeConfig("ptg", "nope", seed)
            run_id = store.register(config)
            curves = [{"step": 5, "loss": 0.3, "bins": bins}]
            store.finish(
                RunResult(run_id, run_id, "ptg", "nope", seed, "done", bins,
                          {b: 4 for b in bins}, None, bins["1-50"] == 1.0, 5, False, 0.1,
                          curves, config.to_dict(), None, "test")
            )  # fmt: skip
    report = build_report(path, tmp_path / "out")
    assert len(report.files) == 6  # the plots draw split names too
    order = ["1-50", "51-100", "longer_lists", "id_short"]
    assert report.groups[0].bins == tuple(order)
    rows = _csv(tmp_path / "out" / "runs.csv")
    assert [c for c in rows[0] if c.startswith("acc_")] == [f"acc_{b}" for b in order]
    assert rows[0]["acc_id_short"] == "" and rows[1]["acc_id_short"] == "0.7500"
    summary = _csv(tmp_path / "out" / "summary.csv")
    assert [r["bin"] for r in summary] == order
    assert float(summary[3]["mean_all"]) == pytest.approx(0.5)  # id_short over seeds 1, 2
    assert summary[3]["seeds"] == "3" and float(summary[3]["mean_fitted"]) == 0.75
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "| 1-50 (n=4) | 51-100 (n=4) | longer_lists (n=4) | id_short (n=4) |" in md
