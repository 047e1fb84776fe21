"""K models of one shape as one batched computation: stacked weights, forward, AdamW, clipping.

A run group trains K independent runs whose models have the same parameter shapes (same
layers, heads, width, vocabulary, outputs and position table). :class:`StackedRuns` holds
each parameter of the K models stacked along a leading run axis R (``name → [K, ...]``,
named as in :class:`~rasplab.models.TransformerModel`'s ``state_dict``) and computes

* the forward pass of all K models at once (:meth:`StackedRuns.forward`: one batched matrix
  product per layer where K separate runs would make K small ones),
* one AdamW step with each run's own learning rate, weight decay, betas and step count
  (:meth:`StackedRuns.step`, the update of ``torch.optim.AdamW`` written out elementwise),
* gradient clipping by each run's own global norm (``clip_grad_norm_`` per run).

Run k's loss depends only on run k's slice of every parameter, so the gradient of the summed
loss is each run's own gradient: K stacked runs follow the same trajectories as K separate
ones, up to float rounding (``tests/harness/test_stacked.py`` checks it step by step).

Only the plain architecture stacks (:func:`stackable`): causal, softmax attention, GELU MLP,
APE or NoPE, no dropout, Canon, SWAN or weight sharing; anything else trains one run at a
time. Shape letters: R runs, B batch, T positions, H heads, D width, V vocabulary, C outputs.

>>> from rasplab.models import ModelConfig, build_model
>>> cfg = ModelConfig(pe="ape", layers=1, heads=2, width=8)
>>> models = [build_model(cfg, 5, 3, 16, seed=s) for s in (0, 1)]
>>> runs = StackedRuns(models)
>>> ids = torch.tensor([[[1, 2, 3]], [[3, 2, 1]]])          # [R=2, B=1, T=3]
>>> out = runs.forward(ids)
>>> torch.allclose(out[1], models[1](ids[1]), atol=1e-6)
True
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

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
    """The parameters and AdamW state of K same-shaped models, stacked along a run axis."""

    def __init__(self, models: list[torch.nn.Module]) -> None:
        if not models:
            raise ValueError("StackedRuns needs at least one model")
        first = models[0]
        for m in models:
            if not stackable(m.config) or m.config != first.config:
                raise ValueError("stacked models must share one stackable model config")
        self.config: ModelConfig = first.config
        names = [n for n, _ in first.named_parameters()]
        shapes = {n: p.shape for n, p in first.named_parameters()}
        for m in models[1:]:
            if {n: p.shape for n, p in m.named_parameters()} != shapes:
                raise ValueError("stacked models must have the same parameter shapes")
        self.names = names
        self.params = {
            n: torch.stack([dict(m.named_parameters())[n].detach() for m in models])
            .clone()
            .requires_grad_(True)
            for n in names
        }
        self.exp_avg = {n: torch.zeros_like(p) for n, p in self.params.items()}
        self.exp_avg_sq = {n: torch.zeros_like(p) for n, p in self.params.items()}
        self.steps = torch.zeros(len(models), dtype=torch.float64)  # AdamW step per run

    def __len__(self) -> int:
        return int(self.steps.shape[0])

    # --- moving runs in and out ---------------------------------------------------------

    def load_run(self, k: int, model: torch.nn.Module, optimizer=None) -> None:
        """Copy run k's weights (and AdamW state, if ``optimizer`` has any) from its model."""
        with torch.no_grad():
            by_param = {}
            for n, p in model.named_parameters():
                self.params[n][k].copy_(p.detach())
                by_param[n] = p
            if optimizer is None:
                return
            for n, p in by_param.items():
                st = optimizer.state.get(p)
                if st:
                    self.exp_avg[n][k].copy_(st["exp_avg"])
                    self.exp_avg_sq[n][k].copy_(st["exp_avg_sq"])
                    self.steps[k] = float(st["step"])

    def store_run(self, k: int, model: torch.nn.Module, optimizer=None) -> None:
        """Copy run k's weights (and AdamW state into ``optimizer``) back into its own model,
        so that its checkpoint is the one a separate run would write."""
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(self.params[n][k])
                if optimizer is not None and self.steps[k] > 0:
                    optimizer.state[p] = {
                        "step": torch.tensor(float(self.steps[k])),
                        "exp_avg": self.exp_avg[n][k].clone(),
                        "exp_avg_sq": self.exp_avg_sq[n][k].clone(),
                    }

    def keep(self, rows: list[int]) -> None:
        """Keep only the runs at ``rows`` (in that order), e.g. after some finished."""
        index = torch.tensor(rows, dtype=torch.long)
        with torch.no_grad():
            self.params = {
                n: p[index].detach().clone().requires_grad_(True) for n, p in self.params.items()
            }
            self.exp_avg = {n: v[index].clone() for n, v in self.exp_avg.items()}
            self.exp_avg_sq = {n: v[index].clone() for n, v in self.exp_avg_sq.items()}
            self.steps = self.steps[index].clone()

    # --- forward ------------------------------------------------------------------------

    def forward(
        self, input_ids: torch.Tensor, position_offset: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Outputs [R, B, T, C] for ``input_ids`` [R, B, T] (right-padded, causal).

        ``position_offset`` [R, B] shifts APE positions; positions past the table (only ever
        at padding) read its last row, as in the separate model.
        """
        p, cfg = self.params, self.config
        R, B, T = input_ids.shape
        runs = torch.arange(R)[:, None, None]
        x = p["embed.weight"][runs, input_ids]  # [R, B, T, D]
        if cfg.pe == "ape":
            table = p["pe.table.weight"]  # [R, P, D]
            pos = torch.arange(T)[None, None, :]
            if position_offset is not None:
                pos = pos + position_offset[:, :, None]
            x = x + table[runs, pos.clamp_max(table.shape[1] - 1).expand(R, B, T)]
        for i in range(cfg.layers):
            x = self._block(x, f"blocks.{i}.")
        x = self._norm(x, "ln_f.")
        return torch.matmul(x.view(R, B * T, -1), p["head.weight"].transpose(1, 2)).view(
            R, B, T, -1
        )

    def _norm(self, x: torch.Tensor, prefix: str) -> torch.Tensor:
        """LayerNorm with each run's gain and bias: [R, B, T, D] -> [R, B, T, D]."""
        w, b = self.params[prefix + "weight"], self.params[prefix + "bias"]  # [R, D]
        y = F.layer_norm(x, x.shape[-1:])
        return y * w[:, None, None, :] + b[:, None, None, :]

    def _linear(self, x: torch.Tensor, prefix: str) -> torch.Tensor:
        """Each run's affine map: x [R, N, in] -> [R, N, out] (one batched product)."""
        w, b = self.params[prefix + "weight"], self.params[prefix + "bias"]  # [R, out, in]
        return torch.baddbmm(b[:, None, :], x, w.transpose(1, 2))

    def _block(self, x: torch.Tensor, prefix: str) -> torch.Tensor:
        """One pre-LN block of every run: x [R, B, T, D] -> [R, B, T, D]."""
        R, B, T, D = x.shape
        H = self.config.heads
        h = self._norm(x, prefix + "ln1.").view(R, B * T, D)
        qkv = self._linear(h, prefix + "attn.qkv.")  # [R, BT, 3D]
        q, k, v = qkv.view(R * B, T, 3, H, D // H).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [RB, H, T, Dh]
        a = a.transpose(1, 2).reshape(R, B * T, D)
        x = x + self._linear(a, prefix + "attn.out.").view(R, B, T, D)
        h = self._norm(x, prefix + "ln2.").view(R, B * T, D)
        m = self._linear(F.gelu(self._linear(h, prefix + "mlp.up.")), prefix + "mlp.down.")
        return x + m.view(R, B, T, D)

    # --- optimisation -------------------------------------------------------------------

    def zero_grad(self) -> None:
        """Drop the gradients of every stacked parameter."""
        for p in self.params.values():
            p.grad = None

    def clip(self, max_norm: torch.Tensor) -> None:
        """Scale each run's gradients to global norm at most ``max_norm`` [R] (0: no clip)."""
        sq = sum(
            p.grad.pow(2).reshape(len(self), -1).sum(1)
            for p in self.params.values()
            if p.grad is not None
        )
        coef = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
        coef = torch.where(max_norm > 0, coef, torch.ones_like(coef))
        for p in self.params.values():
            if p.grad is not None:
                p.grad.mul_(coef.view(-1, *([1] * (p.dim() - 1))))

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
        trainer's parameter groups; the update is ``torch.optim.AdamW``'s, elementwise.
        """
        self.steps += 1
        bc1 = 1 - beta1.double() ** self.steps
        bc2 = 1 - beta2.double() ** self.steps
        with torch.no_grad():
            for n, p in self.params.items():
                g = p.grad
                if g is None:
                    continue
                shape = (-1, *([1] * (p.dim() - 1)))
                view = lambda t: t.to(p.dtype).view(shape)  # noqa: E731
                if p.dim() >= 3:  # a matrix of each run
                    p.mul_(1 - view(lr * weight_decay))
                m, v = self.exp_avg[n], self.exp_avg_sq[n]
                m.lerp_(g, view(1 - beta1))
                v.mul_(view(beta2)).add_(g * g * view(1 - beta2))
                denom = (v.sqrt() / view(bc2.sqrt())).add_(eps)
                p.sub_(m / denom * view(lr / bc1))


def per_run(values: list[float]) -> torch.Tensor:
    """A float [R] tensor of one hyper-parameter value per run.

    >>> per_run([1e-3, 3e-3]).tolist() == [1e-3, 3e-3]
    True
    """
    return torch.tensor(values, dtype=torch.float64)


def stacked_loss(outputs: torch.Tensor, targets: torch.Tensor, scored: torch.Tensor):
    """Each run's mean cross-entropy over its scored positions: [R] (sum it to backprop).

    ``outputs`` [R, B, T, C], ``targets`` and ``scored`` [R, B, T].
    """
    R, B, T, C = outputs.shape
    ce = F.cross_entropy(
        outputs.reshape(-1, C), targets.reshape(-1).clamp(min=0), reduction="none"
    ).view(R, B, T)
    ce = torch.where(scored, ce, torch.zeros_like(ce))
    return ce.sum((1, 2)) / scored.sum((1, 2)).clamp(min=1)

