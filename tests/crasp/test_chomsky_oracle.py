"""The C-RASP oracle's rows for Delétang et al.'s Chomsky-hierarchy tasks: every task has a
verdict in both classes, the "yes" ones come from library programs that agree with the task's
labels, and `crasp table --family chomsky` gives exactly the family's rows."""

from __future__ import annotations

import pytest

from rasplab.cli import main
from rasplab.crasp import chomsky_verdicts, expressibility
from rasplab.crasp.check import check_program
from rasplab.crasp.library import for_task
from rasplab.errors import RasplabError
from rasplab.tasks import get_task


def test_every_task_has_a_verdict_in_both_classes():
    names = chomsky_verdicts.task_names()
    assert len(names) == 15 and all(get_task(t).name == t for t in names)
    for task in names:
        for cls in (expressibility.PLAIN, expressibility.PERIODIC_LOCAL):
            v = expressibility.verdict(task, cls)
            assert v.answer in ("yes", "no", "none found"), (task, cls)
            assert (v.answer == "yes") == (v.program is not None)


def test_predictions_follow_the_programs():
    rows = {r.task: r for r in expressibility.rows(chomsky_verdicts.task_names())}
    assert rows["bucket_sort"].prediction == expressibility.GUARANTEED_NOPE
    assert rows["even_pairs"].prediction == expressibility.GUARANTEED_APE
    others = set(rows) - {"bucket_sort", "even_pairs"}
    assert {rows[t].prediction for t in others} == {expressibility.NOT_GUARANTEED}


@pytest.mark.parametrize("task", ["bucket_sort", "even_pairs"])
def test_yes_programs_agree_with_the_generator_up_to_length_500(task):
    entry = for_task(task)[0]
    result = check_program(entry.program(), task, lengths="1-500", samples=1000, seed=2)
    assert result.total == 1000 and result.ok, result.first_disagreement


def test_family_option_of_the_table(capsys):
    with pytest.raises(SystemExit) as done:
        main(["crasp", "table", "--family", "chomsky", "--json"])
    out = capsys.readouterr().out
    assert done.value.code in (0, None)
    assert len(out.strip().splitlines()) == 15 and '"bucket_sort"' in out
    with pytest.raises(RasplabError, match="unknown task family"):
        expressibility.family_tasks("hierarchy")
    with pytest.raises(SystemExit) as done:
        main(["crasp", "table", "--family", "hierarchy"])
    assert done.value.code == 2
    assert "unknown task family" in capsys.readouterr().err
