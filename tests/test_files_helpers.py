"""The bottom file helpers (:mod:`rasplab.files`) on the paths a user can meet: dangling
symlinks, folders that cannot be written, a write that fails half-way, a system without an
atomic exchange, process ids that cannot exist."""

from __future__ import annotations

import errno
import os

import pytest

from rasplab import files
from rasplab.errors import RasplabError
from rasplab.files import (
    check_output_folder,
    process_alive,
    regular_target,
    replace_dir,
    temp_dir,
    temp_file,
    write_file,
)


def test_process_ids_that_cannot_exist_are_dead():
    assert not process_alive(2**80)  # beyond pid_t
    assert process_alive(os.getpid())


def test_a_dangling_symlink_is_refused_as_a_file_and_as_a_folder(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    with pytest.raises(RasplabError, match="cannot write output .*link': it is a dangling symlink"):
        regular_target(tmp_path / "link")
    with pytest.raises(RasplabError, match="--out .*link' is a dangling symlink; give a folder"):
        check_output_folder(tmp_path / "link")


def test_a_path_through_a_file_is_one_line(tmp_path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(RasplabError, match="cannot write output .*plain/x': Not a directory"):
        regular_target(tmp_path / "plain" / "x")
    with pytest.raises(RasplabError, match="cannot write .*missing/x'"):
        temp_file(tmp_path / "missing" / "x")
    with pytest.raises(RasplabError, match="cannot write .*missing/x'"):
        temp_dir(tmp_path / "missing" / "x")


def test_a_failed_write_is_one_line_and_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def full_disk(tmp, path, directory=False):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "publish", full_disk)
    with pytest.raises(RasplabError, match="cannot write output .*out.txt': No space left"):
        write_file(target, b"new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]


def test_replace_dir_without_an_atomic_exchange_still_swaps_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_exchange", lambda a, b: False)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "old.txt").write_text("old")
    new = temp_dir(tmp_path / "m")
    (new / "new.txt").write_text("new")
    replace_dir(new, tmp_path / "m")
    assert os.listdir(tmp_path / "m") == ["new.txt"] and os.listdir(tmp_path) == ["m"]
