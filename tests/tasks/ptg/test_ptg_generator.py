"""The PTG generator and splits: knob validation, exact factors, uniqueness, train/test split."""

import re

import numpy as np
import pytest

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.tasks.ptg import splits as S
from rasplab.tasks.ptg.draws import Draws
from rasplab.tasks.ptg.knobs import Knobs
from rasplab.tasks.ptg.plan import Reach, item_lines, item_steps
from rasplab.tasks.ptg.program import HEADERS, POP, POPTO, WHILE, WHILEL
from rasplab.tasks.ptg.tokens import count_tokens
from rasplab.tasks.ptg.tracer import trace


@pytest.mark.parametrize(
    "knobs, words",
    [
        (dict(lines="5-12", steps="172-300"), ["lines=5-12", "steps=172-300", "2-104"]),
        (dict(lines="5-8", steps="5-10", variables="30-40"), ["variables=30-40", "lines=5-8"]),
        (dict(lines="5-20", steps="20-30", variables="1-2"), ["steps=20-30", "variables >= 3"]),
        (dict(lines="2-9", steps="5-10"), ["lines=2-9"]),
        (dict(lines="5-9", steps="5-10", variables="1-100"), ["variables=1-100"]),
        (dict(lines="5-9", steps="5-10", iterations="0-3"), ["iterations=0-3"]),
        (dict(lines="5-9", steps="5-10", values="4-4"), ["values=4-4"]),
        (dict(lines="5-9", steps="5-10", block="0-2"), ["block=0-2"]),
    ],
)
def test_impossible_knobs_are_one_clear_error(knobs, words):
    with pytest.raises(RasplabError) as err:
        Knobs(**knobs)
    message = str(err.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_the_cli_rejects_an_impossible_bin_with_exit_code_2(capsys):
    from rasplab.cli import main

    with pytest.raises(SystemExit) as done:
        main(["data", "ptg", "--split", "id_mid", "--bin", "200-300", "--n", "2"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "200-300" in err and "id_mid" in err and len(err.strip().splitlines()) == 1


def test_shapes_hit_lines_and_steps_exactly():
    table = Reach((1, 6), (1, 12))
    draws = Draws(np.random.default_rng(0))
    hit = 0
    for _ in range(300):
        lines, steps = draws.randint(5, 60), draws.randint(2, 300)
        if not table.feasible(lines, steps):
            continue
        shape = table.sample(draws, lines, steps)
        assert sum(map(item_lines, shape)) + 2 == lines
        assert sum(map(item_steps, shape)) + 1 == steps
        hit += 1
    assert hit > 100


@pytest.mark.parametrize("list_length", [0, 3])
def test_reach_agrees_with_brute_force_on_small_programs(list_length):
    table = Reach((1, 2), (1, 2), list_length=list_length)
    items = [("simple",)] + [("if", k, t) for k in (1, 2) for t in (False, True)]
    items += [("loop", m, n) for m in (1, 2) for n in (1, 2)]
    items += [("drain", m, list_length) for m in (1, 2) if list_length]
    reachable = {0: {0}}
    for b in range(1, 12):
        reachable[b] = {
            s + item_steps(it)
            for it in items
            if b - item_lines(it) >= 0
            for s in reachable[b - item_lines(it)]
        }
    for lines in range(3, 14):
        for steps in range(1, 60):
            assert table.feasible(lines, steps) == ((steps - 1) in reachable[lines - 2])


@pytest.mark.parametrize("scale", list(S.TABLES))
def test_every_split_respects_its_four_factors(scale):
    for split in S.TABLES[scale].values():
        k = split.knobs
        for inst in S.dataset(split, 12, seed=3):
            p = inst.program
            assert p.n_lines in k.lines and len(inst.trace) in k.steps
            assert any(len(inst.trace) in b for b in split.bins)
            assert len(p.variables) in k.variables and inst.list_length in k.list_length
            lists = [v for _, v in inst.inputs if type(v) is list]
            assert lists and all(len(v) == inst.list_length for v in lists)
            used = set(re.findall(r"[A-Za-z_]\w*", " ".join(p.body_texts)))
            assert set(p.variables) <= used  # every variable is used in the body
            assert count_tokens(inst) <= k.max_tokens


def _blocks(lines):
    """``(header index, end index)`` of every block of a program's body."""
    out = []
    for i, (op, depth, *_rest) in enumerate(lines):
        if op in HEADERS:
            assert depth == 1  # blocks do not nest
            end = i + 1
            while lines[end][1] == 2:
                end += 1
            out.append((i, end))
    return out


def test_while_loops_are_counter_or_list_controlled_and_blocks_do_not_nest():
    kinds = set()
    for inst in S.dataset("longer_traces_1", 30, seed=5):
        lines = inst.program.lines
        for i, end in _blocks(lines):
            body = lines[i + 1 : end]
            if lines[i][0] == WHILE:  # counter loop: counter and condition updated last
                cond, counter = lines[i][3], lines[end - 2][2]
                assert lines[end - 1][2] == cond and lines[end - 1][3] == counter
                assert lines[end - 2][3] == counter  # counter = counter +/- 1
                assert all(ln[2] not in (cond, counter) for ln in body[:-2])
                kinds.add("counter")
            elif lines[i][0] == WHILEL:  # list loop: pops its list first, never refills it
                lst = lines[i][3]
                assert body[0][0] == POPTO and body[0][3] == lst
                assert all(ln[2] != lst and ln[0] != POP for ln in body[1:])
                kinds.add("list")
    assert kinds == {"counter", "list"}


def _longer_lists(inputs, extra=(7, 7, 7)):
    return tuple((n, v + list(extra) if type(v) is list else v) for n, v in inputs)


@pytest.mark.parametrize("scale", list(S.TABLES))
def test_longer_input_lists_give_longer_traces_for_most_programs(scale):
    # seed 000 section 2: "the trace steps grow at least linearly with the input size"
    insts = S.dataset(S.get_split("id_mid", scale), 100, seed=6)
    assert all(inst.list_length > 0 for inst in insts)  # every program takes a list
    grew = 0
    for inst in insts:
        try:
            longer = trace(inst.program, _longer_lists(inst.inputs))
        except IndexError:  # a branch now taken pops a list the original run left alone
            continue
        grew += len(longer) > len(inst.trace)
    assert grew > 60


def test_list_loops_run_once_per_element_and_use_the_popped_value():
    used = loops = 0
    for inst in S.dataset("id_mid", 60, seed=8):
        lines = inst.program.lines
        for i, end in _blocks(lines):
            if lines[i][0] != WHILEL:
                continue
            loops += 1
            x, body = lines[i + 1][2], lines[i + 2 : end]
            used += any(x in (ln[3], ln[4]) for ln in body)
            header = f"{inst.first_line + 1 + i},"
            n = dict(inst.inputs)[lines[i][3]]
            for k in (0, 1, 4):  # k more elements: k more iterations, each m + 2 steps
                ext = _longer_lists(inst.inputs, [5] * k)
                if len(dict(ext)[lines[i][3]]) == len(n) + k:
                    out = trace(inst.program, ext, inst.first_line)
                    assert out.count(header) == len(n) + k + 1
    assert loops >= 30 and used > loops // 2


def test_datasets_are_seeded_and_programs_unique():
    a = [i.record("id_short") for i in S.dataset("id_short", 50, seed=1)]
    b = [i.record("id_short") for i in S.dataset("id_short", 50, seed=1)]
    c = [i.record("id_short") for i in S.dataset("id_short", 50, seed=2)]
    assert a == b and a != c
    assert len({r["program"] for r in a}) == 50


def test_train_and_test_programs_never_overlap():
    train = S.dataset("train_short", 150, seed=0) + S.dataset("train_mid", 150, seed=0)
    test = S.dataset("id_short", 150, seed=0) + S.dataset("id_mid", 150, seed=0)
    assert {S.side(i.program.source()) for i in train} == {"train"}
    assert {S.side(i.program.source()) for i in test} == {"test"}
    assert not {i.program.source() for i in train} & {i.program.source() for i in test}


def test_offset_augmentation_on_training_splits_only():
    train = S.dataset("train_short", 200, seed=4)
    shifted = [i.first_line for i in train if i.first_line > 1]
    assert 60 <= len(shifted) <= 140 and min(shifted) >= 2 and max(shifted) <= 101
    assert {i.first_line for i in S.dataset("longer_programs", 30, seed=4)} == {1}


def test_training_bins_are_drawn_uniformly():
    split = S.get_split("train_mid")
    draws = Draws(np.random.default_rng(0))
    counts = np.zeros(len(split.bins))
    for _ in range(600):
        steps = len(S.sample_split(draws, split).trace)
        counts[[i for i, b in enumerate(split.bins) if steps in b][0]] += 1
    assert counts.min() > 60  # 100 expected per bin


def test_a_steps_bin_narrows_a_split():
    for inst in S.dataset("longer_programs", 10, seed=0, steps=Bin(50, 60)):
        assert 50 <= len(inst.trace) <= 60 and 41 <= inst.program.n_lines <= 60
    with pytest.raises(RasplabError, match="does not meet"):
        S.dataset("id_mid", 2, steps="5-10")


def test_renaming_a_variable_keeps_the_program_and_its_cached_text_consistent():
    from rasplab.tasks.ptg.generator import rename
    from rasplab.tasks.ptg.program import Program
    from rasplab.tasks.ptg.tracer import trace

    draws = Draws(np.random.default_rng(1))
    for inst in S.dataset("more_variables", 40, seed=6):
        result = rename(draws, inst.program, inst.inputs)
        if result is None:  # that variable's name pool is used up
            continue
        renamed, inputs = result
        fresh = Program(renamed.params, renamed.lines)
        assert renamed.source() == fresh.source() != inst.program.source()
        assert renamed.variables == fresh.variables
        steps = [line.split(",")[0] for line in trace(renamed, inputs)]
        assert steps == [line.split(",")[0] for line in inst.trace]
