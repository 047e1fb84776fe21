"""The `rasplab train | sweep | report` commands: JSON output, files, and bad input (exit 2)."""

from __future__ import annotations

import json

import pytest
import yaml

from rasplab.cli import main

SMALL = [
    "task=binary_majority",
    "model.layers=1",
    "model.heads=1",
    "model.width=8",
    "train.steps=4",
    "train.batch_size=8",
    "train.eval_every=2",
    "train.bin=1-8",
    "eval.size=16",
    "eval.bins=[1-8, 9-12]",
]


def run(argv, capsys):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_train_json_prints_the_run_result(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    code, out, err = run(
        ["train", *SMALL, "model.pe=nope", "--json", "--no-progress", "--db", str(db)], capsys
    )
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert set(result["bins"]) == {"1-8", "9-12"} and result["variant"] == "nope"
    assert all(0 <= a <= 1 for a in result["bins"].values())
    run_dir = tmp_path / "r-runs" / result["run_id"]
    assert (run_dir / "config.yaml").is_file() and (run_dir / "curves.png").is_file()
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["model"]["pe"] == "nope"
    assert str(db) in err and "curves.png" in err

    code, out, err = run(["report", "--db", str(db), "--out", str(tmp_path / "rep")], capsys)
    assert code == 0 and out == ""
    rows = (tmp_path / "rep" / "runs.csv").read_text().splitlines()
    assert len(rows) == 2 and result["run_id"] in rows[1]


def test_train_reads_a_config_file_then_overrides(tmp_path, capsys):
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({"task": "binary_majority", "model": {"pe": "ape"}}))
    code, out, _ = run(
        [
            "train",
            str(path),
            *SMALL,
            "seed=2",
            "--json",
            "--no-progress",
            "--db",
            str(tmp_path / "r.sqlite"),
        ],
        capsys,
    )
    result = json.loads(out)
    assert code == 0 and result["seed"] == 2 and result["variant"] == "ape"


