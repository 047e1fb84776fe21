"""Benchmark: rasplab's RASP compiler beside Tracr's, program by program; JSON.

    RASPLAB_TRACR_PYTHON=/work/tracr-venv/bin/python python benchmarks/bench_rasp.py \\
        [--lengths 5 10 20] [--inputs 1000] [--out benchmarks/results/bench_rasp.json]

Tracr (``pip install tracr-pypi``: JAX and Haiku, the ``tracr-bench`` extra) lives in its own
virtual environment; this script runs it in a subprocess with that environment's python
(``--tracr-python`` or ``RASPLAB_TRACR_PYTHON``; without one only rasplab's side is measured).

For every program of Tracr's ``lib.py`` (each built on both sides by its own library: Tracr's
``tracr.compiler.lib`` and ``rasplab.rasp.lib``), its vocabulary ({1..5}, brackets for the
Dyck programs, {1..N} for ``make_sort_unique``, whose keys must differ) and each
``max_seq_len`` N: compile seconds (wall clock and the process's CPU seconds, after imports;
one thread; Tracr's from an empty JAX cache, as in a fresh process), layers, heads, residual
width, MLP width and parameters on both sides; then ``--inputs`` random inputs (length uniform
in 1..N; tokens uniform; distinct tokens for ``make_sort_unique``) through both compiled models
and rasplab's RASP evaluator. Tracr's inputs are padded to N (its JAX model compiles once per
input shape; ``rasp_tracr_side.py`` says how, and checks padded against unpadded outputs on
inputs of two lengths: ``pad_check``). Where the two models' outputs differ, the JSON says
which equals the evaluator. Categorical outputs must be equal; numerical ones within 1e-9
(rasplab decodes to the nearest possible value) or 1e-5 relative (Tracr's raw float32).

``--ladder 40 80 ...`` instead compiles each program with Tracr at each N in turn until one
takes over ``--ladder-limit`` (60) CPU seconds or fails, and rasplab at the last N within it
(with ``--ladder-inputs`` inputs checked against the evaluator there). ``--merge`` joins runs
and adds ``largest_within_60s``: per program the largest N of the lengths and the ladder (in
that order, stopping at the first over the limit) that Tracr compiled within the limit.

Output: ``{"rows": [...], "ladder": [...], "largest_within_60s": [...], "summary": {...}}``;
``--markdown`` prints the tables for the docs.
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
from rasp_tables import compact, markdown, summary_text  # noqa: E402  (benchmarks/)

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

TRACR_SIDE = Path(__file__).with_name("rasp_tracr_side.py")
MEMORY_GIB = 4
"""Tracr's memory limit (``RLIMIT_DATA``): a compile needing more fails with a MemoryError."""


