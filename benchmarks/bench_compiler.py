"""Benchmark: compiled sizes and speed, side by side with ALTA's figures; prints one JSON object.

    python benchmarks/bench_compiler.py [--quick] [--random-pairs N] [--skip-scan] [--sections ...]

Sections:
  programs        every library program (and minimal SCAN w.r.t. the length split's training
                  lengths, 1-22 actions): residual width, MLP widths, rules (ALTA's count:
                  update + reset rules), parameters, compile seconds (median of 3), next to
                  ALTA's numbers for the programs it has; ratios ours / ALTA.
  scan_length_test  the compiled SCAN model on all 3,920 commands of the SCAN length split's
                  test set, one batch, float32, in a child process (its peak RSS is the memory
                  figure): seconds, correct outputs (against the task's canonical actions),
                  and the batched interpreter on the same batch in the same child process
                  (ratio compiled / interpreter).
  conflict_check  the cost of the compiled rule-conflict check: one batch per program run
                  with the check and with it switched off (same process, alternating, best
                  of 3), seconds and the ratio with / without, and ms per layer for each.
  random_differential  N random (program, input) pairs (default 10,000), compiled vs
                  interpreted on every variable at every layer, in float32 and float64.

ALTA's figures come from running ALTA's public code on this kind of machine (measured for
rasplab's design notes); they are constants here, NOT measured by this script. Both addition
programs are set beside ALTA's addition: ``addition_alta`` is the same program, ``addition``
the compact one for the same task.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

ALTA = {
    "note": "ALTA's reference compiler as measured for rasplab's design notes; NOT measured here",
    "parity_sequential_relative": {"residual_width": 9, "rules": 7},
    "addition": {"residual_width": 91, "rules": 16466, "rules_used": 884, "compile_seconds": 0.4},
    "subleq": {"residual_width": 402, "rules": 43127, "compile_seconds": 4.3},
    "scan": {
        "residual_width": 2014,
        "rules": 70792,
        "compile_seconds": 33.0,
        "seconds_per_command_forward": 100.0,
        "memory_gb": 5.0,
    },
}
TARGETS = {
    "compile_seconds_max": 2.0,
    "minimal_scan_rules_max": 2000,
    "scan_all_seconds_max": 120.0,
    "scan_memory_gb_max": 4.0,
}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def program_sizes(repeats: int) -> dict:
    """Sizes and compile time of every library program (and minimal SCAN)."""
    from rasplab.analysis.minimal import minimal_program
    from rasplab.compiler.stats import model_stats
    from rasplab.programs import get_program, program_names
    from rasplab.programs.verify import compile_entry

    cases = [(n, get_program(n), get_program(n).program()) for n in program_names()]
    scan = get_program("scan")
    cases.append(("scan_minimal_1-22", scan, minimal_program(scan, "1-22", None, 0)))
    out = {}
    for name, entry, program in cases:
        times, model = [], None
        for _ in range(repeats):
            start = time.perf_counter()
            model = compile_entry(entry, program)
            times.append(time.perf_counter() - start)
        stats = model_stats(model, program)
        stats["compile_seconds"] = round(statistics.median(times), 4)
        alta = ALTA.get(name.removesuffix("_alta"))
        if alta is not None:
            stats["alta"] = alta
            stats["ratio_to_alta"] = {
                k: round(stats[k] / alta[k], 4)
                for k in ("residual_width", "rules", "compile_seconds")
                if k in alta
            }
        out[name] = stats
        _log(
            f"{name}: d {stats['residual_width']}, rules {stats['rules']}, {stats['compile_seconds']} s"
        )
    return out


def scan_child() -> dict:
    """(Run in a child process.) All 3,920 SCAN length-split test commands, compiled and interpreted."""
    torch.set_num_threads(1)
    from rasplab.compiler import compile_program, run_compiled
    from rasplab.lang.interpreter import interpret
    from rasplab.programs import get_program
    from rasplab.tasks.scan import interpret as canonical
    from rasplab.tasks.scan import length_split

    entry = get_program("scan")
    program = entry.program()
    _, test = length_split()
    batch = [entry.encode(c) for c in test]
    model = compile_program(program)
    start = time.perf_counter()
    run = run_compiled(model, batch, dtype=torch.float32)
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    ref = interpret(program, batch)
    interpreted = time.perf_counter() - start
    correct = sum(entry.decode(b, o) == canonical(c) for b, o, c in zip(batch, run.outputs, test))
    return {
        "commands": len(test),
        "correct": correct,
        "same_as_interpreter": run.outputs == ref.outputs and run.layers == ref.layers,
        "compiled_seconds": round(compiled, 2),
        "interpreter_seconds": round(interpreted, 2),
        "ratio_compiled_to_interpreter": round(compiled / interpreted, 2),
        "max_layers_run": max(run.layers),
        "dtype": "float32",
    }


def scan_length_test() -> dict:
    """Run :func:`scan_child` in a child process and add its peak memory."""
    proc = subprocess.run(
        [sys.executable, __file__, "--scan-child"], capture_output=True, text=True, check=True
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    result["peak_memory_gb"] = round(peak / 2**20, 3)
    result["alta"] = {k: ALTA["scan"][k] for k in ("seconds_per_command_forward", "memory_gb")}
    result["ratio_seconds_per_command_to_alta"] = round(
        result["compiled_seconds"]
        / result["commands"]
        / ALTA["scan"]["seconds_per_command_forward"],
        8,
    )
    return result


def random_differential(pairs: int) -> dict:
    """Compiled vs interpreted on random programs and inputs (5 inputs per program)."""
    from rasplab.compiler.random_programs import RandomProgramConfig, random_case
    from rasplab.compiler.verify import compare_batch, compile_for
    from rasplab.seeding import generator

    total = agree = checks = 0
    start = time.perf_counter()
    for i in range((pairs + 4) // 5):
        program, batch = random_case(
            generator(2, "bench-compiler", i), RandomProgramConfig(inputs=5)
        )
        model = compile_for(program, [len(b) for b in batch])
        for dtype in model.spec["exact_dtypes"]:
            report = compare_batch(program, model, batch, dtype=getattr(torch, dtype))
            checks += report.total
            agree += report.agree
        total += len(batch)
    return {
        "pairs": total,
        "checks_over_exact_dtypes": checks,
        "agree": agree,
        "seconds": round(time.perf_counter() - start, 1),
    }


def conflict_check(repeats: int) -> dict:
    """The rule-conflict check's share of a compiled run: with it vs without it."""
    from rasplab.compiler import compile_program
    from rasplab.compiler import run as compiled_run
    from rasplab.programs import get_program
    from rasplab.seeding import generator

    cases = [("addition_alta", 8, 50), ("addition", 8, 200), ("scan", 9, 200)]
    out = {}
    checked = compiled_run._conflicts
    for name, length, count in cases:
        entry = get_program(name)
        rng = generator(0, "bench", "conflicts", name)
        batch = [entry.encode(entry.random_input(rng, length)) for _ in range(count)]
        model = compile_program(entry.program(), max_length=max(map(len, batch)))
        times = {"with_check": [], "without_check": []}
        layers = 0
        for _ in range(repeats):
            for key, fn in (("with_check", checked), ("without_check", lambda *a: {})):
                compiled_run._conflicts = fn
                try:
                    start = time.perf_counter()
                    run = compiled_run.run_compiled(model, batch)
                    times[key].append(time.perf_counter() - start)
                finally:
                    compiled_run._conflicts = checked
                layers = max(run.layers)
        best = {k: min(v) for k, v in times.items()}
        out[name] = {
            "sequences": count,
            "layers_max": layers,
            "rule_units": int(len(model.rule_units)),
            "seconds_with_check": round(best["with_check"], 4),
            "seconds_without_check": round(best["without_check"], 4),
            "ms_per_layer_with_check": round(1000 * best["with_check"] / layers, 3),
            "ms_per_layer_without_check": round(1000 * best["without_check"] / layers, 3),
            "ratio_with_to_without": round(best["with_check"] / best["without_check"], 3),
        }
        _log(f"conflict check {name}: x{out[name]['ratio_with_to_without']}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 compile repeat, 1,000 random pairs")
    parser.add_argument("--random-pairs", type=int, default=None)
    parser.add_argument("--skip-scan", action="store_true")
    parser.add_argument(
        "--sections",
        default="programs,scan,conflicts,random",
        help="comma-separated: programs, scan, conflicts, random",
    )
    parser.add_argument("--scan-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scan_child:
        print(json.dumps(scan_child()))
        return
    torch.set_num_threads(1)
    pairs = args.random_pairs if args.random_pairs is not None else (1000 if args.quick else 10000)
    sections = set(args.sections.split(","))
    out = {"torch_threads": 1, "alta": ALTA, "targets": TARGETS}
    if "programs" in sections:
        out["programs"] = program_sizes(1 if args.quick else 3)
    if "scan" in sections and not args.skip_scan:
        _log("SCAN length split test set ...")
        out["scan_length_test"] = scan_length_test()
    if "conflicts" in sections:
        out["conflict_check"] = conflict_check(3)
    if pairs and "random" in sections:
        _log(f"{pairs} random pairs ...")
        out["random_differential"] = random_differential(pairs)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
