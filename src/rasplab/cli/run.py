"""``rasplab run``: run an ALTA program on natural inputs (or token ids) and print its answers.

``run`` reads natural inputs, encodes them with the library entry's task glue, executes one
batch through a *runner* (a callable ``(token-id batch, trace) -> BatchRun``) and decodes the
task-level answers. The interpreter, a freshly compiled model (``--compiled``) and a saved
compiled model (``--model DIR``) are the runners; each returns a :class:`rasplab.lang.BatchRun`.
RASP programs (``lib:NAME``, an SOp in a file) and saved RASP models (``--model DIR`` holding
one) run through :func:`run_rasp` instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rasplab.cli.options import PROGRAM_HELP, input_lines, tokens_encoder
from rasplab.cli.rasp import RASP_MAX_SEQ_LEN, RASP_VOCAB, rasp_target
from rasplab.cli.rasp.run import run_model
from rasplab.errors import RasplabError

if TYPE_CHECKING:  # the annotations only: the modules load when a command runs
    from rasplab.lang.interpreter import BatchRun
    from rasplab.lang.program import Program
    from rasplab.programs.base import LibraryProgram

Runner = Callable[[list[list[int]], bool], "BatchRun"]
"""Runs a batch of token-id sequences (``trace`` asks for residual-stream traces)."""


def interpreter_runner(program: Program, max_layers: int | None = None) -> Runner:
    """A runner executing ``program`` with the batched interpreter."""
    # start-up time: numpy and the program library (~0.5 s)
    from rasplab.lang.interpreter import interpret

    def run(batch: list[list[int]], trace: bool) -> BatchRun:
        return interpret(program, batch, trace=trace, max_layers=max_layers)

    return run


def compiled_runner(program: Program, max_layers: int | None = None) -> Runner:
    """A runner executing ``program``'s compiled model (compiled per batch with a maximum
    length covering it)."""
    # start-up time: the compiler imports torch
    from rasplab.compiler.run import run_compiled
    from rasplab.compiler.verify import compile_for

    def run(batch: list[list[int]], trace: bool) -> BatchRun:
        """Compile for this batch's lengths, then run it."""
        model = compile_for(program, [len(b) for b in batch])
        run = run_compiled(model, batch, trace=trace, max_layers=max_layers)
        for t in run.traces or []:
            t.rules = program.rules  # rule indices are the program's: print their text
        return run

    return run


def model_runner(model, max_layers: int | None = None) -> Runner:
    """A runner executing a loaded compiled model."""
    from rasplab.compiler.run import run_compiled  # start-up time: torch

    def run(batch: list[list[int]], trace: bool) -> BatchRun:
        """Run the loaded model on the batch."""
        return run_compiled(model, batch, trace=trace, max_layers=max_layers)

    return run


def load_model_entry(directory: str, name: str | None):
    """``(model, entry)`` for ``rasplab run --model DIR``: the library entry the saved JSON
    names, else (a user program's model) token ids in, output values out."""
    from rasplab.compiler.export import load_compiled  # start-up time: torch
    from rasplab.programs.loading import resolve_program, token_entry  # start-up time: numpy

    model = load_compiled(directory)
    saved = model.spec.get("entry")
    if name is not None and saved is not None and name != saved:
        raise RasplabError(f"model in {directory!r} was compiled from {saved!r}, not {name!r}")
    if saved is None and name is None:
        return model, token_entry(None, model.spec["name"], model.spec["input_range"])
    return model, resolve_program(name or saved)


def saved_rasp_model(directory: str, name: str | None):
    """The saved RASP model in ``directory`` (``rasplab run --model DIR``), loaded, or None
    when the folder holds another kind of model (the ALTA loader then reads it)."""
    # start-up time: the RASP compiler imports torch
    from rasplab.rasp_compiler.load import is_saved_rasp, load_model

    if not is_saved_rasp(directory):
        return None
    if name is not None:
        raise RasplabError(
            f"{directory!r} holds a saved RASP model, which runs without a program NAME; "
            "give --model DIR alone"
        )
    return load_model(directory)


def read_inputs(text: str | None, path: Path | None) -> list[str]:
    """The natural inputs: ``--input TEXT`` or ``--inputs FILE`` (one per line, a blank line
    being an empty input, so that output n answers line n; a byte-order mark is dropped)."""
    lines = input_lines(text, path)
    if path is None:
        return lines
    inputs = [line.strip() for line in lines]
    if not any(inputs):
        raise RasplabError(
            f"inputs file {str(path)!r} holds no inputs (one natural input per line)"
        )
    return inputs


