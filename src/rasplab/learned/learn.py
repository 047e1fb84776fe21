"""The learned-programs stage in one call: train, discretise, decompile, verify, save.

:func:`learn` reads as its steps:

1. build the task and an untrained :class:`DiscreteTransformer` from the config;
2. draw the task's train / val / test splits (disjoint by construction);
3. train with Gumbel annealing, keeping the best discretised model by validation accuracy;
4. score the discretised model on the test set (the paper's measure);
5. decompile it into a standalone Python program;
6. verify program == model on the test set, every input up to ``verify_length`` symbols
   and ``random_checks`` random inputs up to twice the training length;
7. score the program against the task's labels (separately from the model);
8. write the run directory (only when every check passed).

>>> from rasplab.learned.config import LearnConfig
>>> cfg = LearnConfig(task="rasp_hist", cat_heads=0, count_heads=1, mlps=0, epochs=2,
...                   train_n=300, val_n=50, test_n=50, verify_length=2, random_checks=20)
>>> result, source = learn(cfg)
>>> result["agreement"]
1.0
>>> "def run(tokens" in source
True
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from rasplab.errors import RasplabError
from rasplab.learned.config import LearnConfig
from rasplab.learned.data import encode
from rasplab.learned.decompile import decompile, load_program
from rasplab.learned.model import DiscreteTransformer, Shape
from rasplab.learned.train import accuracy, predict, train
from rasplab.learned.verify import all_inputs, program_accuracy, random_inputs, verify
from rasplab.tasks import get_task, task_names


def build(config: LearnConfig):
    """The task and an untrained model for ``config`` (step 1)."""
    if not config.task.startswith("rasp_") or config.task not in task_names():
        rasp = [n for n in task_names() if n.startswith("rasp_")]
        raise RasplabError(
            f"unknown task {config.task!r} for learn; choose one of: {', '.join(rasp)}"
        )
    task = get_task(config.task, **config.task_options)
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
    return task, DiscreteTransformer(shape, seed=config.seed)


def learn(
    config: LearnConfig, out: str | Path | None = None, log: Callable[[str], None] | None = None
) -> tuple[dict, str]:
    """Run steps 1-8; return the result record and the program's source."""
    start = time.perf_counter()
    task, model = build(config)
    splits = {
        name: task.dataset(name, n=n, seed=config.seed)
        for name, n in (("train", config.train_n), ("val", config.val_n), ("test", config.test_n))
    }
    batches = {name: encode(ex, task.vocab, task.classes) for name, ex in splits.items()}
    trained = train(model, batches["train"], batches["val"], config, log)
    model = trained.model
    test_accuracy = accuracy(predict(model, batches["test"]), batches["test"])
    example = splits["test"][0].tokens if splits["test"] else None
    source = decompile(model, task, example)
    run = load_program(source)["run"]
    checks = {
        "test set": splits["test"],
        f"all inputs up to length {config.verify_length}": all_inputs(task, config.verify_length),
        "random inputs": random_inputs(
            task, config.random_checks, 2 * task.max_length, config.seed
        ),
    }
    checked = verify(run, model, checks)
    result = {
        "task": config.task,
        "test_accuracy": test_accuracy,
        "program_accuracy": program_accuracy(run, splits["test"]),
        "agreement": 1.0,
        "positions_checked": checked,
        "val_accuracy": trained.val_accuracy,
        "best_epoch": trained.best_epoch,
        "train_seconds": round(trained.seconds, 2),
        "seconds": round(time.perf_counter() - start, 2),
        "program_lines": source.count("\n"),
        "example": list(example) if example is not None else None,
    }
    if out is not None:
        from rasplab.learned.rundir import save_run

        save_run(out, config, model, source, result)
    return result, source
