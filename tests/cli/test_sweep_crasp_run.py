"""Issue #39's bad-input sweep on ``rasplab crasp run``: a program right only on distinct
symbols refuses repeats (it answered a token not in the input), a byte-order mark is dropped and
an empty inputs file refused, as ALTA's ``run`` does."""

from __future__ import annotations

import json

import pytest

from rasplab.cli import main


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.mark.parametrize("name", ["copy_unique", "sort"])
def test_repeated_symbols_are_refused_where_the_program_needs_distinct_ones(capsys, name):
    code, out, err = cli(capsys, "crasp", "run", name, "--input", "1 2 1 3 <sep> 1 2 1")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{name} needs distinct symbols before <sep>; the input repeats '1'" in err


def test_distinct_symbols_still_run(capsys):
    code, out, _ = cli(
        capsys, "crasp", "run", "copy_unique", "--input", "1 2 3 <sep> 1 2", "--json"
    )
    assert code == 0 and json.loads(out)["outputs"][-3:] == ["1", "2", "3"]


def test_inputs_file_with_a_byte_order_mark_and_an_empty_one(capsys, tmp_path):
    bom = tmp_path / "bom.txt"
    bom.write_bytes("a b a\n".encode("utf-8-sig"))
    code, out, _ = cli(capsys, "crasp", "run", "majority", "--inputs", str(bom), "--json")
    assert code == 0 and json.loads(out)["input"] == "a b a"
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code, out, err = cli(capsys, "crasp", "run", "majority", "--inputs", str(empty))
    assert code == 2 and out == "" and "holds no inputs" in err


def test_without_trace_only_the_outputs_are_kept(capsys, monkeypatch):
    # item 3: a 10^6-symbol input kept every operation's values (a MemoryError under 4 GB)
    from rasplab.crasp import interpreter

    kept = []
    real = interpreter.run_ids

    def spy(program, ids, keep="all"):
        kept.append(keep)
        return real(program, ids, keep)

    monkeypatch.setattr(interpreter, "run_ids", spy)
    code, out, _ = cli(capsys, "crasp", "run", "sort", "--input", "3 1 2 <sep>", "--json")
    assert code == 0 and kept == [()]
    code, out, _ = cli(capsys, "crasp", "run", "sort", "--input", "3 1 2 <sep>", "--trace")
    assert code == 0 and kept == [(), "all"]
