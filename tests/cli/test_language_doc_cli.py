"""docs/language.md through the CLI: the page's programs saved in a file, and the shell commands
it prints run as printed (a program stating its valid inputs is verified, minimised and run on
those only; an input it refuses is one line and exit 2)."""

from __future__ import annotations

import doctest
import json
import re
import shlex
from pathlib import Path

import pytest

from rasplab.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"


def page_as_file(path: Path) -> None:
    """Every doctest example of the page that neither expects an exception nor prints, as one
    module."""
    examples = doctest.DocTestParser().get_examples(DOC.read_text())
    keep = [e.source for e in examples if e.exc_msg is None and not e.source.startswith("print(")]
    path.write_text("".join(keep))


def page_commands() -> list[list[str]]:
    """The ``rasplab ...`` lines of the page's shell block about ``mine.py``."""
    text = DOC.read_text()
    block = re.search(r"```\n(rasplab run mine\.py.*?)```", text, re.S)
    assert block is not None, "docs/language.md lost its block of rasplab commands"
    return [shlex.split(line)[1:] for line in block.group(1).splitlines() if line.strip()]


def cli(capsys, args):
    with pytest.raises(SystemExit) as done:
        main(args)
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.fixture(scope="module")
def commands():
    return page_commands()


def test_the_pages_commands_run_through_the_cli(tmp_path, monkeypatch, capsys, commands):
    page_as_file(tmp_path / "mine.py")
    monkeypatch.chdir(tmp_path)
    assert [c[0] for c in commands] == ["run", "verify", "compile", "run", "minimal"]
    for args in commands:
        args = args + ["--json"] if args[0] in ("run", "verify", "minimal") else args
        code, out, err = cli(capsys, args)
        assert code == 0, (args, err)
        if args[0] == "verify":
            report = json.loads(out)
            assert report["total"] == report["agree"] == 500 and "undefined" not in report
        if args[0] == "minimal":  # ranks above 3 never occur in inputs of 1-4 tokens
            record = json.loads(out)
            assert record["rules_minimal"] < record["rules_full"]
            assert 0 <= record["test_accuracy"] < 1
    code, out, _ = cli(capsys, ["run", "mine.py:stable_sort", "--tokens", "0 3 1 3 2 1", "--json"])
    assert code == 0 and json.loads(out)["output"] == ["0", "1", "1", "2", "3", "3"]


def test_an_input_the_program_does_not_accept_is_one_line(tmp_path, monkeypatch, capsys):
    page_as_file(tmp_path / "mine.py")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, ["run", "mine.py:stable_sort", "--tokens", "3 1 2"])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "position 0 must be the start token 0, got 3" in err
