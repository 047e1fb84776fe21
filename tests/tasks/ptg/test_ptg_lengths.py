"""The ``ptg`` task's lengths: exactly the trace-step counts its programs can have.

The expected sets are recomputed here one (lines, steps) pair at a time with
``Reach.feasible``, a second computation beside the task's bit-row read-out
(``Reach.step_counts``). Sampling at the minimum must work and one below it must be refused
with the usual one line (library: ``RasplabError``; CLI: exit 2, nothing written).
"""

import pytest

from rasplab.errors import RasplabError
from rasplab.seeding import generator
from rasplab.tasks import get_task
from rasplab.tasks.ptg.knobs import Knobs


def _pairwise_steps(knobs: Knobs, top: int) -> set[int]:
    """Every step count in 1..top that some (lines, list length) pair of ``knobs`` allows."""
    out = set()
    for n_list in knobs.list_length.lengths():
        table = knobs.reach(knobs.variables.hi, n_list)
        for lines in knobs.lines.lengths():
            out |= {s for s in range(1, top + 1) if table.feasible(lines, s)}
    return out


@pytest.fixture(scope="module", params=["paper", "cpu"])
def task(request):
    return get_task("ptg", scale=request.param)


def test_the_lengths_are_what_the_program_shapes_reach(task):
    top = task.max_length + 20
    short, mid = task.train_splits
    expected = _pairwise_steps(mid.knobs, top) | (
        _pairwise_steps(short.knobs, top) & set(short.knobs.steps.lengths())
    )
    assert (task.min_length, task.max_length) == (min(expected), max(expected))
    assert [n for n in range(top + 1) if task.has_length(n)] == sorted(expected)
    assert task.min_length > 2  # the old hard-coded minimum was too low at both scales


def test_the_minimum_samples_and_one_below_is_refused(task):
    lo = task.min_length
    for seed in range(3):
        ex = task.sample(generator(seed, "ptg-min"), lo)
        assert ex.length == len(ex.instance.trace) == lo
    assert not task.has_length(lo - 1)
    with pytest.raises(RasplabError, match=f"start at {lo}") as err:
        task.sample(generator(0, "ptg-min"), lo - 1)
    assert len(str(err.value).splitlines()) == 1
    with pytest.raises(RasplabError, match="no examples"):
        task.lengths(f"1-{lo - 1}")


def test_an_unreachable_length_inside_the_range_is_refused():
    cpu = get_task("ptg", scale="cpu")
    holes = [n for n in range(cpu.min_length, cpu.max_length + 1) if not cpu.has_length(n)]
    assert holes  # the CPU-scale mid programs skip at least one count (85 when written)
    with pytest.raises(RasplabError, match="no examples with length"):
        cpu.sample(generator(0, "ptg-hole"), holes[0])


def test_rasplab_data_refuses_a_bin_below_the_minimum(tmp_path, capsys):
    from rasplab.cli import main

    lo = get_task("ptg").min_length
    out_file = tmp_path / "out.jsonl"
    argv = ["data", "ptg", "--split", "test", "--bin", f"2-{lo - 1}", "--out", str(out_file)]
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    lines = [x for x in err.splitlines() if "Deprecat" not in x]
    assert done.value.code == 2 and out == "" and len(lines) == 1 and "no examples" in lines[0]
    assert list(tmp_path.iterdir()) == []
