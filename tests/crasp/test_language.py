"""The C-RASP language: expressions, validation messages, classes, JSON round trip."""

import pytest

from rasplab.crasp import (
    CraspProgram,
    Op,
    Periodic,
    Q,
    Relation,
    all_of,
    cond,
    constant,
    count,
    crasp_program,
    next_set,
    offset,
    periodic,
    program_from_json,
    window,
)
from rasplab.crasp.ir import topological
from rasplab.errors import RasplabError


def test_every_operation_gets_a_name_and_shared_leaves_are_one_operation():
    p = crasp_program("t", (count(Q("a")) > count(Q("a") & Q("b"))).named("out"), alphabet="ab")
    names = [op.name for op in p.ops]
    assert names.count("Q_a") == 1 and names[-1] == "out" and len(set(names)) == len(names)


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: Q("a") & count(Q("a"), name="n"),
            "AND expects Booleans, but its right operand n is a count",
        ),
        (
            lambda: count(count(Q("a"), name="n")),
            "count expects Booleans, but its argument n is a count",
        ),
        (
            lambda: count(Q("a")) + Q("b"),
            r"\+ expects counts, but its right operand Q_b|<initial> is a Boolean",
        ),
        (lambda: cond(count(Q("a")), 1, 2), "cond expects Booleans, but its condition"),
        (lambda: count(Q("a")) < Q("a"), "comparison < expects counts"),
        (lambda: Q("a") == Q("b"), "Booleans cannot be compared with =="),
        (lambda: bool(count(Q("a")) > 1), "no Python truth value"),
        (lambda: 0 < count(Q("a")) < 3, "no Python truth value"),
        (lambda: count(Q("a"), ~offset(0)), "relation 'j <= i-1' is not local"),
        (lambda: count(Q("a"), lambda i, j: j == i // 2), "must be a Relation"),
        (
            lambda: crasp_program("t", count(Q("c")) > 0, alphabet="ab"),
            "reads symbol 'c', which is not in the alphabet",
        ),
        (lambda: periodic(0, 0), "modulus >= 1"),
        (lambda: periodic(2, 3), r"must lie in 0\.\.1"),
        (lambda: offset(-1), "k >= 0"),
    ],
)
def test_bad_programs_get_one_clear_error(make, message):
    with pytest.raises(RasplabError, match=message):
        crasp_program("t", make(), alphabet="ab")


def test_ir_validation_names_the_problem():
    q = Op("q", "initial", symbol="a")
    with pytest.raises(RasplabError, match="uses 'c' as a Boolean, but it is a count"):
        CraspProgram("t", ("a",), (q, Op("c", "count", ("q",)), Op("x", "not", ("c",))))
    with pytest.raises(RasplabError, match="uses 'q' as a count, but it is a Boolean"):
        CraspProgram("t", ("a",), (q, Op("x", "compare_const", ("q",), comparison="<", value=1)))
    with pytest.raises(RasplabError, match="uses 'y', which is not defined"):
        CraspProgram("t", ("a",), (q, Op("x", "not", ("y",))))
    with pytest.raises(RasplabError, match="defined later"):
        CraspProgram("t", ("a",), (Op("x", "not", ("q",)), q))
    with pytest.raises(RasplabError, match="two operations are named 'q'"):
        CraspProgram("t", ("a",), (q, q))
    with pytest.raises(RasplabError, match="not local"):
        Op("c", "count", ("q",), relation=Relation(frozenset({0}), cofinite=True))
    with pytest.raises(RasplabError, match="a cycle: x -> y -> x"):
        topological([Op("x", "not", ("y",)), Op("y", "not", ("x",))])
    with pytest.raises(RasplabError, match="alphabet"):
        CraspProgram("t", ("a", "<bos>"), (q,))


def test_the_class_is_computed_from_the_operations():
    base = count(Q("a")) > 0
    per = periodic(2, 0)
    loc = count(Q("a"), offset(1)) > 0
    assert crasp_program("t", base, "ab").crasp_class == "C-RASP[]"
    assert crasp_program("t", base & per, "ab").crasp_class == "C-RASP[periodic]"
    assert crasp_program("t", base & loc, "ab").crasp_class == "C-RASP[local]"
    p = crasp_program("t", all_of(base, per, loc), "ab")
    assert p.crasp_class == "C-RASP[periodic,local]" and not p.within("C-RASP[local]")
    assert crasp_program("t", base, "ab").within("C-RASP[periodic,local]")


def test_relations_combine_and_only_finite_ones_are_local():
    assert (offset(1) | offset(3)).offsets == {1, 3}
    assert (window(2) & ~offset(1)).offsets == {0, 2} and (window(2) & ~offset(1)).local
    assert not (~window(1)).local and str(~window(1)) == "j <= i-2"


def test_the_output_is_the_last_boolean_unless_the_readout_uses_it():
    acc = (count(Q("a")) > 0).named("acc")
    plain = crasp_program("t", acc, "ab", readout=next_set({"a": Q("a"), "<eos>": acc}))
    assert plain.output_name is None and plain.output == "acc" == plain.ops[-1].name
    used = crasp_program("t", acc, "ab", readout=next_set({"a": acc & Q("b"), "<eos>": acc}))
    assert used.output_name == "acc" and used.ops[-1].name != "acc" and used.output == "acc"
    with pytest.raises(RasplabError, match="the output 'nope' is not an operation"):
        CraspProgram("t", ("a", "b"), used.ops, output_name="nope")


def test_json_round_trip_keeps_the_program():
    p = crasp_program(
        "t",
        cond(periodic(3, 0, 2), count(Q("a"), window(2)), constant(4)) >= count(Q("b")),
        "ab",
        readout=next_set({"a": Q("a"), "b": Q("b")}),
        description="demo",
    )
    assert program_from_json(p.to_json()) == p
    assert Periodic(3, frozenset({0, 2})) in [op.period for op in p.ops]
