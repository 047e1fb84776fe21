"""Issue #39: a C-RASP program in JSON with two operations of one name (the first was silently
dropped) or an ``output`` naming no operation (it was ignored) is refused in one line."""

from __future__ import annotations

import json

import pytest

from rasplab.cli import main
from rasplab.crasp.serialize import program_from_json
from rasplab.errors import RasplabError

A = {"name": "x", "kind": "initial", "symbol": "a"}
B = {"name": "x", "kind": "initial", "symbol": "b"}


def test_two_operations_of_one_name_are_refused():
    with pytest.raises(RasplabError, match="operation name 'x' is used by 2 operations"):
        program_from_json({"name": "d", "alphabet": ["a", "b"], "ops": [A, B]})


def test_an_output_naming_no_operation_is_refused():
    data = {"name": "d", "alphabet": ["a", "b"], "ops": [A], "output": "nope"}
    with pytest.raises(RasplabError, match="output 'nope' names no operation; give one of: x"):
        program_from_json(data)
    assert program_from_json({**data, "output": "x"}).output_name == "x"


def test_the_cli_refuses_them_in_one_line(tmp_path, capsys):
    path = tmp_path / "dup.json"
    path.write_text(json.dumps({"name": "d", "alphabet": ["a", "b"], "ops": [A, B]}))
    with pytest.raises(SystemExit) as done:
        main(["crasp", "run", str(path), "--input", "a b"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and "used by 2 operations" in err
