"""The RASP language: Tracr's names, predicate direction, evaluator semantics, validation."""

import pytest

from rasplab.rasp import rasp
from rasplab.rasp.graph import nodes
from rasplab.rasp.rasp import RaspError
from rasplab.rasp.values import infer_values


def test_tracr_names_exist():
    for name in [
        "tokens", "indices", "length", "Map", "SequenceMap", "LinearSequenceMap", "Full",
        "ConstantSOp", "Select", "Comparison", "ConstantSelector", "SelectorAnd", "SelectorOr",
        "SelectorNot", "selector_and", "selector_or", "selector_not", "Aggregate",
        "SelectorWidth", "numerical", "categorical", "annotate", "evaluate", "is_numerical",
        "is_categorical", "get_encoding", "Encoding", "DEFAULT_ANNOTATORS",
    ]:  # fmt: skip
        assert hasattr(rasp, name), name


@pytest.mark.parametrize(
    "cmp,expected",
    [  # keys [1, 2, 3] against query 2: the predicate is called (key, query)
        (rasp.Comparison.EQ, [False, True, False]),
        (rasp.Comparison.LT, [True, False, False]),
        (rasp.Comparison.LEQ, [True, True, False]),
        (rasp.Comparison.GT, [False, False, True]),
        (rasp.Comparison.GEQ, [False, True, True]),
        (rasp.Comparison.NEQ, [True, False, True]),
        (rasp.Comparison.TRUE, [True, True, True]),
        (rasp.Comparison.FALSE, [False, False, False]),
    ],
)
def test_comparison_direction_is_key_then_query(cmp, expected):
    sel = rasp.Select(rasp.tokens, rasp.tokens, cmp)
    assert rasp.evaluate(sel, [1, 2, 3])[1] == expected


def test_comparison_refuses_none():
    with pytest.raises(RaspError, match="None"):
        rasp.Comparison.LT(None, 1)


def test_map_simplifies_and_operators_build_maps():
    m = rasp.Map(lambda x: x + 1, rasp.Map(lambda x: 2 * x, rasp.tokens))
    assert m.inner is rasp.tokens and m([1, 2]) == [3, 5]
    assert rasp.Map(lambda x: x + 1, m, simplify=False).inner is m
    assert (rasp.tokens * 3 - 1)([1, 2]) == [2, 5]
    assert (10 - rasp.tokens)([1, 2]) == [9, 8]
    assert (rasp.tokens + rasp.indices)([5, 5]) == [5, 6]
    assert (~(rasp.tokens == 1))([1, 2]) == [False, True]


def test_sequence_map_none_propagates_and_linear():
    prev = rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1), rasp.tokens
    )
    assert rasp.SequenceMap(lambda a, b: a + b, prev, rasp.tokens)([1, 2, 3]) == [None, 3, 5]
    lin = rasp.LinearSequenceMap(rasp.tokens, rasp.indices, 2, -1)
    assert lin([3, 3, 3]) == [6, 5, 4]


def test_aggregate_semantics():
    sel = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)
    num = rasp.numerical(rasp.Aggregate(sel, rasp.numerical(rasp.Map(float, rasp.tokens))))
    assert num([1, 2, 4]) == [0, 1.0, 1.5]  # empty numerical selection -> 0
    cat = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.GT), rasp.tokens)
    assert cat([5, 5, 1]) == [None, None, 5]  # empty -> None; equal values -> that value
    with pytest.raises(RaspError, match="selects different values"):
        rasp.Aggregate(sel, rasp.tokens)([1, 2, 4])
    assert rasp.Aggregate(sel, rasp.tokens, default="d")([1, 1]) == ["d", "d"]


def test_selector_combinators_and_simplification():
    a = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LEQ)
    b = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.GEQ)
    both = a & b
    assert isinstance(both, rasp.Select)  # same keys and queries: one Select
    assert rasp.SelectorWidth(both)([1, 2, 1]) == [2, 1, 2]
    c = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    mixed = a & c
    assert isinstance(mixed, rasp.SelectorAnd)
    assert rasp.SelectorWidth(mixed)([1, 3, 1]) == [0, 1, 1]
    assert rasp.SelectorWidth(a | c)([3, 1, 2]) == [3, 2, 3]
    assert rasp.SelectorWidth(~c)([3, 1, 2]) == [3, 2, 1]
    assert isinstance(rasp.SelectorNot(c), rasp.SelectorNot)
    full = rasp.Select(rasp.Full(2), rasp.tokens, rasp.Comparison.EQ)
    assert isinstance(full & a, rasp.Select)


def test_names_labels_encodings():
    x = rasp.numerical(rasp.Map(lambda t: t, rasp.tokens)).named("x")
    assert x.name == "x" and x.label == f"x_{x.unique_id}" and rasp.is_numerical(x)
    assert rasp.categorical(x) is x and rasp.is_categorical(x)
    assert rasp.Map(abs, rasp.tokens).name == "map"
    assert rasp.annotate(x, note=1).annotations["note"] == 1
    assert rasp.tokens.label == "tokens" and rasp.indices.label == "indices"


def test_constants_check_length():
    assert rasp.ConstantSOp([1, 2])([0, 0]) == [1, 2]
    with pytest.raises(RaspError, match="2 positions"):
        rasp.ConstantSOp([1, 2])([0])
    assert rasp.ConstantSelector([[True]])([0]) == [[True]]
    assert rasp.Full(7)("ab") == [7, 7] and rasp.length("abc") == [3, 3, 3]


@pytest.mark.parametrize(
    "build,message",
    [
        (lambda: rasp.Map(3, rasp.tokens), "needs a function"),
        (lambda: rasp.Map(abs, 3), "needs an SOp"),
        (lambda: rasp.Select(rasp.tokens, "x", rasp.Comparison.EQ), "needs an SOp"),
        (lambda: rasp.Aggregate(rasp.tokens, rasp.tokens), "needs selectors"),
        (lambda: rasp.SelectorWidth(rasp.tokens), "needs selectors"),
        (
            lambda: rasp.Aggregate(
                rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.tokens, default=[1]
            ),
            "default",
        ),
    ],
)
def test_constructors_refuse_bad_arguments(build, message):
    with pytest.raises(RaspError, match=message):
        build()


def test_cycle_is_named():
    a = rasp.Map(lambda x: x, rasp.tokens).named("a")
    b = rasp.Map(lambda x: x, a, simplify=False).named("b")
    a.inner = b  # only possible by reassigning after construction
    with pytest.raises(RaspError, match="cycle: .*a_.* -> b_"):
        nodes(b)


def test_value_sets_follow_tracr():
    prog = rasp.Map(lambda x: 1 / x, rasp.tokens - 1)
    sets = infer_values(prog, {1, 2, 3}, 4)
    assert sets[id(prog)].values == (0.5, 1.0)  # 1/0 dropped, as Tracr ignores it
    width = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))
    assert infer_values(width, {1}, 3)[id(width)].values == (0, 1, 2, 3)
    bad = rasp.Map(lambda x: [x], rasp.tokens).named("listy")
    with pytest.raises(RaspError, match="'listy' produces the unhashable value"):
        infer_values(bad, {1}, 2)
    agg = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.tokens)
    assert infer_values(agg, {"a"}, 2)[id(agg)].may_none
