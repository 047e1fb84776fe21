"""Configuration errors, GPT-2 initialisation, weight sharing, APE offsets, input checks."""

from __future__ import annotations

import math

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.models import (
    ATTENTION_KINDS,
    POSITIONAL_ENCODINGS,
    ModelConfig,
    TransformerModel,
    build_model,
    sample_position_offsets,
)
from rasplab.seeding import torch_generator

from .conftest import GEN

BAD_CONFIGS = [
    ({"pe": "spiral"}, "unknown model.pe 'spiral'; choose one of: alibi, ape, nape, nope"),
    ({"attention": "linear"}, "unknown model.attention 'linear'; choose one of: asentmax, entmax"),
    ({"mlp": "relu"}, "unknown model.mlp 'relu'; choose one of: gelu, swiglu"),
    ({"width": 10, "heads": 4}, "model.heads (4) must divide model.width (10)"),
    ({"layers": 0}, "model.layers must be a positive integer"),
    ({"heads": 2.0}, "model.heads must be an integer"),
    ({"swan_window": -3}, "model.swan_window must be a positive integer"),
    ({"causal": "yes"}, "model.causal must be true or false"),
    ({"dropout": 1.0}, "model.dropout must be in [0, 1)"),
    ({"entmax_alpha": 1.0}, "model.entmax_alpha must be in (1, 2]"),
    ({"pe": "rope", "width": 12, "heads": 4}, "rotary encodings need an even head dimension"),
    ({"attention": "path", "causal": False}, "'path' is inherently causal"),
    (
        {"attention": "stick_breaking", "causal": False},
        "use model.causal=true or one of: asentmax, entmax",
    ),
    ({"swan": True}, "model.swan=true sets each layer's encoding itself"),
    ({"swan": True, "pe": "rope", "layers": 1}, "model.swan=true needs model.layers >= 2"),
]


@pytest.mark.parametrize("kwargs,message", BAD_CONFIGS, ids=[m[:30] for _, m in BAD_CONFIGS])
def test_bad_configs_raise_clear_errors(kwargs, message):
    with pytest.raises(RasplabError) as err:
        ModelConfig(**kwargs)
    assert message in str(err.value)


def test_every_registered_variant_builds_and_runs():
    for pe in POSITIONAL_ENCODINGS:
        for attention in ATTENTION_KINDS:
            model = build_model(
                ModelConfig(pe=pe, attention=attention, width=8, heads=2), 4, 3, 16, seed=0
            )
            assert model(torch.zeros(1, 5, dtype=torch.long)).shape == (1, 5, 3)
            assert model.config.pe == pe and model.config.attention == attention


def test_universal_transformer_shares_one_block():
    shared = build_model(ModelConfig(universal=True, layers=4, width=16, heads=2), 6, 6, 32, seed=0)
    separate = build_model(ModelConfig(layers=4, width=16, heads=2), 6, 6, 32, seed=0)
    one_layer = build_model(ModelConfig(layers=1, width=16, heads=2), 6, 6, 32, seed=0)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(shared) == count(one_layer) < count(separate)
    assert len(shared.blocks) == 1 and len(separate.blocks) == 4
    # four applications of the shared block: not the same function as one application
    ids = torch.randint(0, 6, (2, 5), generator=GEN)
    one_layer.load_state_dict(shared.state_dict())
    assert not torch.allclose(shared(ids), one_layer(ids))


def test_gpt2_initialisation_statistics():
    config = ModelConfig(layers=3, width=256, heads=4, canon=True, attention="fox")
    model = build_model(config, vocab_size=512, num_outputs=64, max_positions=512, seed=0)
    residual_std = 0.02 / math.sqrt(2 * 3)
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            assert torch.all(p == 0), name
        elif ".ln" in name or name.startswith("ln_f"):
            assert torch.all(p == 1), name
        elif name.endswith(("attn.out.weight", "mlp.down.weight")):
            assert p.std().item() == pytest.approx(residual_std, rel=0.05), name
        else:
            assert p.mean().abs().item() < 0.002, name
            assert p.std().item() == pytest.approx(0.02, rel=0.1), name


def test_seed_fixes_initial_weights():
    config = ModelConfig(width=16, heads=2)
    a, b, c = (build_model(config, 5, 5, 20, seed=s) for s in (3, 3, 4))
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert not torch.equal(a.embed.weight, c.embed.weight)
    with torch.random.fork_rng():  # seed=None: the caller seeds torch's global generator
        torch.manual_seed(5)
        d = build_model(config, 5, 5, 20)
        torch.manual_seed(5)
        e = build_model(config, 5, 5, 20)
    assert torch.equal(d.embed.weight, e.embed.weight)


