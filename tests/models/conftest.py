"""Shared case tables for the model tests: every variant, in decoder and encoder form."""

from __future__ import annotations

import pytest
import torch

from rasplab.models import ATTENTION_KINDS, POSITIONAL_ENCODINGS, ModelConfig, build_model

torch.set_num_threads(1)

SMALL = {"width": 8, "heads": 2, "layers": 2}

# Decoder cases: every PE with softmax, every attention kind, mixes, and layer options.
DECODER_CASES = (
    [{"pe": pe} for pe in POSITIONAL_ENCODINGS]
    + [{"pe": "nope", "attention": kind} for kind in ATTENTION_KINDS if kind != "softmax"]
    + [
        {"pe": "alibi", "attention": "fox"},
        {"pe": "rope", "attention": "stick_breaking"},
        {"pe": "nape", "attention": "entmax"},
        {"pe": "rope", "attention": "path"},
        {"pe": "alibi", "attention": "path"},
        {"pe": "nope", "attention": "entmax", "entmax_alpha": 1.3},
        {"pe": "nape", "attention": "asentmax"},
        {"pe": "rope", "attention": "asentmax", "entmax_alpha": 1.3},
        {"pe": "nope", "canon": True},
        {"pe": "nope", "attention": "path", "canon": True},
        {"pe": "rope", "swan": True, "layers": 3, "swan_window": 2},
        {"pe": "rope", "attention": "fox", "swan": True, "layers": 3, "swan_window": 2},
        {"pe": "ape", "universal": True, "layers": 3},
        {"pe": "rope", "mlp": "swiglu"},
        {"pe": "ape", "attn_scale": "mup"},
        {"pe": "nope", "attention": "fox", "attn_scale": "mup"},
        {"pe": "rope", "attention": "path", "attn_scale": "mup"},
        {"pe": "alibi", "attention": "stick_breaking", "attn_scale": "mup"},
    ]
)

# Encoder cases: the kinds with a bidirectional form.
ENCODER_CASES = [
    {"pe": "ape", "causal": False},
    {"pe": "sinusoidal", "causal": False},
    {"pe": "alibi", "causal": False},
    {"pe": "nape", "causal": False, "attention": "fox"},
    {"pe": "rope", "causal": False, "attention": "entmax"},
    {"pe": "nope", "causal": False, "canon": True},
]

ALL_CASES = DECODER_CASES + ENCODER_CASES


def case_id(case: dict) -> str:
    """A readable test id: the non-default config fields."""
    return "-".join(f"{k}={v}" for k, v in case.items()) or "default"


def pytest_generate_tests(metafunc):
    """Parametrize ``case`` / ``decoder_case`` / ``encoder_case`` from the tables above."""
    for name, table in (
        ("case", ALL_CASES),
        ("decoder_case", DECODER_CASES),
        ("encoder_case", ENCODER_CASES),
    ):
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, table, ids=[case_id(c) for c in table])


VOCAB, OUTPUTS, MAX_POSITIONS = 5, 3, 24

GEN = torch.Generator()  # random test data; re-seeded before every test


@pytest.fixture(autouse=True)
def _reseed_test_generator():
    """Every test draws the same data whatever ran before it."""
    GEN.manual_seed(1234)


def make_model(case: dict, dtype=torch.float64, seed: int = 0, jitter: float = 0.3):
    """A small model for ``case``; ``jitter`` perturbs every weight so nothing is degenerate."""
    model = build_model(ModelConfig(**{**SMALL, **case}), VOCAB, OUTPUTS, MAX_POSITIONS, seed=seed)
    model = model.to(dtype)
    if case.get("pe", "").startswith("random_"):
        # Randomized PEs draw fresh positions at every training forward; these tests compare
        # forward passes, so they run in evaluation mode, where positions depend on T only.
        model.eval()
    if jitter:
        gen = torch.Generator().manual_seed(seed + 1)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * jitter)
    return model


def random_ids(batch: int, length: int, seed: int = 0) -> torch.Tensor:
    """Token ids [B, T] in the test vocabulary."""
    return torch.randint(0, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


def outputs_and_grads(model, ids, pad_mask=None, offset=None, seed: int = 0):
    """Outputs and parameter gradients of a random linear loss over the real positions."""
    model.zero_grad(set_to_none=True)
    out = model(ids, pad_mask, offset)
    weights = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed), dtype=out.dtype)
    real = torch.ones_like(ids, dtype=torch.bool) if pad_mask is None else pad_mask
    (out * weights * real[..., None]).sum().backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return out, grads


@pytest.fixture
def ids() -> torch.Tensor:
    """A fixed batch of 2 sequences of length 6."""
    return random_ids(2, 6)
