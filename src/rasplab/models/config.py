"""The model configuration: one frozen dataclass naming every architectural choice.

Positional encodings and attention kinds are chosen by registry name (``registry.py``);
``__post_init__`` rejects unknown names and impossible combinations with a message that
names the field and the allowed values.

>>> ModelConfig(pe="rope", attention="fox", width=32, heads=2).head_dim
16
>>> ModelConfig(pe="spiral")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: unknown model.pe 'spiral'; choose one of: alibi, ape, nape, nope, random_ape, random_sin, rope, sinusoidal
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from rasplab.errors import RasplabError, unknown_name
from rasplab.models.registry import ATTENTION_KINDS, POSITIONAL_ENCODINGS

MLP_KINDS = ("gelu", "swiglu")
INITS = ("gpt2", "mup")
ATTN_SCALES = ("sqrt", "mup")


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of a trainable transformer (sizes, variants, layer options)."""

    pe: str = "ape"  # registry: ape, nope, sinusoidal, rope, alibi, nape, random_sin, random_ape
    attention: str = "softmax"  # registry: softmax, fox, stick_breaking, entmax, asentmax, path
    layers: int = 2
    heads: int = 4
    width: int = 64
    mlp: str = "gelu"  # gelu | swiglu
    mlp_ratio: int = 4
    dropout: float = 0.0
    causal: bool = True  # decoder; False = encoder (bidirectional)
    universal: bool = False  # weight sharing across layers (Universal Transformer)
    canon: bool = False  # Canon layers (positions A, B, C)
    swan: bool = False  # SWAN layer pattern
    swan_window: int = 64
    entmax_alpha: float = 1.5
    init: str = "gpt2"  # gpt2 | mup (transformer.py)
    attn_scale: str = "sqrt"  # logits q.k times 1/sqrt(Dh) (sqrt) or μP's 1/Dh (mup)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "int" and (isinstance(value, bool) or not isinstance(value, int)):
                raise RasplabError(f"model.{f.name} must be an integer, got {value!r}")
            if f.type == "int" and value < 1:
                raise RasplabError(f"model.{f.name} must be a positive integer, got {value}")
            if f.type == "bool" and not isinstance(value, bool):
                raise RasplabError(f"model.{f.name} must be true or false, got {value!r}")
        if self.pe not in POSITIONAL_ENCODINGS:
            raise unknown_name("model.pe", self.pe, POSITIONAL_ENCODINGS)
        if self.attention not in ATTENTION_KINDS:
            raise unknown_name("model.attention", self.attention, ATTENTION_KINDS)
        if self.mlp not in MLP_KINDS:
            raise unknown_name("model.mlp", self.mlp, MLP_KINDS)
        if self.init not in INITS:
            raise unknown_name("model.init", self.init, INITS)
        if self.attn_scale not in ATTN_SCALES:
            raise unknown_name("model.attn_scale", self.attn_scale, ATTN_SCALES)
        if self.width % self.heads:
            raise RasplabError(
                f"model.heads ({self.heads}) must divide model.width ({self.width}); "
                "choose a width that is a multiple of heads"
            )
        if not isinstance(self.dropout, (int, float)) or not 0.0 <= self.dropout < 1.0:
            raise RasplabError(f"model.dropout must be in [0, 1), got {self.dropout!r}")
        alpha = self.entmax_alpha
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 1 < alpha <= 2:
            raise RasplabError(
                f"model.entmax_alpha must be in (1, 2] (1.5 is entmax-1.5), got {alpha!r}"
            )
        rotary = POSITIONAL_ENCODINGS[self.pe].rotary or self.swan
        if rotary and self.head_dim % 2:
            raise RasplabError(
                f"rotary encodings need an even head dimension; width/heads = {self.head_dim}, "
                "change model.width or model.heads"
            )
        if not self.causal and not ATTENTION_KINDS[self.attention].bidirectional:
            raise RasplabError(
                f"model.attention={self.attention!r} is inherently causal and has no encoder form; "
                f"use model.causal=true or one of: "
                + ", ".join(sorted(n for n, k in ATTENTION_KINDS.items() if k.bidirectional))
            )
        if self.swan and self.pe != "rope":
            raise RasplabError(
                "model.swan=true sets each layer's encoding itself (sliding-window RoPE layers, "
                f"global NoPE layers); set model.pe=rope (got {self.pe!r})"
            )
        if self.swan and self.layers < 2:
            raise RasplabError(
                "model.swan=true needs model.layers >= 2 (layer 0 is global NoPE, the others "
                "sliding-window RoPE with every fourth global)"
            )

    @classmethod
    def from_dict(cls, values: dict) -> ModelConfig:
        """A config from a mapping (e.g. YAML); unknown keys are a :class:`RasplabError`.

        >>> ModelConfig.from_dict({"pe": "nope", "layers": 1}).layers
        1
        >>> try:
        ...     ModelConfig.from_dict({"depth": 3})
        ... except RasplabError as err:
        ...     print(str(err)[:48])
        unknown model.depth; model fields are: pe, atten
        """
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise RasplabError(f"unknown model.{unknown[0]}; model fields are: {', '.join(names)}")
        return cls(**values)

    @property
    def head_dim(self) -> int:
        """Width of one attention head (D / H)."""
        return self.width // self.heads

    def swan_global(self, layer: int) -> bool:
        """Whether ``layer`` (0-based) is a global NoPE layer of the SWAN pattern.

        Seed 000 Table 5 lists layers 1-3, 5-7, 9-11 of 12 as sliding-window RoPE layers,
        so layers 0, 4, 8, ... are global.

        >>> [ModelConfig(pe="rope", swan=True, layers=6).swan_global(i) for i in range(6)]
        [True, False, False, False, True, False]
        """
        return layer % 4 == 0
