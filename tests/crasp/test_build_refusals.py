"""The C-RASP builders: constants on either side of an operator, and one-line refusals of a
wrong sort, a wrong type, a rename and a name given to two different operations."""

from __future__ import annotations

import pytest

from rasplab.crasp import Q, all_of, constant, count, crasp_program, run
from rasplab.errors import RasplabError


def _accepts(output, inputs, alphabet="ab"):
    """Acceptance of each input by the program whose output is ``output``."""
    return run(crasp_program("t", output, alphabet), inputs).accept.tolist()


def test_python_constants_on_the_left_of_an_operator_become_constant_operations():
    a, b = count(Q("a")), count(Q("b"))
    inputs = ["a", "b", "a a b", "b b a"]
    assert _accepts((1 + a) > b, inputs) == [True, False, True, False]
    assert _accepts((3 - a) > b, inputs) == [True, True, False, False]
    assert _accepts(True & Q("a"), inputs) == [True, False, False, True]
    assert _accepts(False | Q("b"), inputs) == [False, True, True, False]
    assert _accepts(Q("a") & True, inputs) == _accepts(Q("a"), inputs)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Q("a") & 3, "AND expects Booleans, but its right operand is int 3"),
        (lambda: 3 & Q("a"), "AND expects Booleans, but its left operand is int 3"),
        (lambda: Q(1), "Q takes a symbol string, got 1"),
        (lambda: constant("yes"), "a constant is a bool or an int, got 'yes'"),
        (lambda: all_of(), "AND of no arguments; give at least one"),
        (lambda: count(Q("a"), name="c").named("d"), "operation 'c' cannot be renamed to 'd'"),
    ],
)
def test_a_wrong_builder_call_is_one_error(make, message):
    with pytest.raises(RasplabError) as caught:
        make()
    assert str(caught.value) == message


def test_two_operations_with_one_name_are_one_operation_only_when_they_are_equal():
    same = crasp_program("t", count(Q("a"), name="c") > count(Q("a"), name="c"), "ab")
    assert [op.name for op in same.ops if op.kind == "count"] == ["c"]
    with pytest.raises(RasplabError, match="^two different operations are named 'c'$"):
        crasp_program("t", count(Q("a"), name="c") > count(Q("b"), name="c"), "ab")


def test_an_expression_shows_its_sort_and_name():
    assert repr(count(Q("a"), name="c")) == "Count(c)"
    assert repr(Q("a")) == "Bool(initial)"