def test_ape_offset_reads_shifted_table_rows():
    model = build_model(ModelConfig(pe="ape", width=16, heads=2), 5, 3, 20, seed=0)
    ids = torch.randint(0, 5, (2, 6), generator=GEN)
    shifted = build_model(ModelConfig(pe="ape", width=16, heads=2), 5, 3, 20, seed=0)
    shifted.load_state_dict(model.state_dict())
    with torch.no_grad():
        shifted.pe.table.weight[:-4] = model.pe.table.weight[4:]
    out = model(ids, position_offset=torch.tensor([4, 4]))
    torch.testing.assert_close(out, shifted(ids))
    assert not torch.allclose(out, model(ids))
    mixed = model(ids, position_offset=torch.tensor([0, 4]))
    torch.testing.assert_close(mixed[0], model(ids)[0])
    torch.testing.assert_close(mixed[1], out[1])


def test_ape_positions_past_the_table_are_an_error():
    model = build_model(ModelConfig(pe="ape", width=16, heads=2), 5, 3, 10, seed=0)
    model(torch.zeros(1, 10, dtype=torch.long))  # positions 0..9 fit
    with pytest.raises(RasplabError, match="APE has 10 positions but a token sits at position 10"):
        model(torch.zeros(1, 11, dtype=torch.long))
    with pytest.raises(RasplabError, match="sits at position 12"):
        model(torch.zeros(2, 8, dtype=torch.long), position_offset=torch.tensor([0, 5]))


def test_ape_checks_only_real_tokens_against_the_table():
    model = build_model(ModelConfig(pe="ape", width=16, heads=2), 5, 3, 10, seed=0)
    ids = torch.randint(0, 5, (2, 8), generator=torch.Generator().manual_seed(0))
    pad_mask = torch.tensor([[True] * 8, [True] * 3 + [False] * 5])
    offset = torch.tensor([2, 7])  # row 1: real positions 7..9 fit; its padding would not
    out = model(ids, pad_mask, offset)
    alone = model(ids[1:, :3], position_offset=offset[1:])
    torch.testing.assert_close(out[1:, :3], alone)
    with pytest.raises(RasplabError, match="position 10"):
        model(ids, torch.tensor([[True] * 8, [True] * 4 + [False] * 4]), offset)


def test_offsets_are_ignored_by_other_encodings():
    for pe in ("nope", "sinusoidal", "rope", "alibi"):
        model = build_model(ModelConfig(pe=pe, width=16, heads=2), 5, 3, 10, seed=0)
        ids = torch.randint(
            0, 5, (2, 12), generator=GEN
        )  # longer than max_positions: fine without APE
        torch.testing.assert_close(model(ids), model(ids, position_offset=torch.tensor([3, 50])))


def test_sampled_offsets_cover_the_allowed_range():
    lengths = torch.tensor([5] * 2000 + [20])
    offsets = sample_position_offsets(lengths, 20, torch_generator(0, "test"))
    assert offsets[:-1].min() == 0 and offsets[:-1].max() == 15 and offsets[-1] == 0
    assert len(set(offsets[:-1].tolist())) == 16  # every offset 0..15 occurs
    again = sample_position_offsets(lengths, 20, torch_generator(0, "test"))
    assert torch.equal(offsets, again)
    with pytest.raises(RasplabError, match="does not fit"):
        sample_position_offsets(torch.tensor([21]), 20, torch_generator(0, "test"))


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda m: m(torch.zeros(4)), "input_ids must be an integer tensor"),
        (lambda m: m(torch.zeros(2, 3)), "input_ids must be an integer tensor"),
        (lambda m: m(torch.zeros(2, 3, dtype=torch.long), torch.ones(2, 4).bool()), "pad_mask"),
        (lambda m: m(torch.zeros(2, 3, dtype=torch.long), torch.ones(2, 3)), "pad_mask"),
        (lambda m: m(torch.zeros(2, 3, dtype=torch.long), None, torch.zeros(3)), "position_offset"),
        (lambda m: m(torch.zeros(1, 3, dtype=torch.long), None, torch.tensor([-1])), ">= 0"),
    ],
)
def test_bad_inputs_raise(call, message):
    model = build_model(ModelConfig(width=8, heads=2), 4, 2, 16, seed=0)
    with pytest.raises(RasplabError, match=message):
        call(model)


def test_bad_model_sizes_raise():
    with pytest.raises(RasplabError, match="vocab_size must be a positive integer"):
        build_model(ModelConfig(), 0, 2, 16, seed=0)
    with pytest.raises(RasplabError, match="needs a ModelConfig"):
        build_model({"pe": "ape"}, 4, 2, 16, seed=0)
    assert isinstance(build_model(ModelConfig(), 4, 2, 16, seed=0), TransformerModel)


def test_config_from_dict():
    assert ModelConfig.from_dict({"pe": "rope", "attention": "fox"}) == ModelConfig(
        pe="rope", attention="fox"
    )
    with pytest.raises(RasplabError, match="unknown model.depth; model fields are: pe, attention"):
        ModelConfig.from_dict({"depth": 2, "pe": "nope"})
