"""Named evaluation splits (``eval.splits``): scored next to the bins, stored, reported, checked."""

from __future__ import annotations

import csv
import importlib
import io
import json

import pytest

from rasplab.bins import Bin
from rasplab.cli import main
from rasplab.errors import RasplabError
from rasplab.harness import ResultsStore, experiment_from_dict, prepare_run, run_sweep, train
from rasplab.harness.setup import max_positions
from rasplab.harness.sweep import validate_runs
from rasplab.reports import build_report
from rasplab.tasks import Example, Task, get_task, register, task_names

PTG_SPLITS = [
    "id_short",
    "id_mid",
    "longer_lists",
    "more_variables",
    "longer_traces_1",
    "longer_traces_2",
    "longer_programs",
]
PTG_BINS = ["31-40", "46-55", "60-80"]  # the cpu-scale ptg test bins (trace steps)


class ToySplits(Task):
    """A task with a named split whose examples are longer than every bin's, and one named
    like a bin (to test the clash check)."""

    name = "toy_named_splits"
    description = "toy answer task with named splits"
    vocab = ("<pad>", "<bos>", "<sep>", "<eos>", "0", "1")
    train_bin = Bin(1, 4)
    test_bins = (Bin(1, 4), Bin(5, 6))
    splits = ("train", "test", "long", "1-4")

    def default_bin(self, split: str) -> Bin:
        return Bin(20, 24) if split == "long" else super().default_bin(split)

    def max_tokens(self, length):
        return length + 4

    def sample(self, rng, length):
        bits = [str(b) for b in rng.integers(0, 2, length)]
        tokens = ("<bos>", *bits, "<sep>", bits[0], "<eos>")
        return Example(tokens, (None,) * (length + 1) + (bits[0], "<eos>", None), length)


if ToySplits.name not in task_names():
    register(ToySplits.name)(ToySplits)


def ptg_config(splits=PTG_SPLITS, **eval_changes) -> dict:
    """A tiny ptg run (cpu-scale split table): 3 steps, 2 test examples per set."""
    return {
        "task": "ptg",
        "task_options": {"scale": "cpu"},
        "model": {"pe": "nope", "layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 3, "batch_size": 2, "eval_every": 2, "early_stop": False},
        "eval": {"size": 2, "batch_size": 2, "splits": splits, **eval_changes},
    }


def test_run_result_has_every_split_after_the_bins_with_a_count(monkeypatch):
    train_module = importlib.import_module("rasplab.harness.train")  # not the function
    seen = []
    original = train_module.evaluate

    def spy(model, encoder, test_sets, *args):
        seen.append(test_sets)
        return original(model, encoder, test_sets, *args)

    monkeypatch.setattr(train_module, "evaluate", spy)
    result = train(experiment_from_dict(ptg_config()))
    assert list(result.bins) == PTG_BINS + PTG_SPLITS
    assert result.counts == {name: 2 for name in PTG_BINS + PTG_SPLITS}
    assert all(0.0 <= a <= 1.0 for a in result.bins.values()) and result.mse is None
    assert [list(p["bins"]) for p in result.curves] == [PTG_BINS + PTG_SPLITS] * 2  # steps 2, 3
    data = json.loads(json.dumps(result.to_json()))
    assert list(data["bins"]) == PTG_BINS + PTG_SPLITS and data["counts"]["longer_programs"] == 2
    # in-distribution (fitted, early stop) stays on the bins: ptg's is the bin 31-40
    assert result.fitted == (result.bins["31-40"] == 1.0)
    # id_mid and longer_traces_1 are the test sets of the bins 31-40 and 46-55: scored once
    assert seen and seen[0]["id_mid"] is seen[0]["31-40"]
    assert seen[0]["longer_traces_1"] is seen[0]["46-55"]
    assert seen[0]["id_short"] is not seen[0]["31-40"]
    assert result.bins["id_mid"] == result.bins["31-40"]


def test_a_split_is_the_task_dataset_with_the_eval_size_and_seed(monkeypatch):
    calls = []
    task_class = type(get_task("ptg"))
    original = task_class.dataset

    def spy(self, split, bin=None, n=None, seed=0):
        calls.append((split, None if bin is None else str(bin), n, seed))
        return original(self, split, bin, n, seed)

    monkeypatch.setattr(task_class, "dataset", spy)
    data = ptg_config(["longer_lists"], size=3, seed=7)
    data["train"]["steps"] = 2
    train(experiment_from_dict(data))
    assert ("longer_lists", None, 3, 7) in calls
    assert ("test", "31-40", 3, 7) in calls


def test_store_and_report_rows_hold_the_splits(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    overrides = [
        "task=ptg",
        "task_options.scale=cpu",
        "model.layers=1",
        "model.heads=1",
        "model.width=8",
        "train.steps=2",
        "train.batch_size=2",
        "train.eval_every=2",
        "eval.size=2",
        "eval.batch_size=2",
        "eval.bins=[31-40]",
        "eval.splits=[longer_programs, id_short]",
    ]
    with pytest.raises(SystemExit) as done:
        main(["train", *overrides, "--json", "--no-progress", "--db", str(db)])
    out = capsys.readouterr().out
    assert done.value.code == 0
    result = json.loads(out)
    names = ["31-40", "longer_programs", "id_short"]  # bins, then splits in config order
    assert list(result["bins"]) == names and list(result["counts"]) == names

    with ResultsStore(db, create=False) as store:
        (record,) = store.runs()
    assert list(record.metrics["bins"]) == names
    assert record.metrics["counts"] == {name: 2 for name in names}
    assert list(record.curves[-1]["bins"]) == names
    assert record.config["eval"]["splits"] == ["longer_programs", "id_short"]

    build_report(db, tmp_path / "rep")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "rep" / "runs.csv").read_text())))
    acc = [c for c in rows[0] if c.startswith("acc_")]
    assert acc == [f"acc_{n}" for n in names]
    summary = list(csv.DictReader(io.StringIO((tmp_path / "rep" / "summary.csv").read_text())))
    assert [r["bin"] for r in summary] == names and summary[2]["test_examples"] == "2"
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "| 31-40 (n=2) | longer_programs (n=2) | id_short (n=2) |" in md


