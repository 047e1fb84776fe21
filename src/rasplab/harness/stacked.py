"""K models of one shape as one batched computation: stacked weights, forward, AdamW, clipping.

A run group trains K independent runs whose models have the same parameter shapes (same
layers, heads, width, vocabulary, outputs and position table). :class:`StackedRuns` holds
each parameter of the K models stacked along a leading run axis R (``name → [K, ...]``,
named as in :class:`~rasplab.models.TransformerModel`'s ``state_dict``) and computes

* the forward pass of all K models at once (:meth:`StackedRuns.forward`: one batched matrix
  product per layer where K separate runs would make K small ones), on the K runs' batches
  laid out by :func:`token_layout` (position-wise layers on real tokens only, attention on
  the runs' examples sorted by length into chunks, so that little is spent on padding),
* one AdamW step with each run's own learning rate, weight decay, betas and step count
  (:meth:`StackedRuns.step`, the update of ``torch.optim.AdamW`` written out elementwise),
* gradient clipping by each run's own global norm (``clip_grad_norm_`` per run),
* each parameter's learning-rate scale of the run's optimizer groups (``train.param_groups``:
  μP's 1/width for hidden matrices, :mod:`~rasplab.harness.param_groups`).

Training computes the last block after its attention (residual, MLP, final norm, read-out)
only at the scored tokens (:func:`scored_tokens`, :meth:`StackedRuns.forward` with
``picked``): in a causal model the other tokens' last-layer outputs feed no loss. For a
regression task scored at the last position only (seed 004) that is one token per row.

Run k's loss depends only on run k's slice of every parameter, so the gradient of the summed
loss is each run's own gradient: K stacked runs follow the same trajectories as K separate
ones, up to float rounding (``tests/harness/test_stacked.py`` checks it step by step).

Only the plain architecture stacks (:func:`stackable`): causal, softmax attention (logits
scaled 1/sqrt(Dh) or μP's 1/Dh), GELU MLP, APE or NoPE, no dropout, Canon, SWAN or weight
sharing; anything else trains one run at a time. Shape letters: R runs, B batch, T
positions, H heads, D width, V vocabulary, C outputs, M picked (scored) tokens.

>>> from rasplab.models import ModelConfig, build_model
>>> cfg = ModelConfig(pe="ape", layers=1, heads=2, width=8)
>>> models = [build_model(cfg, 5, 3, 16, seed=s) for s in (0, 1)]
>>> runs = StackedRuns(models)
>>> from rasplab.harness.encoding import Batch
>>> ids = torch.tensor([[1, 2, 3]])
>>> batch = Batch(ids, ids > 0, ids, ids > 0, None)
>>> out = runs.forward(token_layout([batch, batch], [0, 0]))     # [R=2, N=3, C=3]
>>> torch.allclose(out[1], models[1](ids)[0], atol=1e-6)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from rasplab.harness.param_groups import parameter_groups
from rasplab.models.config import ModelConfig


def stackable(config: ModelConfig) -> bool:
    """Whether models of ``config`` can train stacked (the plain architecture only).

    >>> stackable(ModelConfig(pe="nope")), stackable(ModelConfig(pe="rope"))
    (True, False)
    """
    return (
        config.causal
        and config.attention == "softmax"
        and config.mlp == "gelu"
        and config.pe in ("ape", "nope")
        and config.dropout == 0
        and not (config.canon or config.swan or config.universal)
    )


class StackedRuns:
    """The parameters and AdamW state of K same-shaped models, stacked along a run axis.

    All parameters of run k live in one row of a flat ``[R, N]`` buffer (and so do its two
    AdamW moments), so that clipping and the optimizer step are a handful of operations on
    three ``[R, N]`` tensors whatever the number of parameter tensors; :attr:`params` views
    that buffer as ``name → [R, ...]``.
    """

    def __init__(
        self, models: list[torch.nn.Module], param_groups: list[str] | None = None
    ) -> None:
        """``param_groups``: each run's ``train.param_groups`` (default ``single`` for all),
        for the per-parameter learning-rate scales of its optimizer groups."""
        if not models:
            raise ValueError("StackedRuns needs at least one model")
        first = models[0]
        for m in models:
            if not stackable(m.config) or m.config != first.config:
                raise ValueError("stacked models must share one stackable model config")
        self.config: ModelConfig = first.config
        shapes = {n: p.shape for n, p in first.named_parameters()}
        for m in models[1:]:
            if {n: p.shape for n, p in m.named_parameters()} != shapes:
                raise ValueError("stacked models must have the same parameter shapes")
        self.names = list(shapes)
        self.shapes = shapes
        self.sizes = [shapes[n].numel() for n in self.names]
        # weight decay on matrices only (2-D+ in a run), as the separate trainer's groups
        self.decays = torch.cat(
            [torch.full((k,), float(len(shapes[n]) >= 2)) for n, k in zip(self.names, self.sizes)]
        )
        self.flat = torch.zeros(len(models), sum(self.sizes)).requires_grad_(True)  # [R, N]
        self.exp_avg = torch.zeros_like(self.flat)
        self.exp_avg_sq = torch.zeros_like(self.flat)
        self.steps = torch.zeros(len(models), dtype=torch.float64)  # AdamW step per run
        kinds = param_groups or ["single"] * len(models)
        self.lr_scales = torch.stack([self._lr_scales(m, kind) for m, kind in zip(models, kinds)])
        for k, m in enumerate(models):
            self.load_run(k, m)

    def _lr_scales(self, model: torch.nn.Module, kind: str) -> torch.Tensor:
        """The flat [N] learning-rate scale of every weight of ``model`` under the separate
        trainer's optimizer groups of ``kind`` (:func:`parameter_groups`)."""
        scale = {
            id(p): g["lr_scale"] for g in parameter_groups(model, 0.0, kind) for p in g["params"]
        }
        named = dict(model.named_parameters())
        return torch.cat(
            [torch.full((k,), float(scale[id(named[n])])) for n, k in zip(self.names, self.sizes)]
        )

    def __len__(self) -> int:
        return int(self.steps.shape[0])

    @property
    def params(self) -> dict[str, torch.Tensor]:
        """Each parameter of every run, ``name → [R, ...]``: views of the flat buffer (one
        split, so that their gradients land in ``flat.grad`` with one concatenation)."""
        return self._views(self.flat)

    def _views(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        """``flat`` [R, N] (or one row [N]) viewed per parameter name."""
        lead = flat.shape[:-1]
        pieces = flat.split(self.sizes, dim=-1)
        return {n: x.view(*lead, *self.shapes[n]) for n, x in zip(self.names, pieces)}

    # --- moving runs in and out ---------------------------------------------------------

    def load_run(self, k: int, model: torch.nn.Module, optimizer=None) -> None:
        """Copy run k's weights (and AdamW state, if ``optimizer`` has any) from its model."""
        with torch.no_grad():
            weights = self._views(self.flat[k])
            moments = self._views(self.exp_avg[k]), self._views(self.exp_avg_sq[k])
            for n, p in model.named_parameters():
                weights[n].copy_(p.detach())
                st = optimizer.state.get(p) if optimizer is not None else None
                if st:
                    moments[0][n].copy_(st["exp_avg"])
                    moments[1][n].copy_(st["exp_avg_sq"])
                    self.steps[k] = float(st["step"])

    def store_run(self, k: int, model: torch.nn.Module, optimizer=None) -> None:
        """Copy run k's weights (and AdamW state into ``optimizer``) back into its own model,
        so that its checkpoint is the one a separate run would write."""
        with torch.no_grad():
            weights = self._views(self.flat[k])
            moments = self._views(self.exp_avg[k]), self._views(self.exp_avg_sq[k])
            for n, p in model.named_parameters():
                p.copy_(weights[n])
                if optimizer is not None and self.steps[k] > 0:
                    optimizer.state[p] = {
                        "step": torch.tensor(float(self.steps[k])),
                        "exp_avg": moments[0][n].clone(),
                        "exp_avg_sq": moments[1][n].clone(),
                    }

    def keep(self, rows: list[int]) -> None:
        """Keep only the runs at ``rows`` (in that order), e.g. after some finished."""
        index = torch.tensor(rows, dtype=torch.long)
        with torch.no_grad():
            self.flat = self.flat[index].detach().requires_grad_(True)
            self.exp_avg = self.exp_avg[index]
            self.exp_avg_sq = self.exp_avg_sq[index]
            self.steps = self.steps[index]
            self.lr_scales = self.lr_scales[index]

    # --- forward ------------------------------------------------------------------------

    def forward(
        self,
        layout: TokenLayout,
        params: dict | None = None,
        picked: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Outputs [R, N, C] at the tokens of ``layout`` (see :class:`TokenLayout`);
        ``params``: :attr:`params` when the caller uses them too (e.g. for a penalty).

        ``picked`` [R, M] (token indices, :func:`scored_tokens`): the outputs [R, M, C] at
        those tokens only; the last block computes everything after its attention there only.
        """
        p, cfg = params if params is not None else self.params, self.config
        x = _lookup(p["embed.weight"], layout.ids)  # [R, N, D]
        if cfg.pe == "ape":
            table = p["pe.table.weight"]  # [R, P, D]
            x = x + _lookup(table, layout.positions.clamp_max(table.shape[1] - 1))
        scale = 1.0 / (cfg.head_dim if cfg.attn_scale == "mup" else math.sqrt(cfg.head_dim))
        for i in range(cfg.layers):
            last = picked if i == cfg.layers - 1 else None
            x = _block(p, x, layout, f"blocks.{i}.", cfg.heads, scale, last)
        x = _norm(p, x, "ln_f.")
        return torch.bmm(x, p["head.weight"].transpose(1, 2))

    # --- optimisation -------------------------------------------------------------------

    def zero_grad(self) -> None:
        """Drop the gradients of every stacked parameter."""
        self.flat.grad = None

    def clip(self, max_norm: torch.Tensor) -> None:
        """Scale each run's gradients to global norm at most ``max_norm`` [R] (0: no clip)."""
        g = self.flat.grad
        if g is None:
            return
        max_norm = max_norm.to(g.dtype)
        coef = (max_norm / (torch.linalg.vector_norm(g, dim=1) + 1e-6)).clamp(max=1.0)
        g.mul_(torch.where(max_norm > 0, coef, torch.ones_like(coef))[:, None])

    def step(
        self,
        lr: torch.Tensor,
        weight_decay: torch.Tensor,
        beta1: torch.Tensor,
        beta2: torch.Tensor,
        eps: float = 1e-8,
    ) -> None:
        """One AdamW step of every run (each argument [R], one value per run).

        Weight decay applies to matrices only (a run's 2-D+ parameters), as in the separate
        trainer's parameter groups; the update is ``torch.optim.AdamW``'s, elementwise, with
        each weight's learning rate ``lr * lr_scale`` (its optimizer group's scale).
        """
        g = self.flat.grad
        if g is None:
            return
        self.steps += 1
        bc1 = 1 - beta1.double() ** self.steps
        bc2 = 1 - beta2.double() ** self.steps

        def col(t: torch.Tensor) -> torch.Tensor:  # [R] -> [R, 1] in the weights' dtype
            return t.to(g.dtype)[:, None]

        with torch.no_grad():
            p, m, v = self.flat, self.exp_avg, self.exp_avg_sq
            p.mul_(1 - col(lr * weight_decay) * self.decays * self.lr_scales)
            m.lerp_(g, col(1 - beta1))
            v.mul_(col(beta2)).add_(g * g * col(1 - beta2))
            denom = (v.sqrt() / col(bc2.sqrt())).add_(eps)
            p.sub_(m.div(denom).mul_(col(lr / bc1)).mul_(self.lr_scales))


def _lookup(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Each run's rows of its own table: table [R, V, D], index [R, N] -> [R, N, D] (one
    embedding lookup on the runs' tables side by side)."""
    R, V, D = table.shape
    return F.embedding(index + torch.arange(R)[:, None] * V, table.reshape(R * V, D))


def _norm(p: dict, x: torch.Tensor, prefix: str) -> torch.Tensor:
    """LayerNorm with each run's gain and bias: [R, N, D] -> [R, N, D]."""
    w, b = p[prefix + "weight"], p[prefix + "bias"]  # [R, D]
    return torch.addcmul(b[:, None, :], F.layer_norm(x, x.shape[-1:]), w[:, None, :])


def _linear(p: dict, x: torch.Tensor, prefix: str) -> torch.Tensor:
    """Each run's affine map: x [R, N, in] -> [R, N, out] (one batched product)."""
    w, b = p[prefix + "weight"], p[prefix + "bias"]  # [R, out, in]
    return torch.baddbmm(b[:, None, :], x, w.transpose(1, 2))


def _block(
    p: dict,
    x: torch.Tensor,
    layout: TokenLayout,
    prefix: str,
    H: int,
    scale: float | None = None,
    picked: torch.Tensor | None = None,
) -> torch.Tensor:
    """One pre-LN block of every run (``H`` heads, logits times ``scale``, default
    1/sqrt(Dh)): x [R, N, D] -> [R, N, D], or [R, M, D] at the tokens ``picked`` [R, M].

    Attention runs chunk by chunk (sequences of similar length, of any run,
    :class:`TokenLayout`), each chunk one causal attention call; everything else is
    position-wise on real tokens (so with ``picked`` it runs on the picked tokens only).
    """
    R, N, D = x.shape
    qkv = _linear(p, _norm(p, x, prefix + "ln1."), prefix + "attn.qkv.")  # [R, N, 3D]
    seqs = qkv.reshape(R * N, 3 * D).index_select(0, layout.gather)  # [S, 3D]
    parts = []
    sizes = [rows * T for _, rows, T in layout.chunks]
    # split, not slices: the backward of a slice fills a zero tensor of the whole width
    for piece, (_, rows, T) in zip(seqs.split(sizes), layout.chunks):
        q, k, v = piece.view(rows, T, 3, H, D // H).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
        parts.append(a.transpose(1, 2).reshape(rows * T, D))  # [rows, H, T, Dh] -> slots
    a = parts[0] if len(parts) == 1 else torch.cat(parts)  # [S, D]
    if picked is None:
        a = a.index_select(0, layout.back).view(R, N, D)
    else:
        tokens = (picked + torch.arange(R)[:, None] * N).reshape(-1)  # [R * M]
        x = x.reshape(R * N, D).index_select(0, tokens).view(R, -1, D)  # [R, M, D]
        a = a.index_select(0, layout.back[tokens]).view(R, -1, D)
    x = x + _linear(p, a, prefix + "attn.out.")
    h = _norm(p, x, prefix + "ln2.")
    return x + _linear(p, F.gelu(_linear(p, h, prefix + "mlp.up.")), prefix + "mlp.down.")


@dataclass
class TokenLayout:
    """K runs' training batches on one token axis N per run, and as attention sequences.

    Position-wise layers (embeddings, norms, affine maps, MLP, loss) see only real tokens:
    row k of ``ids`` (and of ``positions``, ``targets``, ``scored``) holds run k's real
    tokens, example after example in batch order, each example's tokens in order, then
    padding up to N (the most real tokens any run has; unscored, read by nothing).
    Attention sees every example of every run as one causal sequence: all R * B sequences
    sorted by length (stably, runs in order) and cut into chunks of ``rows`` sequences, each
    right-padded to the chunk's longest sequence ``T``, flattened sequence by sequence; chunk
    c is ``rows * T`` consecutive slots of that axis (S slots in all). ``gather`` [S] gives,
    for each slot, its token on the flattened [R * N] axis (a padding slot repeats its
    sequence's last token: causal attention never lets a real token see it, and nothing reads
    its output); ``back`` [R * N] gives each token's slot (padding tokens: the slot of their
    run's first token, so that nothing of one run ever reaches another). Attention
    has no weights, so sequences of different runs share chunks; the layout moves padding
    only: the real tokens and what each attends to are those of the run's own batch.
    """

    ids: torch.Tensor  # [R, N] token ids (each run's pad id at padding)
    positions: torch.Tensor  # [R, N] APE position (offset + t) of each token
    targets: torch.Tensor  # [R, N] class ids, IGNORE where unscored (regression: floats)
    scored: torch.Tensor  # [R, N] bool
    chunks: list  # (start, rows, T) per chunk of the attention axis
    gather: torch.Tensor  # [S] long: slot -> token of the flattened [R * N] axis
    back: torch.Tensor  # [R * N] long: token -> its slot


def token_layout(batches: list, pad_ids: list[int], chunk_rows: int = 4) -> TokenLayout:
    """Lay out K same-size batches (:class:`~rasplab.harness.encoding.Batch`, right-padded)
    as :class:`TokenLayout`, with attention chunks of ``chunk_rows * K`` sequences.

    >>> from rasplab.harness.encoding import Batch
    >>> ids = torch.tensor([[5, 0, 0], [6, 7, 8]])
    >>> b = Batch(ids, ids > 0, ids, ids > 0, None)
    >>> lay = token_layout([b, b], [0, 0], chunk_rows=1)
    >>> lay.ids.tolist(), lay.chunks
    ([[5, 6, 7, 8], [5, 6, 7, 8]], [(0, 2, 1), (2, 2, 3)])
    >>> lay.gather.tolist(), lay.back.tolist()
    ([0, 4, 1, 2, 3, 5, 6, 7], [0, 2, 3, 4, 1, 5, 6, 7])
    >>> b2 = Batch(ids[:, :1], ids[:, :1] > 0, ids[:, :1], ids[:, :1] > 0, None)
    >>> token_layout([b, b2], [0, 0], chunk_rows=1).back.tolist()  # run 1's padding: slot 1
    [0, 5, 6, 7, 1, 2, 1, 1]
    """
    R, B = len(batches), batches[0].input_ids.shape[0]
    lengths = torch.stack([b.pad_mask.sum(1) for b in batches])  # [R, B]
    per_run = lengths.sum(1)  # [R] real tokens
    N = max(1, int(per_run.max()))
    flat_len = lengths.reshape(-1)  # sequences in run order, then batch order
    # each sequence's first token on the flattened [R * N] axis
    within = torch.cumsum(lengths, 1) - lengths  # [R, B] start inside its run's row
    starts = (within + torch.arange(R)[:, None] * N).reshape(-1)
    fields = {"ids": [], "positions": [], "targets": [], "scored": []}
    done: dict = {}  # a batch shared by several runs (same draw, same pad id) is laid out once
    for b, pad, n in zip(batches, pad_ids, per_run.tolist()):
        if (id(b), pad) in done:
            for k in fields:
                fields[k].append(fields[k][done[id(b), pad]])
            continue
        done[id(b), pad] = len(fields["ids"])
        mask, extra = b.pad_mask, N - n
        offsets = b.offsets if b.offsets is not None else torch.zeros(B, dtype=torch.long)
        t = torch.arange(mask.shape[1]).expand_as(mask)
        fields["ids"].append(F.pad(b.input_ids[mask], (0, extra), value=pad))
        fields["positions"].append(F.pad((offsets[:, None] + t)[mask], (0, extra)))
        fields["targets"].append(F.pad(b.targets[mask], (0, extra), value=-100))
        fields["scored"].append(F.pad(b.scored[mask], (0, extra), value=False))
    order = torch.argsort(flat_len, stable=True)
    size = chunk_rows * R
    chunks, gather, slot_start, start = [], [], torch.empty_like(starts), 0
    for lo in range(0, R * B, size):
        seqs = order[lo : lo + size]
        L = flat_len[seqs]
        T = max(1, int(L.max()))
        t = torch.minimum(torch.arange(T)[None, :], (L - 1).clamp(min=0)[:, None])
        gather.append((starts[seqs][:, None] + t).reshape(-1))
        slot_start[seqs] = start + torch.arange(len(seqs)) * T
        chunks.append((start, len(seqs), T))
        start += len(seqs) * T
    # every real token's slot: its sequence's first slot + its position in the sequence
    token_seq = torch.repeat_interleave(torch.arange(R * B), flat_len)
    t = torch.arange(len(token_seq)) - torch.repeat_interleave(
        torch.cumsum(flat_len, 0) - flat_len, flat_len
    )
    # padding tokens read their run's first slot: never another run's (a diverged run's
    # NaN would reach the others' gradients through 0 * NaN)
    back = slot_start.view(R, B)[:, :1].expand(R, N).reshape(-1).clone()
    back[starts[token_seq] + t] = slot_start[token_seq] + t
    return TokenLayout(
        **{k: torch.stack(v) for k, v in fields.items()},
        chunks=chunks,
        gather=torch.cat(gather),
        back=back,
    )


def per_run(values: list[float]) -> torch.Tensor:
    """A float [R] tensor of one hyper-parameter value per run.

    >>> per_run([1e-3, 3e-3]).tolist() == [1e-3, 3e-3]
    True
    """
    return torch.tensor(values, dtype=torch.float64)


def stacked_loss(
    outputs: torch.Tensor, layout: TokenLayout, picked: torch.Tensor | None = None
) -> torch.Tensor:
    """Each run's mean cross-entropy over its scored tokens: [R] (sum it to backprop).

    ``outputs`` [R, N, C] at the tokens of ``layout``, or [R, M, C] at the tokens
    ``picked`` [R, M] of :func:`scored_tokens`. Regression targets (float): mean squared
    error of output 0 instead, as the separate trainer's loss.
    """
    targets, scored = layout.targets, layout.scored
    if picked is not None:
        targets, scored = targets.gather(1, picked), scored.gather(1, picked)
    R, N, C = outputs.shape
    if targets.dtype.is_floating_point:
        err = outputs[..., 0] - targets
        loss = err * err
    else:
        loss = F.cross_entropy(
            outputs.reshape(-1, C), targets.reshape(-1).clamp(min=0), reduction="none"
        ).view(R, N)
    loss = torch.where(scored, loss, torch.zeros_like(loss))
    return loss.sum(1) / scored.sum(1).clamp(min=1)


def scored_tokens(layout: TokenLayout) -> torch.Tensor:
    """[R, M] token indices holding every run's scored tokens in order (M = the most any run
    has), the rest filled with unscored tokens (:func:`stacked_loss` masks them out).

    >>> from rasplab.harness.encoding import Batch
    >>> ids = torch.tensor([[5, 6, 0], [6, 7, 8]])
    >>> b = Batch(ids, ids > 0, ids, torch.tensor([[0, 1, 0], [0, 0, 1]]) > 0, None)
    >>> scored_tokens(token_layout([b], [0], chunk_rows=2)).tolist()
    [[1, 4]]
    """
    M = max(1, int(layout.scored.sum(1).max()))
    # a stable sort of "not scored" puts each run's scored tokens first, in token order
    return torch.argsort((~layout.scored).to(torch.int8), dim=1, stable=True)[:, :M]
