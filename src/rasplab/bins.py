"""Length bins: inclusive ranges written ``A-B`` (a single ``N`` means ``N-N``).

>>> b = Bin.parse("51-100")
>>> (b.lo, b.hi, str(b), 75 in b)
(51, 100, '51-100', True)
>>> Bin.parse("7")
Bin(lo=7, hi=7)
>>> Bin.parse("100000000-100000001")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: bin 100000000-100000001 reaches beyond the longest length rasplab handles (100,000); give a bin within 0-100000
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rasplab.errors import RasplabError

MAX_LENGTH = 100_000
"""The longest length a bin may reach: longer sequences take minutes and gigabytes to
generate, run or compile, and are refused up front with this limit in the message."""

_BIN = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


@dataclass(frozen=True, order=True)
class Bin:
    """An inclusive length range ``lo..hi``."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        if self.lo < 0 or self.hi < self.lo:
            raise RasplabError(
                f"bin {self.lo}-{self.hi} is empty or negative; write A-B with 0 <= A <= B"
            )
        if self.hi > MAX_LENGTH:
            raise RasplabError(
                f"bin {self.lo}-{self.hi} reaches beyond the longest length rasplab handles "
                f"({MAX_LENGTH:,}); give a bin within 0-{MAX_LENGTH}"
            )

    @classmethod
    def parse(cls, text: str | Bin) -> Bin:
        """Parse ``"A-B"`` or ``"N"``; a malformed string is a :class:`RasplabError`."""
        if isinstance(text, Bin):
            return text
        m = _BIN.match(str(text))
        if not m:
            raise RasplabError(f"malformed bin {text!r}; write it as A-B, e.g. 1-50")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        return cls(lo, hi)

    def __contains__(self, length: object) -> bool:
        return isinstance(length, int) and self.lo <= length <= self.hi

    def __str__(self) -> str:
        return f"{self.lo}-{self.hi}"

    def lengths(self) -> range:
        """The lengths in the bin, in order."""
        return range(self.lo, self.hi + 1)


def is_bin(name: str) -> bool:
    """Whether a test-set name is a length bin (``1-50``) rather than a named split."""
    try:
        Bin.parse(name)
    except RasplabError:
        return False
    return True


def bin_order(names) -> list[str]:
    """Test-set names in table order: bins by their ranges, then named splits as first seen.

    >>> bin_order(["51-100", "id_short", "1-50", "longer_lists", "id_short"])
    ['1-50', '51-100', 'id_short', 'longer_lists']
    """
    names = list(dict.fromkeys(names))
    bins = sorted((Bin.parse(n), n) for n in names if is_bin(n))
    return [n for _, n in bins] + [n for n in names if not is_bin(n)]
