"""Program == model: the decompiled program and the discretised model, compared position by
position on the test set, on *every* input up to a small length, and on random inputs up to
twice the training length (beyond it positions and counts saturate at CAP, in both).

The two computations share nothing but the weights: the model is batched torch tensor
algebra (one-hot einsums, argmax), the program is plain Python over named values. A
disagreement is a :class:`ProgramMismatch` naming the first input where they differ.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rasplab.errors import RasplabError
from rasplab.learned.data import encode
from rasplab.learned.model import DiscreteTransformer
from rasplab.learned.train import predict
from rasplab.seeding import generator
from rasplab.tasks.base import Example


class ProgramMismatch(RasplabError):
    """The program and the discretised model disagree (a failed check: exit 1)."""


@dataclass(frozen=True)
class Agreement:
    """Positions compared (outputs that are not None), how many agree, the first that does not."""

    total: int
    agree: int
    first_divergence: dict | None

    @property
    def fraction(self) -> float:
        """agree / total (1.0 for nothing compared)."""
        return self.agree / self.total if self.total else 1.0


def compare(
    run: Callable[[list[str]], list], model: DiscreteTransformer, examples: Sequence[Example]
) -> Agreement:
    """Run both on ``examples``; compare every position where the program outputs a class."""
    classes = model.shape.classes
    total = agree = 0
    first = None
    for lo in range(0, len(examples), 2048):
        part = examples[lo : lo + 2048]
        pred = predict(model, encode(part, model.shape.vocab, classes))[0].tolist()
        for ex, row in zip(part, pred):
            out = run(list(ex.tokens))
            for i, y in enumerate(out):
                if y is None:
                    continue
                total += 1
                if y == classes[row[i]]:
                    agree += 1
                elif first is None:
                    first = {
                        "tokens": list(ex.tokens),
                        "position": i,
                        "program": y,
                        "model": classes[row[i]],
                    }
    return Agreement(total, agree, first)


def program_accuracy(run: Callable[[list[str]], list], examples: Iterable[Example]) -> float:
    """Fraction of scored positions where the program's output is the task's label."""
    total = right = 0
    for ex in examples:
        out = run(list(ex.tokens))
        for y, target in zip(out, ex.targets):
            if target is not None:
                total += 1
                right += y == target
    return right / total if total else 1.0


def all_inputs(task, length: int) -> list[Example]:
    """Every input of 1..``length`` symbols the task defines (``task.inputs``), labelled."""
    return [task.example(xs) for n in range(1, length + 1) for xs in task.inputs(n)]


def random_inputs(task, count: int, max_length: int, seed: int) -> list[Example]:
    """``count`` inputs from the task's own sampler (any split), lengths uniform from 1 (2
    for tasks whose inputs need two operands) to ``max_length`` (seeded)."""
    rng = generator(seed, "learned-verify", task.name)
    lo = 2 if task.min_length >= 2 else 1
    return task.candidates(rng, rng.integers(lo, max_length + 1, size=count).tolist())


def verify(run, model: DiscreteTransformer, checks: dict[str, Sequence[Example]]) -> dict:
    """Compare on each named set of examples; raise :class:`ProgramMismatch` on the first
    disagreement, else return ``{name: positions compared}``."""
    report = {}
    for name, examples in checks.items():
        agreement = compare(run, model, examples)
        if agreement.first_divergence is not None:
            d = agreement.first_divergence
            raise ProgramMismatch(
                f"program != model on {name} ({agreement.agree}/{agreement.total} positions "
                f"agree); first at position {d['position']} of {' '.join(d['tokens'])}: "
                f"program {d['program']!r}, model {d['model']!r}"
            )
        report[name] = agreement.total
    return report
