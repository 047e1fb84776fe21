"""Outputs replaced in one step: files and directories are written under a hidden temporary
name beside their target and renamed into place, so a reader (or a process killed at any
moment) sees the old output or the new one, never a mix or a half-written file.

* :func:`write_file` / :func:`temp_file` + :func:`publish`: a file gets a unique temporary
  name ``.NAME.<pid>.<random>.tmp`` and ``os.replace``; only a regular file (or a symlink to
  one, which keeps pointing at the new content) is ever replaced: a FIFO, a device or a
  directory in the way is refused with one :class:`~rasplab.errors.RasplabError` line.
* :func:`temp_dir` + :func:`replace_dir`: a directory is built beside its target and swapped
  in with one ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames elsewhere).
* :func:`clean_stale`: temporary names left by killed writers (whose pid is gone) are removed
  on the next write to the same target.

Published outputs get the permissions a plain ``open`` would have given them (the umask):
``tempfile.mkstemp`` and safetensors create files readable by their owner only, but datasets,
checkpoints and compiled models are meant to be shared.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> write_file(os.path.join(folder, "out.txt"), b"x")
>>> oct(os.stat(os.path.join(folder, "out.txt")).st_mode & 0o777) == oct(0o666 & ~current_umask())
True
>>> os.listdir(folder)
['out.txt']
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from rasplab.errors import RasplabError

_STALE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


def current_umask() -> int:
    """The process umask (read without changing it for longer than one call)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (a zombie counts as dead).

    >>> process_alive(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    try:
        fields = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return fields.rsplit(")", 1)[-1].split()[0] != "Z"


def regular_target(path: str | Path, what: str = "output") -> Path:
    """The path to write for ``path``: itself, or the regular file a symlink points to; a
    directory, FIFO, socket or device in the way is a RasplabError."""
    path = Path(path)
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        if not target.exists():
            raise RasplabError(f"cannot write {what} {str(path)!r}: it is a dangling symlink")
        path = target
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as err:
        raise RasplabError(f"cannot write {what} {str(path)!r}: {err.strerror or err}") from err
    if stat.S_ISDIR(mode):
        raise RasplabError(f"cannot write {what} {str(path)!r}: it is a directory; give a file")
    if not stat.S_ISREG(mode):
        raise RasplabError(
            f"cannot write {what} {str(path)!r}: it is not a regular file (a FIFO, socket or "
            "device); rasplab only replaces regular files"
        )
    return path


def check_output_folder(
    folder: str | Path, names: tuple[str, ...] = (), what: str = "--out"
) -> Path:
    """Before any work (nothing is created): ``folder`` is a folder, or one can be created
    there, and each of ``names`` in it is absent or a regular file (:func:`regular_target`);
    anything else is one RasplabError, so that a command refuses before it trains or writes.

    >>> check_output_folder("/dev/null/x")
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: cannot create --out '/dev/null/x': '/dev/null' is not a folder
    """
    folder = Path(folder)
    if folder.exists():
        if not folder.is_dir():
            raise RasplabError(f"{what} {str(folder)!r} exists and is not a folder; give a folder")
        for name in names:
            regular_target(folder / name, what)
        return folder
    if folder.is_symlink():
        raise RasplabError(f"{what} {str(folder)!r} is a dangling symlink; give a folder")
    parent = folder.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise RasplabError(f"cannot create {what} {str(folder)!r}: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RasplabError(f"cannot create {what} {str(folder)!r}: {str(parent)!r} is not writable")
    return folder


def check_model_folder(out: Path, names: tuple[str, ...]) -> None:
    """Refuse ``--out`` when it is a file, or a folder holding files other than ``names`` (the
    model's own files), which replacing the folder in one step would delete."""
    if out.exists() and not out.is_dir():
        raise RasplabError(f"cannot write the model to {str(out)!r}: it is a file, not a folder")
    if out.is_dir():
        others = sorted(p.name for p in out.iterdir() if p.name not in names)
        if others:
            raise RasplabError(
                f"cannot write the model to {str(out)!r}: it holds other files ({others[0]}, "
                "...) that replacing the folder would delete; give a new or empty folder"
            )


def make_output_folder(folder: str | Path, what: str = "--out") -> Path:
    """Create ``folder`` (and its parents) for outputs; a failure is one RasplabError."""
    folder = check_output_folder(folder, (), what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RasplabError(f"cannot create {what} {str(folder)!r}: {err.strerror or err}") from err
    return folder


def clean_stale(target: str | Path) -> None:
    """Remove temporary files and folders of ``target`` left by writers that are gone."""
    target = Path(target)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        m = _STALE.match(name)
        if m and m["name"] == target.name and not process_alive(int(m["pid"])):
            stale = folder / name
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)


def _prefix(target: Path) -> tuple[Path, str]:
    folder = target.parent if str(target.parent) else Path(".")
    return folder, f".{target.name}.{os.getpid()}."


def temp_file(target: str | Path) -> Path:
    """Create an empty, uniquely named temporary file beside ``target`` (after cleaning the
    stale ones); a folder that cannot be written is a RasplabError."""
    target = Path(target)
    clean_stale(target)
    folder, prefix = _prefix(target)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
    except OSError as err:
        raise RasplabError(f"cannot write {str(target)!r}: {err.strerror or err}") from err
    os.close(fd)
    return Path(tmp)


def temp_dir(target: str | Path) -> Path:
    """Create an empty, uniquely named temporary directory beside ``target``."""
    target = Path(target)
    clean_stale(target)
    folder, prefix = _prefix(target)
    try:
        return Path(tempfile.mkdtemp(dir=folder, prefix=prefix, suffix=".tmp"))
    except OSError as err:
        raise RasplabError(f"cannot write {str(target)!r}: {err.strerror or err}") from err


def publish(tmp: str | Path, path: str | Path, directory: bool = False) -> None:
    """Give ``tmp`` the default mode for a new file (or directory) and move it to ``path``."""
    base = 0o777 if directory else 0o666
    os.chmod(tmp, base & ~current_umask())
    os.replace(tmp, path)


def write_file(path: str | Path, data: bytes, what: str = "output") -> None:
    """Write ``data`` to the regular file ``path`` in one step (temporary file, fsync, rename)."""
    path = regular_target(path, what)
    tmp = temp_file(path)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        publish(tmp, path)
    except OSError as err:
        raise RasplabError(f"cannot write {what} {str(path)!r}: {err.strerror or err}") from err
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` in one step (:func:`write_file`), creating its folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, data, "file")


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write text to ``path`` in one step (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode())


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with Linux ``renameat2(RENAME_EXCHANGE)``; False when the
    system (or its file system) cannot, so that the caller falls back to two renames."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return done == 0


def replace_dir(tmp: str | Path, path: str | Path) -> None:
    """Put the finished directory ``tmp`` at ``path`` in one step, removing the old one.

    With an existing ``path``, the two are exchanged atomically (Linux), else the old one is
    moved aside and the new one renamed in (a reader may then briefly find no directory, but
    never a mix of old and new files)."""
    tmp, path = Path(tmp), Path(path)
    os.chmod(tmp, 0o777 & ~current_umask())
    if not path.exists():
        os.replace(tmp, path)
        return
    if not _exchange(tmp, path):
        aside = temp_dir(path)
        os.replace(path, aside / "old")
        os.replace(tmp, path)
        tmp = aside
    shutil.rmtree(tmp, ignore_errors=True)


def read_model_dir(directory: str | Path, spec_name: str, weights_name: str) -> tuple:
    """``(spec, tensors)`` of a saved model directory (a JSON spec and a safetensors file):
    a missing directory or file, or one that cannot be read, is one error line."""
    # start-up time: rasplab --help imports this module; safetensors.torch loads torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path, where = Path(directory), str(directory)
    if path.exists() and not path.is_dir():
        raise RasplabError(
            f"model directory {where!r} is a file, not a folder; give the folder that "
            "compile --out wrote"
        )
    if not path.is_dir():
        raise RasplabError(f"model directory {where!r} does not exist")
    missing = [f for f in (spec_name, weights_name) if not (path / f).is_file()]
    if missing:
        raise RasplabError(f"model directory {where!r} lacks {' and '.join(missing)}")
    try:
        spec = json.loads((path / spec_name).read_text(encoding="utf-8"))
        tensors = load_file(str(path / weights_name))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, SafetensorError) as err:
        raise RasplabError(
            f"cannot read the model in {where!r}: {str(err).splitlines()[0]}"
        ) from err
    return spec, tensors


def write_model_dir(
    out: str | Path,
    spec: dict,
    tensors: dict,
    names: tuple[str, str],
    digest,
    indent: int | None = None,
) -> None:
    """Write a saved model to the folder ``out`` (its parent must exist): the ``tensors`` as
    safetensors and ``spec`` as JSON (``names``: weights file, spec file), with
    ``spec["digest"] = digest(spec, weights_path)``, in a temporary folder put in place in one
    step (an earlier model there replaced); a failure is one error line and leaves nothing."""
    # start-up time: rasplab --help imports this module; safetensors.torch loads torch
    from safetensors import SafetensorError
    from safetensors.torch import save_file

    out = Path(out)
    weights, spec_name = names
    try:
        tmp = temp_dir(out)
    except OSError as err:
        raise RasplabError(f"cannot write to {str(out)!r}: {err.strerror or err}") from err
    try:
        save_file(tensors, str(tmp / weights))
        spec["digest"] = digest(spec, tmp / weights)
        (tmp / spec_name).write_text(json.dumps(spec, indent=indent), encoding="utf-8")
        for name in names:  # the usual file mode (safetensors writes owner-only)
            publish(tmp / name, tmp / name)
        replace_dir(tmp, out)
    except (OSError, SafetensorError) as err:  # safetensors reports I/O errors as its own
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise RasplabError(f"cannot write the model to {str(out)!r}: {reason}") from err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
