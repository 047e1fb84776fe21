"""Optimizer parameter groups: weight decay on matrices only, and μP learning rates.

``single``: one learning rate; weight decay on matrices (dim >= 2) but not on biases, norms,
gains. ``mup`` (Yang et al. 2022, Adam; seed 004 Appendix B: "1e-2/d for the hidden layers
and 1e-2 for the embedding layers"): matrices other than embeddings (hidden layers and the
read-out) get ``lr_scale = 1/width``; embeddings, position tables, biases and LayerNorms keep
``lr_scale = 1``. The training loop sets each group's rate to ``lr * lr_scale * schedule``.

>>> from rasplab.models import ModelConfig, build_model
>>> model = build_model(ModelConfig(layers=1, heads=1, width=16), 3, 1, 8, seed=0)
>>> [(g["lr_scale"], len(g["params"])) for g in parameter_groups(model, 0.0, "mup")]
[(0.0625, 5), (1.0, 2), (1.0, 10)]
"""

from __future__ import annotations

from torch import nn


def parameter_groups(model: nn.Module, weight_decay: float, kind: str = "single") -> list[dict]:
    """Groups for ``torch.optim.AdamW``, each with an ``lr_scale``."""
    params = [p for p in model.parameters() if p.requires_grad]
    if kind == "single":
        return [
            {
                "params": [p for p in params if p.dim() >= 2],
                "weight_decay": weight_decay,
                "lr_scale": 1.0,
            },
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0, "lr_scale": 1.0},
        ]
    embedding_ids = {
        id(m.weight)
        for m in model.modules()
        if isinstance(m, nn.Embedding) and m.weight.requires_grad
    }
    width = model.config.width
    hidden = [p for p in params if p.dim() >= 2 and id(p) not in embedding_ids]
    embeddings = [p for p in params if id(p) in embedding_ids]
    vectors = [p for p in params if p.dim() < 2]
    return [
        {"params": hidden, "weight_decay": weight_decay, "lr_scale": 1.0 / width},
        {"params": embeddings, "weight_decay": weight_decay, "lr_scale": 1.0},
        {"params": vectors, "weight_decay": 0.0, "lr_scale": 1.0},
    ]
