"""Probe: a stacked group's training steps eager vs under torch.compile (inductor); one JSON.

    OMP_NUM_THREADS=1 python benchmarks/probes/probe_compile.py [--task tomita4] [--steps 250]
        [--mode eager|pieces|whole|gather|gather_eager] [--profile]

Trains the bench slice's APE group of one task (``ape`` + ``ape_reg``, seeds 0-4: 10 runs,
as benchmarks/probes/profile_group_step.py forms it) with :func:`~rasplab.harness.group.train_group`
for ``--steps`` steps, in this process, with the stacked forward replaced by:

* ``eager``: as it is;
* ``pieces``: each block's position-wise parts compiled (LayerNorm + qkv product; the
  attention output product + residual + LayerNorm + MLP + residual; final LayerNorm + read-out
  + loss; class targets only), token counts dynamic; the token <-> slot moves and the chunked attention
  stay eager (the chunk list changes every step);
* ``whole``: forward + loss as one compiled function (``dynamic=True``): the chunk list is
  Python data; with ``dynamic=True`` dynamo makes the chunk lengths symbolic (recompiles
  are counted);
* ``gather``: as ``whole``, with the two token <-> slot moves written as an autograd
  function whose backward is a gather instead of a scatter-add (``gather_eager``: the same
  uncompiled; both give the model's gradients exactly, checked in float64 while probing).

Prints CPU seconds (``time.process_time``) of the whole group, per run-step ms over the
steps after ``--settle`` (compile included in the earlier ones), the CPU seconds up to then,
dynamo's frame / graph / recompile counters, and the load average; ``--profile``: the top
ops of 20 late steps (with ``PROBE_KERNEL_PROFILE=1`` inductor's kernels by name; ``PROBE_CAT_INPUTS=n``
sets inductor's ``max_pointwise_cat_inputs``). CPU time
counts reaped children (the C++ compiler); compilation stays in this process
(``TORCHINDUCTOR_COMPILE_THREADS=1``). The inductor cache lives in a fresh temp dir unless
``TORCHINDUCTOR_CACHE_DIR`` is set. Results: docs/results/sweep_performance.md, "Stacked runs, fifth pass".
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="rasplab_inductor_")
# compile in this process (no pool of compile workers whose CPU time would go uncounted);
# the C++ compiler's processes are reaped, so RUSAGE_CHILDREN counts them
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import torch  # noqa: E402
import torch._inductor.config as _icfg  # noqa: E402

_icfg.cpp.enable_kernel_profile = bool(os.environ.get("PROBE_KERNEL_PROFILE"))
if os.environ.get("PROBE_CAT_INPUTS"):  # concatenations of more inputs: a copy kernel each
    _icfg.max_pointwise_cat_inputs = int(os.environ["PROBE_CAT_INPUTS"])
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks" / "probes"))
from profile_group_step import slice_configs  # noqa: E402

from rasplab.harness import group as group_mod  # noqa: E402
from rasplab.harness import stacked as st  # noqa: E402


def _pre(x, w1, b1, wq, bq):
    """LayerNorm + qkv product: [R, N, D] -> [R, N, 3D]."""
    h = torch.addcmul(b1[:, None, :], F.layer_norm(x, x.shape[-1:]), w1[:, None, :])
    return torch.baddbmm(bq[:, None, :], h, wq.transpose(1, 2))


def _post(x, a, wo, bo, w2, b2, wu, bu, wd, bd):
    """Attention output product + residual + LayerNorm + GELU MLP + residual."""
    x = x + torch.baddbmm(bo[:, None, :], a, wo.transpose(1, 2))
    h = torch.addcmul(b2[:, None, :], F.layer_norm(x, x.shape[-1:]), w2[:, None, :])
    u = F.gelu(torch.baddbmm(bu[:, None, :], h, wu.transpose(1, 2)))
    return x + torch.baddbmm(bd[:, None, :], u, wd.transpose(1, 2))


def _head_loss(x, wf, bf, wh, targets, scored):
    """Final LayerNorm + read-out + each run's mean cross-entropy: [R]."""
    x = torch.addcmul(bf[:, None, :], F.layer_norm(x, x.shape[-1:]), wf[:, None, :])
    out = torch.bmm(x, wh.transpose(1, 2))
    R, N, C = out.shape
    loss = F.cross_entropy(
        out.reshape(-1, C), targets.reshape(-1).clamp(min=0), reduction="none"
    ).view(R, N)
    loss = torch.where(scored, loss, torch.zeros_like(loss))
    return loss.sum(1) / scored.sum(1).clamp(min=1)


