"""Benchmark: the batched C-RASP interpreter against the naive reference; prints one JSON object.

    python benchmarks/bench_crasp.py [--quick] [--compiler] [--max-length N] [--programs A,B]
    python benchmarks/bench_crasp.py --compiler-only --max-length 512   # the docs/crasp.md table

Sections:
  ten_ops     a 10-operation program (counts with and without a local relation, a periodic
              predicate, a conditional, comparisons): positions per second of the batched
              interpreter from encoded ids (``run_ids``) and from symbol strings (``run``,
              encoding included), on one core, next to the naive per-position reference
              interpreter (``reference_run``, Definition 8 read literally) on the same strings;
              ratio batched / reference. Target: >= 10^6 positions per second.
  library     every library program that has a task: operations, positions per second of
              ``run_ids`` on random strings over its alphabet (keeping only output and readout).

  compiler    (with --compiler or --compiler-only) per library program: the compiled
              transformer's layers, heads, width, parameters, dtype and compile seconds; then
              ``verify`` (every operation at every position against the interpreter, on every
              string up to the default exhaustive length and --samples random strings of
              lengths 0..N): seconds, strings, agreement; and the compiled model's positions
              per second next to the interpreter's on the same random strings (ratio).

Every figure is measured by this script in one run (best of 3 repetitions for the
interpreter sections, one run for the compiler section).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from rasplab.crasp import (  # noqa: E402
    Q,
    cond,
    count,
    crasp_program,
    library,
    offset,
    periodic,
    reference_run,
    run,
    run_ids,
)
from rasplab.crasp.interpreter import encode  # noqa: E402


def ten_op_program():
    """Ten operations: 2 initial, 1 periodic, 3 counts (one local), cond, sub, compare, OR."""
    a, b = Q("a"), Q("b")
    ca = count(a, name="ca")
    cb = count(b, offset(1), name="cb_prev")
    even = periodic(2, 0, name="even")
    c = cond(even, ca, count(b, name="cb"), name="pick")
    d = (c - cb).named("diff")
    return crasp_program("ten_ops", ((d > 3) | even).named("out"), "ab")


def best_of(fn, repeats: int = 3) -> float:
    """The fastest of ``repeats`` timed calls, in seconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def strings(rng, alphabet, count_, length):
    """``count_`` random strings of exactly ``length`` symbols."""
    alphabet = list(alphabet)
    return [[alphabet[k] for k in rng.integers(len(alphabet), size=length)] for _ in range(count_)]


def compiler_section(names, max_length: int, samples: int, exhaustive: int | None) -> dict:
    """Compile and verify each program; time the model against the interpreter."""
    import torch

    from rasplab.crasp_compiler.compile import compile_program, model_stats
    from rasplab.crasp_compiler.verify import verify

    out = {}
    for name in names:
        prog = library.program(name)
        model = compile_program(prog, max_length)
        row = model_stats(model)
        t0 = time.perf_counter()
        report = verify(prog, exhaustive_up_to=exhaustive, samples=samples, model=model)
        row["verify_seconds"] = round(time.perf_counter() - t0, 2)
        row.update(report.to_json())
        rng = np.random.default_rng(1)
        batch, length = 8, max_length
        _, ids, _ = encode(prog, strings(rng, prog.alphabet, batch, length))
        with torch.no_grad():
            t_model = best_of(lambda m=model, i=ids: m.decode_all(m(torch.from_numpy(i))), 1)
        t_interp = best_of(lambda p=prog, i=ids: run_ids(p, i), 1)
        positions = batch * (length + 1)
        row["model_positions_per_second"] = round(positions / t_model)
        row["interpreter_positions_per_second"] = round(positions / t_interp)
        row["ratio_model_over_interpreter"] = round(t_interp / t_model, 5)
        print(json.dumps({name: row}), file=sys.stderr, flush=True)
        out[name] = row
    return out


def main() -> None:
    """Run the sections and print the JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller batches")
    parser.add_argument("--compiler", action="store_true", help="add the compiler section")
    parser.add_argument("--compiler-only", action="store_true", help="only the compiler section")
    parser.add_argument("--max-length", type=int, default=512, help="compiler: maximum length")
    parser.add_argument("--samples", type=int, default=200, help="compiler: random strings")
    parser.add_argument("--exhaustive-up-to", type=int, default=None, help="compiler: K")
    parser.add_argument("--programs", default=None, help="compiler: comma-separated names")
    args = parser.parse_args()
    if args.compiler or args.compiler_only:
        names = args.programs.split(",") if args.programs else library.names()
        if args.quick and not args.programs:
            names = ["tomita2", "binary_majority", "majority", "induction_head"]
        comp = compiler_section(names, args.max_length, args.samples, args.exhaustive_up_to)
        if args.compiler_only:
            print(json.dumps({"compiler": comp}, indent=1))
            return
    else:
        comp = None
    rng = np.random.default_rng(0)
    p = ten_op_program()
    batch, length = (200, 500) if args.quick else (2000, 500)
    xs = strings(rng, p.alphabet, batch, length)
    _, ids, _ = encode(p, xs)
    positions = batch * (length + 1)
    t_ids = best_of(lambda: run_ids(p, ids))
    t_run = best_of(lambda: run(p, xs))
    ref_xs = xs[: 4 if args.quick else 20]
    ref_len = 100
    t_ref = best_of(lambda: [reference_run(p, x[:ref_len]) for x in ref_xs], repeats=1)
    ref_positions = len(ref_xs) * (ref_len + 1)
    ten = {
        "operations": len(p.ops),
        "batch": batch,
        "length": length,
        "positions_per_second_run_ids": positions / t_ids,
        "positions_per_second_run": positions / t_run,
        "reference_length": ref_len,
        "reference_positions_per_second": ref_positions / t_ref,
        "ratio_run_ids_over_reference": (positions / t_ids) / (ref_positions / t_ref),
        "meets_1e6_target": positions / t_ids >= 1e6 and positions / t_run >= 1e6,
    }
    lib = {}
    for entry in library.entries():
        if entry.task is None:
            continue
        prog = entry.program()
        n_b, n_len = (20, 100) if args.quick else (200, 150)
        _, ids, _ = encode(prog, strings(rng, prog.alphabet, n_b, n_len))
        t = best_of(lambda prog=prog, ids=ids: run_ids(prog, ids, keep=()))
        lib[entry.name] = {
            "operations": len(prog.ops),
            "class": prog.crasp_class,
            "positions_per_second": n_b * (n_len + 1) / t,
        }
    result = {"ten_ops": ten, "library": lib}
    if comp is not None:
        result["compiler"] = comp
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
