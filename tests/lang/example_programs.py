"""Hand-written programs shared by the lang tests (ALTA's parity, a rule conflict)."""

from __future__ import annotations

from rasplab.lang import Rule, input_var, position_var, program, qkv, v_relative, var


def parity_program(n=12):
    """The paper's Figure 2 parity program (absolute positions, halts after length-1 layers)."""
    variables = {
        "parity": input_var(2),
        "done": position_var(2, lambda p: int(p == 0)),
        "idx": position_var(n),
        "idx_left": position_var(n, lambda p: max(0, p - 1)),
    }
    heads = {
        "parity_left": qkv("idx_left", "idx", "parity"),
        "done_left": qkv("idx_left", "idx", "done"),
    }

    def mlp(z):
        if not z["done"] and z["done_left"]:
            z["parity"] = z["parity_left"] ^ z["parity"]
            z["done"] = 1

    return program(
        variables, heads, mlp, output="parity", input_range=2, position_range=n, halt=("done", 1)
    )


CONFLICT_RULES = (Rule((("tok", 1),), "out", 0, 1), Rule((("left", 1),), "out", 0, 2))
"""The two rules of :func:`conflict_program`, which both fire where a 1 follows a 1."""


def conflict_program():
    """Two rules write ``out`` where a 1 follows a 1: a conflict exactly there."""
    return program(
        {"tok": input_var(2), "out": var(3)},
        {"left": v_relative("tok", -1)},
        list(CONFLICT_RULES),
        output="out",
        input_range=2,
        max_layers=2,
        undefined="no_match",  # position 0 reads an undefined ``left``: no rule, no error
    )
