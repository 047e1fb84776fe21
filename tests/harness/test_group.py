"""Stacked run groups: K runs trained together equal the same K runs trained separately."""

from __future__ import annotations

import copy

import pytest
import torch

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.harness import ResultsStore, run_sweep
from rasplab.harness.checkpoint import read_checkpoint
from rasplab.harness.config import experiment_from_dict
from rasplab.harness.encoding import Encoder
from rasplab.harness.group import _Member, plan_groups, train_group
from rasplab.harness.setup import FINAL
from rasplab.harness.stacked import token_layout
from rasplab.harness.train import train
from rasplab.seeding import generator
from rasplab.tasks import get_task


def _configs(tiny, rows):
    """Configs from (task, seed, lr, pe, steps) rows around the tiny base config."""
    out = []
    for task, seed, lr, pe, steps in rows:
        data = copy.deepcopy(tiny)
        data.update(task=task, seed=seed)
        data["model"].update(pe=pe, layers=2, heads=2, width=16)
        data["train"].update(lr=lr, steps=steps, eval_every=5, early_stop=False)
        out.append(experiment_from_dict(data))
    return out


def _same(grouped, separate):
    """Assert that two results agree: curves (losses), metrics and step counts."""
    assert grouped.steps == separate.steps
    assert grouped.bins == separate.bins
    assert len(grouped.curves) == len(separate.curves)
    for a, b in zip(grouped.curves, separate.curves):
        assert a["step"] == b["step"]
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4, abs=1e-6)


ROWS = [
    ("toy_majority", 0, 0.01, "ape", 15),
    ("toy_copy", 1, 0.003, "ape", 20),  # same vocabulary and outputs, another task
    ("toy_majority", 2, 0.01, "ape", 10),  # stops earlier: the group goes on without it
]


def test_group_equals_separate_runs_step_by_step(tiny):
    configs = _configs(tiny, ROWS)
    grouped = train_group(configs)
    for config, result in zip(configs, grouped):
        _same(result, train(config))


def test_group_with_the_regularizer_equals_separate_runs(tiny):
    configs = _configs(tiny, ROWS[:2])
    configs = [
        experiment_from_dict(
            {**c.to_dict(), "train": {**c.to_dict()["train"], "pe_penalty": 10.0,
                                      "weight_penalty": 0.01}}
        )
        for c in configs
    ]  # fmt: skip
    for config, result in zip(configs, train_group(configs)):
        alone = train(config)
        _same(result, alone)
        plain = train(experiment_from_dict({**config.to_dict(), "train": {
            **config.to_dict()["train"], "pe_penalty": 0.0, "weight_penalty": 0.0}}))  # fmt: skip
        assert plain.curves[0]["loss"] != pytest.approx(alone.curves[0]["loss"], rel=1e-6)


def test_weights_after_a_group_equal_separate_weights(tiny, tmp_path):
    configs = _configs(tiny, ROWS[:2])
    first = train_group(configs, [tmp_path / "g0", tmp_path / "g1"])
    again = train_group(configs, [tmp_path / "g0", tmp_path / "g1"])  # finished: no training
    assert [(r.steps, r.bins, r.curves) for r in again] == [
        (r.steps, r.bins, r.curves) for r in first
    ]
    for i, config in enumerate(configs):
        train(config, run_dir=tmp_path / f"s{i}")
        grouped, _ = read_checkpoint(tmp_path / f"g{i}" / FINAL)
        alone, _ = read_checkpoint(tmp_path / f"s{i}" / FINAL)
        assert grouped.keys() == alone.keys()
        # Adam divides by sqrt(v): where a gradient is ~0, float noise moves a weight by a
        # fraction of one step (lr 0.01); a wrong update would be off by whole steps
        for name in alone:
            torch.testing.assert_close(grouped[name], alone[name], rtol=1e-3, atol=2e-4)


