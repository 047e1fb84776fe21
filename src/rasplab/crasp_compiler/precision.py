"""Error bounds of a compiled C-RASP program, and the float type they certify.

Every coordinate of the residual carries a bound ``e * eps`` on its float error, with ``eps``
the unit roundoff of the dtype the model runs in (2^-24 for float32, 2^-53 for float64); the
plan (:mod:`rasplab.crasp_compiler.plan`) computes the coefficient ``e`` as it builds each coordinate,
to first order in ``eps``:

* a sum ``sum w_k x_k`` (a form, a ReLU pre-activation): ``sum |w_k| e_k`` plus the rounding
  of the sum, ``(terms + 1) sum |w_k| |x_k|``;
* a uniform head (the softmax of equal scores, ``1/(i+1)`` on every ``j <= i``, then the
  weighted sum over ``i + 1 <= N + 1`` keys): the value's error plus ``(N + 4) |v|``;
* a positional head: the masked keys get ``exp(-750) = 0`` exactly, so the value's error;
* a comparison step ``ReLU(a + 1/2) - ReLU(a - 1/2)``, ``a = 2(N+1) z``: exact 0/1 as long as
  ``2(N+1) e_z eps <= 1/4`` (half the margin the construction leaves), after which its output
  carries only the rounding of ``(a + 1/2) - (a - 1/2)``, ``3 (|a| + 1)``;
* a conditional leaf: the gate ``M * s`` must stay above the branch, ``M e_s eps <= 1/2``.

Each operation must also *decode*: a Boolean within ``1/8`` of 0 or 1, a count ``(i+1) y``
within ``1/8`` of its integer (the verifier accepts anything closer than 1/4). Every
requirement is a bound on ``eps``; :meth:`Budget.dtype` picks float32 if its roundoff meets
all of them, else float64, else refuses with one line.

>>> b = Budget(max_length=512)
>>> b.decode("x", 1e5, 513.0)
>>> b.dtype()
'float64'
>>> b.decode("y", 1e13, 513.0); b.dtype()
Traceback (most recent call last):
rasplab.errors.RasplabError: maximum length 512 is beyond what float64 can certify (decoding y needs a unit roundoff of 2.4e-17, float64 has 1.1e-16); use a smaller --max-length
>>> b = Budget(max_length=8); b.decode("x", 10.0, 9.0); b.dtype()
'float32'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rasplab.errors import RasplabError

UNIT_ROUNDOFF = {"float32": 2.0**-24, "float64": 2.0**-53}

DEFAULT_MAX_LENGTH = 512
"""Longest input (symbols) a program is compiled for unless told (``--max-length``); here, not in
:mod:`~rasplab.crasp_compiler.compile`, so that the CLI reads it without importing torch."""


def form_error(terms: list[tuple[float, float, float]]) -> float:
    """Error coefficient of ``sum w x`` from ``(w, error of x, bound on |x|)`` per term."""
    carried = sum(abs(w) * e for w, e, _ in terms)
    rounding = (len(terms) + 1) * sum(abs(w) * m for w, _, m in terms)
    return carried + rounding


def uniform_head_error(value_error: float, value_magnitude: float, max_length: int) -> float:
    """Error coefficient of a uniform head's output (an average over at most N+1 keys)."""
    return value_error + (max_length + 4) * value_magnitude


@dataclass
class Budget:
    """The requirements on the unit roundoff, and the tightest one."""

    max_length: int
    eps_max: float = float("inf")
    tightest: str = "nothing"
    requirements: int = field(default=0)

    def need(self, coefficient: float, limit: float, what: str) -> None:
        """Require ``coefficient * eps <= limit``."""
        self.requirements += 1
        if coefficient > 0 and limit / coefficient < self.eps_max:
            self.eps_max, self.tightest = limit / coefficient, what

    def decode(self, name: str, error: float, scale: float) -> None:
        """Operation ``name`` decodes (its value times ``scale`` within 1/8)."""
        self.need(error * scale, 1 / 8, f"decoding {name}")

    def step(self, name: str, error: float, magnitude: float, slope: float) -> float:
        """A comparison step of ``name`` stays exact; returns its output's error coefficient."""
        self.need(slope * error, 1 / 4, f"comparison {name}")
        return 3 * (slope * magnitude + 1.5)

    def gate(self, name: str, error: float) -> None:
        """A conditional leaf of ``name`` stays shut when its path is not taken."""
        self.need(error, 1 / 2, f"conditional {name}")

    def dtype(self) -> str:
        """``float32`` or ``float64``: the cheaper type whose roundoff meets every requirement."""
        for name in ("float32", "float64"):
            if UNIT_ROUNDOFF[name] <= self.eps_max:
                return name
        raise RasplabError(
            f"maximum length {self.max_length} is beyond what float64 can certify "
            f"({self.tightest} needs a unit roundoff of {self.eps_max:.2g}, float64 has "
            f"{UNIT_ROUNDOFF['float64']:.2g}); use a smaller --max-length"
        )
