"""What the training set never shows: the labels a task defines that no training example has,
and how the learned program answers them.

Test accuracy is measured on the same distribution as training, so a label the training set
never contains (``rasp_hist``'s count 7: seven equal symbols among at most eight) is usually
absent from the test set too, and a program can score 1.0 while answering it wrong. This
stage lists those labels and probes the program on inputs that have them: the inputs of the
equivalence checks plus, at every training length, *block* inputs (``j`` distinct symbols,
each repeated), which reach the extreme counts that uniform draws almost never do.

>>> from rasplab.tasks import get_task
>>> task = get_task("rasp_hist", max_len=5)
>>> train = [task.example("abcd"), task.example("abca")]
>>> never_seen(task, train)
['3', '4']
>>> wrong = lambda tokens: [None] + ["1"] * (len(tokens) - 1)   # answers 1 everywhere
>>> report = unseen_behaviour(task, train, wrong)
>>> report["labels_not_in_training"], report["on_labels_not_in_training"]["4"]["right"]
(['3', '4'], 0)
>>> report["on_labels_not_in_training"]["4"]["example"]
{'input': 'a a a a', 'position': 0, 'label': '4', 'program': '1'}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rasplab.tasks.base import Example


def never_seen(task, train: Iterable[Example]) -> list[str]:
    """The task's labels (``task.classes``, in order) that no training target is."""
    seen = {t for ex in train for t in ex.targets if t is not None}
    return [c for c in task.classes if c not in seen]


def block_inputs(task) -> list[Example]:
    """For each length 1..``task.max_length`` and each ``j`` in 1..k: ``j`` distinct symbols,
    each repeated as evenly as the length allows (``a a a``, ``a a b``, ``a b c``, ...)."""
    out = []
    lo = max(1, getattr(task, "min_length", 1))
    for n in range(lo, task.max_length + 1):
        for j in range(1, min(len(task.symbols), n) + 1):
            xs = [task.symbols[i * j // n] for i in range(n)]
            out.append(task.example(xs))
    return out


def unseen_behaviour(
    task,
    train: Sequence[Example],
    run: Callable[[list[str]], list],
    probes: Iterable[Example] = (),
) -> dict:
    """``{"labels_not_in_training": [...], "on_labels_not_in_training": {label: {"positions",
    "right", "example"}}}``: for each label no training target is, the positions among
    ``probes`` and :func:`block_inputs` whose label it is, how many of them the program
    answers right, and the first it answers wrong (``None`` when it answers every one right;
    ``positions`` 0 when no probe has the label; the example's position counts symbols from
    0, without the start token)."""
    missing = never_seen(task, train)
    behaviour = {c: {"positions": 0, "right": 0, "example": None} for c in missing}
    if missing:
        for ex in [*block_inputs(task), *probes]:
            if not any(t in behaviour for t in ex.targets):
                continue
            out = run(list(ex.tokens))
            for i, (y, target) in enumerate(zip(out, ex.targets)):
                if target not in behaviour:
                    continue
                entry = behaviour[target]
                entry["positions"] += 1
                if y == target:
                    entry["right"] += 1
                elif entry["example"] is None:
                    symbols = [t for t in ex.tokens if t in task.symbols]
                    entry["example"] = {
                        "input": " ".join(symbols),
                        "position": sum(t in task.symbols for t in ex.tokens[:i]),
                        "label": target,
                        "program": y,
                    }
    return {"labels_not_in_training": missing, "on_labels_not_in_training": behaviour}


def warning(report: dict) -> str | None:
    """One line for stderr when the training set lacks labels (None when it has them all)."""
    missing = report["labels_not_in_training"]
    if not missing:
        return None
    parts = []
    for label, b in report["on_labels_not_in_training"].items():
        if not b["positions"]:
            parts.append(f"{label}: no probe input has it")
        else:
            parts.append(f"{label}: right at {b['right']} of {b['positions']} probed positions")
    wrong = next(
        (b["example"] for b in report["on_labels_not_in_training"].values() if b["example"]), None
    )
    eg = (
        f"; e.g. on '{wrong['input']}' position {wrong['position']} the program answers "
        f"{wrong['program']!r} where the label is {wrong['label']!r}"
        if wrong
        else ""
    )
    return (
        f"warning: the training set never contains the label(s) {', '.join(missing)}, so test "
        f"accuracy does not measure them ({'; '.join(parts)}){eg}"
    )
