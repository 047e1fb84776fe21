"""CLI subcommand ``rasplab export``: a compiled program in another library's format.

``rasplab export NAME --to transformer-lens --layers K --out DIR [--n-ctx N] [--input TEXT]``
writes a TransformerLens 4 ``TransformerBridge`` (``config.json`` + ``model.safetensors``,
loaded by ``TransformerBridge.boot_native`` and ``load_state_dict``: see
:mod:`rasplab.lens_bridge`). ``--input`` checks that K covers the layers that input needs
(a halting program) and prints the export's output on it.
``rasplab export --run RUN_DIR --to transformer-lens --out DIR [--n-ctx N]`` writes a trained
run's model the same way (:mod:`rasplab.models.lens`; a variant TransformerLens has no
counterpart for is refused with one line naming it).
"""

from __future__ import annotations

import json
import sys

import typer

from rasplab.cli.rasp import RASP_MAX_SEQ_LEN, RASP_VOCAB, rasp_target
from rasplab.errors import RasplabError

TARGETS = ("transformer-lens",)


def _export_run(run_dir: str, out: str, n_ctx: int | None) -> None:
    """``--run``: a trained run's model as a TransformerBridge folder."""
    # start-up time: torch
    from rasplab.lens_bridge import save_bridge
    from rasplab.models import Transformer
    from rasplab.models.lens import to_transformer_lens

    bridge = to_transformer_lens(Transformer.from_pretrained(run_dir), n_ctx=n_ctx)
    save_bridge(bridge, out)
    print(f"saved TransformerLens model ({bridge.cfg.n_layers} blocks) to {out}", file=sys.stderr)


def _export_rasp(model, out: str, text: str | None) -> None:
    """A compiled RASP program as a TransformerBridge folder (one compiled layer, one block:
    :mod:`rasplab.compiler.hooked_rasp`); with ``--input`` (BOS prepended when missing) the
    folder is loaded back and its output printed (BOS first, as ``rasplab rasp run``)."""
    # start-up time: torch and TransformerLens
    import torch

    # start-up time: the RASP compiler and the TransformerLens bridge load torch
    from rasplab.compiler.hooked_rasp import rasp_to_transformer_lens
    from rasplab.lens_bridge import load_bridge, save_bridge
    from rasplab.rasp.load import parse_tokens

    ids = None
    if text is not None:  # checked before anything is written
        xs = parse_tokens(text)
        ids = model.encode(xs if xs[:1] == [model.bos] else [model.bos, *xs])
    bridge = rasp_to_transformer_lens(model)
    save_bridge(bridge, out)
    print(f"saved TransformerLens model ({bridge.cfg.n_layers} blocks) to {out}", file=sys.stderr)
    if ids is not None:
        saved = load_bridge(out)
        with torch.no_grad():
            _, cache = saved.run_with_cache(torch.tensor([ids]))
        last = cache[f"blocks.{saved.cfg.n_layers - 1}.hook_resid_post"]
        codes = model.decode(last, model.program)[0, 1:]
        print(json.dumps([model.bos, *(model.value(model.program, int(c)) for c in codes)]))


def export_command(
    name: str = typer.Argument(None, metavar="NAME", help="Library program (or --run)."),
    to: str = typer.Option(..., "--to", metavar="FORMAT", help="Export format: transformer-lens."),
    layers: int = typer.Option(
        None,
        "--layers",
        metavar="K",
        help="Layers to unroll (default: the program's max_layers).",
    ),
    out: str = typer.Option(..., "--out", metavar="DIR", help="Folder to write."),
    n_ctx: int = typer.Option(
        None, "--n-ctx", help="Positions (default: the compiled maximum length, else 128)."
    ),
    text: str = typer.Option(
        None, "--input", metavar="TEXT", help="Check K against this input; print the output."
    ),
    run_dir: str = typer.Option(
        None, "--run", metavar="RUN_DIR", help="Export a trained run's model instead."
    ),
    vocab: str = RASP_VOCAB,
    max_seq_len: int = RASP_MAX_SEQ_LEN,
) -> None:
    """Export a compiled library program (e.g. to a TransformerLens 4 TransformerBridge)."""
    if to not in TARGETS:
        raise RasplabError(f"--to {to!r} unknown; choose one of: {', '.join(TARGETS)}")
    rasp_model = rasp_target(None if run_dir else name, vocab, max_seq_len)
    if rasp_model is not None:
        alta = {"--layers": layers, "--n-ctx": n_ctx}
        given = [flag for flag, value in alta.items() if value is not None]
        if given:
            raise RasplabError(
                f"{', '.join(given)}: not for RASP programs (one block per compiled layer, "
                "positions from --max-seq-len)"
            )
        _export_rasp(rasp_model, out, text)
        return
    # start-up time: numpy and the program library (~0.5 s)
    # start-up time: torch
    from rasplab.compiler.hooked import (
        check_layers,
        hooked_tokens,
        layers_needed,
        save_hooked,
        to_transformer_lens,
    )
    from rasplab.compiler.verify import compile_for
    from rasplab.programs import get_program
    from rasplab.programs.verify import compile_entry

    if run_dir is not None:
        if name is not None or layers is not None or text is not None:
            raise RasplabError("--run exports a trained run: give no NAME, --layers or --input")
        _export_run(run_dir, out, n_ctx)
        return
    if name is None:
        raise RasplabError("give a library program NAME, or --run RUN_DIR")
    entry = get_program(name)
    ids = list(entry.encode(text)) if text is not None else None
    compiled = compile_for(entry.program(), [len(ids)]) if ids is not None else compile_entry(entry)
    k = compiled.spec["max_layers"] if layers is None else layers
    check_layers(compiled, k)
    if ids is not None:
        need = layers_needed(compiled, [ids])
        if k < need:
            raise RasplabError(
                f"--layers {k} is below the {need} layers that input {text!r} needs "
                f"before program {name!r} halts; use --layers {need} or more"
            )
    hooked = to_transformer_lens(compiled, k, n_ctx=n_ctx)
    # the folder is built beside --out and swapped in whole (a folder with other files refused)
    save_hooked(hooked, out)
    print(f"saved TransformerLens model ({3 * k} blocks) to {out}", file=sys.stderr)
    if ids is not None:
        logits = hooked(hooked_tokens(compiled, ids))
        values = logits.argmax(-1)[0, 1:].tolist()
        print("output: " + " ".join(entry.decode(ids, values)))
