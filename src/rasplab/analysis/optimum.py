"""Theorems 1-2 of ALTA (App. B) checked numerically: minimal rule sets and local optima.

For a program whose variables (head outputs included) are all categorical:

1. collect ``D``, the distinct MLP inputs (variable assignments) when the interpreter runs the
   program on the training inputs (:func:`mlp_inputs`);
2. decide from the rules alone whether the rule set is minimal for ``D`` (Definition 1): no
   rule and no constraint of a rule can be removed without changing the logical MLP
   function on some assignment of ``D`` (:func:`minimality`); the constraint on a rule's own
   output variable is never removable (App. B.1 requires it; its W2 column subtracts it);
3. compile the rules into ``theta = (W1, b1, W2)`` as eqs. 8-10 prescribe, with the clipped
   ReLU MLP ``f(theta, z) = W2 clip(W1 z + b1, 0, 1) + z`` on one-hot assignments
   (:func:`compile_rules`);
4. move every parameter by ``+h`` and ``-h`` and evaluate the regularised reconstruction loss
   ``alpha * |theta|_1 + sum_n |f(theta, z_n) - f(theta_hat, z_n)|_1`` (eq. 17): the compiled
   point is a strict coordinate-wise local optimum when every move increases it; a move that
   decreases it is a descent direction (:func:`check_optimum`).

Theorem 1: not minimal => not a strict coordinate-wise optimum; Theorem 2: minimal => strict
optimum (alpha < 1). Measured: Theorem 2 and Theorem 1's unused-rule case hold; a removable
constraint, though, need not give a coordinate-wise descent (lowering its W1 weight lowers
the rule's unit where it fires), so the compiled point can be a strict coordinate-wise
optimum of a non-minimal rule set. The direction that removes the constraint moves two
coordinates (``W1[j, c] -= t``, ``b1[j] += t``) and lowers the loss; the report gives it. The loss is piecewise linear around ``theta_hat``, so a small ``h`` gives
the one-sided derivatives exactly (up to rounding).

>>> from rasplab.programs import get_program
>>> entry = get_program("parity_sequential_relative")
>>> inputs = [entry.encode(x) for x in ("1 0", "1 1", "1 1 0", "0 1 1")]
>>> report = check_optimum(entry.program(), inputs)
>>> report.minimal, report.strict_optimum, report.minimality.removable_constraints
(False, True, [(2, 'done', 0)])
>>> report.joint[0]["change_per_unit"] < 0
True
>>> report = check_optimum(entry.program(), [entry.encode(x) for x in ("0 1", "1 1 0")])
>>> report.minimal, report.minimality.removable_rules, report.descent[0]["parameter"]
(False, [1], 'W1')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang.interpreter import interpret
from rasplab.lang.program import Program

Assignment = tuple  # one value (or None: undefined) per variable, in program order


def _variables(program: Program) -> list[tuple[str, int]]:
    """``(name, range)`` of every variable; refuses what Appendix B does not cover."""
    out = []
    for name, spec in program.all_variables.items():
        if spec.kind != "categorical":
            raise RasplabError(
                f"variable {name!r} is {spec.kind}; Theorems 1-2 (ALTA App. B) cover programs "
                "whose variables are all categorical"
            )
        out.append((name, spec.range))
    return out


def mlp_inputs(program: Program, batch: Sequence[Sequence[int]]) -> list[Assignment]:
    """``D``: the distinct assignments the MLP sees at any layer and position."""
    names = [n for n, _ in _variables(program)]
    seen: set = set()
    for tr in interpret(program, batch, trace=True).traces:
        for lt in tr.layers:
            values = lt.after_attention
            for p in range(len(tr.tokens)):
                seen.add(tuple(values[n][p] for n in names))
    return sorted(seen, key=lambda a: tuple(-1 if v is None else v for v in a))


def _apply(rules: list[tuple[dict, int, int]], v: Assignment) -> Assignment | str:
    """The logical MLP function ``f_R``; ``"conflict"`` when two satisfied rules write one
    variable with different values."""
    out = list(v)
    written: dict[int, int] = {}
    for atoms, k, new in rules:
        if all(v[i] == val for i, val in atoms.items()):
            if written.get(k, new) != new:
                return "conflict"
            written[k] = out[k] = new
    return tuple(out)


def _rules(program: Program) -> list[tuple[dict, int, int]]:
    index = {n: i for i, (n, _) in enumerate(_variables(program))}
    return [({index[n]: val for n, val in r.lhs}, index[r.var], r.new) for r in program.rules]


@dataclass
class Minimality:
    """Which rules never change ``f_R`` on ``D`` when removed, and which constraints."""

    removable_rules: list[int]
    removable_constraints: list[tuple[int, str, int]]  # (rule, variable, value)

    @property
    def minimal(self) -> bool:
        """Definition 1: nothing can be removed."""
        return not self.removable_rules and not self.removable_constraints


def minimality(program: Program, data: Sequence[Assignment]) -> Minimality:
    """Definition 1 decided by running ``f_R`` with each rule and each constraint removed."""
    names = [n for n, _ in _variables(program)]
    rules = _rules(program)
    full = [_apply(rules, v) for v in data]
    rules_out, constraints_out = [], []
    for j, (atoms, k, new) in enumerate(rules):
        without = rules[:j] + rules[j + 1 :]
        if all(_apply(without, v) == f for v, f in zip(data, full)):
            rules_out.append(j)
        for i, val in atoms.items():
            if i == k:  # App. B.1: a rule always conditions on its output variable
                continue
            looser = {a: b for a, b in atoms.items() if a != i}
            changed = rules[:j] + [(looser, k, new)] + rules[j + 1 :]
            if all(_apply(changed, v) == f for v, f in zip(data, full)):
                constraints_out.append((j, names[i], val))
    return Minimality(rules_out, constraints_out)


def compile_rules(program: Program) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(W1 [R, Z], b1 [R], W2 [Z, R], offsets)``: eqs. 8-10; dim ``offsets[k] + v`` is 1
    iff variable k has value v."""
    ranges = [r for _, r in _variables(program)]
    offsets = np.concatenate([[0], np.cumsum(ranges)])
    rules = _rules(program)
    w1 = np.zeros((len(rules), offsets[-1]))
    w2 = np.zeros((offsets[-1], len(rules)))
    b1 = np.zeros(len(rules))
    for j, (atoms, k, new) in enumerate(rules):
        for i, val in atoms.items():
            w1[j, offsets[i] + val] = 1.0
        b1[j] = 1.0 - len(atoms)
        w2[offsets[k] + atoms[k], j] -= 1.0
        w2[offsets[k] + new, j] += 1.0
    return w1, b1, w2, offsets


