"""Benchmark: rasplab's RASP compiler beside Tracr's, program by program; JSON.

    RASPLAB_TRACR_PYTHON=/work/tracr-venv/bin/python python benchmarks/bench_rasp.py \\
        [--lengths 5 10 20] [--inputs 1000] [--out benchmarks/results/bench_rasp.json]

Tracr (``pip install tracr-pypi``: JAX and Haiku, the ``tracr-bench`` extra) lives in its own
virtual environment; this script runs it in a subprocess with that environment's python
(``--tracr-python`` or ``RASPLAB_TRACR_PYTHON``; without one only rasplab's side is measured).

For every program of Tracr's ``lib.py`` (each built on both sides by its own library: Tracr's
``tracr.compiler.lib`` and ``rasplab.rasp.lib``), its vocabulary ({1..5}, brackets for the
Dyck programs, {1..N} for ``make_sort_unique``, whose keys must differ) and each
``max_seq_len`` N: compile seconds (wall clock, after imports; one thread), layers, heads,
residual width, MLP width and parameters on both sides; then ``--inputs`` random inputs
(length uniform in 1..N, or with ``--quarters`` in {N/4, N/2, 3N/4, N}, since Tracr's JAX
model compiles once per input length; tokens uniform; distinct tokens for ``make_sort_unique``) through
both compiled models and rasplab's RASP evaluator. Where the two models' outputs differ, the
JSON says which equals the evaluator. Categorical outputs must be equal; numerical ones within
1e-9 (rasplab decodes to the nearest possible value) or 1e-5 relative (Tracr's raw float32).

Output: ``{"rows": [...], "summary": {...}}``; ``--markdown`` prints the table for the docs.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from rasplab.rasp import lib, rasp  # noqa: E402
from rasplab.rasp_compiler.compile import compile_rasp_to_model  # noqa: E402

torch.set_num_threads(1)

NUMS = [1, 2, 3, 4, 5]
BRACKETS = ["(", ")", "{", "}", "x"]
# name: (arguments as text, evaluated on both sides with `lib`, `rasp`, `N` in scope; vocab)
PROGRAMS = {
    "make_length": ("lib.make_length()", NUMS),
    "make_reverse": ("lib.make_reverse(rasp.tokens)", NUMS),
    "make_pair_balance": ("lib.make_pair_balance(rasp.tokens, '(', ')')", BRACKETS),
    "make_shuffle_dyck": ("lib.make_shuffle_dyck(['()'])", BRACKETS),
    "make_shuffle_dyck2": ("lib.make_shuffle_dyck2()", BRACKETS),
    "make_hist": ("lib.make_hist()", NUMS),
    "make_sort_unique": ("lib.make_sort_unique(rasp.tokens, rasp.tokens)", None),
    "make_sort": ("lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=N, min_key=1)", NUMS),
    "make_sort_freq": ("lib.make_sort_freq(N)", NUMS),
    "make_frac_prevs": ("lib.make_frac_prevs(rasp.tokens == 1)", NUMS),
    "shift_by": ("lib.shift_by(2, rasp.tokens)", NUMS),
    "detect_pattern": ("lib.detect_pattern(rasp.tokens, [1, 2, 3])", NUMS),
    "make_count_less_freq": ("lib.make_count_less_freq(2)", NUMS),
    "make_count": ("lib.make_count(rasp.tokens, 1)", NUMS),
    "make_nary_sequencemap": (
        "lib.make_nary_sequencemap(lambda a, b, c: a + b - c, rasp.tokens, rasp.tokens, "
        "rasp.tokens)",
        NUMS,
    ),
}

TRACR_WORKER = r"""
import json, signal, sys, time
import jax, jax.numpy as jnp, numpy as np
def _timeout(signum, frame):
    raise TimeoutError("compile + run over the time limit")
