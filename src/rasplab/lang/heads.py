"""Attention heads: query/key/value selection with optional relative-position masks.

Position j is selected for query position i iff ``key[j]`` is in ``query[i]`` (a categorical
query is the singleton set) and, when a relative mask is given, ``j - i`` is in it. A
categorical value is read only when exactly one position is selected (else undefined); a
numerical value is the mean over the selected positions (undefined when none).

>>> h = v_relative("parity", -1)
>>> (h.query, h.key, h.value, sorted(h.relative))
('relative_qk', 'relative_qk', 'parity', [-1])
"""

from __future__ import annotations

from dataclasses import dataclass

from rasplab.errors import RasplabError
from rasplab.lang.variables import Var, var

RELATIVE_QK = "relative_qk"
RELATIVE_QK_VAR = var(1)


@dataclass(frozen=True)
class HeadSpec:
    """One attention head; the program's dict key names its output variable."""

    query: str
    key: str
    value: str
    relative: frozenset[int] | None = None
    output: Var | None = None

    def __post_init__(self) -> None:
        if self.relative is not None:
            rel = frozenset(int(r) for r in self.relative)
            if not rel:
                raise RasplabError("a relative mask must name at least one offset (or be None)")
            object.__setattr__(self, "relative", rel)


def qkv(query: str, key: str, value: str, relative=None, output: Var | None = None) -> HeadSpec:
    """A head reading ``value`` where ``key`` matches ``query`` (and ``j - i`` in ``relative``)."""
    return HeadSpec(query, key, value, None if relative is None else frozenset(relative), output)


def v_relative(value: str, offset: int, output: Var | None = None) -> HeadSpec:
    """A head reading ``value`` at position ``i + offset`` (undefined past the sequence ends)."""
    if isinstance(offset, bool) or not hasattr(offset, "__index__"):  # int or numpy integer
        raise RasplabError(f"v_relative offset must be an integer, got {offset!r}")
    return HeadSpec(RELATIVE_QK, RELATIVE_QK, value, frozenset({offset.__index__()}), output)
