"""Issue #39: ``crasp check`` reports a counterexample a person can read, one of the shortest
strings that disagree, not the first drawn (which was hundreds of symbols long)."""

from __future__ import annotations

import json

import pytest

from rasplab.cli import main
from rasplab.crasp.check import check_program
from rasplab.crasp.library import program


def test_the_reported_disagreement_is_a_shortest_one():
    # tomita1's program checked against tomita2's labels: most strings disagree
    result = check_program(program("tomita1"), "tomita2", lengths="1-300", samples=200)
    assert result.agree < result.total // 2
    shortest = check_program(program("tomita1"), "tomita2", lengths="1-4", samples=200)
    length = len(result.first_disagreement["input"].split())
    # strings of 1-4 symbols disagree too, so the one reported must be that short
    assert not shortest.ok and length <= 4


def test_the_cli_prints_the_short_counterexample(capsys):
    with pytest.raises(SystemExit) as done:
        main(["crasp", "check", "tomita2", "tomita1", "--json"])
    out = capsys.readouterr().out
    assert done.value.code == 1
    assert len(json.loads(out)["first_disagreement"]["input"].split()) <= 4
