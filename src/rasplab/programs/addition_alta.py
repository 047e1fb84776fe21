"""Addition as ALTA writes it (Appendix D.2, Figures 12-13): the builder program, kept for
the minimal-program reproduction (its minimal version for <= 3-digit operands has 884 rules).

Same input, tokens and answer cells as the compact :mod:`rasplab.programs.addition`: the
input is ``<start> a + b <end>``, operands zero-padded to the same number of digits N. Three
pointers start at the last digit of ``a``, the last digit of ``b`` and the output cell (the
last digit of ``b``); each layer adds the two pointed digits and the carry, writes the digit
at the output pointer and moves every pointer one position left (relative heads at offset
+1). When ``a``'s pointer reaches ``<start>`` the final carry is written at the ``+`` cell
and the program halts: N + 3 layers in all. The answer is read from ``+`` up to the last
digit of ``b``, without leading zeros. The rules are ALTA's sparse builder version
(:func:`_rules`), 16,421 update rules over the full variable ranges (carry has range 10, as
in ALTA); only a fraction of them can fire.

>>> from rasplab.lang import interpret
>>> ids = ADDITION_ALTA.encode("12345+678")
>>> ids
[10, 1, 2, 3, 4, 5, 11, 0, 0, 6, 7, 8, 12]
>>> run = interpret(ADDITION_ALTA.program(), [ids])
>>> ADDITION_ALTA.decode(ids, run.outputs[0]), run.layers[0]
(['1', '3', '0', '2', '3'], 8)
"""

from __future__ import annotations

from rasplab.lang import builder, input_var, program, qkv, v_relative, var
from rasplab.lang.program import Program
from rasplab.programs.addition import END, GLUE, INPUT_RANGE, PLUS, START
from rasplab.programs.base import LibraryProgram, register_program

STEP_INIT, STEP_ITERATE, STEP_FINALIZE, STEP_DONE = 0, 1, 2, 3


def _init_rules(m) -> None:
    """First layer: put ``ptr_b``/``ptr_out`` left of ``<end>`` and ``ptr_a`` left of ``+``."""
    for token, token_right in m.get("token", "token_right"):
        if token != END:
            if token_right == END:
                m.set("ptr_b", 1)
                m.set("ptr_out", 1)
            if token_right == PLUS:
                m.set("ptr_a", 1)


def _iterate_rules(m, ptr_a_token: int) -> None:
    """One digit: write (carry + a + b) mod 10 at ``ptr_out``, keep the carry, shift pointers."""
    for carry, ptr_b_token in m.get("value_carry", "ptr_b_token"):
        total = carry + ptr_a_token + ptr_b_token
        for ptr_out in m.get("ptr_out"):
            if ptr_out:
                m.set("value_out", total % 10)
        m.set("value_carry", total // 10)
    for token in m.get("token"):
        if token != END:  # at <end> the heads reading offset +1 are undefined
            for pointer in ("ptr_out", "ptr_a", "ptr_b"):
                for right in m.get(pointer + "_right"):
                    m.set(pointer, right)


def _rules(m) -> None:
    """The MLP of ALTA's Figure 12 as builder rules (conditioned on ``step``)."""
    for step in m.get("step"):
        if step == STEP_INIT:
            _init_rules(m)
            m.set("step", STEP_ITERATE)
        elif step == STEP_ITERATE:
            for ptr_a_token in m.get("ptr_a_token"):
                if ptr_a_token == START:
                    m.set("step", STEP_FINALIZE)
                else:
                    _iterate_rules(m, ptr_a_token)
        elif step == STEP_FINALIZE:
            for ptr_out in m.get("ptr_out"):
                if ptr_out:
                    for carry in m.get("value_carry"):
                        m.set("value_out", carry)
            m.set("step", STEP_DONE)


def build_addition_alta(max_layers: int = 256) -> Program:
    """The ALTA-shaped addition program; operands of up to ``max_layers - 3`` digits."""
    variables = {
        "token": input_var(INPUT_RANGE),
        "step": var(4),
        "ptr_a": var(2),
        "ptr_b": var(2),
        "ptr_out": var(2),
        "value_carry": var(10),
        "value_out": var(10),
        "one": var(2, default=1),
    }
    heads = {
        "token_right": v_relative("token", 1),
        "ptr_a_right": v_relative("ptr_a", 1),
        "ptr_b_right": v_relative("ptr_b", 1),
        "ptr_out_right": v_relative("ptr_out", 1),
        "ptr_a_token": qkv("one", "ptr_a", "token"),
        "ptr_b_token": qkv("one", "ptr_b", "token"),
    }
    return program(
        variables,
        heads,
        builder(_rules),
        output="value_out",
        input_range=INPUT_RANGE,
        halt=("step", STEP_DONE),
        max_layers=max_layers,
        name="addition_alta",
    )


ADDITION_ALTA = register_program(
    LibraryProgram(
        name="addition_alta",
        description="addition as ALTA writes it (App. D.2, builder rules): the program whose "
        "minimal version has 884 rules",
        build=build_addition_alta,
        max_length=253,
        **GLUE,
    )
)