def test_a_group_killed_midway_resumes_alone_or_grouped(tiny, tmp_path, monkeypatch):
    configs = _configs(tiny, ROWS[:2])
    dirs = [tmp_path / "r0", tmp_path / "r1"]
    real = _Member.checkpoint
    calls = []

    def checkpoint_then_die(self):
        real(self)
        calls.append(1)
        if len(calls) == 2:  # both runs have a checkpoint at step 5
            raise KeyboardInterrupt

    monkeypatch.setattr(_Member, "checkpoint", checkpoint_then_die)
    with pytest.raises(KeyboardInterrupt):
        train_group(configs, dirs)
    monkeypatch.setattr(_Member, "checkpoint", real)
    resumed_alone = train(configs[0], run_dir=dirs[0])  # the checkpoint is the separate format
    resumed_group = train_group(configs[1:], dirs[1:])[0]
    _same(resumed_alone, train(configs[0]))
    _same(resumed_group, train(configs[1]))


def test_incompatible_runs_are_split_never_mixed(tiny):
    configs = _configs(
        tiny, [("toy_majority", 0, 0.01, "ape", 5), ("toy_next_set", 0, 0.01, "ape", 5)]
    )
    assert [len(g) for g in plan_groups(configs, 4)] == [1, 1]
    with pytest.raises(RasplabError, match="must share"):
        train_group(configs)


def test_sweep_with_batch_runs_stores_what_separate_runs_store(tiny, tmp_path):
    sweep = {
        "name": "grouped",
        "base": {**tiny, "train": {**tiny["train"], "steps": 9, "device": "auto"}},
        "grid": {"task": ["toy_majority", "toy_copy", "toy_next_set"], "seed": [0, 1]},
        # a run that cannot stack trains alone in the same sweep
        "overrides": [{"match": {"task": "toy_next_set", "seed": 1}, "set": {"model.pe": "rope"}}],
    }
    grouped = run_sweep(sweep, tmp_path / "g.sqlite", workers=1, progress=False, batch_runs=4)
    separate = run_sweep(sweep, tmp_path / "s.sqlite", workers=1, progress=False)
    assert grouped.executed == separate.executed == 6 and grouped.failed == 0
    again = run_sweep(sweep, tmp_path / "g.sqlite", workers=1, progress=False, batch_runs=4)
    assert again.executed == 0 and again.skipped == 6
    with ResultsStore(tmp_path / "g.sqlite") as g, ResultsStore(tmp_path / "s.sqlite") as s:
        for run_id in grouped.run_ids:
            assert g.get(run_id).metrics["bins"] == s.get(run_id).metrics["bins"]


@pytest.mark.parametrize("bad", [0, -2])
def test_batch_runs_below_one_is_refused(tiny, tmp_path, bad):
    sweep = {"base": tiny, "grid": {"seed": [0]}}
    with pytest.raises(RasplabError, match="--batch-runs must be at least 1"):
        run_sweep(sweep, tmp_path / "x.sqlite", progress=False, batch_runs=bad)
    assert not (tmp_path / "x.sqlite").exists()


@pytest.mark.parametrize("bad", ["0", "-1"])
def test_cli_batch_runs_below_one_is_one_line_and_exit_2(tiny, tmp_path, capsys, bad):
    import yaml

    from rasplab.cli import main

    config = tmp_path / "s.yaml"
    config.write_text(yaml.safe_dump({"base": tiny, "grid": {"seed": [0]}}))
    db = tmp_path / "x.sqlite"
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", str(config), "--db", str(db), "--batch-runs", bad, "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2
    assert len(err.splitlines()) == 1 and "--batch-runs must be at least 1" in err
    assert not db.exists()


def test_runs_of_one_task_and_seed_share_each_draw_and_still_equal_separate_runs(tiny, monkeypatch):
    # two learning rates of one task and seed draw the same batches: drawn once per step
    configs = _configs(tiny, [("toy_majority", 0, 0.01, "ape", 6), ("toy_majority", 0, 0.003, "ape", 6),
                              ("toy_copy", 0, 0.01, "ape", 6)])  # fmt: skip
    draws = []
    real = _Member.batch

    def counted(self):
        draws.append((self.config.task, self.state["step"]))
        return real(self)

    monkeypatch.setattr(_Member, "batch", counted)
    grouped = train_group(configs)
    assert sorted(draws) == sorted([(t, s) for t in ("toy_majority", "toy_copy") for s in range(6)])
    monkeypatch.setattr(_Member, "batch", real)
    for config, result in zip(configs, grouped):
        _same(result, train(config))


