"""Positional information in C-RASP: local relations R(i, j) and periodic predicates psi(i).

Definition 3 of Huang et al.: a relation is translation-invariant if R(i, j) = R(i+1, j+1) and
local if it only holds for |i - j| bounded; a predicate is periodic if psi(i) = psi(i + m).
A :class:`Relation` is translation-invariant by construction (a set of offsets ``i - j``); only
finite sets are local. A :class:`Periodic` predicate is a set of residues mod m.
"""

from __future__ import annotations

from dataclasses import dataclass

from rasplab.errors import RasplabError


@dataclass(frozen=True)
class Relation:
    """A translation-invariant relation R(i, j): holds iff ``i - j`` is in ``offsets``
    (or, with ``cofinite``, iff ``i - j >= 0`` is *not* in ``offsets``).

    Local (Definition 3) iff not cofinite: then R(i, j) implies ``i - tau <= j <= i`` with
    ``tau = max(offsets)``.

    >>> r = Relation(frozenset({1}))
    >>> r.holds(5, 4), r.holds(5, 3), r.local, str(r)
    (True, False, True, 'j = i-1')
    >>> str(Relation(frozenset({0}), cofinite=True)), Relation(frozenset(), True).local
    ('j <= i-1', False)
    """

    offsets: frozenset[int]
    cofinite: bool = False

    def __post_init__(self) -> None:
        bad = [d for d in self.offsets if not isinstance(d, int) or d < 0]
        if bad:
            raise RasplabError(
                f"relation offsets must be integers k >= 0 (j = i-k, j <= i), got {sorted(bad)}"
            )
        object.__setattr__(self, "offsets", frozenset(self.offsets))

    @property
    def local(self) -> bool:
        """Whether the relation only relates positions at a bounded distance."""
        return not self.cofinite

    @property
    def window(self) -> int:
        """tau: the largest offset ``i - j`` for which the (local) relation holds."""
        if self.cofinite:
            raise RasplabError(f"relation {self} is not local: it has no window")
        return max(self.offsets, default=0)

    def holds(self, i: int, j: int) -> bool:
        """R(i, j), straight from the definition."""
        d = i - j
        return d >= 0 and ((d in self.offsets) != self.cofinite)

    def __or__(self, other: Relation) -> Relation:
        """The union: R(i, j) or S(i, j)."""
        a, b = self, other
        if not a.cofinite and not b.cofinite:
            return Relation(a.offsets | b.offsets)
        if a.cofinite and b.cofinite:
            return Relation(a.offsets & b.offsets, True)
        fin, cof = (a, b) if b.cofinite else (b, a)
        return Relation(cof.offsets - fin.offsets, True)

    def __and__(self, other: Relation) -> Relation:
        """The intersection: R(i, j) and S(i, j)."""
        return ~(~self | ~other)

    def __invert__(self) -> Relation:
        """The complement among j <= i (a finite relation's complement is not local)."""
        return Relation(self.offsets, not self.cofinite)

    def __str__(self) -> str:
        ds = sorted(self.offsets)
        if self.cofinite:
            if ds == list(range(len(ds))):
                return f"j <= i-{len(ds)}" if ds else "j <= i"
            return "i-j not in {" + ", ".join(map(str, ds)) + "}"
        if len(ds) == 1:
            return "j = i" if ds[0] == 0 else f"j = i-{ds[0]}"
        if ds and ds == list(range(ds[0], ds[-1] + 1)):
            return f"i-{ds[-1]} <= j <= i-{ds[0]}".replace("i-0", "i")
        return "i-j in {" + ", ".join(map(str, ds)) + "}"


def require_local(relation: Relation, where: str) -> None:
    """Raise the one-line error for a relation that is not local (Definition 3)."""
    if not relation.local:
        raise RasplabError(
            f"{where}: relation '{relation}' is not local (it relates positions arbitrarily "
            "far apart); C-RASP counts allow only local relations (finitely many offsets "
            "j = i-k): count over all j <= i and subtract the local part instead"
        )


@dataclass(frozen=True)
class Periodic:
    """A periodic positional predicate psi(i): holds iff ``i mod modulus`` is in ``residues``.

    >>> p = Periodic(3, frozenset({0}))
    >>> [p.holds(i) for i in range(5)], str(p)
    ([True, False, False, True, False], 'i mod 3 = 0')
    """

    modulus: int
    residues: frozenset[int]

    def __post_init__(self) -> None:
        if not isinstance(self.modulus, int) or self.modulus < 1:
            raise RasplabError(f"a periodic predicate needs a modulus >= 1, got {self.modulus!r}")
        bad = [r for r in self.residues if not isinstance(r, int) or not 0 <= r < self.modulus]
        if bad:
            raise RasplabError(
                f"residues of a periodic predicate mod {self.modulus} must lie in "
                f"0..{self.modulus - 1}, got {sorted(bad)}"
            )
        object.__setattr__(self, "residues", frozenset(self.residues))

    def holds(self, i: int) -> bool:
        """psi(i), straight from the definition."""
        return i % self.modulus in self.residues

    def __str__(self) -> str:
        rs = sorted(self.residues)
        if len(rs) == 1:
            return f"i mod {self.modulus} = {rs[0]}"
        return f"i mod {self.modulus} in {{{', '.join(map(str, rs))}}}"
