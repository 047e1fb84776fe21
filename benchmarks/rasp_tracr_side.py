"""Tracr's side of ``bench_rasp.py``, run by it in Tracr's own virtual environment.

Reads a JSON list of jobs on stdin and writes one JSON result per job to stdout (progress on
stderr). Not a benchmark by itself: it imports ``tracr``, ``jax`` and ``haiku``, which the
rasplab environment does not have.

Each compile starts from an empty JAX cache (``jax.clear_caches()``), as in a fresh process,
and is timed in wall seconds and in this process's CPU seconds; a compile over the job's CPU
limit (``ITIMER_PROF``) or wall limit (``SIGALRM``) is stopped and reported.

A job with ``inputs`` compiles once at ``N`` and runs the inputs. Tracr's JAX model compiles its
operations once per input shape, so every input is padded to ``N`` with the PAD token and run
in batches of one size, through Tracr's own ``CompiledTransformerModel`` with its ``pad_token``
set (Tracr's attention mask then gives PAD keys weight 0; Tracr's ``assemble`` leaves the
field unset). ``pad_check`` runs inputs of a few lengths unpadded as well, the way
``model.apply`` does, and counts those whose outputs agree on the real positions.

The one optional argument is a memory limit in GiB (``RLIMIT_DATA``): a compile that needs
more fails with a MemoryError, reported like any other failure.

A job with ``ladder`` compiles at each N of the ladder in turn and stops at the first compile
over the limit (or failing); it reports every N tried and the sizes at the last that compiled.
"""

import json
import resource
import signal
import sys
import time

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
from tracr.compiler import compiling, lib
from tracr.rasp import rasp

PAD = "PAD"


class OverLimit(Exception):
    """A compile ran past its CPU or wall-clock limit."""


def _over_cpu(signum, frame):
    raise OverLimit("over the CPU-seconds limit")


def _over_wall(signum, frame):
    raise OverLimit("over the wall-seconds limit")


signal.signal(signal.SIGPROF, _over_cpu)
signal.signal(signal.SIGALRM, _over_wall)


def compile_at(job, n):
    """Tracr's model of the job's program at max_seq_len ``n`` and its timing and sizes."""
    program = eval(job["expr"], {"lib": lib, "rasp": rasp, "N": n})
    vocab = set(range(1, n + 1)) if job["vocab"] is None else set(job["vocab"])
    jax.clear_caches()
    t, c = time.perf_counter(), time.process_time()
    signal.setitimer(signal.ITIMER_PROF, job["limit_cpu_s"])
    signal.alarm(job["limit_wall_s"])
    try:
        model = compiling.compile_rasp_to_model(
            program, vocab, n, compiler_bos="BOS", compiler_pad=PAD
        )
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.alarm(0)
    cfg = model.model_config
    row = {
        "compile_s": time.perf_counter() - t,
        "compile_cpu_s": time.process_time() - c,
        "layers": cfg.num_layers,
        "heads": cfg.num_heads,
        "mlp_width": cfg.mlp_hidden_size,
        "residual_width": len(model.residual_labels),
        "params": int(sum(x.size for x in jax.tree_util.tree_leaves(model.params))),
    }
    return model, row


def _decode(model, out):
    return model.output_encoder.decode(out) if model.output_encoder else out


def run_padded(model, inputs, n, batch):
    """Outputs on the real positions, every input padded to ``n``, batches of one size."""
    pad_id = model.input_encoder.encoding_map[PAD]

    def forward(tokens):
        compiled = model.get_compiled_model()
        compiled.pad_token = pad_id
        return compiled(tokens, use_dropout=False).unembedded_output

    apply = jax.jit(hk.without_apply_rng(hk.transform(forward)).apply)
    rows = [model.input_encoder.encode(["BOS", *xs] + [PAD] * (n - len(xs))) for xs in inputs]
    size, out = min(batch, len(rows)), []
    for start in range(0, len(rows), size):
        part = rows[start : start + size]
        part = part + [part[0]] * (size - len(part))
        out += np.asarray(apply(model.params, jnp.array(part))).tolist()[: len(rows) - start]
    return [_decode(model, r)[1 : 1 + len(xs)] for r, xs in zip(out, inputs)]


def run_unpadded(model, inputs):
    """Outputs as ``model.apply`` computes them: no padding, one batch per input length."""
    groups = {}
    for i, xs in enumerate(inputs):
        groups.setdefault(len(xs), []).append(i)
    outputs = [None] * len(inputs)
    for idx in groups.values():
        ids = jnp.array([model.input_encoder.encode(["BOS", *inputs[i]]) for i in idx])
        res = np.asarray(model.forward(model.params, ids).unembedded_output).tolist()
        for i, r in zip(idx, res):
            outputs[i] = _decode(model, r)[1:]
    return outputs


def _close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return abs(float(a) - float(b)) <= 1e-5 * max(1.0, abs(float(a)))
    return a == b


def run_job(job):
    """One setting: compile, run every input padded, check the padding on some."""
    n = job["N"]
    model, row = compile_at(job, n)
    inputs = job["inputs"]
    row["outputs"] = run_padded(model, inputs, n, job["batch"])
    lengths = sorted({1, max(1, n // 2)})
    check = [i for k in lengths for i in [j for j, x in enumerate(inputs) if len(x) == k][:30]]
    plain = run_unpadded(model, [inputs[i] for i in check])
    equal = sum(
        len(p) == len(row["outputs"][i]) and all(map(_close, p, row["outputs"][i]))
        for i, p in zip(check, plain)
    )
    row["pad_check"] = {"lengths": lengths, "inputs": len(check), "equal": equal}
    return row


def run_ladder(job):
    """Compile at each N of the ladder in turn. Ascending, stop at the first N over the limit
    (or failing); descending, stop at the first N within it. ``largest``: the largest N
    compiled within the limit."""
    tried, down = [], job["ladder"] != sorted(job["ladder"])
    for n in job["ladder"]:
        try:
            _, row = compile_at(job, n)
        except OverLimit as err:
            tried.append({"N": n, "status": str(err)})
        except Exception as err:  # noqa: BLE001  (Tracr's refusal, reported as it is)
            tried.append({"N": n, "status": f"{type(err).__name__}: {err}"[:300]})
        else:
            tried.append({"N": n, "status": "ok", **row})
        print(job["name"], n, tried[-1]["status"], file=sys.stderr, flush=True)
        if (tried[-1]["status"] == "ok") == down:
            break
    ok = [t["N"] for t in tried if t["status"] == "ok"]
    return {"ladder": tried, "largest": max(ok, default=None)}


def main():
    # Tracr's dense matrices grow as (residual width)^2: a compile past this much memory
    # fails with a MemoryError (reported) instead of the machine running out of memory
    limit = int(float(sys.argv[1]) * 2**30) if len(sys.argv) > 1 else resource.RLIM_INFINITY
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    out = []
    for job in json.load(sys.stdin):
        try:
            row = run_ladder(job) if "ladder" in job else run_job(job)
        except Exception as err:  # noqa: BLE001  (one setting failing does not stop the rest)
            row = {"error": f"{type(err).__name__}: {err}"[:300]}
        out.append(row)
        print(job["name"], job.get("N"), row.get("error", ""), file=sys.stderr, flush=True)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