def _bounds_configs(rows, steps=6, stop_loss=0.0):
    """Seed 004's model (1 layer, 1 head, d = 16, μP init, μP attention scale, μP learning
    rates, regression at the last position) on (task, options, seed) rows."""
    out = []
    for task, options, seed in rows:
        out.append(experiment_from_dict({
            "task": task, "task_options": options, "seed": seed,
            "model": {"pe": "ape", "layers": 1, "heads": 1, "width": 16, "mlp_ratio": 16,
                      "init": "mup", "attn_scale": "mup"},
            "train": {"steps": steps, "batch_size": 32, "lr": 0.01, "param_groups": "mup",
                      "schedule": "constant", "grad_clip": 0.0, "early_stop": False,
                      "eval_every": 3, "threads": 1, "bin": "1-12", "stop_loss": stop_loss},
            "eval": {"size": 20, "batch_size": 20, "bins": ["16-16", "24-24"]},
        }))  # fmt: skip
    return out


BOUNDS_ROWS = [
    ("simple_task", {"omega": 2.0}, 0),
    ("simple_task", {"omega": 2.0}, 1),
    ("modp_task", {"p": 3, "k": 1}, 0),  # another vocabulary: a group of its own
]


def test_regression_mup_runs_group_and_equal_separate_runs(tmp_path):
    configs = _bounds_configs(BOUNDS_ROWS[:2])
    assert len(plan_groups(configs, 8)) == 1
    grouped = train_group(configs, [tmp_path / "g0", tmp_path / "g1"])
    for i, (config, result) in enumerate(zip(configs, grouped)):
        alone = train(config, run_dir=tmp_path / f"s{i}")
        _same(result, alone)
        for name in result.mse:
            assert result.mse[name] == pytest.approx(alone.mse[name], rel=1e-3)
        g, _ = read_checkpoint(tmp_path / f"g{i}" / FINAL)
        s, _ = read_checkpoint(tmp_path / f"s{i}" / FINAL)
        for name in s:  # μP's 1/width rates on hidden matrices: a wrong scale moves them ~16x
            a, b = g[name], s[name]
            if name.endswith("attn.qkv.bias"):  # the key bias shifts every logit of a query
                # equally: its true gradient is 0 and Adam turns float noise into steps
                a, b = torch.cat([a[:16], a[32:]]), torch.cat([b[:16], b[32:]])
            torch.testing.assert_close(a, b, rtol=1e-3, atol=2e-5)


def test_regression_runs_of_another_vocabulary_are_not_mixed():
    configs = _bounds_configs(BOUNDS_ROWS)
    assert sorted(len(g) for g in plan_groups(configs, 8)) == [1, 2]


def test_stop_loss_in_a_group_stops_each_run_where_it_stops_alone():
    # a loss threshold both runs cross, at different steps (17 and 36 when this was written):
    # the first leaves the group, the other trains on
    configs = _bounds_configs(BOUNDS_ROWS[:2], steps=40, stop_loss=0.3)
    grouped = train_group(configs)
    for config, result in zip(configs, grouped):
        alone = train(config)
        assert result.loss_reached_step == alone.loss_reached_step
        assert result.steps == alone.steps and result.stopped_early == alone.stopped_early
    reached = [r.loss_reached_step for r in grouped]
    assert None not in reached and len(set(reached)) == 2


