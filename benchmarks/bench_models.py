"""Training speed of rasplab.models: against Hugging Face GPT-2, and across attention variants.

Prints one JSON object on stdout (progress on stderr). Everything runs in one process on one
thread, float32, train mode, AdamW, measured side by side (rounds interleave the contenders,
medians are reported) so that machine load affects all of them alike.

Sections:
  vs_hf            training steps/s of our ape/softmax/gelu model against GPT2LMHeadModel of the
                   same layers/heads/width/length/batch, at d 64 and d 256 (2 layers, 4 heads,
                   length 100, batch 64). Reference ``hf`` is GPT-2's default config (its
                   activation is ``gelu_new``, a Python tanh formula); ``hf_gelu`` is the same
                   model with ``activation_function="gelu"``, the exact GELU our model uses.
  attention        forward+backward of each attention kind alone (batch 64, length 100,
                   4 heads, d 64): fast / softmax fast, and naive reference / fast path
                   (the naive loops are timed at batch 8 in quick mode, batch 64 in full mode).
  model_variants   training step time of the whole d 64 model per attention kind, positional
                   encoding and layer option, relative to ape + softmax.
  hook_points      training step time with the TransformerLens-style hook points present but
                   unused (as every model is built) against the same model with each hook
                   point replaced by a plain function (absent: no module call; the one
                   check for a hook on the attention pattern stays in both), at d 64
                   (the shape above) and at a small shape (d 16, batch 8, length 20, 4 layers)
                   where a per-call overhead would weigh most.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_models.py --quick
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_models.py
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_models.py --sections vs_hf
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_models.py --sections hook_points
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from rasplab.models import ATTENTION_KINDS, ModelConfig, build_model  # noqa: E402
from rasplab.models.linear import onednn_available, use_onednn  # noqa: E402
from rasplab.models.masking import AttentionContext  # noqa: E402
from rasplab.models.positional import PositionalEncoding  # noqa: E402

BATCH, LENGTH, HEADS, LAYERS, VOCAB = 64, 100, 4, 2, 16


def log(msg: str) -> None:
    """Progress on stderr."""
    print(msg, file=sys.stderr, flush=True)


def train_step_fn(model, forward, onednn: bool = True, batch: int = BATCH, length: int = LENGTH):
    """One AdamW training step (cross-entropy on random targets) as a closure."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randint(0, VOCAB, (batch, length), generator=gen)
    y = torch.randint(0, VOCAB, (batch, length), generator=gen)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()

    def step() -> None:
        use_onednn(onednn)
        logits = forward(model, x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def race(contenders: dict, rounds: int, warmup: int = 2) -> dict[str, float]:
    """Median seconds per call of each closure, calls interleaved round by round."""
    for _ in range(warmup):
        for fn in contenders.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def hf_gpt2(width: int, activation: str | None):
    """GPT2LMHeadModel with our sizes, dropout 0 (None: GPT-2's default activation)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    extra = {} if activation is None else {"activation_function": activation}
    config = GPT2Config(
        vocab_size=VOCAB, n_positions=256, n_embd=width, n_layer=LAYERS, n_head=HEADS,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0, **extra,
    )  # fmt: skip
    with torch.random.fork_rng():  # HF initialises from the global generator
        torch.manual_seed(0)
        return GPT2LMHeadModel(config)


def bench_vs_hf(rounds: int) -> dict:
    """Steps/s of ours vs GPT-2 at d 64 and d 256."""
    out = {}
    for width in (64, 256):
        log(f"vs_hf: d {width}")
        ours = build_model(
            ModelConfig(width=width, heads=HEADS, layers=LAYERS), VOCAB, VOCAB, 256, seed=0
        )
        hf = hf_gpt2(width, None)
        hf_gelu = hf_gpt2(width, "gelu")
        med = race(
            {
                "hf": train_step_fn(hf, lambda m, x: m(input_ids=x).logits),
                "ours": train_step_fn(ours, lambda m, x: m(x)),
                "ours_mkl": train_step_fn(ours, lambda m, x: m(x), onednn=False),
                "hf_gelu": train_step_fn(hf_gelu, lambda m, x: m(input_ids=x).logits),
            },
            rounds,
        )
        out[f"d{width}"] = {
            "seconds_per_step": {k: round(v, 4) for k, v in med.items()},
            "steps_per_second": {k: round(1 / v, 3) for k, v in med.items()},
            "speedup_vs_hf": round(med["hf"] / med["ours"], 3),
            "speedup_vs_hf_gelu": round(med["hf_gelu"] / med["ours"], 3),
            "speedup_vs_hf_without_onednn": round(med["hf"] / med["ours_mkl"], 3),
        }
    return out


def attention_inputs(batch: int, width: int = 64):
    """Layer input x [B, T, D] and q, k, v [B, H, T, Dh], all requiring gradients."""
    gen = torch.Generator().manual_seed(1)
    shape = (batch, HEADS, LENGTH, width // HEADS)
    tensors = [torch.randn(batch, LENGTH, width, generator=gen)]
    tensors += [torch.randn(shape, generator=gen) for _ in range(3)]
    return [t.requires_grad_() for t in tensors]


def attention_fn(name: str, reference: bool, batch: int = BATCH):
    """Forward+backward of one attention kind (a fresh context per call, as in the model)."""
    config = ModelConfig(pe="nope", attention=name, width=64, heads=HEADS)
    kind = ATTENTION_KINDS[name](config)
    x, q, k, v = attention_inputs(batch)
    pe = PositionalEncoding(config, LENGTH)
    grad = torch.randn(batch, HEADS, LENGTH, config.head_dim, generator=torch.Generator())

    def run() -> None:
        ctx = AttentionContext(causal=True, length=LENGTH, pe=pe, reference=reference)
        kind(x, q, k, v, ctx).backward(grad)
        for t in (x, q, k, v):
            t.grad = None

    return run


def bench_attention(fast_rounds: int, naive_rounds: int, naive_batch: int) -> dict:
    """Naive/fast and fast/softmax ratios of every attention kind.

    The naive references loop over positions in Python; ``naive_batch`` below 64 (quick
    mode) times them, and the fast path they are compared with, at that smaller batch.
    """
    fast = race({name: attention_fn(name, False) for name in ATTENTION_KINDS}, fast_rounds)
    out = {}
    for name in ATTENTION_KINDS:
        log(f"attention: naive {name} (batch {naive_batch})")
        pair = {"naive": attention_fn(name, True, naive_batch)}
        if naive_batch != BATCH:
            pair["fast"] = attention_fn(name, False, naive_batch)
        med = race(pair, naive_rounds, warmup=0 if naive_batch == BATCH else 1)
        fast_same_batch = med.get("fast", fast[name])
        out[name] = {
            "fast_ms": round(fast[name] * 1e3, 2),
            "fast_over_softmax": round(fast[name] / fast["softmax"], 2),
            "naive_batch": naive_batch,
            "naive_ms": round(med["naive"] * 1e3, 1),
            "naive_over_fast": round(med["naive"] / fast_same_batch, 1),
        }
    return out


def bench_model_variants(rounds: int) -> dict:
    """Whole-model training step time of each variant relative to ape + softmax (d 64)."""
    variants = {"ape+softmax": {}}
    variants.update({f"nope+{a}": {"pe": "nope", "attention": a} for a in ATTENTION_KINDS})
    variants.update({p: {"pe": p} for p in ("nope", "sinusoidal", "rope", "alibi", "nape")})
    variants.update({"canon": {"canon": True}, "swan": {"pe": "rope", "swan": True}})
    variants.update({"swiglu": {"mlp": "swiglu"}, "universal": {"universal": True}})
    steps = {}
    for name, kwargs in variants.items():
        cfg = ModelConfig(width=64, heads=HEADS, layers=LAYERS, swan_window=32, **kwargs)
        steps[name] = train_step_fn(build_model(cfg, VOCAB, VOCAB, 256, seed=0), lambda m, x: m(x))
    log("model_variants: racing")
    med = race(steps, rounds, warmup=1)
    return {
        name: {
            "seconds_per_step": round(t, 4),
            "relative_to_ape_softmax": round(t / med["ape+softmax"], 2),
        }
        for name, t in med.items()
    }


def _identity(x):
    """What an absent hook point leaves: the tensor, through a plain function call."""
    return x


def without_hook_points(model):
    """``model`` with every hook point replaced by :func:`_identity` (no module call)."""
    from rasplab.models.hook_points import is_hook_point

    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if is_hook_point(child):
                del module._modules[name]
                object.__setattr__(module, name, _identity)
    return model


def bench_hook_points(rounds: int) -> dict:
    """Step time with hook points present (unused) vs absent, interleaved, per shape."""
    shapes = {
        "d64": {"width": 64, "layers": LAYERS, "batch": BATCH, "length": LENGTH},
        "d16_small": {"width": 16, "layers": 4, "batch": 8, "length": 20},
    }
    out = {}
    for label, shape in shapes.items():
        log(f"hook_points: {label}")
        cfg = ModelConfig(width=shape["width"], heads=HEADS, layers=shape["layers"])
        size = {"batch": shape["batch"], "length": shape["length"]}
        present = build_model(cfg, VOCAB, VOCAB, 256, seed=0)
        absent = without_hook_points(build_model(cfg, VOCAB, VOCAB, 256, seed=0))
        med = race(
            {
                "present": train_step_fn(present, lambda m, x: m(x), **size),
                "absent": train_step_fn(absent, lambda m, x: m(x), **size),
            },
            rounds,
        )
        out[label] = {
            **shape,
            "seconds_per_step": {k: round(v, 5) for k, v in med.items()},
            "present_over_absent": round(med["present"] / med["absent"], 3),
        }
    return out


def _cpu_name() -> str:
    """The CPU model name (Linux), or the platform's processor string."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main() -> None:
    """Run the sections and print the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few steps (a smoke run)")
    parser.add_argument(
        "--sections",
        default="vs_hf,attention,model_variants,hook_points",
        help="comma-separated subset of: vs_hf, attention, model_variants, hook_points",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    quick = args.quick
    sections = {
        "vs_hf": lambda: bench_vs_hf(rounds=3 if quick else 12),
        "attention": lambda: bench_attention(
            fast_rounds=3 if quick else 15,
            naive_rounds=1,
            naive_batch=8 if quick else BATCH,
        ),
        "model_variants": lambda: bench_model_variants(rounds=2 if quick else 5),
        "hook_points": lambda: bench_hook_points(rounds=5 if quick else 60),
    }
    report = {
        "mode": "quick" if quick else "full",
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "processor": _cpu_name(),
        "onednn_linear": onednn_available(),
        "shape": {"batch": BATCH, "length": LENGTH, "heads": HEADS, "layers": LAYERS},
    }
    for name in args.sections.split(","):
        if name not in sections:
            parser.error(f"unknown section {name!r}; choose from {', '.join(sections)}")
        report[name] = sections[name]()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
