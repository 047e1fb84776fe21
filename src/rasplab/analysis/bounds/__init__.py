"""Quantitative length-generalization bounds for one-layer models (seed 004, Izzo et al.).

The steps from a model to a predicted training length, in order: the attention-logit table
(``logits.py``), the logit margin γ and the parameter norm L (``margin.py``), the period Δ
and locality τ (``logits.py``), then Theorem 4.1's N (``theorem.py``). Hand-built models with
known margins (Appendix A.2) are in ``construct.py``.

>>> from rasplab.analysis.bounds.construct import modp_task_model
>>> q = bound_quantities(modp_task_model(p=5, k=1, beta=20.0), [0, 1], range(20), epsilon=0.1)
>>> round(q["gamma"], 5), q["delta"], q["tau"]        # β / (2 + eps)
(9.99995, 5, 0)
"""

from __future__ import annotations

from collections.abc import Sequence

from rasplab.analysis.bounds.logits import attention_logits, locality, period
from rasplab.analysis.bounds.margin import logit_margin, parameter_norm
from rasplab.analysis.bounds.theorem import DEFAULT_PRECISION_BITS, LengthBound, length_bound

__all__ = [
    "LengthBound",
    "attention_logits",
    "bound_quantities",
    "length_bound",
    "locality",
    "logit_margin",
    "parameter_norm",
    "period",
]


def bound_quantities(
    model,
    vocabulary: Sequence[int],
    positions: Sequence[int],
    epsilon: float,
    precision_bits: float = DEFAULT_PRECISION_BITS,
    constant: float = 1.0,
) -> dict:
    """γ, L, Δ, τ and the predicted N of one model as plain data (``predicted_N`` None when
    it overflows a float; ``log2_predicted_N`` is always finite for γ > 0)."""
    positions = list(positions)
    gamma = logit_margin(model, vocabulary, positions)
    L = parameter_norm(model, vocabulary, positions)
    delta, tau = period(model, positions), locality(model)
    bound = length_bound(gamma, L, delta, tau, epsilon, precision_bits, constant)
    return {
        "gamma": gamma,
        "L": L,
        "delta": delta,
        "tau": tau,
        "predicted_N": bound.to_json()["N"],
        "log2_predicted_N": bound.log2_N,
        "terms": {"hardmax": bound.to_json()["hardmax"], "averaging": bound.averaging},
        "epsilon": epsilon,
        "precision_bits": float(precision_bits),
        "constant": float(constant),
    }
