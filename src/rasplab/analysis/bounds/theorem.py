"""Theorem 4.1 of seed 004 as a number: N = C * max{2^(p/γ), τ Δ L² / ε²}.

The theorem is an O() statement, so the constant C is a parameter (``constant``, default 1:
the bound's shape, not a calibrated prediction). Two readings are fixed here and written
down: τ enters as max(τ, 1), since the proof always copies the query position itself (a
0-local model would otherwise get the averaging term 0); p is the number of bits below
which a post-softmax term vanishes (``precision_bits``, default 24: a float32 term under
2^-24 of the largest disappears next to it).

>>> b = length_bound(gamma=2.0, L=3.0, delta=5, tau=0, epsilon=0.1)
>>> b.hardmax, round(b.averaging, 6), round(b.N, 6)    # 2^(24/2), 1*5*9/0.01
(4096.0, 4500.0, 4500.0)
>>> length_bound(gamma=2.0, L=3.0, delta=5, tau=0, epsilon=0.0)
Traceback (most recent call last):
...
rasplab.errors.RasplabError: epsilon must be a finite number > 0; got 0.0
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from rasplab.errors import RasplabError

DEFAULT_PRECISION_BITS = 24


@dataclass(frozen=True)
class LengthBound:
    """The bound and its two terms; a term too large for a float is ``inf`` (its log2 is kept)."""

    N: float
    log2_N: float
    hardmax: float
    averaging: float
    constant: float
    epsilon: float
    precision_bits: float

    def to_json(self) -> dict:
        """Plain data; infinities become None (JSON has no infinity)."""
        return {
            k: (None if isinstance(v, float) and math.isinf(v) else v)
            for k, v in asdict(self).items()
        }


def _positive(name: str, value, allow_zero: bool = False, allow_inf: bool = False) -> float:
    """``value`` as a float, checked (a RasplabError naming ``name`` otherwise)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
    ok = ok and (value >= 0 if allow_zero else value > 0) and (allow_inf or math.isfinite(value))
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        kind = "a number" if allow_inf else "a finite number"
        raise RasplabError(f"{name} must be {kind} {bound}; got {value!r}")
    return float(value)


def length_bound(
    gamma: float,
    L: float,
    delta: int,
    tau: int,
    epsilon: float,
    precision_bits: float = DEFAULT_PRECISION_BITS,
    constant: float = 1.0,
) -> LengthBound:
    """The training length N of Theorem 4.1 for target error ``epsilon``."""
    gamma = _positive("gamma", gamma, allow_inf=True)
    L = _positive("L", L, allow_zero=True)
    epsilon = _positive("epsilon", epsilon)
    bits = _positive("precision_bits", precision_bits)
    constant = _positive("constant", constant)
    if isinstance(delta, bool) or not isinstance(delta, int) or delta < 1:
        raise RasplabError(f"delta (the period) must be an integer >= 1; got {delta!r}")
    if isinstance(tau, bool) or not isinstance(tau, int) or tau < 0:
        raise RasplabError(f"tau must be an integer >= 0; got {tau!r}")
    log2_hard = bits / gamma
    averaging = max(tau, 1) * delta * L * L / (epsilon * epsilon)
    log2_avg = math.log2(averaging) if averaging > 0 else -math.inf
    log2_N = math.log2(constant) + max(log2_hard, log2_avg)
    hardmax = 2.0**log2_hard if log2_hard < 1023 else math.inf
    N = 2.0**log2_N if log2_N < 1023 else math.inf
    return LengthBound(
        N=N,
        log2_N=log2_N,
        hardmax=hardmax,
        averaging=averaging,
        constant=constant,
        epsilon=epsilon,
        precision_bits=bits,
    )
