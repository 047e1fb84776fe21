"""Config files: a duplicate key is an error naming the key; an empty file is an error, not a
full default training."""

from __future__ import annotations

import pytest

from rasplab.cli import main


def run(capsys, *argv):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.mark.parametrize(
    "text, words",
    [
        ("task: binary_majority\ntrain:\n  steps: 4\n  steps: 5\n", ["duplicate key 'steps'"]),
        ("task: parity\ntask: binary_majority\n", ["duplicate key 'task'", "line 2"]),
        ("", ["is empty"]),
        ("# only a comment\n", ["is empty"]),
    ],
)
def test_bad_config_files_are_one_line(capsys, tmp_path, text, words):
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    db = tmp_path / "r.sqlite"
    code, out, err = run(capsys, "train", str(path), "--db", str(db), "--no-progress")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert all(w in err for w in words), err
    assert not db.exists()


def test_a_duplicate_key_in_a_sweep_config_is_refused(capsys, tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text("name: s\nbase:\n  task: parity\ngrid:\n  seed: [0]\n  seed: [1]\n")
    code, out, err = run(capsys, "sweep", str(path), "--db", str(tmp_path / "r.sqlite"))
    assert code == 2 and "duplicate key 'seed'" in err
