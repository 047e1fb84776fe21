"""Issue #39's bad-input sweep, items 3-4: an output path that cannot be written (an existing
file, a path under a file, a FIFO or a symlink to a device where a file goes, a folder that
cannot be made) or an input that does not fit (another figure's config, a results store that is
garbage or a folder) is one line and exit 2, checked before any training, with nothing
written and no empty output folder left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rasplab.cli import main

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def one_line(code, out, err, message):
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "a_file"
    path.write_text("keep\n")
    return path


def test_crasp_table_out_that_cannot_be_a_folder(capsys, a_file):
    one_line(*cli(capsys, "crasp", "table", "--out", str(a_file)), "exists and is not a folder")
    one_line(
        *cli(capsys, "crasp", "table", "--out", str(a_file / "sub")),
        f"{str(a_file)!r} is not a folder",
    )
    one_line(*cli(capsys, "crasp", "table", "--out", "/proc/x"), "cannot create --out '/proc/x'")
    assert a_file.read_text() == "keep\n"


def test_crasp_table_writes_nothing_when_one_target_is_a_fifo(capsys, tmp_path):
    folder = tmp_path / "T"
    folder.mkdir()
    os.mkfifo(folder / "crasp_table.csv")
    one_line(*cli(capsys, "crasp", "table", "--out", str(folder)), "is not a regular file")
    assert sorted(p.name for p in folder.iterdir()) == ["crasp_table.csv"]


def test_bounds_figure_checks_everything_before_the_sweep(capsys, tmp_path, a_file):
    out = tmp_path / "BF"
    other = str(CONFIGS / "bounds_fig2_quick.yaml")
    one_line(
        *cli(capsys, "bounds", "figure", "1", "--config", other, "--out", str(out)),
        "do not set task_options.omega",
    )
    one_line(
        *cli(capsys, "bounds", "figure", "1", "--quick", "--out", str(a_file)),
        "exists and is not a folder",
    )
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_text("not a database")
    for db in (garbage, tmp_path):
        code, stdout, err = cli(
            capsys, "bounds", "figure", "1", "--quick", "--db", str(db), "--out", str(out)
        )
        one_line(code, stdout, err, "results database")
    assert not out.exists()
    out.mkdir()
    (out / "fig1.md").symlink_to("/dev/null")
    one_line(
        *cli(capsys, "bounds", "figure", "1", "--quick", "--out", str(out)),
        "is not a regular file",
    )
    assert sorted(p.name for p in out.iterdir()) == ["fig1.md"]


def test_trace_supervise_refuses_an_out_file_before_training(capsys, a_file):
    one_line(
        *cli(capsys, "trace-supervise", "parity_sequential_relative", "--out", str(a_file)),
        "exists and is not a folder",
    )
