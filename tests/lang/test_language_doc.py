"""docs/language.md: every example runs as a doctest."""

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"


def test_language_guide_examples_run():
    result = doctest.testfile(str(DOC), module_relative=False)
    assert result.attempted > 10 and result.failed == 0
