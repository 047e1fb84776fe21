"""Writing datasets (:mod:`rasplab.tasks.export`) called directly: unknown formats, a Hugging
Face dataset without a folder or onto a file."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.tasks import get_task
from rasplab.tasks.export import format_lines, write_dataset

TASK = get_task("parity")


def test_unknown_formats_are_refused():
    with pytest.raises(
        RasplabError, match="^unknown format 'csv'; choose one of: jsonl, text, hf$"
    ):
        write_dataset(TASK, [], "csv")
    with pytest.raises(RasplabError, match="^format 'hf' has no lines; choose jsonl or text$"):
        next(iter(format_lines(TASK, [], "hf")))


def test_a_hugging_face_dataset_needs_a_folder(tmp_path):
    pytest.importorskip("datasets", reason="needs the hf extra (datasets)")
    with pytest.raises(RasplabError, match="writes a directory; give it with --out DIR"):
        write_dataset(TASK, [], "hf")
    (tmp_path / "plain").write_text("x")
    with pytest.raises(RasplabError, match="plain: it exists and is not a directory$"):
        write_dataset(TASK, [], "hf", tmp_path / "plain")
