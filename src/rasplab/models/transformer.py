"""The trainable transformer: embeddings, pre-LN blocks, final LayerNorm, linear read-out.

``build_model`` is the one entry point; it initialises the weights GPT-2 style (normal with
std 0.02, residual output projections scaled by 1/sqrt(2 * layers), zero biases, LayerNorm
ones/zeros). Small models stall with PyTorch's default initialisation (``lessons.md``).

>>> model = build_model(ModelConfig(pe="rope", width=16, heads=2), vocab_size=5,
...                     num_outputs=3, max_positions=32)
>>> model(torch.tensor([[1, 2, 3, 4]])).shape
torch.Size([1, 4, 3])
"""

from __future__ import annotations

import math

import torch
from torch import nn

from rasplab.errors import RasplabError
from rasplab.models.blocks import Block, CanonConv
from rasplab.models.config import ModelConfig
from rasplab.models.linear import Linear
from rasplab.models.masking import AttentionContext, padding_that_matters
from rasplab.models.positional import INIT_STD, PositionalEncoding
from rasplab.models.pretrained import PretrainedMixin
from rasplab.models.registry import attention_kind, positional_encoding
from rasplab.seeding import torch_generator


class TransformerModel(PretrainedMixin, nn.Module):
    """Decoder (causal) or encoder transformer mapping token ids [B, T] to outputs [B, T, O];
    ``save_pretrained(dir)`` / ``TransformerModel.from_pretrained(dir)`` save and load it."""

    def __init__(
        self, config: ModelConfig, vocab_size: int, num_outputs: int, max_positions: int
    ) -> None:
        super().__init__()
        for name, value in (
            ("vocab_size", vocab_size),
            ("num_outputs", num_outputs),
            ("max_positions", max_positions),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RasplabError(f"{name} must be a positive integer, got {value!r}")
        self.config = config
        self.vocab_size, self.num_outputs = vocab_size, num_outputs
        self.max_positions = max_positions
        self.reference = False  # True: every variant runs its naive reference implementation
        self.embed = nn.Embedding(vocab_size, config.width)
        self.pe = positional_encoding(config.pe)(config, max_positions)
        self.global_pe = PositionalEncoding(config, max_positions)  # SWAN's global NoPE layers
        kind = attention_kind(config.attention)
        self.blocks = nn.ModuleList(
            Block(config, kind) for _ in range(1 if config.universal else config.layers)
        )
        self.drop = nn.Dropout(config.dropout) if config.dropout > 0 else None
        self.ln_f = nn.LayerNorm(config.width)
        self.head = Linear(config.width, num_outputs, bias=False)

    def layer_plan(self) -> list[tuple[PositionalEncoding, int | None]]:
        """(positional encoding, sliding window or None) for each of the L layers."""
        config = self.config
        if not config.swan:
            return [(self.pe, None)] * config.layers
        return [
            (self.global_pe, None) if config.swan_global(i) else (self.pe, config.swan_window)
            for i in range(config.layers)
        ]

    def use_reference(self, flag: bool = True) -> TransformerModel:
        """Run every variant's naive reference implementation (for tests); returns self."""
        self.reference = bool(flag)
        return self

    def forward(
        self,
        input_ids: torch.Tensor,
        pad_mask: torch.Tensor | None = None,
        position_offset: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Outputs [B, T, num_outputs] for ``input_ids`` [B, T].

        ``pad_mask`` [B, T] is True at real tokens; ``position_offset`` [B] shifts the
        positions of learned absolute encodings (APE) and is ignored by the others.
        """
        self._check_inputs(input_ids, pad_mask, position_offset)
        T = input_ids.shape[1]
        x = self.embed(input_ids)  # [B, T, D]
        offset = position_offset if self.pe.uses_offset else None
        pos = self.pe.embed(x, offset, pad_mask, reference=self.reference)
        if pos is not None:
            x = x + pos
        if self.drop is not None:
            x = self.drop(x)
        key_pad = padding_that_matters(pad_mask, self.config.causal)
        contexts: dict[tuple[int, int | None], AttentionContext] = {}
        for layer, (pe, window) in enumerate(self.layer_plan()):
            window = window if window is not None and window < T else None  # no-op window
            key = (id(pe), window)
            if key not in contexts:
                contexts[key] = AttentionContext(
                    causal=self.config.causal,
                    length=T,
                    key_pad=key_pad,
                    window=window,
                    pe=pe,
                    reference=self.reference,
                    device=x.device,
                    dtype=x.dtype,
                )
            block = self.blocks[0 if self.config.universal else layer]
            x = block(x, contexts[key])
        return self.head(self.ln_f(x))

    def _check_inputs(self, input_ids, pad_mask, position_offset) -> None:
        """Shapes and dtypes of the forward arguments, as RasplabErrors."""
        if input_ids.dim() != 2 or input_ids.dtype not in (torch.long, torch.int):
            raise RasplabError(
                f"input_ids must be an integer tensor [B, T], got {input_ids.dtype} "
                f"{tuple(input_ids.shape)}"
            )
        if pad_mask is not None and (
            pad_mask.shape != input_ids.shape or pad_mask.dtype != torch.bool
        ):
            raise RasplabError(
                f"pad_mask must be a bool tensor shaped like input_ids {tuple(input_ids.shape)}, "
                f"got {pad_mask.dtype} {tuple(pad_mask.shape)}"
            )
        if position_offset is not None and (
            tuple(position_offset.shape) != input_ids.shape[:1]
            or position_offset.dtype not in (torch.long, torch.int)
        ):
            raise RasplabError(
                f"position_offset must be an integer tensor [B] = [{input_ids.shape[0]}], "
                f"got {position_offset.dtype} {tuple(position_offset.shape)}"
            )


Transformer = TransformerModel
"""The name the Hugging Face conventions use: ``Transformer.from_pretrained(run_dir)``."""


def gpt2_init(model: TransformerModel, generator: torch.Generator | None) -> None:
    """GPT-2 initialisation: N(0, 0.02), residual projections / sqrt(2L), zero biases.

    ``generator`` None draws from torch's global generator (seeded by the caller).
    """
    residual_std = INIT_STD / math.sqrt(2 * model.config.layers)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                std = residual_std if getattr(module, "residual_projection", False) else INIT_STD
                nn.init.normal_(module.weight, 0.0, std, generator=generator)
                if module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, 0.0, INIT_STD, generator=generator)
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
            elif isinstance(module, CanonConv):
                nn.init.normal_(module.weight, 0.0, INIT_STD, generator=generator)


def mup_init(model: TransformerModel, generator: torch.Generator | None) -> None:
    """μP initialisation (Yang et al. 2022, Table 3, as used by seed 004 Appendix B).

    Embeddings and learned position tables N(0, 1) (input weights: fan-in 1 per one-hot
    row); hidden matrices N(0, 1/fan_in); the read-out N(0, 1/fan_in^2); zero biases,
    LayerNorm ones/zeros. μP's 1/Dh attention logit scale is its own setting,
    ``model.attn_scale=mup``; pair both with ``train.param_groups=mup`` for μP's learning
    rates.
    """
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                fan_in = module.weight.shape[1]
                std = 1.0 / fan_in if module is model.head else fan_in**-0.5
                nn.init.normal_(module.weight, 0.0, std, generator=generator)
                if module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, 0.0, 1.0, generator=generator)
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
            elif isinstance(module, CanonConv):
                nn.init.normal_(module.weight, 0.0, INIT_STD, generator=generator)


def build_model(
    config: ModelConfig,
    vocab_size: int,
    num_outputs: int,
    max_positions: int,
    *,
    seed: int | None = None,
) -> TransformerModel:
    """A :class:`TransformerModel` initialised GPT-2 style (or μP with ``config.init="mup"``).

    ``seed`` fixes the initial weights through ``rasplab.seeding`` (the same seed gives the
    same weights, whatever else was drawn before); None draws them from torch's global
    generator, which the caller then seeds.
    """
    if not isinstance(config, ModelConfig):
        raise RasplabError(f"build_model needs a ModelConfig, got {type(config).__name__}")
    model = TransformerModel(config, vocab_size, num_outputs, max_positions)
    generator = None if seed is None else torch_generator(seed, "models", "init")
    (mup_init if config.init == "mup" else gpt2_init)(model, generator)
    return model
