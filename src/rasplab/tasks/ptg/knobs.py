"""The PTG generator's knobs, validated so that impossible combinations fail with one message.

>>> Knobs(lines="21-40", steps="90-103").iterations
Bin(lo=1, hi=12)
>>> Knobs(lines="5-12", steps="172-300")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: knobs lines=5-12 and steps=172-300 are impossible: with iterations=1-12, block=1-6 and list_length=5-10, programs of 5-12 lines have 2-104 trace steps; widen lines, iterations, block or list_length, or lower steps
>>> Knobs(lines="5-8", steps="5-10", variables="30-40")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: knobs variables=30-40 and lines=5-8 are impossible: a program of at most 8 lines can use at most 18 variables (3 per body line); lower variables or raise lines
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.tasks.ptg.plan import reach
from rasplab.tasks.ptg.program import MAX_VARIABLES

#: the most program lines a knob set may ask for (keeps the shape tables small)
MAX_LINES = 200


@dataclass(frozen=True)
class Knobs:
    """Ranges (inclusive, ``A-B``) for one PTG data distribution.

    ``lines``: program length, the ``def`` and ``return`` lines included; ``steps``: trace
    steps; ``variables``: distinct variables (parameters and locals); ``list_length``: length
    of every input list; ``iterations``: iterations of each ``while`` loop; ``block``:
    statements in an ``if`` or ``while`` body; ``values``: input values and constants;
    ``max_tokens``: the longest tokenized example (program, call and trace) allowed.
    """

    lines: Bin = Bin(5, 40)
    steps: Bin = Bin(5, 103)
    variables: Bin = Bin(1, 10)
    list_length: Bin = Bin(5, 10)
    iterations: Bin = Bin(1, 12)
    block: Bin = Bin(1, 6)
    values: Bin = Bin(0, 9)
    max_tokens: int = 4096

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name != "max_tokens":
                object.__setattr__(self, f.name, Bin.parse(getattr(self, f.name)))
        self._check_ranges()
        self._check_variables()
        self._check_steps()

    def _check_ranges(self) -> None:
        if not 3 <= self.lines.lo or self.lines.hi > MAX_LINES:
            raise RasplabError(
                f"knob lines={self.lines} is out of range: programs have 3 to {MAX_LINES} lines "
                "(def, at least one statement, return)"
            )
        if self.variables.lo < 1 or self.variables.hi > MAX_VARIABLES:
            raise RasplabError(
                f"knob variables={self.variables} is out of range: 1 to {MAX_VARIABLES} "
                "(the size of the variable-name vocabulary)"
            )
        if self.iterations.lo < 1:
            raise RasplabError(f"knob iterations={self.iterations} must start at 1 or more")
        if self.block.lo < 1:
            raise RasplabError(f"knob block={self.block} must start at 1 or more")
        if self.values.hi == self.values.lo:
            raise RasplabError(f"knob values={self.values} must hold at least two values")
        if self.steps.lo < 2:
            raise RasplabError(f"knob steps={self.steps} must start at 2 or more")
        if not isinstance(self.max_tokens, int) or self.max_tokens < 64:
            raise RasplabError(f"knob max_tokens={self.max_tokens!r} must be an integer >= 64")

    def _check_variables(self) -> None:
        most = 3 * (self.lines.hi - 2)
        if self.variables.lo > most:
            raise RasplabError(
                f"knobs variables={self.variables} and lines={self.lines} are impossible: a "
                f"program of at most {self.lines.hi} lines can use at most {most} variables "
                "(3 per body line); lower variables or raise lines"
            )

    def _check_steps(self) -> None:
        lo, hi = None, None
        for length in self.list_length.lengths():
            table = self.reach(self.variables.hi, length)
            for n in range(self.lines.lo, self.lines.hi + 1):
                span = table.step_range(n)
                if span is None:
                    continue
                lo = span[0] if lo is None else min(lo, span[0])
                hi = span[1] if hi is None else max(hi, span[1])
                if any(table.feasible(n, s) for s in range(self.steps.lo, self.steps.hi + 1)):
                    return
        have = f"{lo}-{hi}" if lo is not None else "no"
        raise RasplabError(
            f"knobs lines={self.lines} and steps={self.steps} are impossible: with "
            f"iterations={self.iterations}, block={self.block} and list_length="
            f"{self.list_length}, programs of {self.lines} lines have {have} trace steps; "
            "widen lines, iterations, block or list_length, or lower steps"
            + (" (loops need variables >= 3)" if self.variables.hi < 3 else "")
        )

    def reach(self, variables: int, list_length: int):
        """The shape table for programs with ``variables`` variables (ifs need 2, loops 3)
        and input lists of ``list_length`` elements (list loops run once per element)."""
        return reach(
            (self.block.lo, self.block.hi),
            (self.iterations.lo, self.iterations.hi),
            variables >= 2,
            variables >= 3,
            list_length,
        )

    def replace(self, **changes) -> Knobs:
        """A copy with some knobs changed (validated again)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Knobs(**values)