def pieces_forward_loss(stack, layout, p, picked, compiled):
    """The stacked forward + loss with the position-wise parts ``compiled`` (a dict)."""
    cfg = stack.config
    x = st._lookup(p["embed.weight"], layout.ids)
    if cfg.pe == "ape":
        table = p["pe.table.weight"]
        x = x + st._lookup(table, layout.positions.clamp_max(table.shape[1] - 1))
    scale = 1.0 / (cfg.head_dim if cfg.attn_scale == "mup" else cfg.head_dim**0.5)
    H = cfg.heads
    for i in range(cfg.layers):
        pre = f"blocks.{i}."
        last = picked if i == cfg.layers - 1 else None
        R, N, D = x.shape
        qkv = compiled["pre"](x, p[pre + "ln1.weight"], p[pre + "ln1.bias"],
                              p[pre + "attn.qkv.weight"], p[pre + "attn.qkv.bias"])  # fmt: skip
        seqs = qkv.reshape(R * N, 3 * D).index_select(0, layout.gather)
        parts = []
        sizes = [rows * T for _, rows, T in layout.chunks]
        for piece, (_, rows, T) in zip(seqs.split(sizes), layout.chunks):
            q, k, v = piece.view(rows, T, 3, H, D // H).permute(2, 0, 3, 1, 4).unbind(0)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
            parts.append(a.transpose(1, 2).reshape(rows * T, D))
        a = parts[0] if len(parts) == 1 else torch.cat(parts)
        if last is None:
            a = a.index_select(0, layout.back).view(R, N, D)
        else:
            tokens = (last + torch.arange(R)[:, None] * N).reshape(-1)
            x = x.reshape(R * N, D).index_select(0, tokens).view(R, -1, D)
            a = a.index_select(0, layout.back[tokens]).view(R, -1, D)
        x = compiled["post"](x, a, p[pre + "attn.out.weight"], p[pre + "attn.out.bias"],
                             p[pre + "ln2.weight"], p[pre + "ln2.bias"],
                             p[pre + "mlp.up.weight"], p[pre + "mlp.up.bias"],
                             p[pre + "mlp.down.weight"], p[pre + "mlp.down.bias"])  # fmt: skip
    targets, scored = layout.targets, layout.scored
    if picked is not None:
        targets, scored = targets.gather(1, picked), scored.gather(1, picked)
    return compiled["head"](x, p["ln_f.weight"], p["ln_f.bias"], p["head.weight"],
                            targets, scored)  # fmt: skip


_FORWARD = st.StackedRuns.forward


class _Move(torch.autograd.Function):
    """rows = src[index] whose backward is a gather, not a scatter-add: ``inverse`` [len(src)]
    gives, for each source row, the one output row whose gradient it receives (``has``
    False: none, gradient 0). Exact where every source row with a nonzero gradient has one
    reader (the layout's real tokens and slots); other readers' gradients are exact zeros."""

    @staticmethod
    def forward(ctx, src, index, inverse, has):
        ctx.save_for_backward(inverse, has)
        return src.index_select(0, index)

    @staticmethod
    def backward(ctx, grad):
        inverse, has = ctx.saved_tensors
        return torch.where(has[:, None], grad.index_select(0, inverse), 0.0), None, None, None


def _inverse(index, real, size):
    """For a move rows = src[index], each src row's reader among the ``real`` rows (the
    other readers write to a dummy row ``size``, dropped)."""
    target = torch.where(real, index, size)
    rows = torch.arange(index.shape[0])
    inverse = torch.zeros(size + 1, dtype=torch.long).scatter_(0, target, rows)[:size]
    has = torch.zeros(size + 1, dtype=torch.bool).scatter_(0, target, real)[:size]
    return inverse, has


def gather_forward_loss(stack, layout, p, picked):
    """The stacked forward + loss with the token <-> slot moves' backwards as gathers."""
    cfg = stack.config
    x = st._lookup(p["embed.weight"], layout.ids)
    if cfg.pe == "ape":
        table = p["pe.table.weight"]
        x = x + st._lookup(table, layout.positions.clamp_max(table.shape[1] - 1))
    scale = 1.0 / (cfg.head_dim if cfg.attn_scale == "mup" else cfg.head_dim**0.5)
    H, (R, N, D) = cfg.heads, x.shape
    S = layout.gather.shape[0]
    real = torch.zeros(R * N, dtype=torch.bool)
    real[layout.gather] = True  # every real token is some slot's source; padding tokens none
    # slots whose source is read back (one per real token): the slot of each real token
    slot_real = torch.zeros(S, dtype=torch.bool)
    slot_real[layout.back[real]] = True
    to_slots = _inverse(layout.gather, slot_real, R * N)  # token -> its slot's reader
    for i in range(cfg.layers):
        pre = f"blocks.{i}."
        last = picked if i == cfg.layers - 1 else None
        R, N, D = x.shape
        qkv = _pre(x, p[pre + "ln1.weight"], p[pre + "ln1.bias"],
                   p[pre + "attn.qkv.weight"], p[pre + "attn.qkv.bias"])  # fmt: skip
        seqs = _Move.apply(qkv.reshape(R * N, 3 * D), layout.gather, *to_slots)
        parts = []
        sizes = [rows * T for _, rows, T in layout.chunks]
        for piece, (_, rows, T) in zip(seqs.split(sizes), layout.chunks):
            q, k, v = piece.view(rows, T, 3, H, D // H).permute(2, 0, 3, 1, 4).unbind(0)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
            parts.append(a.transpose(1, 2).reshape(rows * T, D))
        a = parts[0] if len(parts) == 1 else torch.cat(parts)
        if last is None:
            a = _Move.apply(a, layout.back, *_inverse(layout.back, real, S))
            a = a.view(R, N, D)
        else:
            tokens = (last + torch.arange(R)[:, None] * N).reshape(-1)
            x = x.reshape(R * N, D).index_select(0, tokens).view(R, -1, D)
            idx = layout.back[tokens]
            a = _Move.apply(a, idx, *_inverse(idx, real[tokens], S)).view(R, -1, D)
        x = _post(x, a, p[pre + "attn.out.weight"], p[pre + "attn.out.bias"],
                  p[pre + "ln2.weight"], p[pre + "ln2.bias"],
                  p[pre + "mlp.up.weight"], p[pre + "mlp.up.bias"],
                  p[pre + "mlp.down.weight"], p[pre + "mlp.down.bias"])  # fmt: skip
    targets, scored = layout.targets, layout.scored
    if picked is not None:
        targets, scored = targets.gather(1, picked), scored.gather(1, picked)
    return _head_loss(x, p["ln_f.weight"], p["ln_f.bias"], p["head.weight"], targets, scored)


def whole_forward_loss(stack, layout, p, picked):
    """The stacked forward + loss as they are (compiled as one function)."""
    return st.stacked_loss(_FORWARD(stack, layout, p, picked), layout, picked)


def install(mode: str) -> None:
    """Make train_group's loop use ``mode``'s forward + loss (patches group._loop's names)."""
    if mode == "eager":
        return
    if mode == "pieces":
        compiled = {
            "pre": torch.compile(_pre, dynamic=True),
            "post": torch.compile(_post, dynamic=True),
            "head": torch.compile(_head_loss, dynamic=True),
        }

        def fwd(stack, layout, p, picked):
            return pieces_forward_loss(stack, layout, p, picked, compiled)
    elif mode == "whole":
        fwd = torch.compile(whole_forward_loss, dynamic=True)
    elif mode == "gather_eager":
        fwd = gather_forward_loss
    else:
        fwd = torch.compile(gather_forward_loss, dynamic=True)
    # the loop computes stacked_loss(stack.forward(layout, params, picked), layout, picked):
    # forward returns the loss itself, stacked_loss passes it through
    st.StackedRuns.forward = lambda self, layout, params=None, picked=None: fwd(
        self, layout, params if params is not None else self.params, picked
    )
    group_mod.stacked_loss = lambda out, layout, picked=None: out


def cpu() -> float:
    """CPU seconds of this process and its reaped children (the C++ compiler)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="tomita4")
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--settle", type=int, default=50, help="steps counted as compile")
    parser.add_argument(
        "--mode", default="eager", choices=["eager", "pieces", "whole", "gather", "gather_eager"]
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="profile 20 late steps")
    args = parser.parse_args()
    torch.set_num_threads(1)
    from torch._dynamo.utils import counters

    from rasplab.harness.group import train_group

    install(args.mode)
    configs = slice_configs(args.task, args.seeds, args.steps)
    marks: list[float] = []
    prof = None
    if args.profile:
        from torch.profiler import ProfilerActivity, profile, schedule

        sched = schedule(wait=args.steps - 25, warmup=1, active=20, repeat=1)
        prof = profile(activities=[ProfilerActivity.CPU], schedule=sched)
        prof.start()

    def tick(run, step, loss):
        if run == 0:
            marks.append(cpu())
            if prof is not None:
                prof.step()

    start = cpu()
    train_group(configs, on_step=tick)
    total = cpu() - start
    R = len(configs)
    late = marks[args.settle :]
    per_step = (late[-1] - late[0]) / (len(late) - 1) / R * 1e3 if len(late) > 1 else None
    out = {
        "task": args.task,
        "mode": args.mode,
        "runs": R,
        "steps": len(marks),
        "cpu_s_total": round(total, 2),
        "cpu_s_first_step": round(marks[0] - start, 2),
        "cpu_s_to_settle": round(marks[min(args.settle, len(marks) - 1)] - start, 2),
        "ms_per_run_step_after_settle": round(per_step, 3) if per_step else None,
        "dynamo": {
            k: dict(v)
            for k, v in counters.items()
            if k in ("stats", "recompiles", "frames", "graph_break")
        },
        "load_average": os.getloadavg(),
    }
    if prof is not None:
        prof.stop()
        events = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:25]
        out["profile_ms_per_run_step"] = [
            (e.key[:70], round(e.self_cpu_time_total / 1e3 / 20 / R, 3), e.count // 20)
            for e in events
        ]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
