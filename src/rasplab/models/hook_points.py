"""TransformerLens-style hook points in the trainable transformer, and its HookedRootModule view.

Every :class:`~rasplab.models.transformer.TransformerModel` carries identity modules at the
places TransformerLens names (shapes in the glossary's letters; ``M`` the MLP's hidden width):

* ``blocks.{l}.hook_resid_pre`` / ``hook_resid_mid`` / ``hook_resid_post``: the residual
  stream ``[B, T, D]`` entering block ``l``, after its attention, after its MLP;
* ``blocks.{l}.attn.hook_z``: each head's output before the output projection ``[B, T, H, Dh]``;
* ``blocks.{l}.attn.hook_pattern``: the attention weights ``[B, H, T, T]`` (query, key);
* ``blocks.{l}.mlp.hook_post``: the MLP's activations ``[B, T, M]``.

They cost one module call each when nothing is hooked (``benchmarks/bench_models.py
--sections hook_points``). The attention weights are the exception: the fast attention
paths never form them, so a layer forms them only when its ``hook_pattern`` has a forward
hook or :func:`record_patterns` asked for them; it then reads them from the attention kind's
reference implementation with the identity as values (every kind is linear in its values),
passes them through the hook point and computes the heads' outputs as ``pattern @ v``, so
a hook that edits the pattern changes what the layer computes. A universal (weight-shared)
model has one block, so its hooks are ``blocks.0.*``, called once per layer.

The core package needs no TransformerLens: these hook points are local identity modules.
:func:`hooked_root` (the ``interp`` extra) turns a model's hook points into TransformerLens
``HookPoint`` s and returns a ``HookedRootModule`` over the same modules, so
``run_with_cache``, ``run_with_hooks`` and code that addresses activations by these names
work unchanged:

>>> import torch
>>> from rasplab.models import ModelConfig, build_model
>>> model = build_model(ModelConfig(width=8, heads=2, layers=2), 5, 3, 16, seed=0)
>>> sorted(n for n in hook_point_names(model) if n.startswith("blocks.1"))  # doctest: +NORMALIZE_WHITESPACE
['blocks.1.attn.hook_pattern', 'blocks.1.attn.hook_z', 'blocks.1.hook_resid_mid',
 'blocks.1.hook_resid_post', 'blocks.1.hook_resid_pre', 'blocks.1.mlp.hook_post']
"""

from __future__ import annotations

from functools import cache

import torch
from torch import nn

from rasplab.errors import RasplabError


class HookPoint(nn.Module):
    """An identity module: a named place whose forward hooks see (and may replace) a tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` unchanged."""
        return x


def is_hook_point(module: nn.Module) -> bool:
    """A local hook point or a TransformerLens one (after :func:`hooked_root`)."""
    return isinstance(module, HookPoint) or type(module).__name__ == "HookPoint"


def hook_point_names(model: nn.Module) -> list[str]:
    """The names of the model's hook points, in module order."""
    return [name for name, module in model.named_modules() if is_hook_point(module)]


def pattern_wanted(point: nn.Module, recorded: bool) -> bool:
    """Whether a layer must form its attention weights for ``point`` (a hook is on it)."""
    if recorded:
        return True
    return bool(
        getattr(point, "_forward_hooks", None) or getattr(point, "_forward_pre_hooks", None)
    )


def attention_pattern(kind: nn.Module, x, q, k, ctx) -> torch.Tensor:
    """The weights ``[B, H, T, T]`` (query, key) of attention ``kind`` on ``q``, ``k``: its
    reference implementation run with one-hot values, ``Dh`` key positions at a time (some
    references need values as wide as the queries)."""
    B, H, T, Dh = q.shape
    columns = []
    for start in range(0, T, Dh):
        width = min(Dh, T - start)
        onehot = torch.zeros(T, Dh, dtype=q.dtype, device=q.device)
        onehot[start : start + width, :width] = torch.eye(width, dtype=q.dtype, device=q.device)
        out = kind.reference(x, q, k, onehot.expand(B, H, T, Dh).contiguous(), ctx)
        columns.append(out[..., :width])
    return torch.cat(columns, dim=-1)


def record_patterns(model: nn.Module, flag: bool = True) -> nn.Module:
    """Make every attention layer form its weights and call ``attn.hook_pattern`` even with
    no hook on it (for tools that wrap modules instead of hooking them, e.g. nnsight)."""
    for module in model.modules():
        if hasattr(module, "record_pattern"):
            module.record_pattern = bool(flag)
    return model


def _transformer_lens():
    """TransformerLens's ``HookedRootModule`` and ``HookPoint``, or one clear error."""
    try:
        # optional extra: rasplab[interp] (TransformerLens)
        from transformer_lens import HookedRootModule
        from transformer_lens.hook_points import HookPoint as LensHookPoint
    except ImportError as err:
        raise RasplabError(
            "TransformerLens is not installed; install the interp extra: "
            "pip install 'rasplab[interp]'"
        ) from err
    return HookedRootModule, LensHookPoint


@cache
def _view_class():
    """The ``HookedRootModule`` subclass of :func:`hooked_root` (built once, on first use)."""
    root, _ = _transformer_lens()

    class HookedModel(root):
        """A ``HookedRootModule`` whose children are the wrapped model's own (same names,
        same parameters); calling it calls the model."""

        def __init__(self, model: nn.Module) -> None:
            super().__init__()
            object.__setattr__(self, "model", model)  # not a child: names stay the model's
            for name, child in model.named_children():
                self.add_module(name, child)
            self.setup()

        def forward(self, *args, **kwargs):
            """The wrapped model's forward."""
            return self.model(*args, **kwargs)

    return HookedModel


def hooked_root(model: nn.Module):
    """A TransformerLens ``HookedRootModule`` over ``model`` (the ``interp`` extra).

    The model's hook points become TransformerLens ``HookPoint`` s in place (identity
    modules either way: the model computes what it computed); the returned module shares
    every parameter with ``model`` and ``run_with_cache(input_ids)`` caches by the names in
    the module docstring.
    """
    _, lens_point = _transformer_lens()
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, HookPoint):
                setattr(parent, name, lens_point())
    return _view_class()(model)
