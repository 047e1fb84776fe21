"""The program page's data: the interpreter's values, the compiled model's, and their agreement."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from rasplab.compiler import verify as verify_mod
from rasplab.errors import RasplabError
from rasplab.explore.program_view import cell, program_view
from rasplab.lang.interpreter import interpret
from rasplab.programs import get_program

PROGRAMS = ["parity_sequential_relative", "majority", "reverse", "sort_unique", "dyck1", "scan"]


def _interp_trace(entry, text):
    return interpret(entry.program(), [entry.encode(text)], trace=True).traces[0]


@pytest.mark.parametrize("name", PROGRAMS)
def test_tables_hold_the_interpreters_values_and_the_compiled_model_agrees(name):
    entry = get_program(name)
    text = entry.random_input(np.random.default_rng(3), max(entry.min_length, 4))
    data = program_view(entry, text)
    trace = _interp_trace(entry, text)
    states = [trace.initial] + [
        s for lt in trace.layers for s in (lt.after_attention, lt.after_mlp)
    ]
    assert len(data["steps"]) == len(states)
    for step, state in zip(data["steps"], states):
        for vi, var in enumerate(data["variables"]):
            want = " ".join(cell(v) for v in state[var["name"]])
            assert data["rows"][step["interp"][vi]] == want
        assert step["diff"] == {}
    assert data["summary"]["all_agree"] is True
    assert data["summary"]["layers"] == len(trace.layers)
    final = trace.layers[-1].after_mlp[entry.program().output]
    assert data["summary"]["output"] == " ".join(map(str, final))


def test_attention_selections_match_the_interpreter():
    entry = get_program("majority")
    data = program_view(entry, "abcab")
    seen = 0
    for step in data["steps"]:
        for head in step.get("heads", []):
            for sel, w in zip(head["selected"], head["weights"]):
                chosen = [p.split(":")[0] for p in data["attention_rows"][w].split()]
                assert chosen == data["attention_rows"][sel].split()
                seen += 1
    assert seen > 0


def test_a_corrupted_compiled_model_is_marked_as_disagreeing(monkeypatch):
    entry = get_program("parity_sequential_relative")
    real = verify_mod.compile_for

    def corrupted(program, lengths):
        model = real(program, lengths)
        slot = model.layout.slot(program.output)
        model.tok_emb[:, slot.start : slot.stop] = torch.flip(
            model.tok_emb[:, slot.start : slot.stop], dims=[1]
        )
        return model

    monkeypatch.setattr(sys.modules["rasplab.explore.program_view"], "compile_for", corrupted)
    data = program_view(entry, "1 0 1")
    assert data["summary"]["all_agree"] is False
    out = str(data["output_index"])
    assert out in data["steps"][0]["diff"]


def test_rules_fired_carry_their_text():
    entry = get_program("parity_sequential_relative")
    data = program_view(entry, "1 1 0")
    fired = {r for s in data["steps"] for f in s.get("fired") or [] for r in f.split(",") if r}
    assert fired and set(data["rules"]) == fired
    program = entry.program()
    for idx, text in data["rules"].items():
        assert text == str(program.rules[int(idx)])


def test_an_input_the_program_cannot_take_is_refused():
    with pytest.raises(RasplabError, match="alphabet"):
        program_view(get_program("majority"), "ab9")