def _inputs(vocab: list, n: int, count: int, unique: bool, seed: int) -> list[list]:
    """``count`` inputs, length uniform in 1..n, tokens uniform (distinct if ``unique``)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        k = int(rng.integers(1, n + 1))
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
    t, c = time.perf_counter(), time.process_time()
    model = compile_rasp_to_model(program, set(vocab), n)
    compile_s, compile_cpu_s = time.perf_counter() - t, time.process_time() - c
    sizes = model.sizes()
    outputs = [model.apply(["BOS", *xs]).decoded[1:] for xs in inputs]
    row = {"compile_s": compile_s, "compile_cpu_s": compile_cpu_s}
    row.update({k: sizes[k] for k in sizes if k != "module_params"})
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


def _tracr(tracr_python: str, jobs: list[dict]) -> list[dict]:
    """Tracr's results for ``jobs``, from ``rasp_tracr_side.py`` in Tracr's environment."""
    done = subprocess.run(
        [tracr_python, str(TRACR_SIDE), str(MEMORY_GIB)],
        input=json.dumps(jobs),
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu", "OMP_NUM_THREADS": "1"},
    )
    if done.returncode != 0:
        raise SystemExit(f"the Tracr side failed (exit {done.returncode})")
    return json.loads(done.stdout)


def run(
    lengths: list[int],
    count: int,
    tracr_python: str | None,
    programs: list[str],
    limit_cpu: int = 600,
    batch: int = 250,
) -> dict:
    jobs, rows = [], []
    for name in programs:
        expr, vocab = PROGRAMS[name]
        for n in lengths:
            v = list(range(1, n + 1)) if vocab is None else vocab
            inputs = _inputs(v, n, count, vocab is None, seed=n)
            jobs.append(
                {"name": name, "expr": expr, "vocab": v, "N": n, "inputs": inputs}
                | {"limit_cpu_s": limit_cpu, "limit_wall_s": 20 * limit_cpu, "batch": batch}
            )
    tracr_rows = _tracr(tracr_python, jobs) if tracr_python else [{} for _ in jobs]
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
                row["compile_speedup_cpu"] = theirs["compile_cpu_s"] / ours["compile_cpu_s"]
                row["width_ratio"] = ours["residual_width"] / theirs["residual_width"]
            row["tracr"] = theirs
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("program", "max_seq_len")}), file=sys.stderr)
    return {"rows": rows, "summary": _summary(rows)}


def ladder(
    programs: list[str], tracr_python: str, ns: list[int], limit_cpu: int, count: int
) -> list[dict]:
    """Per program: Tracr compiled at each N of ``ns`` until one takes over ``limit_cpu``
    CPU seconds (or fails); rasplab compiled at the last N Tracr compiled, and checked
    against the evaluator on ``count`` random inputs there."""
    jobs = [
        {"name": name, "expr": PROGRAMS[name][0], "vocab": PROGRAMS[name][1], "ladder": ns}
        | {"limit_cpu_s": limit_cpu, "limit_wall_s": 20 * limit_cpu}
        for name in programs
    ]
    out = []
    for job, tr in zip(jobs, _tracr(tracr_python, jobs)):
        entry = {"program": job["name"], "limit_cpu_s": limit_cpu, **tr}
        if tr.get("largest") is not None:
            entry["rasplab"] = _rasplab_at(job["name"], tr["largest"], count)
        out.append(entry)
        print(json.dumps({"program": job["name"], "largest": tr.get("largest")}), file=sys.stderr)
    return out


def _rasplab_at(name: str, n: int, count: int) -> dict:
    """rasplab's compile, sizes and agreement with the evaluator at max_seq_len ``n``."""
    expr, vocab = PROGRAMS[name]
    v = list(range(1, n + 1)) if vocab is None else vocab
    inputs = _inputs(v, n, count, vocab is None, seed=n)
    try:
        ours, outputs = _rasplab_side(expr, v, n, inputs)
    except rasp.RaspError as err:
        return {"error": str(err)[:300]}
    truth = _evaluate(expr, n, inputs)
    valid = [i for i, t in enumerate(truth) if not isinstance(t, str)]
    ours["inputs"] = len(valid)
    ours["agree_with_evaluator"] = sum(
        all(_same(a, b, 1e-9) for a, b in zip(truth[i], outputs[i])) for i in valid
    )
    return ours


def largest_within(result: dict, limit_cpu: float) -> list[dict]:
    """The largest N Tracr compiled within ``limit_cpu`` CPU seconds, per program, from the
    ``rows``' max_seq_len and the ladder's N (Tracr's compile time taken to grow with N, so a
    descending ladder may stop at its first N within the limit); ``next``: the smallest larger
    N tried, over the limit or failing (None: the largest is a lower bound)."""
    out = []
    for entry in result.get("ladder", []):
        name = entry["program"]
        steps = [
            {"N": r["max_seq_len"], "status": "ok" if "compile_cpu_s" in r["tracr"] else "failed"}
            | {k: r["tracr"][k] for k in ("compile_s", "compile_cpu_s") if k in r["tracr"]}
            for r in result["rows"]
            if r["program"] == name
        ] + entry["ladder"]
        steps.sort(key=lambda step: step["N"])
        within = lambda step: step["status"] == "ok" and step["compile_cpu_s"] <= limit_cpu  # noqa: E731
        best = max((st for st in steps if within(st)), key=lambda st: st["N"], default=None)
        over = [st for st in steps if not within(st) and (best is None or st["N"] > best["N"])]
        row = {"program": name, "limit_cpu_s": limit_cpu, "ladder": steps}
        row["next"] = over[0] if over else None
        if best is not None:
            n = best["N"]
            row["N"] = n
            mains = [r for r in result["rows"] if r["program"] == name and r["max_seq_len"] == n]
            if mains:
                row["tracr"], row["rasplab"] = mains[0]["tracr"], mains[0]["rasplab"]
                row["rasplab"] = row["rasplab"] | {"inputs": mains[0]["inputs"]}
            else:
                row["tracr"] = {k: v for k, v in best.items() if k not in ("N", "status")}
                row["rasplab"] = entry.get("rasplab", {})
        out.append(row)
    return out


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
        "compile_speedup_cpu_min": min((r["compile_speedup_cpu"] for r in both), default=None),
        "compile_speedup_cpu_median": float(np.median([r["compile_speedup_cpu"] for r in both]))
        if both
        else None,
        "tracr_pad_check": {
            "inputs": sum(r["tracr"].get("pad_check", {}).get("inputs", 0) for r in both),
            "equal": sum(r["tracr"].get("pad_check", {}).get("equal", 0) for r in both),
        },
    }


