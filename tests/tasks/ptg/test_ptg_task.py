"""The ``ptg`` task: registry, tokens and targets, records, packing, scoring, ``rasplab data``."""

import json

import numpy as np
import pytest

from rasplab.errors import RasplabError
from rasplab.tasks import get_task, task_names
from rasplab.tasks.base import Example
from rasplab.tasks.ptg.scoring import score_predictions, score_trace, summarize
from rasplab.tasks.ptg.tokens import EOS, NL, SEP, VOCAB, decode_trace, encode, pack

RECORD_KEYS = [
    "program",
    "first_line",
    "call",
    "trace",
    "lines",
    "steps",
    "variables",
    "list_length",
    "split",
]


@pytest.fixture(scope="module")
def task():
    return get_task("ptg")


@pytest.fixture(scope="module")
def examples(task):
    return task.dataset("train", n=40, seed=2)


def test_ptg_is_registered_with_a_fixed_vocabulary(task):
    assert "ptg" in task_names()
    assert task.vocab == VOCAB and len(set(VOCAB)) == len(VOCAB)
    assert task.target_kind == "answer" and task.classes == VOCAB
    assert [str(b) for b in task.test_bins] == ["90-103", "121-142", "172-300"]


def test_targets_are_the_trace_tokens_only(examples):
    for ex in examples:
        sep = ex.tokens.index(SEP)
        assert all(t in VOCAB for t in ex.tokens)
        assert all(y is None for y in ex.targets[:sep])
        assert ex.targets[sep:-1] == ex.tokens[sep + 1 :] and ex.targets[-2:] == (EOS, None)
        assert decode_trace(ex.targets[sep:-1]) == list(ex.instance.trace)
        assert ex.length == len(ex.instance.trace) == ex.targets.count(NL)


def test_program_tokens_carry_the_line_numbers(examples):
    for ex in examples[:10]:
        inst = ex.instance
        text = " ".join(ex.tokens[: ex.tokens.index(SEP)])
        last = inst.first_line + inst.program.n_lines - 1
        assert " ".join(str(inst.first_line)) + " def f (" in text
        assert " ".join(str(last)) + " <tab> return <nl>" in text


def test_records_follow_the_spec(task, examples):
    for ex in examples[:10]:
        rec = task.record(ex)
        assert list(rec) == RECORD_KEYS
        assert rec["split"] in ("train_short", "train_mid")
        assert rec["steps"] == len(rec["trace"]) == ex.length
        assert rec["lines"] == len(rec["program"].splitlines())
        assert rec["call"].startswith("f(") and " " not in rec["call"].replace(", ", "")
        assert json.loads(json.dumps(rec)) == rec


def test_training_draws_follow_table_3(task):
    rng = np.random.default_rng(0)
    lengths = task.draw_lengths(rng, task.train_bin, 2600)
    bins = [b for s in task.train_splits for b in s.bins]
    counts = [sum(1 for n in lengths.tolist() if n in b) for b in bins]
    assert sum(counts) >= 2600 and min(counts) > 140  # 200 per bin expected (overlaps add)
    for n in (6, 40, 103):
        ex = task.sample(rng, n)
        assert ex.length == n and ex.split in ("train_short", "train_mid")


def test_test_bins_are_the_named_trace_step_splits(task):
    named = task.dataset("id_mid", n=5, seed=0)
    via_bin = task.dataset("test", "90-103", n=5, seed=0)
    assert [e.tokens for e in named] == [e.tokens for e in via_bin]
    other = task.dataset("test", "60-70", n=3, seed=0)
    assert all(60 <= e.length <= 70 and 21 <= e.instance.program.n_lines <= 40 for e in other)


def test_unknown_split_and_scale_are_user_errors(task):
    with pytest.raises(RasplabError, match="longer_lists"):
        task.dataset("longest", n=1)
    with pytest.raises(RasplabError, match="cpu"):
        get_task("ptg", scale="tiny")


def test_cpu_scale_keeps_examples_small():
    cpu = get_task("ptg", scale="cpu")
    exs = cpu.dataset("longer_traces_2", n=10, seed=0)
    assert all(60 <= e.length <= 80 and len(e.tokens) <= 1024 for e in exs)


def test_pack_concatenates_in_order_up_to_the_limit(examples):
    packed = pack(examples, max_tokens=4096)
    assert all(len(p.tokens) <= 4096 for p in packed)
    assert sum((p.tokens for p in packed), ()) == sum((e.tokens for e in examples), ())
    assert sum((p.targets for p in packed), ()) == sum((e.targets for e in examples), ())
    assert sum(p.length for p in packed) == sum(e.length for e in examples)
    assert len(packed) < len(examples)
    with pytest.raises(RasplabError, match="max_tokens"):
        pack(examples, max_tokens=64)


def test_scores_count_correct_steps_before_the_first_error(examples):
    ex = examples[0]
    gold = list(ex.targets)
    assert score_predictions(ex, gold).correct
    wrong_at = [t for t, y in enumerate(gold) if y == NL][2] + 1  # first token of step 4
    bad = gold.copy()
    bad[wrong_at] = "<pad>"
    s = score_predictions(ex, bad)
    assert (s.correct, s.first_error, s.steps) == (False, 3, ex.length)
    assert score_predictions(ex, gold).steps_right == ex.length
    assert s.steps_right == ex.length - 1  # teacher forced: only step 4 is wrong
    last = [t for t, y in enumerate(gold) if y == NL][-1]  # the newline of the last step
    late = bad.copy()
    late[last] = "<pad>"
    assert score_predictions(ex, late).steps_right == ex.length - 2
    assert summarize([s])["step_accuracy"] == (ex.length - 1) / ex.length
    trace = list(ex.instance.trace)
    assert score_trace(trace, trace).correct
    assert score_trace(trace + ["1,"], trace) == type(s)(False, len(trace), len(trace))
    assert summarize([s, score_predictions(ex, gold)])["whole_trace_accuracy"] == 0.5


def test_encode_matches_the_example_tokens(examples):
    ex = examples[3]
    assert encode(ex.instance) == (ex.tokens, ex.targets)
    assert isinstance(ex, Example)


def test_rasplab_data_ptg_writes_spec_records(capsys):
    from rasplab.cli import main

    def run():
        with pytest.raises(SystemExit) as done:
            main(
                [
                    "data",
                    "ptg",
                    "--split",
                    "longer_lists",
                    "--n",
                    "3",
                    "--seed",
                    "5",
                    "--format",
                    "jsonl",
                ]
            )
        assert done.value.code == 0
        return capsys.readouterr().out

    first = run()
    rows = [json.loads(line) for line in first.splitlines()]
    assert len(rows) == 3 and all(list(r) == RECORD_KEYS for r in rows)
    assert all(r["split"] == "longer_lists" and 10 <= r["list_length"] <= 15 for r in rows)
    assert run() == first


def test_the_harness_encoder_accepts_ptg_examples(task, examples):
    encoding = pytest.importorskip("rasplab.harness.encoding")
    enc = encoding.Encoder(task)
    batch = enc.encode(examples[:4])
    assert int(batch.scored.sum()) == sum(len(e.scored_positions()) for e in examples[:4])
