"""docs/crasp.md: its examples run as doctests and its library table matches the library."""

import doctest
import re
from pathlib import Path

from rasplab.crasp import library

DOC = Path(__file__).resolve().parents[2] / "docs" / "crasp.md"


def test_the_examples_in_docs_crasp_md_run():
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0


def test_the_library_table_matches_the_library():
    rows = re.findall(
        r"^\| `(\w+)` \| (\S+) \| (\S+) \| (\S+) \| (\d+) \| (\d+) \|$", DOC.read_text(), re.M
    )
    assert [r[0] for r in rows] == library.names()
    for name, task, seed_class, cls, ops, depth in rows:
        entry, p = library.get(name), library.program(name)
        assert (task, seed_class, cls) == (entry.task or "–", entry.seed_class, p.crasp_class)
        assert (int(ops), int(depth)) == (len(p.ops), p.depth)
