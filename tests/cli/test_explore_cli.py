"""``rasplab explore`` and ``rasplab export`` through the real entry point: bad input is one
line, exit 2, and nothing written."""

from __future__ import annotations

import pytest

from rasplab.cli import main


def _run(capsys, *args) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    return done.value.code, capsys.readouterr().err


def test_program_page_is_written(tmp_path, capsys):
    out = tmp_path / "p.html"
    code, err = _run(capsys, "explore", "reverse", "--input", "abc", "--out", str(out))
    assert code == 0 and out.read_text().startswith("<!DOCTYPE html>")


def test_user_program_from_a_file(tmp_path, capsys):
    src = tmp_path / "prog.py"
    src.write_text(
        "from rasplab.lang import var, input_var, v_relative, program\n"
        "def step(x):\n"
        "    if x['left'] == 1:\n"
        "        x['out'] = 1\n"
        "def shift():\n"
        "    return program({'tok': input_var(2), 'out': var(2)},\n"
        "                   {'left': v_relative('tok', -1)}, step, 'out', 2, max_layers=1,\n"
        "                   undefined='no_match')  # position 0 has no left neighbour\n"
    )
    out = tmp_path / "p.html"
    code, _ = _run(capsys, "explore", f"{src}:shift", "--input", "1 0 1", "--out", str(out))
    assert code == 0 and '"all_agree":true' in out.read_text()
    code, err = _run(capsys, "explore", f"{src}:shift", "--input", "1 5", "--out", str(out) + "x")
    assert code == 2 and "outside the input range" in err


def test_crasp_program_and_non_programs_from_a_file(tmp_path, capsys):
    src = tmp_path / "counting.py"
    src.write_text(
        "from rasplab.crasp import Q, count, crasp_program\n"
        "def no_b():\n"
        "    return crasp_program('no_b', (count(Q('b')) == 0).named('no_b'), alphabet='ab')\n"
        "LIMIT = 3\n"
    )
    out = tmp_path / "c.html"
    code, _ = _run(capsys, "explore", f"{src}:no_b", "--input", "a a b", "--out", str(out))
    assert code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    for ref, message in [
        (f"{src}:LIMIT", "is int, not a program (an ALTA Program or library entry, or a C-RASP"),
        (f"{src}:missing", "defines no 'missing'"),
        (str(src), "name the object in the file, as FILE.py:NAME"),
    ]:
        bad = tmp_path / "bad.html"
        code, err = _run(capsys, "explore", ref, "--input", "a", "--out", str(bad))
        assert code == 2 and message in err and err.count("\n") == 1 and not bad.exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["explore", "majority", "--input", "ab9"], "alphabet"),
        (["explore", "no_such_program", "--input", "1"], "unknown program"),
        (["explore", "--run", "{tmp}", "--input", "1"], "holds no finished run"),
        (["explore", "--run", "{tmp}/missing", "--input", "1"], "does not exist"),
        (["explore", "reverse"], "--input"),
        (["explore", "reverse", "--input", "ab", "--step", "99"], "outside this page's steps"),
        (["explore", "reverse", "--input", "ab", "--step", "two"], "a step number or 'last'"),
        (["explore", "reverse", "--tokens", "1 2", "--input", "ab"], "without --input"),
        (["explore", "tomita1", "--tokens", "1 2"], "not --tokens"),
        (["explore", "parity_sum_mod_2", "--tokens", "1 7"], "7"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_page(tmp_path, capsys, args, message):
    out = tmp_path / "page.html"
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, err = _run(capsys, *args, "--out", str(out))
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out.exists()


def test_export_below_the_needed_layers_is_refused(tmp_path, capsys):
    pytest.importorskip("transformer_lens", reason="needs the interp extra")
    out = tmp_path / "tl"
    code, err = _run(
        capsys, "export", "parity_sequential_relative", "--to", "transformer-lens",
        "--layers", "2", "--input", "1 0 1 1", "--out", str(out),
    )  # fmt: skip
    assert code == 2 and "below the" in err and not out.exists()
    code, err = _run(capsys, "export", "parity_sum_mod_2", "--to", "tl", "--out", str(out))
    assert code == 2 and "transformer-lens" in err and not out.exists()


def test_export_writes_a_transformer_lens_folder(tmp_path, capsys):
    pytest.importorskip("transformer_lens", reason="needs the interp extra")
    from rasplab.lang.interpreter import interpret
    from rasplab.programs import get_program

    out = tmp_path / "tl"
    with pytest.raises(SystemExit) as done:
        main(["export", "parity_sequential_relative", "--to", "transformer-lens",
              "--layers", "5", "--input", "1 0 1 1", "--out", str(out)])  # fmt: skip
    assert done.value.code == 0
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    entry = get_program("parity_sequential_relative")
    ids = entry.encode("1 0 1 1")
    want = entry.decode(ids, interpret(entry.program(), [ids]).outputs[0])
    assert capsys.readouterr().out.strip() == "output: " + " ".join(want)


def test_tokens_and_step_go_into_the_page(tmp_path, capsys):
    import json

    out = tmp_path / "p.html"
    code, _ = _run(capsys, "explore", "parity_sum_mod_2", "--tokens", "1 0 1", "--step", "1",
                   "--out", str(out))  # fmt: skip
    assert code == 0
    text = out.read_text()
    data = json.loads(text.split('id="data">', 1)[1].split("</script>", 1)[0])
    assert data["tokens"] == ["1", "0", "1"] and data["initial_step"] == 1
    code, _ = _run(capsys, "explore", "tomita1", "--input", "1 1", "--out", str(out))
    data = json.loads(out.read_text().split('id="data">', 1)[1].split("</script>", 1)[0])
    assert code == 0 and data["initial_step"] == "last"
