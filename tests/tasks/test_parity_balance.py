"""``parity`` with ``balance=ones``: as many examples per number of ones (ALTA, seed 001 App. D.1).

The expected distribution is written here from the definition (the count k uniform over
``0..hi``, the length uniform over ``max(k, lo)..hi``, the positions uniform), not from the
task's code; the checks are chi-square tests at z = 4, and the default draw is shown to fail
the same check, so that the check can tell the two apart.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from itertools import combinations

import pytest

from rasplab.bins import Bin
from rasplab.cli import main
from rasplab.errors import RasplabError
from rasplab.seeding import generator
from rasplab.tasks import get_task


def chi2_upper(df, z=4.0):
    """Wilson-Hilferty: a value the chi-square with ``df`` degrees exceeds with p ~ 3e-5."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def chi2(observed: Counter, expected: dict) -> float:
    """Pearson's statistic of ``observed`` counts against ``expected`` counts (same keys);
    a key observed outside ``expected`` makes it infinite."""
    if set(observed) - set(expected):
        return math.inf
    return sum((observed.get(k, 0) - e) ** 2 / e for k, e in expected.items())


def bits(ex):
    """The input bits of a parity example, checking its format and answer on the way."""
    i = ex.tokens.index("<sep>")
    x = list(ex.tokens[1:i])
    assert ex.tokens[0] == "<bos>" and ex.tokens[i + 1 :] == (
        "e" if x.count("1") % 2 == 0 else "o",
        "<eos>",
    )
    assert ex.length == len(x) and set(x) <= {"0", "1"}
    return x


def joint(lo: int, hi: int, total: int) -> dict:
    """Expected counts of (number of ones, length) in ``total`` draws of bin ``lo-hi``."""
    return {
        (k, n): total / (hi + 1) / (hi - max(k, lo) + 1)
        for k in range(hi + 1)
        for n in range(max(k, lo), hi + 1)
    }


def draw(task, mode: str, bin: str, total: int, seed: int = 0):
    rng = generator(seed, "balance-test", mode, bin)
    if mode == "batch":
        return task.sample_bin(rng, bin, total)
    return [task.sample_in(rng, bin) for _ in range(total)]


@pytest.mark.parametrize("mode", ["batch", "reference"])
@pytest.mark.parametrize("bin", ["1-20", "21-40"])
def test_number_of_ones_is_uniform_over_the_counts_of_the_bin(mode, bin):
    lo, hi = Bin.parse(bin).lo, Bin.parse(bin).hi
    total = 8400
    examples = draw(get_task("parity", balance="ones"), mode, bin, total)
    ones = Counter(bits(ex).count("1") for ex in examples)
    assert chi2(ones, {k: total / (hi + 1) for k in range(hi + 1)}) < chi2_upper(hi)
    assert all(lo <= ex.length <= hi for ex in examples)


@pytest.mark.parametrize("mode", ["batch", "reference"])
def test_default_draw_fails_the_same_check(mode):
    """The check has power: the length-first draw (the default) is far from uniform in k."""
    hi, total = 40, 8400
    examples = draw(get_task("parity"), mode, "21-40", total)
    ones = Counter(bits(ex).count("1") for ex in examples)
    assert chi2(ones, {k: total / (hi + 1) for k in range(hi + 1)}) > 10 * chi2_upper(hi)


@pytest.mark.parametrize("mode", ["batch", "reference"])
def test_joint_law_of_count_and_length(mode):
    """(k, n) follows 1/(hi+1) * 1/(hi - max(k, lo) + 1) over the 44 cells of bin 1-8."""
    lo, hi, total = 1, 8, 22000
    examples = draw(get_task("parity", balance="ones"), mode, f"{lo}-{hi}", total)
    cells = Counter((bits(ex).count("1"), ex.length) for ex in examples)
    expected = joint(lo, hi, total)
    assert chi2(cells, expected) < chi2_upper(len(expected) - 1)


def test_positions_of_the_ones_are_uniform():
    """Given its length and count, every placement of the ones is equally likely (4 bits,
    2 ones: 6 placements)."""
    examples = get_task("parity", balance="ones").sample_bin(generator(5, "pos"), "4-4", 12000)
    placements = Counter(
        tuple(i for i, b in enumerate(x) if b == "1")
        for x in map(bits, examples)
        if x.count("1") == 2
    )
    support = list(combinations(range(4), 2))
    total = sum(placements.values())
    assert total > 1500
    assert chi2(placements, {p: total / len(support) for p in support}) < chi2_upper(5)


