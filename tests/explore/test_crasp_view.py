"""The C-RASP page's data: the compiled transformer's decoded values beside the interpreter's."""

from __future__ import annotations

import pytest

from rasplab.crasp.interpreter import run
from rasplab.crasp.library import program
from rasplab.explore import crasp_view


@pytest.mark.parametrize("name, text", [("tomita1", "1 1 0 1"), ("majority_ab", "a b b a b")])
def test_compiled_values_agree_with_the_interpreter(name, text):
    prog = program(name)
    data = crasp_view(prog, text)
    trace = run(prog, [text]).trace(0)
    assert data["summary"]["all_agree"]
    for op in data["operations"]:
        if op["compiled"] is None:
            assert op["definition"] == "readout"
            continue
        want = trace.rows[op["name"]]
        assert op["compiled"] == op["values"] and op["differs"] == []
        assert len(op["compiled"]) == len(want) == len(data["symbols"])


def test_a_wrong_compiled_value_is_marked(monkeypatch):
    from rasplab.crasp_compiler.model import CraspTransformer

    real = CraspTransformer.decode

    def off_by_one(self, x):
        values = real(self, x)
        first = next(iter(values))
        values[first] = values[first] + 1.0  # every position of the first operation wrong
        return values

    monkeypatch.setattr(CraspTransformer, "decode", off_by_one)
    data = crasp_view(program("majority_ab"), "a b b")
    assert not data["summary"]["all_agree"]
    first = data["operations"][0]
    assert first["differs"] == list(range(len(data["symbols"])))