@pytest.mark.parametrize(
    "args, words",
    [
        (["model.pe=spiral"], ["model.pe", "spiral", "ape", "nope"]),
        (["task=nosuch"], ["task", "nosuch", "binary_majority"]),
        (["model.heads=3"], ["model.heads", "model.width"]),
        (["model.depth=2"], ["model.depth", "layers"]),
        (["train.steps"], ["key=value"]),
        (["missing.yaml"], ["missing.yaml", "does not exist"]),
        (["garbage.yaml"], ["garbage.yaml", "not valid YAML", "line 1"]),
    ],
)
def test_train_bad_input_exits_2_with_one_line(tmp_path, capsys, args, words):
    db = tmp_path / "r.sqlite"
    (tmp_path / "garbage.yaml").write_text(": : garbage [\n")
    if args[0].endswith(".yaml"):
        argv = ["train", str(tmp_path / args[0]), *SMALL]
    else:
        argv = ["train", *SMALL, *args]
    code, out, err = run([*argv, "--db", str(db)], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and all(w in err for w in words)
    assert not db.exists() and not (tmp_path / "r-runs").exists()  # nothing written


def test_db_under_a_file_exits_2(tmp_path, capsys):
    """A --db whose folder cannot be created used to end in a FileExistsError traceback."""
    (tmp_path / "plain").write_text("a file, not a folder")
    db = tmp_path / "plain" / "r.sqlite"
    code, out, err = run(["train", *SMALL, "--no-progress", "--db", str(db)], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "a file is in the way" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]


def test_report_bad_out_and_unknown_sweep_exit_2(tmp_path, capsys):
    """An unwritable --out and an unknown --sweep are one-line errors leaving nothing behind."""
    db = tmp_path / "r.sqlite"
    code, _, _ = run(["train", *SMALL, "--no-progress", "--db", str(db)], capsys)
    assert code == 0
    (tmp_path / "plain").write_text("a file, not a folder")
    before = sorted(p.name for p in tmp_path.iterdir())
    for out_dir in (tmp_path / "plain", tmp_path / "plain" / "rep"):
        code, out, err = run(["report", "--db", str(db), "--out", str(out_dir)], capsys)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
        assert "cannot write the report" in err
    rep = tmp_path / "rep"
    code, out, err = run(
        ["report", "--db", str(db), "--sweep", "nosuch", "--out", str(rep)], capsys
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "no sweep 'nosuch'" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_corrupt_checkpoint_exits_2(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    code, out, _ = run(["train", *SMALL, "--json", "--no-progress", "--db", str(db)], capsys)
    run_dir = tmp_path / "r-runs" / json.loads(out)["run_id"]
    (run_dir / "model.safetensors").write_bytes(b"garbage")
    code, out, err = run(["train", *SMALL, "--no-progress", "--db", str(db)], capsys)
    assert code == 2 and "corrupt" in err and len(err.strip().splitlines()) == 1


def test_report_without_database_exits_2(tmp_path, capsys):
    code, out, err = run(
        ["report", "--db", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "rep")], capsys
    )
    assert code == 2 and "does not exist" in err and "--db" in err
    assert not (tmp_path / "rep").exists() and not (tmp_path / "none.sqlite").exists()


def test_sweep_bad_variant_and_backend_exit_2(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(
        yaml.safe_dump({"base": {"task": "binary_majority"}, "grid": {"variant": ["ape", "warp"]}})
    )
    code, _, err = run(["sweep", str(path), "--db", str(tmp_path / "r.sqlite")], capsys)
    assert code == 2 and "unknown variant 'warp'" in err and "nope" in err
    code, _, err = run(
        ["sweep", str(path), "--backend", "slurm", "--db", str(tmp_path / "r.sqlite")], capsys
    )
    assert code == 2 and "unknown backend 'slurm'" in err and "local, ray" in err
    assert not (tmp_path / "r.sqlite").exists()


def _mini_base(*bins: str) -> dict:
    """The base experiment of the tiny sweeps below (binary_majority, 2 steps)."""
    return {
        "task": "binary_majority",
        "model": {"layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 2, "batch_size": 8, "eval_every": 2, "bin": "1-8"},
        "eval": {"size": 8, "bins": list(bins)},
    }


def test_sweep_then_report(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    base = _mini_base("1-8", "9-12")
    path.write_text(
        yaml.safe_dump(
            {"name": "mini", "base": base, "grid": {"variant": ["nope"], "seed": [0, 1]}}
        )
    )
    db = tmp_path / "r.sqlite"
    code, out, err = run(
        ["sweep", str(path), "--db", str(db), "--workers", "1", "--no-progress"], capsys
    )
    assert code == 0 and out == ""
    assert "2 executed" in err and "summary.md" in err
    assert (tmp_path / "report" / "summary.md").is_file()
    code, _, err = run(
        ["sweep", str(path), "--db", str(db), "--workers", "1", "--no-progress"], capsys
    )
    assert code == 0 and "2 already done, 0 executed" in err
    code, _, err = run(
        [
            "sweep",
            str(path),
            "--db",
            str(tmp_path / "other.sqlite"),
            "--workers",
            "1",
            "--no-progress",
            "--only",
            "seed=1",
        ],
        capsys,
    )
    assert code == 0 and "1 runs, 0 already done, 1 executed" in err


def test_report_keeps_only_the_current_grid_of_an_edited_config(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    base = _mini_base("1-8")
    sweep = {"name": "mini", "base": base, "grid": {"variant": ["nope"], "seed": [0]}}
    path.write_text(yaml.safe_dump(sweep))
    db = tmp_path / "r.sqlite"
    argv = ["sweep", str(path), "--db", str(db), "--workers", "1", "--no-progress"]
    assert run(argv, capsys)[0] == 0
    base["model"]["width"] = 16  # the config changes: its old run stays in the database
    path.write_text(yaml.safe_dump(sweep))
    assert run(argv, capsys)[0] == 0
    rows = (tmp_path / "report" / "runs.csv").read_text().splitlines()
    assert len(rows) == 2  # header + the run of the current config only
    code, _, _ = run(["report", "--db", str(db), "--out", str(tmp_path / "all")], capsys)
    assert code == 0 and len((tmp_path / "all" / "runs.csv").read_text().splitlines()) == 3
    out = tmp_path / "current"
    code, _, _ = run(["report", "--db", str(db), "--config", str(path), "--out", str(out)], capsys)
    assert code == 0 and (out / "runs.csv").read_text().splitlines() == rows


def test_train_refuses_a_run_another_live_process_holds(tmp_path, capsys):
    import socket
    import sqlite3
    import subprocess
    import sys

    from rasplab.harness.config import load_config
    from rasplab.harness.store import ResultsStore

    db = tmp_path / "r.sqlite"
    run_id = load_config(None, SMALL).hash()
    with ResultsStore(db) as store:
        store.register(load_config(None, SMALL))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:  # a claim of a live process on this host, as a sweep's would be
        with sqlite3.connect(db) as con:
            con.execute(
                "UPDATE runs SET status='running', claimed_by=?, claim_expires=? WHERE run_id=?",
                (f"{socket.gethostname()}:{other.pid}:t", 4e9, run_id),
            )
        con.close()
        code, out, err = run(["train", *SMALL, "--no-progress", "--db", str(db)], capsys)
    finally:
        other.kill()
        other.wait()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"run {run_id} is being trained by another process" in err
    assert not (tmp_path / "r-runs" / run_id).exists()  # nothing trained


def test_train_renews_its_claim_while_it_trains(tmp_path, capsys, monkeypatch):
    # a run that trains longer than a claim lasts stays held: a sweep (another owner) asking
    # for it meanwhile is told "held", not handed the run a second time
    import time

    import rasplab.harness as harness
    from rasplab.harness import claims
    from rasplab.harness.config import load_config
    from rasplab.harness.store import ResultsStore

    monkeypatch.setattr(claims, "TTL", 0.4)  # renewed every 0.1 s
    db = tmp_path / "r.sqlite"
    run_id = load_config(None, SMALL).hash()
    seen = []
    real_train = harness.train

    def slow_train(config, **kwargs):
        time.sleep(1.2)  # three claim lifetimes
        with ResultsStore(db) as store:
            seen.append(claims.claim(store, run_id, "elsewhere:1:x", 0.4))
        return real_train(config, **kwargs)

    monkeypatch.setattr(harness, "train", slow_train)
    code, out, err = run(["train", *SMALL, "--no-progress", "--db", str(db)], capsys)
    assert code == 0, err
    assert seen == ["held"]