signal.signal(signal.SIGALRM, _timeout)
from tracr.rasp import rasp
from tracr.compiler import compiling, lib
jobs = json.load(sys.stdin)
out = []
for job in jobs:
    N = job["N"]
    row = {}
    signal.alarm(job["limit_s"])
    try:
        program = eval(job["expr"])
        t = time.perf_counter()
        model = compiling.compile_rasp_to_model(program, set(job["vocab"]), N, compiler_bos="BOS")
        row["compile_s"] = time.perf_counter() - t
        cfg = model.model_config
        row.update(layers=cfg.num_layers, heads=cfg.num_heads, mlp_width=cfg.mlp_hidden_size,
                   residual_width=len(model.residual_labels),
                   params=int(sum(x.size for x in jax.tree_util.tree_leaves(model.params))))
        outputs = [None] * len(job["inputs"])
        groups = {}
        for i, xs in enumerate(job["inputs"]):
            groups.setdefault(len(xs), []).append(i)
        for n, idx in groups.items():
            ids = jnp.array([model.input_encoder.encode(["BOS", *job["inputs"][i]]) for i in idx])
            res = np.asarray(model.forward(model.params, ids).unembedded_output).tolist()
            for i, r in zip(idx, res):
                dec = model.output_encoder.decode(r) if model.output_encoder else r
                outputs[i] = dec[1:]
        row["outputs"] = outputs
    except Exception as err:
        row["error"] = f"{type(err).__name__}: {err}"[:300]
    signal.alarm(0)
    out.append(row)
    print(job["name"], N, round(row.get("compile_s", -1), 2), row.get("error", ""), file=sys.stderr, flush=True)
