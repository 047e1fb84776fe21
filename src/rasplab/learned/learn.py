"""The learned-programs stage in one call: train, discretise, decompile, verify, save.

:func:`learn` (one seed) and :func:`learn_seeds` (a seed batch) go through these steps, the
last six per seed in :func:`finish`:

1. build the task and an untrained :class:`DiscreteTransformer` from the config;
2. draw the task's train / val / test splits (disjoint by construction);
3. train with Gumbel annealing, keeping the best discretised model by validation accuracy;
4. score the discretised model on the test set (the paper's measure);
5. decompile it into a standalone Python program;
6. verify program == model on the test set, every input up to ``verify_length`` symbols
   and ``random_checks`` random inputs up to twice the training length;
7. score the program against the task's labels (separately from the model), and list the
   labels the training set never contains with the program's answers on inputs that have
   them (:mod:`rasplab.learned.coverage`: test accuracy cannot measure those);
8. with ``test_beyond`` > 0, score model and program at each length past the training
   length (and check they still agree there);
9. write the run directory (only when every check passed).

>>> from rasplab.learned.config import LearnConfig
>>> cfg = LearnConfig(task="rasp_hist", cat_heads=0, count_heads=1, mlps=0, epochs=2,
...                   train_n=300, val_n=50, test_n=50, verify_length=2, random_checks=20)
>>> done = learn(cfg)
>>> done.result["agreement"]
1.0
>>> "def run(tokens" in done.source
True
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rasplab.errors import RasplabError
from rasplab.learned.config import LearnConfig
from rasplab.learned.coverage import unseen_behaviour
from rasplab.learned.data import encode
from rasplab.learned.decompile import decompile, load_learned_program
from rasplab.learned.model import DiscreteTransformer, Shape
from rasplab.learned.rundir import check_out, load_run, save_run
from rasplab.learned.to_lang import export_checked
from rasplab.learned.train import accuracy, predict, sequence_accuracy, train
from rasplab.learned.verify import (
    ProgramMismatch,
    all_inputs,
    program_accuracy,
    random_inputs,
    verify,
)
from rasplab.tasks import get_task, task_names


@dataclass
class LearnedRun:
    """What :func:`learn` returns: the result record, the program source, the model, the task."""

    result: dict
    source: str
    model: DiscreteTransformer
    task: object


def build(config: LearnConfig, seeds: tuple[int, ...] | None = None):
    """The task and an untrained model for ``config`` (step 1), one per seed of ``seeds``
    (default: the config's seed)."""
    if not config.task.startswith("rasp_") or config.task not in task_names():
        rasp = [n for n in task_names() if n.startswith("rasp_")]
        raise RasplabError(
            f"unknown task {config.task!r} for learn; choose one of: {', '.join(rasp)}"
        )
    task = get_task(config.task, **config.task_options)
    config.check_verify_length(len(task.symbols))
    if config.test_beyond and getattr(task, "hints", False):
        raise RasplabError(
            f"test_beyond needs inputs past the training length, and {task.name}'s carry hint "
            "letters the model has never read; use rasp_addition"
        )
    positions = task.max_tokens(task.max_length)
    width = config.width or max(len(task.vocab), positions)
    shape = Shape(
        vocab=tuple(task.vocab),
        classes=tuple(task.classes),
        width=width,
        layers=config.layers,
        cat_heads=config.cat_heads,
        count_heads=config.count_heads,
        mlps=config.mlps,
    )
    return task, DiscreteTransformer(shape, seeds or (config.seed,))


def learn(
    config: LearnConfig, out: str | Path | None = None, log: Callable[[str], None] | None = None
) -> LearnedRun:
    """Run steps 1-9 for one seed."""
    return learn_seeds([config], [out], log)[0]


def learn_seeds(
    configs: list[LearnConfig],
    outs: list[str | Path | None],
    log: Callable[[str], None] | None = None,
) -> list[LearnedRun]:
    """Run steps 1-9 for configs that differ only in ``seed``, trained as one seed batch
    (same data and batches; each seed its own initialisation and kept state)."""
    for out in outs:
        if out is not None:
            check_out(out)
    first = configs[0]
    if any(dataclasses.replace(c, seed=first.seed) != first for c in configs):
        raise RasplabError("a seed batch needs configs that differ only in seed")
    start, cpu_start = time.perf_counter(), time.process_time()
    task, model = build(first, seeds=tuple(c.seed for c in configs))
    splits = {
        name: task.dataset(name, n=n, seed=first.data_seed)
        for name, n in (("train", first.train_n), ("val", first.val_n), ("test", first.test_n))
    }
    batches = {name: encode(ex, task.vocab, task.classes) for name, ex in splits.items()}
    trained = train(model, batches["train"], batches["val"], first, log)
    runs = []
    for i, (config, out) in enumerate(zip(configs, outs)):
        result, source, run_model, listing = finish(config, task, trained, i, splits, batches)
        result["seconds"] = round(time.perf_counter() - start, 2)
        result["cpu_seconds"] = round(time.process_time() - cpu_start, 2)
        if out is not None:
            save_run(out, config, run_model, source, result, listing)
        runs.append(LearnedRun(result, source, run_model, task))
    return runs


def finish(config: LearnConfig, task, trained, i: int, splits: dict, batches: dict):
    """Steps 4-8 for seed number ``i`` of a trained batch: (result, source, model, the
    listing of the rasplab.lang export or None)."""
    model = trained.models[i]
    test_pred = predict(model, batches["test"])[0]
    example = splits["test"][0].tokens if splits["test"] else None
    source = decompile(model, task, example)
    run = load_learned_program(source)["run"]
    checks = equivalence_checks(config, task, splits["test"])
    checked = verify(run, model, checks)
    lang, listing = export_checked(model, task, checks)
    result = {
        "task": config.task,
        "seed": config.seed,
        "trained_up_to": task.max_length,
        "test_accuracy": accuracy(test_pred, batches["test"]),
        "test_sequence_accuracy": sequence_accuracy(test_pred, batches["test"]),
        "program_accuracy": program_accuracy(run, splits["test"]),
        "agreement": 1.0,
        "positions_checked": checked,
        "val_accuracy": trained.val_accuracies[i],
        "best_epoch": trained.best_epochs[i],
        "val_by_epoch": [round(h["val"][i], 6) for h in trained.history],
        "train_seconds": round(trained.seconds, 2),
        "seeds_in_batch": len(trained.models),
        "program_lines": source.count("\n"),
        "example": list(example) if example is not None else None,
        "lang": lang,
    }
    probes = [ex for examples in checks.values() for ex in examples]
    result |= unseen_behaviour(task, splits["train"], run, probes)
    if config.test_beyond:
        result["by_length"] = by_length(config, task, model, run)
    return result, source, model, listing


def equivalence_checks(config: LearnConfig, task, test: list) -> dict[str, list]:
    """The inputs program and model are compared on (step 6): the test set, every input up
    to ``verify_length`` symbols, and random inputs up to twice the training length (those
    whose tokens the model can read: hint letters past the training length it cannot)."""
    vocab = set(task.vocab)
    longer = longer_task(config, task.max_length)
    randoms = random_inputs(longer, config.random_checks, 2 * task.max_length, config.data_seed)
    return {
        "test set": test,
        f"all inputs up to length {config.verify_length}": all_inputs(task, config.verify_length),
        "random inputs": [ex for ex in randoms if vocab.issuperset(ex.tokens)],
    }


def longer_task(config: LearnConfig, extra: int):
    """The run's task allowing ``extra`` more symbols (``max_len``, or ``max_digits`` for
    addition), so it can label inputs past the training length."""
    base = get_task(config.task, **config.task_options)
    key = "max_digits" if "max_digits" in inspect.signature(type(base)).parameters else "max_len"
    bound = base.max_length if key == "max_digits" else base.max_len
    return get_task(config.task, **{**config.task_options, key: bound + extra})


def by_length(config: LearnConfig, task, model: DiscreteTransformer, run) -> dict:
    """Model and program accuracy at each length 1 .. ``test_beyond`` past the training
    length (``test_per_length`` test-split examples each, labelled by the same task with a
    larger ``max_len``); a label the model has no class for counts as wrong."""
    out = {}
    for extra in range(1, config.test_beyond + 1):
        length = task.max_length + extra
        longer = longer_task(config, extra)
        examples = longer.dataset(
            "test", bin=f"{length}-{length}", n=config.test_per_length, seed=config.data_seed
        )
        batch = encode(examples, task.vocab, task.classes)
        verify(run, model, {f"inputs of length {length}": examples})
        out[str(length)] = {
            "model": accuracy(predict(model, batch)[0], batch),
            "program": program_accuracy(run, examples),
            "examples": len(examples),
        }
    return out


def verify_run(path: str | Path) -> dict[str, int]:
    """Recheck a saved run: ``program.py`` must be what the saved weights decompile to, and
    program == model on the checks of step 6; returns the positions compared per check."""
    config, model, source, result = load_run(path)
    task, _ = build(config)
    example = tuple(result["example"]) if result.get("example") else None
    if decompile(model, task, example) != source:
        raise ProgramMismatch(f"{path}/program.py is not the program of {path}/model.safetensors")
    test = task.dataset("test", n=config.test_n, seed=config.data_seed)
    return verify(
        load_learned_program(source)["run"], model, equivalence_checks(config, task, test)
    )


def lang_run(path: str | Path) -> tuple[dict, str]:
    """Export a saved run to rasplab.lang (inputs of up to twice the training length) and
    check it on the inputs of step 6: ``(record, listing of the program)``."""
    config, model, _, _ = load_run(path)
    task, _ = build(config)
    test = task.dataset("test", n=config.test_n, seed=config.data_seed)
    checks = equivalence_checks(config, task, test)
    return export_checked(model, task, checks, strict=True)