def encode(data: Sequence[Assignment], offsets: np.ndarray) -> np.ndarray:
    """``[N, Z]`` one-hot encodings ``e_V`` (an undefined value: all zeros for that variable)."""
    z = np.zeros((len(data), offsets[-1]))
    for n, v in enumerate(data):
        for k, val in enumerate(v):
            if val is not None:
                z[n, offsets[k] + val] = 1.0
    return z


def mlp(w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``f(theta, z) = W2 clip(W1 z + b1, 0, 1) + z`` for rows ``z`` ``[N, Z]``."""
    return np.clip(z @ w1.T + b1, 0.0, 1.0) @ w2.T + z


@dataclass
class OptimumReport:
    """The check's outcome: minimality, the one-sided changes of the loss per parameter."""

    minimal: bool
    minimality: Minimality
    strict_optimum: bool
    descent: list[dict]  # parameters whose move lowers the loss: name, index, sign, change
    flat: list[dict]  # parameters whose move leaves the loss unchanged
    joint: list[dict]  # per removable constraint: the loss change of W1 -= t, b1 += t
    parameters: int
    assignments: int
    alpha: float
    reconstruction_at_compiled: float

    def record(self) -> dict:
        """Plain JSON data."""
        m = self.minimality
        return {
            "minimal": self.minimal,
            "strict_optimum": self.strict_optimum,
            "agrees_with_theorems": self.minimal == self.strict_optimum,
            "removable_rules": m.removable_rules,
            "removable_constraints": [list(c) for c in m.removable_constraints],
            "descent_directions": self.descent[:20],
            "flat_directions": len(self.flat),
            "constraint_directions": self.joint,
            "parameters": self.parameters,
            "assignments": self.assignments,
            "alpha": self.alpha,
            "reconstruction_at_compiled": self.reconstruction_at_compiled,
        }


def check_optimum(
    program: Program, batch: Sequence[Sequence[int]], alpha: float = 0.5, h: float = 1e-4
) -> OptimumReport:
    """Check Theorems 1-2 for ``program`` on training inputs ``batch`` (module docstring)."""
    if not 0 < alpha < 1:
        raise RasplabError(f"alpha must be in (0, 1) (Theorem 2 needs alpha < 1), got {alpha}")
    if not program.rules:
        raise RasplabError(f"program {program.name!r} has no MLP rules to check")
    data = mlp_inputs(program, batch)
    if not data:
        raise RasplabError("the training inputs give no MLP inputs; give non-empty inputs")
    mini = minimality(program, data)
    w1, b1, w2, offsets = compile_rules(program)
    z = encode(data, offsets)
    target = mlp(w1, b1, w2, z)
    expected = np.array(
        [encode([_apply(_rules(program), v)], offsets)[0] for v in data]
    )  # conflicts cannot occur on D: the interpreter would have failed
    reconstruction = float(np.abs(target - expected).sum())

    def loss(p: list[np.ndarray]) -> float:
        reg = sum(np.abs(a).sum() for a in p)
        return alpha * reg + float(np.abs(mlp(*p[:2], p[2], z) - target).sum())

    params = [w1, b1, w2]
    base = loss(params)
    descent, flat = [], []
    for name, a in zip(("W1", "b1", "W2"), params):
        for idx in np.ndindex(a.shape):
            for sign in (1.0, -1.0):
                old = a[idx]
                a[idx] = old + sign * h
                change = loss(params) - base
                a[idx] = old
                if change < -1e-3 * alpha * h:
                    descent.append(
                        {
                            "parameter": name,
                            "index": list(idx),
                            "sign": sign,
                            "change_per_unit": float(change / h),
                        }
                    )
                elif change <= 1e-3 * alpha * h:
                    flat.append({"parameter": name, "index": list(idx), "sign": sign})
    names = [n for n, _ in _variables(program)]
    joint = []
    for j, name, val in mini.removable_constraints:
        col = offsets[names.index(name)] + val
        w1[j, col] -= h
        b1[j] += h
        joint.append(
            {
                "rule": j,
                "variable": name,
                "value": val,
                "change_per_unit": float((loss(params) - base) / h),
            }
        )
        w1[j, col] += h
        b1[j] -= h
    return OptimumReport(
        mini.minimal,
        mini,
        not descent and not flat,
        descent,
        flat,
        joint,
        int(w1.size + b1.size + w2.size),
        len(data),
        alpha,
        reconstruction,
    )
