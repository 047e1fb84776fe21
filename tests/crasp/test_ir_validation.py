"""The C-RASP IR refuses malformed operations, readouts and programs with one line naming the
problem, and prints every kind of operation in the seed's notation."""

from __future__ import annotations

import json
import re

import pytest

from rasplab.crasp.ir import CraspProgram, Op, Periodic, Readout, Relation
from rasplab.crasp.load import load_crasp_program
from rasplab.errors import RasplabError


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "1x", "kind": "initial", "symbol": "a"}, "'1x' is not an identifier"),
        ({"name": "x", "kind": "xor"}, "unknown kind 'xor'"),
        ({"name": "x", "kind": "and", "args": ("a",)}, "(and) takes at least 2 arguments, got 1"),
        ({"name": "x", "kind": "not", "args": ()}, "(not) takes 1 arguments, got 0"),
        ({"name": "x", "kind": "initial"}, "an initial operation needs a symbol"),
        ({"name": "x", "kind": "bool_const", "value": 1}, "needs value True or False"),
        ({"name": "x", "kind": "count_const", "value": True}, "needs an integer value, got True"),
        (
            {"name": "x", "kind": "compare_const", "args": ("c",), "value": 1, "comparison": "=<"},
            "comparison must be one of < <= == != > >=, got '=<'",
        ),
        ({"name": "x", "kind": "periodic"}, "a periodic operation needs a Periodic predicate"),
        (
            {"name": "x", "kind": "count", "args": ("a",), "relation": lambda i, j: i > j},
            "the relation must be a Relation (offsets j = i-k), not function",
        ),
    ],
)
def test_a_malformed_operation_is_one_error_naming_it(fields, message):
    with pytest.raises(RasplabError) as caught:
        Op(**fields)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("list", ("a",), ("A",)), "readout kind must be 'set' or 'token', got 'list'"),
        (("set", ("a", "b"), ("A",)), "a readout needs one Boolean operation per output symbol"),
        (("set", (), ()), "a readout needs one Boolean operation per output symbol"),
        (("token", ("a", "a"), ("A", "A")), "readout symbols repeat: ['a', 'a']"),
    ],
)
def test_a_malformed_readout_is_refused(args, message):
    with pytest.raises(RasplabError, match="^" + _literal(message)):
        Readout(*args)


A = Op("Q_a", "initial", symbol="a")
C = Op("C", "count", ("Q_a",))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alphabet": (), "ops": (A,)}, "the alphabet must be non-empty without repeats"),
        ({"alphabet": ("a", "a"), "ops": (A,)}, "the alphabet must be non-empty without repeats"),
        ({"alphabet": ("a",), "ops": (A, "Q_b")}, "operations must be Op objects, got 'Q_b'"),
        ({"alphabet": ("a",), "ops": (A, C)}, None),
        ({"alphabet": ("a",), "ops": (C,)}, "operation 'C' uses 'Q_a', which is not defined"),
        (
            {"alphabet": ("a",), "ops": (A, Op("K", "count_const", value=2))},
            None,
        ),
        (
            {"alphabet": ("a",), "ops": (Op("K", "count_const", value=2),)},
            "needs at least one Boolean operation (its output)",
        ),
        (
            {"alphabet": ("a",), "ops": (A, C), "readout": Readout("set", ("a",), ("C",))},
            "readout symbol 'a' names 'C', which is",
        ),
    ],
)
def test_a_malformed_program_is_refused(kwargs, message):
    if message is None:  # the well-formed neighbours of the refused programs build
        assert CraspProgram("p", **kwargs).output == "Q_a"
        return
    with pytest.raises(RasplabError, match="^program 'p': " + _literal(message)):
        CraspProgram("p", **kwargs)


