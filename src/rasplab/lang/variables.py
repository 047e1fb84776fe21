"""Program variables: categorical, numerical and set-valued slots of the residual stream.

A variable says what values it may hold, its default, and how it is initialised (from the
token, from the position, or constant). Constructors follow ALTA's names.

>>> v = numeric_var(values=(0.0, 0.5, 1.0))
>>> v.bucket(0.3), v.bucket(0.2), v.bucket(0.9)
(1, 0, 2)
>>> var(3).possible_values()
(0, 1, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang import numbers

KINDS = ("categorical", "numerical", "set")
INITS = ("default", "token", "position")


@dataclass(frozen=True)
class Var:
    """One variable. ``range`` bounds categorical ints and set members; ``values`` lists the
    numerical bucket centres (sorted) or the allowed sets; ``init`` says where the initial
    value comes from and ``init_fn`` maps the token id / position index to it."""

    kind: str
    range: int | None = None
    values: tuple | None = None
    default: Any = 0
    init: str = "default"
    init_fn: Callable[[int], Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise RasplabError(
                f"variable kind {self.kind!r} unknown; choose one of: {', '.join(KINDS)}"
            )
        if self.init not in INITS:
            raise RasplabError(
                f"variable init {self.init!r} unknown; choose one of: {', '.join(INITS)}"
            )
        if self.kind in ("categorical", "set"):
            if not isinstance(self.range, int) or self.range < 1:
                raise RasplabError(f"{self.kind} variable needs range >= 1, got {self.range!r}")
        if self.kind == "numerical" and self.values is not None:
            vals = tuple(float(v) for v in self.values)
            if list(vals) != sorted(set(vals)):
                raise RasplabError(
                    f"numerical bucket values must be strictly increasing, got {self.values}"
                )
            object.__setattr__(self, "values", vals)
        if self.kind == "set" and self.values is not None:
            sets = tuple(frozenset(s) for s in self.values)
            for s in sets:
                self.check_value(s, "allowed set")
            object.__setattr__(self, "values", sets)

    def check_value(self, value: Any, what: str = "value") -> Any:
        """Return ``value`` normalised, or raise if it is outside this variable's range."""
        if self.kind == "categorical":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise RasplabError(
                    f"{what} {value!r} of a categorical variable must be an int in [0, {self.range})"
                )
            if not 0 <= int(value) < self.range:
                raise RasplabError(
                    f"{what} {value!r} is outside the variable's range [0, {self.range})"
                )
            return int(value)
        if self.kind == "numerical":
            return float(value)
        members = frozenset(int(v) for v in value)
        if any(not 0 <= m < self.range for m in members):
            raise RasplabError(
                f"{what} {set(members)} has members outside the set range [0, {self.range})"
            )
        return members

    def possible_values(self) -> tuple:
        """Every value a rule can match: ints, bucket centres or allowed sets."""
        if self.kind == "categorical":
            return tuple(range(self.range))
        if self.values is None:
            raise RasplabError(
                f"a {self.kind} variable read or written by an MLP rule needs `values` "
                f"({'bucket centres' if self.kind == 'numerical' else 'the allowed sets'})"
            )
        return self.values

    def bucket(self, x: float) -> int:
        """Bucket index of a numerical value: bucket i is (mid(v[i-1],v[i]), mid(v[i],v[i+1])],
        decided in exact arithmetic (see :mod:`rasplab.lang.numbers`)."""
        return numbers.bucket(self.possible_values(), x)

    def initial(self, token: int, position: int) -> Any:
        """The initial value at a position holding ``token``."""
        if self.init == "token":
            return self.check_value(self.init_fn(token), "token initialisation")
        if self.init == "position":
            return self.check_value(self.init_fn(position), "position initialisation")
        return self.default


def _identity(x: int) -> int:
    return x


def var(range: int, default: int = 0) -> Var:
    """A categorical variable with values ``0..range-1`` starting at ``default``."""
    v = Var("categorical", range=range, default=default)
    v.check_value(default, "default")
    return v


def input_var(range: int, init_fn: Callable[[int], int] | None = None) -> Var:
    """A categorical variable initialised from the token id (``init_fn`` maps it)."""
    return Var("categorical", range=range, init="token", init_fn=init_fn or _identity)


def position_var(range: int, init_fn: Callable[[int], int] | None = None) -> Var:
    """A categorical variable initialised from the position index (``init_fn`` maps it)."""
    return Var("categorical", range=range, init="position", init_fn=init_fn or _identity)


def numeric_var(
    values: tuple[float, ...] | None = None,
    default: float = 0.0,
    input_init_fn: Callable[[int], float] | None = None,
    position_init_fn: Callable[[int], float] | None = None,
) -> Var:
    """A numerical variable; ``values`` are the sorted bucket centres rules match on."""
    if input_init_fn and position_init_fn:
        raise RasplabError("give at most one of input_init_fn and position_init_fn")
    if values is not None and len(values) == 0:
        raise RasplabError("numeric_var values must list at least one bucket value (or be None)")
    init = "token" if input_init_fn else "position" if position_init_fn else "default"
    return Var(
        "numerical",
        values=values,
        default=float(default),
        init=init,
        init_fn=input_init_fn or position_init_fn,
    )


def set_var(
    range: int,
    values: tuple[frozenset, ...] | None = None,
    default: frozenset = frozenset(),
    input_init_fn: Callable[[int], frozenset] | None = None,
    position_init_fn: Callable[[int], frozenset] | None = None,
) -> Var:
    """A set-valued variable (frozensets over ``0..range-1``), usable as an attention query."""
    if input_init_fn and position_init_fn:
        raise RasplabError("give at most one of input_init_fn and position_init_fn")
    init = "token" if input_init_fn else "position" if position_init_fn else "default"
    v = Var(
        "set",
        range=range,
        values=values,
        default=frozenset(default),
        init=init,
        init_fn=input_init_fn or position_init_fn,
    )
    v.check_value(default, "default")
    return v
