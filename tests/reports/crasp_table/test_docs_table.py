"""docs/crasp_table.md: its copy of the table and its algebra table match what the code computes."""

import re
from pathlib import Path

from rasplab.crasp.algebra import syntactic_monoid
from rasplab.crasp.expressibility import row
from rasplab.reports.crasp_table.table import build_table
from rasplab.reports.crasp_table.text import markdown
from rasplab.tasks.languages import PARITY_LANGUAGE, language

DOC = (Path(__file__).resolve().parents[3] / "docs" / "crasp_table.md").read_text()


def test_the_table_in_the_doc_is_the_commands_output():
    lines = [line for line in markdown(build_table()).splitlines() if line.startswith("|")]
    assert len(lines) == 28
    assert "\n".join(lines) in DOC


def test_the_algebra_table_matches_the_computation():
    rows = re.findall(
        r"^\| (\w+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (yes|no) \| (yes|no) \|$", DOC, re.M
    )
    assert len(rows) == 18
    for task, states, size, s, stable, star_free, ac0 in rows:
        automaton = PARITY_LANGUAGE[1] if task == "parity_language" else language(task)
        m = syntactic_monoid(automaton)
        computed = (m.dfa.num_states, len(m.elements), m.stability_index, len(m.stable_semigroup))
        assert tuple(map(int, (states, size, s, stable))) == computed
        r = row(task)
        assert (star_free, ac0) == ("yes" if r.star_free else "no", "yes" if r.ac0 else "no")