def _every_kind() -> CraspProgram:
    """One operation of each kind, and a set readout."""
    ops = (
        A,
        Op("Q_b", "initial", symbol="b"),
        Op("N", "not", ("Q_a",)),
        Op("Both", "and", ("Q_a", "Q_b")),
        Op("Either", "or", ("Q_a", "Q_b", "N")),
        Op("Even", "periodic", period=Periodic(3, frozenset({0, 2}))),
        Op("Ca", "count", ("Q_a",)),
        Op("Cb", "count", ("Q_b",), relation=Relation(frozenset({1, 2}))),
        Op("If", "cond", ("Even", "Ca", "Cb")),
        Op("Sum", "add", ("Ca", "Cb")),
        Op("Diff", "sub", ("Sum", "If")),
        Op("Out", "compare_const", ("Diff",), value=0, comparison=">"),
    )
    return CraspProgram("every", ("a", "b"), ops, Readout("set", ("a", "b"), ("Out", "N")))


def test_the_listing_shows_every_kind_in_the_seed_notation():
    lines = _every_kind().listing().splitlines()
    assert lines[0] == "C-RASP[periodic,local] program every over {a, b}"
    definitions = [line.split(":= ", 1)[1] for line in lines[1:-1]]
    assert definitions[2:11] == [
        "NOT Q_a(i)",
        "Q_a(i) AND Q_b(i)",
        "Q_a(i) OR Q_b(i) OR N(i)",
        "i mod 3 in {0, 2}",
        "#[j <= i] Q_a(j)",
        "#[j <= i, i-2 <= j <= i-1] Q_b(j)",
        "Even(i) ? Ca(i) : Cb(i)",
        "Ca(i) + Cb(i)",
        "Sum(i) - If(i)",
    ]
    assert lines[-1] == "  readout (set): a: Out, b: N"


def test_looking_up_a_missing_operation_or_class_names_it():
    p = _every_kind()
    assert p.op("Sum").kind == "add"
    with pytest.raises(RasplabError, match="^program 'every' has no operation 'Total'$"):
        p.op("Total")
    with pytest.raises(RasplabError, match=r"^unknown class 'C-RASP\[local,periodic\]'"):
        p.within("C-RASP[local,periodic]")


def test_relations_print_and_combine_as_sets_of_offsets():
    near = Relation(frozenset({0, 1, 2}))
    assert near.window == 2 and str(near) == "i-2 <= j <= i"
    assert str(Relation(frozenset({1, 3}))) == "i-j in {1, 3}"
    far = Relation(frozenset({1, 3}), cofinite=True)
    assert str(far) == "i-j not in {1, 3}"
    with pytest.raises(RasplabError, match=r"^relation i-j not in \{1, 3\} is not local"):
        _ = far.window
    both = far | Relation(frozenset({3, 4}), cofinite=True)  # the complements intersect
    assert str(both) == "i-j not in {3}"
    assert [both.holds(9, j) for j in range(4, 10)] == [True, True, False, True, True, True]


def _literal(text: str) -> str:
    """``text`` as a regular expression matching itself."""
    return re.escape(text)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("p.py", "", "'{path}': name the program in the file, as FILE.py:NAME"),
        ("bad.json", "{not json", "{path}: not valid JSON (Expecting property name"),
        (
            "short.json",
            json.dumps({"name": "p"}),
            "{path}: a C-RASP program in JSON is an object with 'name', 'alphabet', 'ops'",
        ),
    ],
)
def test_loading_a_bad_program_file_is_one_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(RasplabError) as caught:
        load_crasp_program(str(path))
    assert str(caught.value).startswith(message.format(path=path))


def test_loading_a_missing_json_file_or_a_failing_builder_is_one_line(tmp_path):
    with pytest.raises(RasplabError, match="cannot read program file .*: No such file"):
        load_crasp_program(str(tmp_path / "absent.json"))
    source = tmp_path / "mine.py"
    source.write_text("def P():\n    return {}['missing']\n")
    with pytest.raises(RasplabError, match=r"mine.py:P: KeyError: 'missing'$"):
        load_crasp_program(f"{source}:P")