def test_position_table_covers_the_longest_split():
    task = get_task("toy_named_splits")
    assert max_positions(task, [Bin(1, 4), Bin(5, 6)]) == 10
    assert max_positions(task, [Bin(1, 4), Bin(5, 6)], ["long"]) == 28
    data = {
        "task": "toy_named_splits",
        "model": {"pe": "ape", "layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 2, "batch_size": 4, "eval_every": 2},
        "eval": {"size": 4, "batch_size": 4, "splits": ["long"]},
    }
    config = experiment_from_dict(data)
    assert prepare_run(config).positions == 28
    result = train(config)
    assert list(result.bins) == ["1-4", "5-6", "long"] and result.counts["long"] == 4
    ptg = get_task("ptg", scale="cpu")
    assert max_positions(ptg, [ptg.train_bin, *ptg.test_bins], PTG_SPLITS) == ptg.limit == 1024


@pytest.mark.parametrize(
    "data, words",
    [
        (ptg_config([]), ["eval.splits", "at least one"]),
        (ptg_config(["id_short", "id_short"]), ["eval.splits", "'id_short' twice"]),
        (ptg_config(["nosuch"]), ["eval.splits", "'nosuch'", "id_short", "longer_programs"]),
        (ptg_config(["test"]), ["eval.splits", "'test'", "eval.bins", "id_mid"]),
        (ptg_config(["train"]), ["eval.splits", "'train'", "train.bin", "train_short"]),
        (
            {"task": "toy_majority", "eval": {"splits": ["val"]}},
            ["eval.splits", "'val'", "toy_majority", "no named test splits"],
        ),
        (
            {"task": "toy_named_splits", "eval": {"splits": ["1-4"]}},
            ["eval.splits", "'1-4'", "test bin"],
        ),
    ],
)
def test_bad_splits_are_one_line_errors_naming_the_field(data, words):
    with pytest.raises(RasplabError) as err:
        validate_runs([experiment_from_dict(data)])
    message = str(err.value)
    assert "\n" not in message and all(w in message for w in words), message


def test_bad_split_is_rejected_before_a_sweep_or_train_writes_anything(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    sweep = {"name": "bad", "base": ptg_config(["longer_lists", "nosuch"]), "grid": {"seed": [0]}}
    with pytest.raises(RasplabError, match="eval.splits"):
        run_sweep(sweep, db, progress=False)
    assert not db.exists()
    with pytest.raises(SystemExit) as done:
        main(["train", "task=ptg", "eval.splits=[train_mid, nope]", "--db", str(db)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1 and "nope" in err
    assert not db.exists()
