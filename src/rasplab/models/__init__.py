"""The trainable transformer zoo: one configurable model, variants chosen from registries.

>>> import torch
>>> from rasplab.models import ModelConfig, build_model
>>> model = build_model(ModelConfig(pe="nape", attention="entmax"), vocab_size=4,
...                     num_outputs=2, max_positions=64)
>>> model(torch.zeros(2, 7, dtype=torch.long)).shape
torch.Size([2, 7, 2])
"""

from rasplab.models.config import ModelConfig
from rasplab.models.positional import sample_position_offsets
from rasplab.models.registry import ATTENTION_KINDS, POSITIONAL_ENCODINGS
from rasplab.models.transformer import Transformer, TransformerModel, build_model

__all__ = [
    "ATTENTION_KINDS",
    "POSITIONAL_ENCODINGS",
    "ModelConfig",
    "Transformer",
    "TransformerModel",
    "build_model",
    "sample_position_offsets",
]
