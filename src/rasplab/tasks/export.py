"""Writing datasets to disk or stdout: JSONL records, text lines, or a Hugging Face directory.

Everything goes through a task's hooks (``record``, ``text``), so a family with its own record
format (e.g. ``ptg``) needs no special case. Files are written to a temporary name in the
target directory and renamed into place (:mod:`rasplab.files`), so an error never leaves a
partial file behind, and only a regular file is ever replaced.

>>> from rasplab.tasks import get_task
>>> task = get_task("parity")
>>> lines = list(format_lines(task, task.dataset("test", "3-3", n=1), "jsonl"))
>>> lines[0][:42]
'{"task": "parity", "length": 3, "tokens": '
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from rasplab.errors import RasplabError
from rasplab.files import publish, regular_target, replace_dir, temp_dir, temp_file
from rasplab.tasks.base import Example, Task

FORMATS = ("jsonl", "text", "hf")
HF_INSTALL = "the hf format needs the Hugging Face 'datasets' package; install it with: pip install 'rasplab[hf]'  (or: pip install datasets)"


def parse_options(pairs: Sequence[str]) -> dict[str, object]:
    """``["p=3", "compat=huang"]`` -> ``{"p": 3, "compat": "huang"}`` (ints, floats,
    true/false and none are converted).

    >>> parse_options(["p=3", "omega=2.5", "compat=huang", "flag=false", "x=none"])
    {'p': 3, 'omega': 2.5, 'compat': 'huang', 'flag': False, 'x': None}
    """
    out: dict[str, object] = {}
    for pair in pairs:
        key, eq, raw = pair.partition("=")
        if not eq or not key.strip():
            raise RasplabError(f"malformed task option {pair!r}; write KEY=VALUE, e.g. p=3")
        if key.strip() in out:  # the last one silently won
            raise RasplabError(f"task option {key.strip()!r} is given twice; give it once")
        out[key.strip()] = _value(raw.strip())
    return out


def _value(raw: str) -> object:
    """Convert an option value written on the command line."""
    lowered = raw.lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def require_hf() -> None:
    """Raise a clear error when the optional ``datasets`` package is missing."""
    try:
        # optional extra: rasplab[hf] (datasets)
        import datasets  # noqa: F401
    except ImportError as err:
        raise RasplabError(HF_INSTALL) from err


def format_lines(task: Task, examples: Iterable[Example], fmt: str) -> Iterator[str]:
    """The output lines (without newline) of ``examples`` in ``jsonl`` or ``text`` format."""
    if fmt == "jsonl":
        return (json.dumps(task.record(ex)) for ex in examples)
    if fmt == "text":
        return (task.text(ex) for ex in examples)
    raise RasplabError(f"format {fmt!r} has no lines; choose jsonl or text")


FLUSH_SECONDS = 0.1
"""A stream is flushed when a line comes this long after its last flush (so the first line,
and lines that come slowly, reach a reader like ``| head -1`` at once)."""


def write_lines(lines: Iterable[str], out: Path | None, stream: TextIO | None = None) -> int:
    """Write lines as they come: to ``out`` atomically (a hidden temporary file beside it,
    renamed at the end; removed on any error or interrupt), or to ``stream``/stdout."""
    if out is None:
        stream = stream or sys.stdout
        count, flushed = 0, -math.inf
        for line in lines:
            stream.write(line + "\n")
            count += 1
            if time.monotonic() - flushed > FLUSH_SECONDS:
                stream.flush()
                flushed = time.monotonic()
        stream.flush()
        return count
    out = regular_target(out, "dataset")
    tmp = temp_file(out)
    try:
        count = 0
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            for line in lines:
                f.write(line + "\n")
                count += 1
        publish(tmp, out)
    except OSError as err:
        raise RasplabError(f"cannot write {out}: {err.strerror or err}") from err
    finally:
        tmp.unlink(missing_ok=True)
    return count


def write_hf(task: Task, examples: Iterable[Example], out: Path | None) -> int:
    """Save a Hugging Face ``datasets`` directory at ``out`` (replaced atomically). The
    records are streamed into an Arrow file (``datasets``' own ``ArrowWriter``, in batches)
    in a hidden folder beside ``out``, removed afterwards: never all held in memory."""
    require_hf()
    # optional extra: rasplab[hf] (datasets)
    import datasets
    from datasets.arrow_writer import ArrowWriter

    if out is None:
        raise RasplabError("the hf format writes a directory; give it with --out DIR")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RasplabError(f"cannot write {out}: it exists and is not a directory")
    tmp, scratch = temp_dir(out), temp_dir(out)
    try:
        count = 0
        writer = ArrowWriter(path=str(scratch / "records.arrow"))
        try:
            for ex in examples:
                writer.write(task.record(ex))
                count += 1
            if count:
                writer.finalize()
        finally:
            writer.close()
        if count:
            dataset = datasets.Dataset.from_file(str(scratch / "records.arrow"))
        else:
            dataset = datasets.Dataset.from_list([])
        dataset.save_to_disk(str(tmp))
        replace_dir(tmp, out)
    except OSError as err:
        raise RasplabError(f"cannot write {out}: {err.strerror or err}") from err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return count


def write_dataset(
    task: Task, examples: Iterable[Example], fmt: str, out: Path | None = None
) -> int:
    """Write ``examples`` of ``task`` in ``fmt`` to ``out`` (stdout if ``None``), each as
    soon as it comes (``examples`` may be a generator); returns the count."""
    if fmt not in FORMATS:
        raise RasplabError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if fmt == "hf":
        return write_hf(task, examples, out)
    return write_lines(format_lines(task, examples, fmt), out)
