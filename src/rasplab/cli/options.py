"""Arguments several ``rasplab`` commands share: help texts, defaults, and how they are parsed.

Program names (``NAME`` or ``FILE.py:NAME``) resolve to library entries here, ``--tokens IDS``
becomes checked token ids, ``[CONFIG] [KEY=VALUE]...`` splits into a config file and overrides,
``--only KEY=V1,V2`` into grid values.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rasplab.errors import RasplabError

if TYPE_CHECKING:  # the annotation only: the program library loads when a command runs
    from rasplab.programs.base import LibraryProgram

PROGRAM_HELP = "Library program (see `rasplab programs`) or FILE.py:NAME (a Program or a function returning one)."
"""Help of an ALTA program argument (``run``, ``compile``, ``verify``, ``minimal``, ...)."""

CRASP_PROGRAM_HELP = "Library program (see `rasplab crasp programs`), FILE.py:NAME or FILE.json."
"""Help of a C-RASP program argument (the ``rasplab crasp`` subcommands)."""

DEFAULT_DB = "runs/results.sqlite"
"""The results store ``train``, ``sweep`` and ``report`` use without ``--db``."""


def split_args(args: list[str]) -> tuple[str | None, list[str]]:
    """Split ``[CONFIG] [key=value ...]``: a first argument without ``=`` is the config file.

    >>> split_args(["configs/a.yaml", "model.pe=nope"])
    ('configs/a.yaml', ['model.pe=nope'])
    >>> split_args(["seed=1"])
    (None, ['seed=1'])
    """
    args = list(args or [])
    config = None
    if args and "=" not in args[0]:
        config = args.pop(0)
    for arg in args:
        if "=" not in arg:
            raise RasplabError(
                f"argument {arg!r} must be key=value (only the first may be a config file)"
            )
    return config, args


def parse_only(items: list[str] | None) -> dict:
    """``["task=a,b", "seed=0"]`` → ``{"task": ["a", "b"], "seed": [0]}`` (YAML scalars).

    >>> parse_only(["task=a,b", "seed=0"])
    {'task': ['a', 'b'], 'seed': [0]}
    """
    from rasplab.harness.config import parse_override  # start-up time: the harness is heavy

    out: dict = {}
    for item in items or []:
        key, _ = parse_override(item)
        raw = item.split("=", 1)[1]
        out[key] = [parse_override(f"{key}={v}")[1] for v in raw.split(",")]
    return out


def grid_ids(config: str, db: str) -> set[str]:
    """The run ids of a sweep config's current grid in ``db`` (what its report shows)."""
    # start-up time: the harness imports torch
    from rasplab.harness.select import grid_ids as select_grid_ids
    from rasplab.harness.sweepconfig import load_sweep

    return select_grid_ids(load_sweep(config), db)


def entry_and_program(name: str, minimal_lengths: str | None, samples: int | None, seed: int):
    """The library entry of ``name`` (library name or FILE.py:NAME) and its program: the
    minimal one w.r.t. inputs of ``minimal_lengths`` if given (``compile``, ``verify``)."""
    from rasplab.programs.loading import resolve_program  # start-up time

    entry = resolve_program(name)
    if minimal_lengths is None:
        return entry, entry.program()
    from rasplab.analysis.minimal import minimal_program  # start-up time

    return entry, minimal_program(entry, minimal_lengths, samples, seed)


def tokens_encoder(entry: LibraryProgram, vocab: int) -> Callable[[str], list[int]]:
    """``--tokens`` of ``run`` and ``explore``: a function parsing token ids and checking them
    as natural inputs are checked, against the limit of library entry ``entry`` (the positions
    its longest natural inputs take) and its program's stated valid inputs."""
    from rasplab.programs.loading import token_ids  # start-up time: numpy
    from rasplab.programs.verify import entry_positions  # start-up time: torch

    try:
        program = entry.program()
    except RasplabError:  # a saved model of a program from a file: only its token ids
        program = None
    limit = entry_positions(entry)
    spec = program.inputs if program is not None else None

    def encode(text: str) -> list[int]:
        ids = token_ids(text, vocab)
        if limit is not None and len(ids) > limit:
            raise RasplabError(
                f"program {entry.name!r} handles lengths <= {entry.max_length} "
                f"({entry.length_unit}), which take at most {limit} tokens; these token ids "
                f"are {len(ids)}"
            )
        problem = spec.problem(ids, vocab) if spec is not None else None
        if problem is not None:
            raise RasplabError(f"{text!r} is not a valid input of {entry.name}: {problem}")
        return ids

    return encode


def input_lines(text: str | None, path: str | Path | None) -> list[str]:
    """``--input TEXT`` as one input, or the lines of ``--inputs FILE`` as they are (a
    byte-order mark dropped, a trailing newline adding no line); each command decides what an
    empty file or a blank line means."""
    if (text is None) == (path is None):
        raise RasplabError("give exactly one of --input TEXT and --inputs FILE")
    if text is not None:
        return [text]
    try:
        return Path(path).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise RasplabError(f"cannot read inputs file {str(path)!r}: {reason}") from err
