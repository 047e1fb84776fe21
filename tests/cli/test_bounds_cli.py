"""`rasplab bounds figure | margin` through the real entry point on tiny sweeps, errors included."""

from __future__ import annotations

import json

import pytest

from rasplab.cli import main
from rasplab.harness.config import load_config
from rasplab.harness.train import train

TINY = """
name: tiny_modp
base:
  task: modp_task
  task_options: {k: 1}
  model: {pe: ape, layers: 1, heads: 1, width: 16, mlp_ratio: 16, init: mup}
  train: {steps: 2, batch_size: 16, lr: 0.01, param_groups: mup, weight_decay: 0.0,
          schedule: constant, grad_clip: 0.0, early_stop: false, eval_every: 2}
  eval: {size: 16, batch_size: 16, bins: [20-20, 80-80]}
grid:
  task_options.p: [5, 2]
  train.bin: [1-5, 1-10]
  seed: [0]
"""


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny ModPTask sweep config and an output folder (runs made by the first test)."""
    root = tmp_path_factory.mktemp("bounds")
    (root / "tiny.yaml").write_text(TINY)
    return root


def test_figure2_json_points_follow_the_curves_and_resume(capsys, tiny):
    args = [
        "bounds",
        "figure",
        "2",
        "--config",
        str(tiny / "tiny.yaml"),
        "--out",
        str(tiny / "out"),
    ]
    code, out, _ = cli(capsys, *args, "--epsilon", "0.2", "--workers", "1", "--json")
    assert code == 0
    summary = json.loads(out)
    assert {"figure", "slope", "intercept", "r2", "points"} <= set(summary) and summary[
        "figure"
    ] == 2
    assert len(summary["curves"]) == 4 and {c["test_lengths"][-1] for c in summary["curves"]} == {
        80
    }
    for point in summary["points"]:  # smallest N whose limiting loss is within ε, recomputed
        hits = [c["N"] for c in summary["curves"] if c["x"] == point["p"] and c["limit"] <= 0.2]
        assert point["N"] == (min(hits) if hits else None)
    for name in ("fig2.png", "fig2.md", "fig2.json"):
        assert (tiny / "out" / name).stat().st_size > 0
    code, again, _ = cli(capsys, *args, "--epsilon", "0.2", "--json")  # everything done: resumes
    assert code == 0 and json.loads(again)["curves"] == summary["curves"]


def test_figure3_attention_is_a_distribution(capsys, tiny):
    cfg = tiny / "tiny.yaml"
    code, out, _ = cli(
        capsys, "bounds", "figure", "3", "--config", str(cfg), "--out", str(tiny / "out"), "--json"
    )
    rows = json.loads(out)["points"]
    assert code == 0 and [r["N"] for r in rows] == [5, 10]  # only the p = 5 runs
    for r in rows:  # 16 positions ≡ 1 (mod 5) of 80, 64 others: the probabilities sum to 1
        assert r["on_mean"] * 16 + r["off_mean"] * 64 == pytest.approx(1.0, abs=1e-5)


def test_margin_json(capsys, tiny):
    summary = json.loads((tiny / "out" / "fig2.json").read_text())
    run_dir = summary["curves"][0]["run_dir"]
    code, out, _ = cli(capsys, "bounds", "margin", run_dir, "--json")
    q = json.loads(out)
    assert code == 0 and {"gamma", "L", "delta", "tau", "predicted_N"} <= set(q)
    assert q["gamma"] == pytest.approx(summary["curves"][0]["gamma"]) and q["tau"] == 0
    assert 1 <= q["delta"] <= 80 and q["L"] > 0
    code, text, _ = cli(capsys, "bounds", "margin", run_dir)
    keys = ("gamma", "L", "delta", "tau", "predicted_N", "log2_predicted_N")
    assert code == 0 and [line.split()[0] for line in text.splitlines()] == list(keys)
    assert text.splitlines()[3] == f"{'tau':18} 0"


def test_bad_input_exits_2_with_one_line(capsys, tmp_path):
    code, _, err = cli(capsys, "bounds", "figure", "4")
    assert code == 2 and err.count("\n") == 1 and "figures 1, 2 and 3" in err
    code, _, err = cli(capsys, "bounds", "figure", "1", "--epsilon", "0", "--out", str(tmp_path))
    assert code == 2 and "--epsilon must be a finite number > 0" in err
    code, _, err = cli(capsys, "bounds", "margin", str(tmp_path / "nothing"))
    assert code == 2 and "holds no finished run" in err
    deep = load_config(None, ["task=modp_task", "model.layers=2", "model.width=8", "model.heads=1",
                              "train.steps=1", "train.batch_size=4", "eval.size=4", "train.bin=1-5",
                              "eval.bins=[5-5]"])  # fmt: skip
    train(deep, run_dir=tmp_path / "deep")
    code, _, err = cli(capsys, "bounds", "margin", str(tmp_path / "deep"), "--json")
    assert code == 2 and err.count("\n") == 1 and "this model has 2 layers" in err


@pytest.mark.parametrize("bad", ["0", "-3"])
def test_figure_batch_runs_below_one_is_one_line_and_exit_2(capsys, tiny, tmp_path, bad):
    out_dir = tmp_path / "never"
    args = ["bounds", "figure", "1", "--config", str(tiny / "tiny.yaml"), "--out", str(out_dir)]
    code, _, err = cli(capsys, *args, "--batch-runs", bad)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--batch-runs must be at least 1" in err and not out_dir.exists()


def test_figure_fit_is_one_stderr_line_even_without_a_line(capsys, tiny):
    # the tiny sweep's runs exist (first test): ε so small that no setting reaches it gives no
    # line and says so; ε above every loss gives N(ε) = 5 for both p: a flat line, R² undefined
    args = ["bounds", "figure", "2", "--config", str(tiny / "tiny.yaml"), "--out"]
    code, out, err = cli(capsys, *args, str(tiny / "none"), "--epsilon", "1e-12")
    assert code == 0 and out == ""
    assert err.splitlines()[-2] == (
        "figure 2: no fitted line: N(ε = 1e-12) found for 0 of 2 p values (a line needs 2)"
    )
    code, out, err = cli(capsys, *args, str(tiny / "all"), "--epsilon", "100", "--json")
    summary = json.loads(out)
    assert code == 0 and [pt["N"] for pt in summary["points"]] == [5, 5]
    assert err.strip() == (
        "figure 2: N(ε = 100) = 0 · p + 5, R² undefined (every N equal), from 2 of 2 p values"
    )
