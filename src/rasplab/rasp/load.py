"""RASP programs by name: ``lib:make_hist`` (Tracr's library, with default arguments) or
``FILE.py:NAME`` (an SOp in the user's file, or a function of no arguments returning one).

>>> load_rasp_program("lib:make_hist").name
'hist'
>>> load_rasp_program("lib:make_hst")
Traceback (most recent call last):
rasplab.rasp.rasp.RaspError: unknown RASP library program 'make_hst'; choose one of: detect_pattern, make_count, make_count_less_freq, make_frac_prevs, make_hist, make_length, make_nary_sequencemap, make_pair_balance, make_reverse, make_shuffle_dyck, make_shuffle_dyck2, make_sort, make_sort_freq, make_sort_unique, shift_by
>>> parse_tokens("BOS 1 a 2.5")
['BOS', 1, 'a', 2.5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rasplab.rasp import lib, rasp
from rasplab.rasp.rasp import RaspError
from rasplab.usercode import import_file

LIBRARY: dict[str, tuple[Callable[[int], rasp.SOp], str]] = {
    "make_length": (lambda n: lib.make_length(), "make_length()"),
    "make_reverse": (lambda n: lib.make_reverse(rasp.tokens), "make_reverse(tokens)"),
    "make_pair_balance": (
        lambda n: lib.make_pair_balance(rasp.tokens, "(", ")"),
        "make_pair_balance(tokens, '(', ')')",
    ),
    "make_shuffle_dyck": (lambda n: lib.make_shuffle_dyck(["()"]), "make_shuffle_dyck(['()'])"),
    "make_shuffle_dyck2": (lambda n: lib.make_shuffle_dyck2(), "make_shuffle_dyck2()"),
    "make_hist": (lambda n: lib.make_hist(), "make_hist()"),
    "make_sort_unique": (
        lambda n: lib.make_sort_unique(rasp.tokens, rasp.tokens),
        "make_sort_unique(tokens, tokens)",
    ),
    "make_sort": (
        lambda n: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=n, min_key=1),
        "make_sort(tokens, tokens, max_seq_len=N, min_key=1)",
    ),
    "make_sort_freq": (lambda n: lib.make_sort_freq(n), "make_sort_freq(N)"),
    "make_frac_prevs": (
        lambda n: lib.make_frac_prevs(rasp.tokens == "x"),
        "make_frac_prevs(tokens == 'x')",
    ),
    "shift_by": (lambda n: lib.shift_by(1, rasp.tokens), "shift_by(1, tokens)"),
    "detect_pattern": (
        lambda n: lib.detect_pattern(rasp.tokens, "abc"),
        "detect_pattern(tokens, 'abc')",
    ),
    "make_count_less_freq": (lambda n: lib.make_count_less_freq(2), "make_count_less_freq(2)"),
    "make_count": (lambda n: lib.make_count(rasp.tokens, "a"), "make_count(tokens, 'a')"),
    "make_nary_sequencemap": (
        lambda n: lib.make_nary_sequencemap(
            lambda x, y, z: f"{x}{y}{z}", rasp.tokens, rasp.tokens, rasp.tokens
        ),
        "make_nary_sequencemap(lambda x, y, z: f'{x}{y}{z}', tokens, tokens, tokens)",
    ),
}
"""Each lib program with the arguments ``lib:NAME`` gives it (N: ``--max-seq-len``)."""


def load_rasp_program(name: str, max_seq_len: int = 10) -> rasp.SOp:
    """The SOp named ``lib:NAME`` or ``FILE.py:NAME``; one-line :class:`RaspError` otherwise."""
    if name.startswith("lib:"):
        key = name[4:]
        if key not in LIBRARY:
            known = ", ".join(sorted(LIBRARY))
            raise RaspError(f"unknown RASP library program {key!r}; choose one of: {known}")
        return LIBRARY[key][0](max_seq_len)
    path, sep, attr = name.rpartition(":")
    if not sep or not path.endswith(".py") or not attr:
        raise RaspError(
            f"a RASP program is lib:NAME or FILE.py:NAME, got {name!r}; "
            "`rasplab rasp programs` lists the library"
        )
    module = import_file(path, name)
    if not hasattr(module, attr):
        raise RaspError(f"{path} has no {attr!r}")
    value = getattr(module, attr)
    if callable(value) and not isinstance(value, rasp.RASPExpr):
        try:
            value = value()
        except Exception as err:  # the user's function failed: one line
            raise RaspError(f"{name}: {type(err).__name__}: {err}") from err
    if not isinstance(value, rasp.SOp):
        raise RaspError(f"{name} is not a RASP SOp (or a function returning one): {value!r}")
    return value


def parse_tokens(text: str) -> list[Any]:
    """Whitespace-separated tokens; each an int or float where it reads as one, else a string."""
    out: list[Any] = []
    for word in text.split():
        for kind in (int, float):
            try:
                out.append(kind(word))
                break
            except ValueError:
                continue
        else:
            out.append(word)
    return out
