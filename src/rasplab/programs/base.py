"""The program library's entry type and its registry.

A :class:`LibraryProgram` bundles a program builder with the glue a user needs to run it on
the natural input of its task: ``encode`` (natural input -> token ids, special tokens
added), ``decode`` (token ids and output values -> the task-level answer), an independent
``reference`` function computing the same answer without the program, and ``random_input``
for tests and minimal-program experiments. :meth:`LibraryProgram.inputs` draws the natural
inputs of a length bin (every input when the bin is small enough to enumerate).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError, unknown_name
from rasplab.lang.program import Program
from rasplab.seeding import check_seed, generator


@dataclass(frozen=True)
class LibraryProgram:
    """A named program with its task glue; ``build(**options)`` returns the Program."""

    name: str
    description: str
    build: Callable[..., Program]
    encode: Callable[[str], list[int]]
    decode: Callable[[Sequence[int], Sequence[int]], list[str]]
    reference: Callable[[str], list[str]]
    random_input: Callable[[np.random.Generator, int], str]
    length_unit: str = "tokens"
    options: dict = field(default_factory=dict)
    min_length: int = 0
    max_length: int | None = None
    all_inputs: Callable[[int], Iterable[str]] | None = None
    input_count: Callable[[int], int] | None = None
    sample_input: Callable[[np.random.Generator, Bin], str] | None = None
    input_length: Callable[[str], int] | None = None

    def program(self, **options) -> Program:
        """Build the program (``options`` override the defaults in ``self.options``)."""
        return self.build(**{**self.options, **options})

    def check_lengths(self, lengths: Bin | str) -> Bin:
        """The bin parsed and checked against this program's length limits."""
        lengths = Bin.parse(lengths)
        if lengths.lo < self.min_length:
            raise RasplabError(
                f"program {self.name!r} needs lengths >= {self.min_length} "
                f"({self.length_unit}), got bin {lengths}"
            )
        if self.max_length is not None and lengths.hi > self.max_length:
            raise RasplabError(
                f"program {self.name!r} handles lengths <= {self.max_length} "
                f"({self.length_unit}), got bin {lengths}"
            )
        return lengths

    def check_input(self, text: str) -> None:
        """Refuse a natural input whose length lies outside what the program handles (its
        answer would be wrong, not an error), naming the limit; needs ``input_length``."""
        if self.input_length is None:
            return
        n = self.input_length(text)
        if n < self.min_length or (self.max_length is not None and n > self.max_length):
            bound = f">= {self.min_length}" if n < self.min_length else f"<= {self.max_length}"
            raise RasplabError(
                f"program {self.name!r} handles lengths {bound} ({self.length_unit}); "
                f"this input has {n}"
            )

    def count_inputs(self, lengths: Bin | str) -> int | None:
        """How many distinct inputs the bin holds (None when this program cannot count them)."""
        lengths = self.check_lengths(lengths)
        if self.input_count is None or self.all_inputs is None:
            return None
        return sum(self.input_count(n) for n in lengths.lengths())

    def inputs(
        self, lengths: Bin | str, samples: int, seed: int, *names: object
    ) -> tuple[list[str], bool]:
        """Natural inputs of the bin: all of them if there are at most ``samples`` (and this
        program can enumerate them), else ``samples`` random ones, drawn by ``sample_input``
        if the program has one, else by ``random_input`` with the lengths taken in turn.
        Returns ``(inputs, exhaustive)``."""
        lengths = self.check_lengths(lengths)
        check_seed(seed)  # checked even when every input is enumerated and no draw is made
        if not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
            raise RasplabError(
                f"samples must be a positive int of at most {MAX_SAMPLES:,}, got {samples!r}"
            )
        total = self.count_inputs(lengths)
        if total is not None and total <= samples:
            return [x for n in lengths.lengths() for x in self.all_inputs(n)], True
        rng = generator(seed, "program-inputs", self.name, str(lengths), *names)
        if self.sample_input is not None:
            return [self.sample_input(rng, lengths) for _ in range(samples)], False
        spread = lengths.lengths()
        return [self.random_input(rng, spread[i % len(spread)]) for i in range(samples)], False


#: the most inputs one call may sample (each is run, traced and kept in memory)
MAX_SAMPLES = 1_000_000

_LIBRARY: dict[str, LibraryProgram] = {}


def register_program(entry: LibraryProgram) -> LibraryProgram:
    """Add ``entry`` to the library (names are unique)."""
    if entry.name in _LIBRARY:
        raise ValueError(f"program {entry.name!r} registered twice")
    _LIBRARY[entry.name] = entry
    return entry


def get_program(name: str) -> LibraryProgram:
    """The library entry called ``name``; an unknown name lists the known ones."""
    _load_library()
    if name not in _LIBRARY:
        raise unknown_name("program", name, _LIBRARY)
    return _LIBRARY[name]


def program_names() -> list[str]:
    """Every library program name, in registration order."""
    _load_library()
    return list(_LIBRARY)


def parse_tokens(text: str, alphabet: Sequence[str], what: str) -> list[str]:
    """Split a natural input into symbols of ``alphabet`` (space-separated or packed characters).

    >>> parse_tokens("1 0 1", ["0", "1"], "parity input")
    ['1', '0', '1']
    >>> parse_tokens("101", ["0", "1"], "parity input")
    ['1', '0', '1']
    """
    parts = text.split() if " " in text.strip() else list(text.strip())
    bad = [p for p in parts if p not in alphabet]
    if bad:
        raise RasplabError(
            f"{what} has symbol {bad[0]!r} outside its alphabet {' '.join(alphabet)}"
        )
    return parts


def _load_library() -> None:
    """Import the program family modules so that their registrations run."""
    # import cycle: the family modules import this one to register
    import rasplab.programs.library  # noqa: F401
