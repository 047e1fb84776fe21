"""Every library program, compiled, agrees with the interpreter on every variable at every
layer, including lengths far beyond typical training lengths."""

from __future__ import annotations

import pytest

from rasplab.compiler import compile_program, run_compiled
from rasplab.programs import get_program, program_names
from rasplab.programs.verify import verify_program

# name -> (long lengths, random samples there, every input up to this length)
CASES = {
    "addition": ("2-8", 40, 2),
    "addition_alta": ("2-3", 20, 1),
    "dyck1": ("97-100", 4, 8),
    "majority": ("100-128", 29, None),
    "parity_sequential_absolute": ("97-100", 4, 6),
    "parity_sequential_relative": ("97-100", 4, 8),
    "parity_sum_mod_2": ("90-100", 11, 8),
    "reverse": ("120-128", 9, 1),
    "scan": ("1-48", 48, 2),
    "sort_unique": ("140-150", 11, None),
    "subleq": ("1-16", 32, None),
}


def _case(name: str) -> tuple:
    if name in CASES:
        return CASES[name]
    entry = get_program(name)  # a program added later: its first lengths
    hi = min(entry.max_length or entry.min_length + 20, entry.min_length + 20)
    return f"{entry.min_length}-{hi}", 20, None


@pytest.mark.parametrize("name", program_names())
def test_library_program_compiles_and_verifies(name):
    lengths, samples, exhaustive = _case(name)
    report = verify_program(
        get_program(name), lengths, samples, exhaustive_up_to=exhaustive, seed=1
    )
    assert report.total >= samples
    assert report.ok, report.first_divergence


@pytest.mark.parametrize("name", ["addition", "addition_alta"])
def test_addition_at_about_100_positions(name):
    report = verify_program(get_program(name), "48-48", 2, seed=2)  # 99 positions, 50-51 layers
    assert report.to_json() == {"total": 2, "agree": 2, "first_divergence": None}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,lengths,samples",
    [
        ("addition", "95-100", 6),
        ("parity_sequential_relative", "200-255", 6),
        ("parity_sequential_absolute", "120-128", 6),
        ("dyck1", "200-256", 10),
        ("reverse", "120-128", 10),
    ],
)
def test_long_inputs(name, lengths, samples):
    report = verify_program(get_program(name), lengths, samples, seed=3)
    assert report.ok, report.first_divergence


@pytest.mark.slow
def test_scan_length_split_test_set():
    """All 3,920 commands of the SCAN length split's test set: canonical outputs, same layers
    as the interpreter; the full trace is compared on every tenth command."""
    from rasplab.lang import interpret
    from rasplab.tasks.scan import interpret as canonical
    from rasplab.tasks.scan import length_split

    entry = get_program("scan")
    _, test = length_split()
    assert len(test) == 3920
    program = entry.program()
    batch = [entry.encode(c) for c in test]
    run = run_compiled(compile_program(program), batch)
    assert [entry.decode(b, o) for b, o in zip(batch, run.outputs)] == [canonical(c) for c in test]
    assert run.layers == interpret(program, batch).layers
    from rasplab.compiler.verify import compare_batch

    some = batch[::10]
    report = compare_batch(program, compile_program(program), some, labels=test[::10])
    assert report.ok and report.total == len(some), report.first_divergence
