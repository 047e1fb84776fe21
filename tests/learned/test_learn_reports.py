"""Issue #39 on ``rasplab learn``: the labels the training set never contains are reported
(JSON, result.json, a stderr warning) with the program's answers on them; values that would
train a NaN model or measure nothing are refused in one line (exit 2, nothing written); JSON is
strict; ``--help`` lists every KEY=VALUE with its default; a saved run is swapped in whole."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from rasplab.cli import main
from rasplab.cli.learn import KEYS
from rasplab.learned import LearnConfig, build
from rasplab.learned.rundir import save_run
from rasplab.tasks import get_task

TINY = [
    "cat_heads=0",
    "count_heads=1",
    "mlps=0",
    "epochs=2",
    "train_n=300",
    "val_n=50",
    "test_n=50",
    "verify_length=2",
    "random_checks=20",
]


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_labels_never_in_training_are_reported_and_warned(capsys, tmp_path):
    out = tmp_path / "run"
    code, stdout, err = cli(capsys, "learn", "rasp_hist", *TINY, "--out", str(out), "--json")
    assert code == 0
    record = json.loads(stdout)  # strict JSON: json.loads would accept NaN, so check the text
    assert "NaN" not in stdout and "Infinity" not in stdout
    saved = json.loads((out / "result.json").read_text())
    # 300 inputs of at most 7 symbols from 6: seven equal symbols are (almost surely) absent
    assert "7" in record["labels_not_in_training"]
    assert saved["labels_not_in_training"] == record["labels_not_in_training"]
    seven = saved["on_labels_not_in_training"]["7"]
    assert seven["positions"] >= 7 and 0 <= seven["right"] <= seven["positions"]
    if seven["example"] is not None:  # the example's label is what the task says it is
        ex = seven["example"]
        labels = get_task("rasp_hist").labels(ex["input"].split())
        assert labels[ex["position"]] == "7" and ex["program"] != "7"
    assert "warning: the training set never contains the label(s)" in err and " 7" in err


@pytest.mark.parametrize(
    "arg, message",
    [
        ("lr=.inf", "learn.lr must be a finite number > 0; got inf"),
        ("lr=1e400", "learn.lr must be a finite number > 0"),
        ("lr=.nan", "learn.lr must be a finite number > 0; got nan"),
        ("tau_start=.nan", "learn.tau_start must be a finite number > 0; got nan"),
        ("epochs=true", "learn.epochs must be an integer >= 1; got True"),
        ("seed=99999999999999999999", "learn.seed must be an integer from 0 to 2**63-1"),
        ("train_n=0", "learn.train_n must be an integer >= 1"),
        ("test_n=0", "learn.test_n must be an integer >= 1 (an accuracy on no examples"),
        ("val_n=0", "learn.val_n must be an integer >= 1 (an accuracy on no examples"),
        ("verify_length=100", "learn.verify_length 100 means"),
    ],
)
def test_values_that_measure_nothing_or_train_nan_are_refused(capsys, tmp_path, arg, message):
    out = tmp_path / "run"
    code, stdout, err = cli(capsys, "learn", "rasp_hist", arg, "--out", str(out))
    assert code == 2 and stdout == "" and message in err and err.count("\n") == 1
    assert not out.exists()


def test_help_lists_every_key_with_its_default(capsys):
    code, stdout, _ = cli(capsys, "learn", "--help")
    assert code == 0
    listed = {key: default for key, default, _ in KEYS}
    fields = {f.name: f.default for f in dataclasses.fields(LearnConfig)}
    plain = {k: v for k, v in fields.items() if k not in ("task", "task_options")}
    assert {k: v for k, v in listed.items() if "." not in k} == {
        k: str(v) for k, v in plain.items()
    }
    options = {k.split(".")[1] for k in listed if "." in k}
    assert options == {"k", "max_len", "max_digits"}
    for key, default in listed.items():
        assert f"{key}={default} " in stdout


def test_a_saved_run_replaces_the_earlier_one_in_one_step(tmp_path, monkeypatch):
    config = LearnConfig(task="rasp_hist")
    _, model = build(config)
    out = tmp_path / "run"
    save_run(out, config, model, "# first\n", {"n": 1})
    real = shutil.rmtree
    seen = []

    def rmtree(path, *args, **kwargs):  # whenever anything is deleted, a run must be in place
        real(path, *args, **kwargs)
        seen.append((out / "config.json").is_file() and (out / "program.py").is_file())

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    save_run(out, config, model, "# second\n", {"n": 2})
    assert seen and all(seen)
    assert (out / "program.py").read_text() == "# second\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    with pytest.raises(ValueError):  # strict JSON: a NaN result is never written
        save_run(out, config, model, "# third\n", {"n": float("nan")})
    assert (out / "program.py").read_text() == "# second\n"