def _layout_by_rows(batches, pad_ids, chunk_rows):
    """The token layout written out example by example from its definition: each run's real
    tokens in batch order, padded to the longest run; all examples of all runs sorted stably
    by length (run, then row), cut into chunks of ``chunk_rows * R`` examples, each example
    right-padded to its chunk's longest with its own last token."""
    R, B = len(batches), batches[0].input_ids.shape[0]
    out = {"ids": [], "positions": [], "targets": [], "scored": []}
    where = {}  # (run, row, t) -> index on the flattened [R * N] axis
    N = max(int(b.pad_mask.sum()) for b in batches)
    for r, (b, pad) in enumerate(zip(batches, pad_ids)):
        ids, pos, tgt, sc = [], [], [], []
        for i in range(B):
            off = int(b.offsets[i]) if b.offsets is not None else 0
            for t in range(int(b.pad_mask[i].sum())):
                where[r, i, t] = r * N + len(ids)
                ids.append(int(b.input_ids[i, t]))
                pos.append(off + t)
                tgt.append(b.targets[i, t].item())
                sc.append(bool(b.scored[i, t]))
        extra = N - len(ids)
        for k, v, fill in zip(out, (ids, pos, tgt, sc), (pad, 0, -100, False)):
            out[k].append(v + [fill] * extra)
    seqs = sorted(((r, i) for r in range(R) for i in range(B)),
                  key=lambda s: int(batches[s[0]].pad_mask[s[1]].sum()))  # fmt: skip
    gather, back, chunks = [], [None] * (R * N), []
    for lo in range(0, R * B, chunk_rows * R):
        chunk = seqs[lo : lo + chunk_rows * R]
        lengths = [int(batches[r].pad_mask[i].sum()) for r, i in chunk]
        T = max(lengths)
        chunks.append((len(gather), len(chunk), T))
        for (r, i), n in zip(chunk, lengths):
            for t in range(T):
                if t < n:
                    back[where[r, i, t]] = len(gather)
                gather.append(where[r, i, min(t, n - 1)])
    for r in range(R):  # padding tokens: the slot of their run's first token
        for j in range(r * N, r * N + N):
            back[j] = back[r * N] if back[j] is None else back[j]
    return out | {"gather": gather, "back": back, "chunks": chunks}


@pytest.mark.parametrize("chunk_rows", [1, 3, 8])
def test_token_layout_equals_the_example_by_example_layout(chunk_rows):
    batches, pads = [], []
    for name, opts, seed in [("simple_task", {"omega": 2.0}, 0), ("simple_task", {}, 1),
                             ("toy_majority", {}, 2)]:  # fmt: skip
        enc = Encoder(get_task(name, **opts))
        bin = Bin(1, 9) if name != "toy_majority" else enc.task.train_bin
        batches.append(enc.train_batch(generator(seed, "l"), bin, 20, 40 if seed else None))
        pads.append(enc.pad_id)
    # regression (offsets in one run only); classes, one draw shared by two runs
    for group, pad in ((batches[:2], pads[:2]), ([batches[2]] * 2, [pads[2]] * 2)):
        lay = token_layout(group, pad, chunk_rows)
        want = _layout_by_rows(group, pad, chunk_rows)
        assert lay.ids.tolist() == want["ids"] and lay.positions.tolist() == want["positions"]
        assert lay.targets.tolist() == want["targets"] and lay.scored.tolist() == want["scored"]
        assert lay.chunks == want["chunks"]
        assert lay.gather.tolist() == want["gather"] and lay.back.tolist() == want["back"]


