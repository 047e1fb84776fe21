"""PTG scores: whole-trace accuracy and steps to the first error, per example and per split.

A trace is correct only if every step matches and nothing follows the last one. Steps to first
error counts the steps a model got right before its first wrong one (the whole trace length when
it is correct). Teacher-forced argmax predictions give the same two numbers as greedy decoding:
greedy decoding reproduces the reference exactly up to the first position where the argmax
differs, so :func:`score_predictions` needs no decoding loop. It also counts the steps whose
every token the model predicts right given the reference before it (teacher-forced step
accuracy): a finer measure than the other two, which early in training are all zero.

>>> score_trace(["2,x:4", "3,", "4,y:1"], ["2,x:4", "3,", "4,y:2"])
TraceScore(correct=False, first_error=2, steps=3, steps_right=None)
>>> summarize([TraceScore(True, 3, 3, 3), TraceScore(False, 1, 4, 2)])["step_accuracy"]
0.7142857142857143
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rasplab.tasks.base import Example
from rasplab.tasks.ptg.tokens import NL


@dataclass(frozen=True)
class TraceScore:
    """One trace's score: exact or not, correct steps before the first error, its length."""

    correct: bool
    first_error: int
    steps: int
    steps_right: int | None = None  # teacher-forced: steps with every token right


def score_trace(predicted: Sequence[str], reference: Sequence[str]) -> TraceScore:
    """Compare predicted trace lines with the reference lines."""
    n = 0
    for p, r in zip(predicted, reference):
        if p != r:
            break
        n += 1
    correct = n == len(reference) == len(predicted)
    return TraceScore(correct, n, len(reference))


def score_predictions(example: Example, predicted: Sequence) -> TraceScore:
    """Score teacher-forced argmax tokens: ``predicted[t]`` is the model's token after ``t``.

    Only the scored positions (the trace and its ``<eos>``) are read.

    >>> tokens = ("<bos>", "<sep>", "2", ",", "<nl>", "<eos>")
    >>> ex = Example(tokens, (None, "2", ",", "<nl>", "<eos>", None), 1)
    >>> score_predictions(ex, [None, "2", ",", "<nl>", "<eos>", "<pad>"])
    TraceScore(correct=True, first_error=1, steps=1, steps_right=1)
    >>> score_predictions(ex, [None, "2", ",", "<nl>", "3", "<pad>"])
    TraceScore(correct=False, first_error=1, steps=1, steps_right=1)
    >>> score_predictions(ex, [None, "3", ",", "<nl>", "<eos>", "<pad>"])
    TraceScore(correct=False, first_error=0, steps=1, steps_right=0)
    """
    first_error = None  # steps before the first wrong token (None: none wrong yet)
    done = right = 0  # finished steps, and those with every token right
    line_ok = True
    for t, target in enumerate(example.targets):
        if target is None:
            continue
        ok = predicted[t] == target
        line_ok &= ok
        if not ok and first_error is None:
            first_error = done
        if target == NL:
            done += 1
            right += line_ok
            line_ok = True
    correct = first_error is None
    return TraceScore(correct, done if correct else first_error, example.length, right)


def summarize(scores: Iterable[TraceScore]) -> dict:
    """Whole-trace accuracy, mean steps to first error and (teacher-forced scores) the step
    accuracy over a set of traces.

    >>> summarize([TraceScore(True, 3, 3), TraceScore(False, 1, 4)])
    {'n': 2, 'whole_trace_accuracy': 0.5, 'mean_steps_to_first_error': 2.0, 'mean_steps': 3.5, 'step_accuracy': None}
    """
    scores = list(scores)
    n = len(scores)
    keys = ("whole_trace_accuracy", "mean_steps_to_first_error", "mean_steps", "step_accuracy")
    if n == 0:
        return {"n": 0, **dict.fromkeys(keys)}
    total = sum(s.steps for s in scores)
    known = all(s.steps_right is not None for s in scores) and total > 0
    return {
        "n": n,
        "whole_trace_accuracy": sum(s.correct for s in scores) / n,
        "mean_steps_to_first_error": sum(s.first_error for s in scores) / n,
        "mean_steps": total / n,
        "step_accuracy": sum(s.steps_right for s in scores) / total if known else None,
    }