def run_inputs(
    entry: LibraryProgram,
    texts: Sequence[str],
    runner: Runner,
    trace: bool = False,
    encode: Callable[[str], list[int]] | None = None,
) -> list[dict]:
    """Encode (``encode``, default the entry's), run as one batch, decode: one
    ``{"output", "layers"[, "trace"]}`` per input."""
    batch = []
    for n, text in enumerate(texts, start=1):
        try:
            if encode is None:  # natural inputs: refused beyond the program's length limit
                entry.check_input(text)
            batch.append(list((encode or entry.encode)(text)))
        except RasplabError as err:
            raise RasplabError(
                f"input {n} ({text!r}): {err}" if len(texts) > 1 else str(err)
            ) from err
    result = runner(batch, trace)
    records = []
    for b, ids in enumerate(batch):
        record = {"output": list(entry.decode(ids, result.outputs[b])), "layers": result.layers[b]}
        if trace:
            record["trace"] = result.traces[b]
        records.append(record)
    return records


def _print_record(record: dict, as_json: bool) -> None:
    """One input's answer: a JSON line, or ``output: ...  (layers: n)`` and the trace table."""
    if as_json:
        data = dict(record)
        if "trace" in data:
            data["trace"] = data["trace"].to_json()
        print(json.dumps(data))
        return
    print(f"output: {' '.join(map(str, record['output']))}  (layers: {record['layers']})")
    if "trace" in record:
        print(record["trace"].table())


def run_rasp(model, texts: Sequence[str], compiled: bool) -> None:
    """A RASP program's run (``lib:NAME`` or an SOp): each input (BOS prepended when it does
    not start with it) through :func:`rasplab.cli.rasp.run.run_model`, one JSON list a line,
    BOS first, as ``rasplab rasp run`` prints it."""
    from rasplab.rasp.load import parse_tokens  # start-up time: the RASP language

    outputs = []
    for text in texts:
        xs = parse_tokens(text)
        outputs.append(
            run_model(model, xs if xs[:1] == [model.bos] else [model.bos, *xs], compiled)
        )
    for out in outputs:
        print(json.dumps(out))


def run_command(
    name: str = typer.Argument(None, metavar="NAME", help=PROGRAM_HELP),
    text: str = typer.Option(
        None, "--input", metavar="TEXT", help='One natural input, e.g. "1 0 1 1".'
    ),
    path: str = typer.Option(
        None,
        "--inputs",
        metavar="FILE",
        help="File with one natural input per line (one batch).",
    ),
    tokens: str = typer.Option(
        None,
        "--tokens",
        metavar="IDS",
        help='Token ids instead of a natural input, e.g. "3 1 0".',
    ),
    trace: bool = typer.Option(False, "--trace", help="Also print the residual-stream trace."),
    as_json: bool = typer.Option(
        False, "--json", help='One {"output", "layers"} object per input.'
    ),
    max_layers: int = typer.Option(
        None, "--max-layers", help="Layer limit (default: the program's)."
    ),
    compiled: bool = typer.Option(
        False, "--compiled", help="Run the compiled transformer instead of the interpreter."
    ),
    model_dir: str = typer.Option(
        None,
        "--model",
        metavar="DIR",
        help="Run a compiled model saved by `rasplab compile --out DIR` (ALTA or RASP).",
    ),
    vocab: str = RASP_VOCAB,
    max_seq_len: int = RASP_MAX_SEQ_LEN,
) -> None:
    """Run a program (library name or FILE.py:NAME) on the natural input of its task, or
    on token ids (--tokens)."""
    from rasplab.programs.loading import resolve_program  # start-up time: numpy

    rasp_model = rasp_target(None if model_dir else name, vocab, max_seq_len)
    saved = None if model_dir is None else saved_rasp_model(model_dir, name)
    if saved is not None:  # a saved RASP model runs its weights, as --compiled does
        rasp_model, compiled = saved, True
    if rasp_model is not None:
        extra = {"--tokens": tokens, "--trace": trace or None, "--max-layers": max_layers}
        given = [flag for flag, value in extra.items() if value is not None]
        if given:
            raise RasplabError(f"{', '.join(given)}: not for RASP programs (give --input)")
        run_rasp(rasp_model, read_inputs(text, None if path is None else Path(path)), compiled)
        return
    if model_dir is not None:
        model, entry = load_model_entry(model_dir, name)
        runner = model_runner(model, max_layers)
    elif name is None:
        raise RasplabError("give a program NAME (see `rasplab programs`) or --model DIR")
    else:
        entry = resolve_program(name)
        runner = (
            compiled_runner(entry.program(), max_layers)
            if compiled
            else interpreter_runner(entry.program(), max_layers)
        )
    encode = None
    if tokens is not None:
        if text is not None or path is not None:
            raise RasplabError("give --tokens IDS or a natural input (--input/--inputs), not both")
        vocab = model.spec["input_range"] if model_dir else entry.program().input_range
        texts, encode = [tokens], tokens_encoder(entry, vocab)
    else:
        texts = read_inputs(text, None if path is None else Path(path))
    for record in run_inputs(entry, texts, runner, trace, encode):
        _print_record(record, as_json)
