"""Finding a program wherever the CLI takes one: a library name, or ``FILE.py:NAME``.

``FILE.py:NAME`` imports the Python file (the user's own code, run as given) and takes its
attribute ``NAME``: a :class:`~rasplab.lang.program.Program`, a function of no arguments
returning one, or a full :class:`~rasplab.programs.base.LibraryProgram` (with its own
``encode``/``decode``). A bare Program has no natural input format, so it is wrapped in a
*token entry*: inputs are token ids written as text (``"3 1 0"``) and outputs are the output
variable's values; when the program states its valid inputs (an
:class:`~rasplab.lang.inputs.InputSpec`), the entry draws, enumerates and accepts only those.
Every failure is one :class:`RasplabError` naming the file and the fix.

>>> resolve_program("parity_sequential_relative").name
'parity_sequential_relative'
>>> is_file_ref("progs/mine.py:sorter"), is_file_ref("sort_unique")
(True, False)
>>> load_program("nowhere.py:prog")
Traceback (most recent call last):
rasplab.errors.RasplabError: cannot read program file 'nowhere.py': No such file or directory
>>> from rasplab.lang import input_var, program
>>> entry = token_entry(program({"tok": input_var(4)}, {}, [], "tok", 4, max_layers=1), "mine")
>>> entry.encode("3 1 0"), entry.decode([3, 1, 0], [3, 1, 0])
([3, 1, 0], ['3', '1', '0'])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang.interpreter import interpret
from rasplab.lang.program import Program
from rasplab.programs import get_program
from rasplab.programs.base import LibraryProgram
from rasplab.usercode import import_file


def is_file_ref(ref: str) -> bool:
    """Whether ``ref`` names a Python file's attribute (``FILE.py:NAME``) or a file."""
    return ".py:" in ref or ref.endswith(".py")


def load_object(ref: str) -> Any:
    """The attribute ``NAME`` of ``FILE.py`` (imported as a fresh module), as defined there."""
    if not is_file_ref(ref):
        raise RasplabError(f"{ref!r} is not FILE.py:NAME")
    path, _, attr = ref.rpartition(":") if ".py:" in ref else (ref, "", "")
    if not attr.isidentifier():
        raise RasplabError(f"{ref!r}: name the object in the file, as FILE.py:NAME")
    module = import_file(path, path)
    if not hasattr(module, attr):
        found = sorted(
            n for n, v in vars(module).items() if isinstance(v, (Program, LibraryProgram))
        )
        hint = f"; it defines the programs: {', '.join(found)}" if found else ""
        raise RasplabError(f"{path} defines no {attr!r}{hint}")
    return getattr(module, attr)


def load_function(ref: str) -> Any:
    """``FILE.py:NAME`` that must be a function (e.g. a builder taking no arguments)."""
    obj = load_object(ref)
    if not callable(obj) or isinstance(obj, (Program, LibraryProgram)):
        raise RasplabError(f"{ref} is {type(obj).__name__}, not a function")
    return obj


def built(
    ref: str,
    obj: Any,
    kinds: tuple[type, ...] = (Program, LibraryProgram),
    what: str = "a Program (build one with rasplab.lang.program",
) -> Any:
    """``obj`` itself, or what a function of no arguments returns, checked to be one of
    ``kinds`` (default: a Program or a library entry; ``what`` names them in the error)."""
    if callable(obj) and not isinstance(obj, kinds):
        try:
            obj = obj()
        except RasplabError as err:
            raise RasplabError(f"{ref}: {err}") from err
        except TypeError as err:
            raise RasplabError(
                f"{ref} is a function that cannot be called without arguments ({err}); pass a "
                "Program, or a function of no arguments returning one"
            ) from err
        except Exception as err:
            raise RasplabError(f"{ref}: {type(err).__name__}: {err}") from err
    if not isinstance(obj, kinds):
        if type(obj).__module__.startswith("rasplab.crasp"):
            raise RasplabError(
                f"{ref} is a C-RASP program ({type(obj).__name__}); run it with "
                f"`rasplab crasp run {ref}` (the other rasplab crasp commands take it too)"
            )
        raise RasplabError(
            f"{ref} is {type(obj).__name__}, not {what}, or pass a function of no "
            "arguments returning one)"
        )
    return obj


def load_program(ref: str) -> Program:
    """The :class:`Program` that ``FILE.py:NAME`` holds or builds."""
    obj = built(ref, load_object(ref))
    return obj.program() if isinstance(obj, LibraryProgram) else obj


def token_ids(text: str, input_range: int) -> list[int]:
    """Token ids written as text (``"3 1 0"``), each checked against the input range."""
    ids = []
    for part in text.replace(",", " ").split():
        try:
            tok = int(part)
        except ValueError:
            raise RasplabError(
                f'token {part!r} is not a token id; write ids as integers, e.g. "3 1 0"'
            ) from None
        if not 0 <= tok < input_range:
            raise RasplabError(f"token id {tok} is outside the input range [0, {input_range})")
        ids.append(tok)
    return ids


def token_entry(
    program: Program | None, name: str, input_range: int | None = None
) -> LibraryProgram:
    """A library-style entry over raw token ids for a program with no natural input format;
    its ``reference`` is the interpreter itself (there is no independent answer). Without a
    program (a saved model) it only encodes and decodes, for ``input_range`` token ids."""
    v = program.input_range if program is not None else input_range
    spec = program.inputs if program is not None else None

    def build() -> Program:
        if program is None:
            raise RasplabError(f"{name!r} is a saved model; its program is not available")
        return program

    def decode(ids: Sequence[int], outputs: Sequence[int]) -> list[str]:
        return [str(o) for o in outputs]

    def encode(text: str) -> list[int]:
        ids = token_ids(text, v)
        problem = spec.problem(ids, v) if spec is not None else None
        if problem is not None:
            raise RasplabError(f"{text!r} is not a valid input of {name}: {problem}")
        return ids

    def reference(text: str) -> list[str]:
        return [str(o) for o in interpret(build(), [encode(text)]).outputs[0]]

    def random_input(rng: np.random.Generator, n: int) -> str:
        if spec is not None:
            return " ".join(map(str, spec.sample(rng, max(n, spec.min_length), v)))
        return " ".join(str(t) for t in rng.integers(0, v, n).tolist())

    def all_inputs(n: int):
        if spec is not None:
            return (" ".join(map(str, ids)) for ids in spec.enumerate(n, v))
        return (" ".join(map(str, ids)) for ids in itertools.product(range(v), repeat=n))

    def input_count(n: int) -> int:
        return spec.count(n, v) if spec is not None else v**n

    enumerable = spec is None or spec.sampler is None

    return LibraryProgram(
        name=name,
        description=f"{name}: token ids 0..{v - 1} in, output variable values out",
        build=build,
        encode=encode,
        decode=decode,
        reference=reference,
        random_input=random_input,
        min_length=spec.min_length if spec is not None else 0,
        max_length=None if program is None else program.position_range,
        all_inputs=all_inputs if enumerable else None,
        input_count=input_count if enumerable else None,
        input_length=lambda text: len(text.replace(",", " ").split()),
    )


def resolve_program(ref: str) -> LibraryProgram:
    """The library entry for a library name, or for ``FILE.py:NAME`` (a token entry unless the
    file defines a LibraryProgram)."""
    if not is_file_ref(ref):
        return get_program(ref)
    obj = built(ref, load_object(ref))
    return obj if isinstance(obj, LibraryProgram) else token_entry(obj, ref)
