"""Benchmark: the batched interpreter vs the reference interpreter, side by side; prints JSON.

    python benchmarks/bench_interpreter.py [--quick] [--cases parity,addition,scan]

For every library program that exists: parity on 20 bits (one sequence, and a batch of 1,000),
1,000 random 8-digit additions (one batch; target < 2 s), and the 3,920 SCAN length-split test
commands (one batch; target < 60 s). The reference interpreter (``run_reference``: plain
Python, one position and one rule at a time, like ALTA's interpreter) runs on the same inputs
(on the first few only where it would take minutes); speedups are per sequence. Every fast
answer is checked against the task's own reference answer and the fast outputs against the
reference interpreter's. ALTA's numbers, quoted under ``alta_reference_measured``, were not
measured by this script.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

from rasplab.errors import RasplabError  # noqa: E402
from rasplab.lang.interpreter import interpret  # noqa: E402
from rasplab.lang.reference import run_reference  # noqa: E402
from rasplab.programs import get_program, program_names  # noqa: E402
from rasplab.seeding import generator  # noqa: E402

ALTA_REFERENCE = {
    "note": "ALTA's published implementation as measured for rasplab's design notes "
    "(ALTA-shaped addition); NOT measured by this script",
    "parity_20_bits_ms_per_sequence": 7.6,
    "addition_8_digits_ms_per_sequence": 40.0,
    "scan_seconds_per_command": [2.0, 22.0],
}
PARITY = ("parity_sequential_absolute", "parity_sequential_relative", "parity_sum_mod_2")


def _best(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls, in seconds."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def compare(name: str, texts: list[str], reference_count: int, repeats: int) -> dict:
    """Fast batch on every input vs the reference interpreter on the first ``reference_count``."""
    entry = get_program(name)
    t = time.perf_counter()
    program = entry.program()
    build = time.perf_counter() - t
    ids = [entry.encode(x) for x in texts]
    t = time.perf_counter()
    run = interpret(program, ids)  # first call also builds the rule tables
    first = time.perf_counter() - t
    batch = _best(lambda: interpret(program, ids), repeats)
    single = _best(lambda: interpret(program, ids[:1]), repeats)
    correct = sum(
        entry.decode(i, o) == entry.reference(x) for i, o, x in zip(ids, run.outputs, texts)
    )
    ref_times, agree = [], 0
    for i in range(min(reference_count, len(ids))):
        t = time.perf_counter()
        ref = run_reference(program, ids[i])
        ref_times.append(time.perf_counter() - t)
        agree += ref.output == run.outputs[i] and ref.layers == run.layers[i]
    ref_per = sum(ref_times) / len(ref_times)
    fast_per = batch / len(ids)
    return {
        "program": name,
        "rules": len(program.rules),
        "sequences": len(ids),
        "max_tokens": max(map(len, ids)),
        "layers_max": max(run.layers),
        "build_seconds": round(build, 4),
        "fast_batch_seconds": round(batch, 4),
        "fast_batch_first_call_seconds": round(first, 4),
        "fast_ms_per_sequence_in_batch": round(fast_per * 1e3, 4),
        "fast_single_sequence_ms": round(single * 1e3, 3),
        "reference_sequences_run": len(ref_times),
        "reference_ms_per_sequence": round(ref_per * 1e3, 3),
        "reference_seconds_for_all_estimated": round(ref_per * len(ids), 2),
        "speedup_single_sequence": round(ref_per / single, 1),
        "speedup_per_sequence_batched": round(ref_per / fast_per, 1),
        "answers_correct": f"{correct}/{len(ids)}",
        "fast_equals_reference": f"{agree}/{len(ref_times)}",
    }


def parity_cases(quick: bool) -> list[dict]:
    """Each parity program on 20 bits: one sequence, and a batch of 1,000 random ones."""
    out = []
    for name in PARITY:
        if name not in program_names():
            continue
        entry = get_program(name)
        rng = generator(0, "bench", name)
        texts = [entry.random_input(rng, 20) for _ in range(200 if quick else 1000)]
        out.append(
            {
                "case": "parity_20_bits",
                **compare(name, texts, 5 if quick else 20, 3 if quick else 5),
            }
        )
    return out


def addition_cases(quick: bool) -> list[dict]:
    """1,000 random additions of 8-digit operands, one batch (target: under 2 s), with ALTA's
    program (``addition_alta``, the one ALTA's timing is for) and the compact ``addition``."""
    rng = generator(0, "bench", "addition")
    texts = [get_program("addition").random_input(rng, 8) for _ in range(1000)]
    rows = []
    for name in ("addition_alta", "addition"):
        row = compare(name, texts, 1 if quick else 3, 2 if quick else 3)
        row["target_batch_seconds"] = 2.0
        row["within_target"] = row["fast_batch_seconds"] < 2.0
        rows.append({"case": f"{name}_1000_x_8_digits", **row})
    return rows


def scan_cases(quick: bool) -> list[dict]:
    """The 3,920 SCAN length-split test commands, one batch (target: under 60 s)."""
    if "scan" not in program_names():
        return []
    from rasplab.tasks.scan import length_split

    _, test = length_split()
    texts = test[:400] if quick else test
    row = compare("scan", texts, 1 if quick else 3, 1)
    if not quick:
        row["target_batch_seconds"] = 60.0
        row["within_target"] = row["fast_batch_seconds"] < 60.0
    return [{"case": "scan_length_split_test" + ("_first_400" if quick else ""), **row}]


CASES = {"parity": parity_cases, "addition": addition_cases, "scan": scan_cases}


def main(argv: list[str] | None = None) -> dict:
    """Run the chosen cases and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sequences and repeats")
    parser.add_argument(
        "--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES)
    )
    args = parser.parse_args(argv)
    results = []
    for case in args.cases.split(","):
        if case not in CASES:
            parser.error(f"unknown case {case!r}; choose from {', '.join(CASES)}")
        try:
            results += CASES[case](args.quick)
        except RasplabError as err:
            results.append({"case": case, "error": str(err)})
    report = {
        "benchmark": "interpreter: batched (rasplab.lang.interpret) vs reference (run_reference)",
        "quick": args.quick,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "threads": os.environ.get("OMP_NUM_THREADS"),
        "programs": program_names(),
        "results": results,
        "alta_reference_measured": ALTA_REFERENCE,
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