def test_batch_and_reference_agree():
    """The vectorized and one-at-a-time draws have the same law (two-sample chi-square on
    the counts of bin 21-40)."""
    task, total = get_task("parity", balance="ones"), 6000
    a = Counter(bits(ex).count("1") for ex in draw(task, "batch", "21-40", total, seed=1))
    b = Counter(bits(ex).count("1") for ex in draw(task, "reference", "21-40", total, seed=2))
    stat = sum((a[k] - b[k]) ** 2 / (a[k] + b[k]) for k in set(a) | set(b))
    assert stat < chi2_upper(len(set(a) | set(b)) - 1)


def test_seeded_deterministic_and_distinct_test_sets():
    task = get_task("parity", balance="ones")
    one = task.dataset("test", "21-40", n=500, seed=3)
    again = get_task("parity", balance="ones").dataset("test", "21-40", n=500, seed=3)
    other = task.dataset("test", "21-40", n=500, seed=4)
    assert [ex.tokens for ex in one] == [ex.tokens for ex in again]
    assert [ex.tokens for ex in one] != [ex.tokens for ex in other]
    assert len({ex.tokens for ex in one}) == 500
    train = task.dataset("train", "1-20", n=300, seed=3)
    assert [ex.tokens for ex in train] == [
        ex.tokens for ex in task.dataset("train", "1-20", n=300, seed=3)
    ]


def test_a_small_bin_runs_out_of_distinct_examples_at_the_extreme_counts():
    """Bin 1-3 holds 14 strings; asking for 100 distinct ones gives all 14."""
    task = get_task("parity", balance="ones")
    examples = task.dataset("test", "1-3", n=100, seed=0)
    assert sorted("".join(bits(ex)) for ex in examples) == sorted(
        format(v, f"0{n}b") for n in (1, 2, 3) for v in range(2**n)
    )


def test_default_is_the_length_first_draw():
    """``balance=length`` (the default) is the draw every task makes: lengths, then bits."""
    default, explicit = get_task("parity"), get_task("parity", balance="length")
    assert explicit.balance == default.balance == "length"
    rng_a, rng_b = generator(0, "same"), generator(0, "same")
    a = default.sample_bin(rng_a, "1-20", 200)
    b = default.sample_many(rng_b, default.draw_lengths(rng_b, "1-20", 200))
    assert [ex.tokens for ex in a] == [ex.tokens for ex in b]
    assert [ex.tokens for ex in default.dataset("test", "21-40", 300, 0)] == [
        ex.tokens for ex in explicit.dataset("test", "21-40", 300, 0)
    ]


@pytest.mark.parametrize("value", ["uniform", "Ones", 1, None, True])
def test_bad_balance_is_refused(value):
    with pytest.raises(RasplabError, match="balance must be one of: length, ones"):
        get_task("parity", balance=value)


def run(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.mark.parametrize("value", ["uniform", "1", "none"])
def test_cli_bad_balance_is_one_line_exit_2_and_no_file(value, tmp_path, capsys):
    out_file = tmp_path / "out.jsonl"
    code, out, err = run(
        ["data", "parity", "-o", f"balance={value}", "--out", str(out_file)], capsys
    )
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "balance must be one of: length, ones" in err
    assert list(tmp_path.iterdir()) == []


def test_cli_writes_the_balanced_set(capsys):
    argv = ["data", "parity", "-o", "balance=ones", "--split", "test", "--bin", "21-40",
            "--n", "50", "--seed", "7"]  # fmt: skip
    code, out, _ = run(argv, capsys)
    assert code in (0, None)
    records = [json.loads(line) for line in out.splitlines()]
    want = get_task("parity", balance="ones").dataset("test", "21-40", n=50, seed=7)
    assert [r["tokens"] for r in records] == [list(ex.tokens) for ex in want]
    code, plain, _ = run(argv[:2] + argv[4:], capsys)
    assert plain != out


def test_same_law_as_the_trace_supervision_inputs():
    """``rasplab trace-supervise`` draws its parity inputs with the program library's
    ``sample_bits`` (a separate implementation of the same definition): the (k, n) counts of
    the two samplers on bin 1-8 pass a two-sample chi-square."""
    from rasplab.programs.parity import sample_bits

    rng, total = generator(9, "trace-inputs"), 11000
    a = Counter(
        (x.split().count("1"), len(x.split()))
        for x in (sample_bits(rng, Bin(1, 8)) for _ in range(total))
    )
    b = Counter(
        (bits(ex).count("1"), ex.length)
        for ex in get_task("parity", balance="ones").sample_bin(generator(9, "task"), "1-8", total)
    )
    cells = set(a) | set(b)
    assert cells == set(joint(1, 8, 1))
    stat = sum((a[c] - b[c]) ** 2 / (a[c] + b[c]) for c in cells)
    assert stat < chi2_upper(len(cells) - 1)