def _summary_largest(entries: list[dict]) -> dict:
    """The largest-N section in a few numbers."""
    ok = [e for e in entries if "compile_cpu_s" in e.get("rasplab", {})]
    return {
        "largest_within_60s": {e["program"]: e.get("N") for e in entries},
        "largest_is_a_lower_bound": [e["program"] for e in entries if e["next"] is None],
        "largest_rasplab_compiled": len(ok),
        "largest_rasplab_all_agree": sum(
            e["rasplab"]["agree_with_evaluator"] == e["rasplab"]["inputs"] for e in ok
        ),
        "largest_wider_than_tracr": [
            e["program"]
            for e in ok
            if e["rasplab"]["residual_width"] > e["tracr"]["residual_width"]
        ],
    }


def _write(result: dict, out: Path | None) -> None:
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(json.dumps(result.get("summary", {}), indent=1))


def merge(paths: list[Path], limit_cpu: int) -> dict:
    """Join the rows and ladders of several runs; add the largest N within ``limit_cpu``."""
    loaded = [json.loads(path.read_text()) for path in paths]
    order = list(PROGRAMS).index
    rows = sorted(
        (r for part in loaded for r in part.get("rows", [])),
        key=lambda r: (order(r["program"]), r["max_seq_len"]),
    )
    steps = sorted(
        (e for part in loaded for e in part.get("ladder", [])), key=lambda e: order(e["program"])
    )
    result = {"rows": rows, "ladder": steps}
    result["largest_within_60s"] = largest_within(result, limit_cpu)
    result["summary"] = _summary(rows) | _summary_largest(result["largest_within_60s"])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--programs", nargs="+", default=list(PROGRAMS), choices=list(PROGRAMS))
    parser.add_argument("--tracr-python", default=os.environ.get("RASPLAB_TRACR_PYTHON"))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--tracr-limit", type=int, default=600, help="CPU seconds per Tracr compile (--lengths)."
    )
    parser.add_argument(
        "--ladder",
        type=int,
        nargs="+",
        default=None,
        help="instead of --lengths: Tracr compiles at each N in turn until one is over "
        "--ladder-limit CPU seconds; rasplab at the last N within it",
    )
    parser.add_argument("--ladder-limit", type=int, default=60)
    parser.add_argument(
        "--ladder-inputs", type=int, default=1000, help="inputs checked at the ladder's last N"
    )
    parser.add_argument("--markdown", type=Path, default=None, help="print this JSON as a table")
    parser.add_argument(
        "--compact", action="store_true", help="with --markdown: one row per program"
    )
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        default=None,
        help="JSONs to join (--out), rows and ladders",
    )
    args = parser.parse_args()
    if args.markdown:
        loaded = json.loads(args.markdown.read_text())
        print(summary_text(loaded) + "\n")
        print(compact(loaded) if args.compact else markdown(loaded))
        return
    if args.merge:
        _write(merge(args.merge, args.ladder_limit), args.out)
        return
    if args.ladder:
        if not args.tracr_python:
            raise SystemExit("--ladder needs Tracr: --tracr-python or RASPLAB_TRACR_PYTHON")
        steps = ladder(
            args.programs, args.tracr_python, args.ladder, args.ladder_limit, args.ladder_inputs
        )
        _write({"ladder": steps}, args.out)
        return
    result = run(args.lengths, args.inputs, args.tracr_python, args.programs, args.tracr_limit)
    _write(result, args.out)


if __name__ == "__main__":
    main()