json.dump(out, sys.stdout)
"""


def _inputs(vocab: list, n: int, count: int, unique: bool, seed: int, quarters: bool) -> list[list]:
    rng = np.random.default_rng(seed)
    lengths = sorted({max(1, n * q // 4) for q in range(1, 5)}) if quarters else range(1, n + 1)
    lengths = list(lengths)
    out = []
    for _ in range(count):
        k = int(lengths[rng.integers(0, len(lengths))])
        if unique:
            out.append([int(v) for v in rng.permutation(vocab)[:k]])
        else:
            out.append([vocab[i] for i in rng.integers(0, len(vocab), k)])
    return out


def _same(want, got, tol: float) -> bool:
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, (int, float)) and isinstance(got, (int, float)) and tol:
        return abs(float(want) - float(got)) <= tol * max(1.0, abs(float(want)))
    return bool(want == got)


def _rasplab_side(expr: str, vocab: list, n: int, inputs: list[list]) -> tuple[dict, list]:
    program = eval(expr, {"lib": lib, "rasp": rasp, "N": n})
    t = time.perf_counter()
    model = compile_rasp_to_model(program, set(vocab), n)
    compile_s = time.perf_counter() - t
    sizes = model.sizes()
    outputs = [model.apply(["BOS", *xs]).decoded[1:] for xs in inputs]
    row = {"compile_s": compile_s, **{k: sizes[k] for k in sizes if k != "module_params"}}
    return row, outputs


def _evaluate(expr: str, n: int, inputs: list[list]) -> list:
    program = eval(expr, {"lib": lib, "rasp": rasp, "N": n})
    out = []
    for xs in inputs:
        try:
            out.append(rasp.evaluate(program, xs))
        except rasp.RaspError:
            out.append("outside the program's domain")
    return out


def run(
    lengths: list[int],
    count: int,
    tracr_python: str | None,
    limit: int = 600,
    quarters: bool = False,
) -> dict:
    jobs, rows = [], []
    for name, (expr, vocab) in PROGRAMS.items():
        for n in lengths:
            v = list(range(1, n + 1)) if vocab is None else vocab
            inputs = _inputs(v, n, count, vocab is None, seed=n, quarters=quarters)
            jobs.append(
                {"name": name, "expr": expr, "vocab": v, "N": n, "inputs": inputs, "limit_s": limit}
            )
    tracr_rows: list[dict] = [{} for _ in jobs]
    if tracr_python:
        done = subprocess.run(
            [tracr_python, "-c", TRACR_WORKER],
            input=json.dumps(jobs),
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu", "OMP_NUM_THREADS": "1"},
        )
        if done.returncode != 0:
            raise SystemExit(f"the Tracr worker failed (exit {done.returncode})")
        tracr_rows = json.loads(done.stdout)
    for job, tr in zip(jobs, tracr_rows):
        ours, outputs = _rasplab_side(job["expr"], job["vocab"], job["N"], job["inputs"])
        truth = _evaluate(job["expr"], job["N"], job["inputs"])
        valid = [i for i, t in enumerate(truth) if not isinstance(t, str)]
        ours["agree_with_evaluator"] = sum(
            all(_same(a, b, 1e-9) for a, b in zip(truth[i], outputs[i])) for i in valid
        )
        row = {"program": job["name"], "max_seq_len": job["N"], "inputs": len(valid)}
        row["input_lengths"] = sorted({len(x) for x in job["inputs"]})
        row["rasplab"] = ours
        if tracr_python:
            theirs = {k: v for k, v in tr.items() if k != "outputs"}
            if "outputs" in tr:
                t_out = tr["outputs"]
                theirs["agree_with_evaluator"] = sum(
                    all(_same(a, b, 1e-5) for a, b in zip(truth[i], t_out[i])) for i in valid
                )
                differ = [
                    i for i in valid
                    if not all(_same(a, b, 1e-5) for a, b in zip(outputs[i], t_out[i]))
                ]  # fmt: skip
                row["differ"] = {
                    "inputs": len(differ),
                    "rasplab_equals_evaluator": sum(
                        all(_same(a, b, 1e-9) for a, b in zip(truth[i], outputs[i])) for i in differ
                    ),
                    "tracr_equals_evaluator": sum(
                        all(_same(a, b, 1e-5) for a, b in zip(truth[i], t_out[i])) for i in differ
                    ),
                    "example": None
                    if not differ
                    else {
                        "input": job["inputs"][differ[0]],
                        "evaluator": truth[differ[0]],
                        "rasplab": outputs[differ[0]],
                        "tracr": t_out[differ[0]],
                    },
                }
                row["compile_speedup"] = theirs["compile_s"] / ours["compile_s"]
                row["width_ratio"] = ours["residual_width"] / theirs["residual_width"]
            row["tracr"] = theirs
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("program", "max_seq_len")}), file=sys.stderr)
    return {"rows": rows, "summary": _summary(rows)}


def _summary(rows: list[dict]) -> dict:
    both = [r for r in rows if "compile_speedup" in r]
    return {
        "settings": len(rows),
        "rasplab_compiled": sum("compile_s" in r["rasplab"] for r in rows),
        "rasplab_all_agree": sum(r["rasplab"]["agree_with_evaluator"] == r["inputs"] for r in rows),
        "tracr_compiled": sum("compile_s" in r.get("tracr", {}) for r in rows),
        "tracr_all_agree": sum(
            r.get("tracr", {}).get("agree_with_evaluator") == r["inputs"] for r in rows
        ),
        "compile_speedup_min": min((r["compile_speedup"] for r in both), default=None),
        "compile_speedup_median": float(np.median([r["compile_speedup"] for r in both]))
        if both
        else None,
        "wider_than_tracr": [
            f"{r['program']}@{r['max_seq_len']}" for r in both if r["width_ratio"] > 1
        ],
    }


def markdown(result: dict) -> str:
    """The comparison as a markdown table."""
    lines = [
        "| program | N | rasplab compile s | Tracr compile s | speedup | layers (r/T) "
        "| width (r/T) | params (r/T) | rasplab = evaluator | Tracr = evaluator |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        ours, theirs = r["rasplab"], r.get("tracr", {})
        if "error" in theirs:
            t = ["refused"] * 2
            tl = tw = tp = "-"
            tagree = f"refused: {theirs['error'][:40]}"
        elif theirs:
            t = [f"{theirs['compile_s']:.2f}", f"{r['compile_speedup']:.0f}x"]
            tl, tw, tp = theirs["layers"], theirs["residual_width"], theirs["params"]
            tagree = f"{theirs['agree_with_evaluator']}/{r['inputs']}"
        else:
            t, tl, tw, tp, tagree = ["-", "-"], "-", "-", "-", "-"
        dtype = "" if ours["dtype"] == "float32" else " (f64)"
        lines.append(
            f"| {r['program']} | {r['max_seq_len']} | {ours['compile_s']:.3f} | {t[0]} | {t[1]} "
            f"| {ours['layers']}/{tl} | {ours['residual_width']}/{tw} | {ours['params']}/{tp} "
            f"| {ours['agree_with_evaluator']}/{r['inputs']}{dtype} | {tagree} |"
        )
    return "\n".join(lines)


def compact(result: dict) -> str:
    """One row per program over every max_seq_len: the README's table."""
    by: dict[str, list[dict]] = {}
    for r in result["rows"]:
        by.setdefault(r["program"], []).append(r)
    lines = [
        "| program | N | compile speedup | layers (rasplab/Tracr) | residual width (rasplab/Tracr) "
        "| rasplab = evaluator | Tracr = evaluator |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rows in by.items():
        ns = "/".join(str(r["max_seq_len"]) for r in rows)
        speed = "/".join(
            f"{r['compile_speedup']:.0f}x" if "compile_speedup" in r else "-" for r in rows
        )
        layers = "/".join(
            f"{r['rasplab']['layers']}:{r.get('tracr', {}).get('layers', '-')}" for r in rows
        )
        width = "/".join(
            f"{r['rasplab']['residual_width']}:{r.get('tracr', {}).get('residual_width', '-')}"
            for r in rows
        )
        ours = "/".join(
            f"{100 * r['rasplab']['agree_with_evaluator'] / r['inputs']:.0f}%" for r in rows
        )
        theirs = "/".join(
            f"{100 * r['tracr']['agree_with_evaluator'] / r['inputs']:.0f}%"
            if "agree_with_evaluator" in r.get("tracr", {})
            else "fails"
            for r in rows
        )
        lines.append(f"| {name} | {ns} | {speed} | {layers} | {width} | {ours} | {theirs} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--tracr-python", default=os.environ.get("RASPLAB_TRACR_PYTHON"))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--quarters",
        action="store_true",
        help="Input lengths N/4, N/2, 3N/4, N only (Tracr's JAX compiles once per length).",
    )
    parser.add_argument(
        "--tracr-limit", type=int, default=600, help="Seconds per Tracr compile and run."
    )
    parser.add_argument("--markdown", type=Path, default=None, help="print this JSON as a table")
    parser.add_argument(
        "--compact", action="store_true", help="with --markdown: one row per program"
    )
    parser.add_argument("--merge", type=Path, nargs="+", default=None, help="JSONs to join (--out)")
    args = parser.parse_args()
    if args.markdown:
        loaded = json.loads(args.markdown.read_text())
        print(compact(loaded) if args.compact else markdown(loaded))
        return
    if args.merge:
        rows = [r for path in args.merge for r in json.loads(path.read_text())["rows"]]
        rows.sort(key=lambda r: (list(PROGRAMS).index(r["program"]), r["max_seq_len"]))
        result = {"rows": rows, "summary": _summary(rows)}
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(result, indent=1, default=str) + "\n")
        print(json.dumps(result["summary"], indent=1))
        return
    result = run(args.lengths, args.inputs, args.tracr_python, args.tracr_limit, args.quarters)
    text = json.dumps(result, indent=1, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
