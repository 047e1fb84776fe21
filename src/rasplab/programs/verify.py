"""Library programs through the compiler: compile with the positions their inputs need, and
verify on their natural inputs (built on :func:`rasplab.compiler.verify.verify`).

>>> from rasplab.programs import get_program
>>> report = verify_program(get_program("parity_sequential_relative"), "0-3", samples=100)
>>> report.to_json()
{'total': 15, 'agree': 15, 'first_divergence': None}
"""

from __future__ import annotations

import torch

from rasplab.bins import Bin
from rasplab.compiler.compile import compile_program, resolve_max_length
from rasplab.compiler.model import CompiledTransformer
from rasplab.compiler.verify import MAX_EXHAUSTIVE, VerifyReport, verify
from rasplab.errors import RasplabError
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram
from rasplab.seeding import generator


def entry_positions(entry: LibraryProgram, samples: int = 8, seed: int = 0) -> int | None:
    """Positions the entry's longest inputs take (max over a few random inputs of its
    ``max_length``); None when the entry has no maximum length."""
    if entry.max_length is None:
        return None
    rng = generator(seed, "entry-positions", entry.name)
    return max(len(entry.encode(entry.random_input(rng, entry.max_length))) for _ in range(samples))


def compile_entry(
    entry: LibraryProgram, program: Program | None = None, max_length: int | None = None
) -> CompiledTransformer:
    """Compile a library program; without ``max_length``, a length-dependent program without a
    ``position_range`` gets the positions its entry's longest inputs take."""
    program = entry.program() if program is None else program
    if (
        max_length is None
        and program.position_range is None
        and resolve_max_length(program, None) is not None
    ):
        max_length = entry_positions(entry)
    return compile_program(program, max_length=max_length)


def verify_program(
    entry: LibraryProgram,
    lengths: Bin | str,
    samples: int,
    exhaustive_up_to: int | None = None,
    seed: int = 0,
    dtype: torch.dtype | None = None,
    program: Program | None = None,
) -> VerifyReport:
    """Verify a library program on ``samples`` natural inputs per the length bin (all of them if
    the bin holds at most that many), plus every input up to ``exhaustive_up_to``."""
    texts, _ = entry.inputs(lengths, samples, seed, "verify")
    if exhaustive_up_to is not None:
        if entry.all_inputs is None:
            raise RasplabError(
                f"program {entry.name!r} cannot enumerate its inputs; drop --exhaustive-up-to"
            )
        if not isinstance(exhaustive_up_to, int) or exhaustive_up_to < 0:
            raise RasplabError(
                f"--exhaustive-up-to must be a non-negative int, got {exhaustive_up_to!r}"
            )
        bound = Bin(entry.min_length, max(exhaustive_up_to, entry.min_length))
        top = entry.check_lengths(bound).hi
        count = entry.count_inputs(bound)
        if count is not None and count > MAX_EXHAUSTIVE:
            raise RasplabError(
                f"--exhaustive-up-to {exhaustive_up_to} means {count} inputs of {entry.name!r}; "
                f"at most {MAX_EXHAUSTIVE} can be verified exhaustively, so lower it"
            )
        texts += [x for n in range(entry.min_length, top + 1) for x in entry.all_inputs(n)]
    program = entry.program() if program is None else program
    batch = [entry.encode(t) for t in texts]
    return verify(program, samples=0, dtype=dtype, inputs=batch, labels=texts)
