"""``rasplab explore lib:NAME --vocab ... --input ...``: a page with every SOp of the RASP
program, its evaluated value per position beside the compiled model's decoded value."""

from __future__ import annotations

import json

import pytest

from rasplab.cli import main
from rasplab.rasp import lib, rasp
from rasplab.rasp.graph import sops


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def page_data(path) -> dict:
    """The JSON the page embeds."""
    return json.loads(path.read_text().split('id="data">', 1)[1].split("</script>", 1)[0])


def test_the_page_shows_every_sop_evaluated_and_compiled(tmp_path, capsys):
    page = tmp_path / "sort.html"
    code, _, err = cli(
        capsys, "explore", "lib:make_sort_unique", "--vocab", "1 2 3", "--max-seq-len", "4",
        "--input", "3 1 2", "--out", str(page),
    )  # fmt: skip
    assert code == 0 and str(page) in err
    data = page_data(page)
    assert data["kind"] == "rasp" and data["symbols"] == ["BOS", "3", "1", "2"]
    # the same SOps, in the same order, as the library program built here
    names = [s.name for s in sops(lib.make_sort_unique(rasp.tokens, rasp.tokens))]
    shown = [op["name"] for op in data["operations"]]
    assert [n.rsplit("_", 1)[0] if n not in ("tokens", "indices") else n for n in shown] == names
    rows = {op["name"].rsplit("_", 1)[0]: op for op in data["operations"]}
    assert rows["sort"]["values"] == ["-", "1", "2", "3"] and rows["sort"]["output"]
    assert rows["sort"]["compiled"][1:] == ["1", "2", "3"]
    assert rows["tokens"]["values"][1:] == ["3", "1", "2"]
    assert all(op["differs"] == [] for op in data["operations"])
    assert data["summary"] == {"operations": len(names), "output": "1 2 3", "all_agree": True}
    for name in names:  # the page itself carries the SOp names
        assert name in page.read_text()


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--vocab", "1 2", "--input", "1 4"], "not in the vocabulary"),
        (["--vocab", "1 2", "--tokens", "1"], "--input"),
        (["--vocab", "1 2", "--max-seq-len", "0", "--input", "1"], "at least 1"),
    ],
)
def test_bad_input_writes_no_page(tmp_path, capsys, extra, message):
    page = tmp_path / "p.html"
    code, out, err = cli(capsys, "explore", "lib:make_hist", "--out", str(page), *extra)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert not page.exists()
