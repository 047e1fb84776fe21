"""The registries of model variants: positional encodings and attention kinds, by name.

Names are those of ``docs/cli.md`` (``model.pe``, ``model.attention``); the model looks a
variant up once, at construction, and never compares names afterwards.

>>> sorted(ATTENTION_KINDS)
['asentmax', 'entmax', 'fox', 'path', 'softmax', 'stick_breaking']
>>> positional_encoding("nape").__name__
'NaPE'
"""

from __future__ import annotations

from rasplab.errors import unknown_name
from rasplab.models.attention import AttentionKind, ForgettingAttention
from rasplab.models.entmax import ASEntmaxAttention, EntmaxAttention
from rasplab.models.path import PathAttention
from rasplab.models.positional import (
    ALiBi,
    LearnedAbsolute,
    NaPE,
    PositionalEncoding,
    Rotary,
    Sinusoidal,
)
from rasplab.models.random_positions import RandomLearned, RandomSinusoidal
from rasplab.models.stick_breaking import StickBreakingAttention

POSITIONAL_ENCODINGS: dict[str, type[PositionalEncoding]] = {
    "ape": LearnedAbsolute,
    "nope": PositionalEncoding,
    "sinusoidal": Sinusoidal,
    "rope": Rotary,
    "alibi": ALiBi,
    "nape": NaPE,
    "random_sin": RandomSinusoidal,
    "random_ape": RandomLearned,
}

ATTENTION_KINDS: dict[str, type[AttentionKind]] = {
    "softmax": AttentionKind,
    "fox": ForgettingAttention,
    "stick_breaking": StickBreakingAttention,
    "entmax": EntmaxAttention,
    "asentmax": ASEntmaxAttention,
    "path": PathAttention,
}


def positional_encoding(name: str) -> type[PositionalEncoding]:
    """The positional-encoding class registered as ``name``."""
    if name not in POSITIONAL_ENCODINGS:
        raise unknown_name("model.pe", name, POSITIONAL_ENCODINGS)
    return POSITIONAL_ENCODINGS[name]


def attention_kind(name: str) -> type[AttentionKind]:
    """The attention-kind class registered as ``name``."""
    if name not in ATTENTION_KINDS:
        raise unknown_name("model.attention", name, ATTENTION_KINDS)
    return ATTENTION_KINDS[name]
