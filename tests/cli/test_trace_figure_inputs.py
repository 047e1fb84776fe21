"""`rasplab trace-figure` on a folder without a readable result.json: one line, exit 2, no
figure written."""

from __future__ import annotations

import pytest

from rasplab.cli import main


@pytest.mark.parametrize("content", [None, "{cut off"])
def test_a_folder_without_a_readable_result_is_one_line(capsys, tmp_path, content):
    run = tmp_path / "run"
    run.mkdir()
    if content is not None:
        (run / "result.json").write_text(content)
    out = tmp_path / "f.png"
    with pytest.raises(SystemExit) as done:
        main(["trace-figure", str(run), "--out", str(out)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith(
        f"rasplab: error: cannot read '{run}/result.json'"
    )
    assert err.count("\n") == 1 and not out.exists()