@pytest.fixture
def float64():
    """Train in float64 (every model and stacked buffer built meanwhile), then restore."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _three_tomita4_models():
    """The encoder and three 2-layer APE models (seeds 0-1-2) of the layout tests."""
    from rasplab.models import ModelConfig, build_model

    enc = Encoder(get_task("tomita4"))
    cfg = ModelConfig(pe="ape", layers=2, heads=2, width=16)
    return enc, [build_model(cfg, enc.vocab_size, enc.num_outputs, 60, seed=s) for s in (0, 1, 2)]


def test_stacked_forward_equals_each_model_on_its_own_batch(float64):
    # the layout only moves padding: each run's outputs at its real tokens are its own
    # model's outputs on its own padded batch (float64: no rounding to hide behind)
    from rasplab.harness.stacked import StackedRuns

    enc, models = _three_tomita4_models()
    batches = [enc.train_batch(generator(s, "f"), Bin(1, 40), 12, 60) for s in (0, 1, 2)]
    lay = token_layout(batches, [enc.pad_id] * 3, chunk_rows=2)
    out = StackedRuns(models).forward(lay)
    for k, (m, b) in enumerate(zip(models, batches)):
        want = m(b.input_ids, b.pad_mask, b.offsets)
        n = int(b.pad_mask.sum())
        assert torch.allclose(out[k, :n], want[b.pad_mask], rtol=0, atol=1e-12)


@pytest.mark.parametrize("picked", [False, True])
def test_stacked_gradients_equal_each_models_own_gradients(float64, picked):
    # the stacked backward (token <-> slot moves, chunked attention, per-run norms and maps)
    # gives each run the gradient of its own model's loss on its own padded batch (float64)
    import torch.nn.functional as F

    from rasplab.harness.stacked import StackedRuns, scored_tokens, stacked_loss

    enc, models = _three_tomita4_models()
    # other lengths per run: padding tokens on the token axis and padding slots
    bins = [Bin(1, 40), Bin(1, 8), Bin(20, 30)]
    batches = [enc.train_batch(generator(s, "g"), b, 12, 60) for s, b in zip((0, 1, 2), bins)]
    lay = token_layout(batches, [enc.pad_id] * 3, chunk_rows=2)
    stack = StackedRuns(models)
    pick = scored_tokens(lay) if picked else None
    stacked_loss(stack.forward(lay, picked=pick), lay, pick).sum().backward()
    grads = stack._views(stack.flat.grad)
    for k, (m, b) in enumerate(zip(models, batches)):
        out = m(b.input_ids, b.pad_mask, b.offsets)
        F.cross_entropy(out[b.scored], b.targets[b.scored]).backward()
        for name, p in m.named_parameters():
            assert torch.allclose(grads[name][k], p.grad, rtol=0, atol=1e-12), name


def test_a_diverging_run_leaves_the_group_as_diverged_and_the_others_go_on(tiny):
    configs = _configs(tiny, ROWS[:2])
    data = configs[0].to_dict()
    data["train"].update(lr=1e30, grad_clip=0.0)
    configs[0] = experiment_from_dict(data)
    grouped = train_group(configs)
    alone = [train(c) for c in configs]
    assert grouped[0].status == alone[0].status == "diverged"
    assert grouped[0].steps == alone[0].steps < configs[0].train.steps
    assert grouped[1].status == "done"
    _same(grouped[1], alone[1])


def _fig1_slice_runs(steps: int) -> list:
    """Seed 0 of the bench_sweep slice of ``configs/fig1_cpu_scale.yaml`` (tomita4, D2,
    (aa)* x APE, NoPE, APE + regularizer), cut to ``steps`` steps, small test sets."""
    from pathlib import Path

    from rasplab.harness.sweepconfig import load_sweep, sweep_from_dict

    root = Path(__file__).resolve().parents[2]
    sweep = load_sweep(root / "configs" / "fig1_cpu_scale.yaml")
    cut = {"train.steps": steps, "train.eval_every": steps, "train.threads": 1, "eval.size": 20}
    data = {
        "base": sweep.base,
        "grid": {"task": ["tomita4", "d2", "aa_star"], "variant": sweep.grid["variant"],
                 "seed": [0]},
        "variants": sweep.variants,
        "overrides": [*sweep.overrides, {"match": {}, "set": cut}],
    }  # fmt: skip
    return sweep_from_dict(data).expand()


def test_fig1_slice_losses_agree_step_by_step_grouped_and_alone(float64):
    # bench_sweep's slice, grouped as a sweep with --batch-runs groups it and alone: every
    # step's training loss (regularizer included) agrees. In float64, so that rounding stays
    # far below what a real difference (another batch, schedule, decay, penalty) would make:
    # in float32 the same runs agree to ~1e-7 for the first ~10 steps, then rounding grows
    # (D2 with NoPE: 0.17 apart by step 20, as far as the run alone is from itself with its
    # batch rows reversed; docs/results/sweep_performance.md, issue 18)
    steps = 20
    runs = _fig1_slice_runs(steps)
    assert {(c.task, c.variant) for c in runs} == {
        (t, v) for t in ("tomita4", "d2", "aa_star") for v in ("ape", "nope", "ape_reg")
    }
    groups = plan_groups(runs, 15)
    assert max(len(g) for g in groups) == 2  # ape and ape_reg of a task stack
    grouped: dict = {}
    for group in groups:

        def record(i, step, loss, group=group):
            grouped.setdefault(group[i].hash(), []).append(loss)

        assert [r.steps for r in train_group(group, on_step=record)] == [steps] * len(group)
    for config in runs:
        alone: list[float] = []
        result = train(config, on_step=lambda step, loss, alone=alone: alone.append(loss))
        assert len(alone) == len(grouped[config.hash()]) == steps
        assert result.curves[-1]["loss"] == pytest.approx(sum(alone) / steps, rel=1e-12)
        worst = max(abs(a - b) for a, b in zip(alone, grouped[config.hash()]))
        assert worst < 1e-10, (config.task, config.variant, worst)
