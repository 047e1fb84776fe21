"""The SCAN Table-5 report: cells are per-setting means of what the store holds."""

from __future__ import annotations

from rasplab.reports.scan_table import main, markdown


def test_cells_average_seeds_and_keep_settings_apart():
    rows = [
        {"split": "mcd1", "variant": "absolute", "layers": 2, "accuracy": 0.02},
        {"split": "mcd1", "variant": "absolute", "layers": 2, "accuracy": 0.04},
        {"split": "length", "variant": "relative_shared", "layers": 6, "accuracy": 0.10},
    ]
    lines = markdown(rows).splitlines()
    assert lines[0] == "| split | weight sharing | positions | 2 | 6 |"
    assert lines[2] == "| length | yes | relative | - | 10.0 |"  # length sorts before mcd1
    assert lines[3] == "| mcd1 | no | absolute | 3.0 | - |"


def test_missing_database_is_one_line_exit_2(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "t.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rasplab: error:") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.md").exists()
