"""The compiled C-RASP transformer: a causal softmax ``torch.nn.Module`` built from a plan.

Its weights are buffers (it is compiled, not trained): a token embedding, a positional
encoding given by rule (coordinate ``c`` is ``[i mod m = r]``; no table, so nothing grows
with the maximum length), and per layer the heads' ``W_Q``, ``W_K``, ``W_V`` (sparse, one
value dimension per count), their output coordinates (``W_O``, a selection), each head's
relative bias (none for a uniform head; 0 on ``j = i - offset`` and -1500 elsewhere for a
positional one), and the MLP's ``W_1``, ``b_1``, ``W_2`` (sparse). :meth:`forward` runs a
batch of token ids with real softmax attention (scores, causal mask, softmax, weighted sum)
and ReLU MLPs, the residual kept feature-major (``[width, batch * positions]``) so that the
sparse weights multiply it directly; :meth:`decode` reads every operation's value at every
position from the final residual at once (a count is its ratio times ``i + 1``).

>>> from rasplab.crasp.library import program
>>> from rasplab.crasp_compiler.plan import build_plan
>>> m = CraspTransformer.from_plan(build_plan(program("majority_ab"), 16), "float32")
>>> ids = torch.tensor([[0, 1, 2, 2]])  # <bos> a b b
>>> m.decode(m(ids))["M"].tolist()
[[1.0, 1.0, 1.0, 0.0]]
"""

from __future__ import annotations

import torch
from torch import nn

from rasplab.crasp_compiler.plan import BOS_BONUS, LOCAL_BIAS, Plan

DENSE_LIMIT = 1 << 16
"""Weights with at most this many entries multiply densely."""
ATTENTION_ENTRIES = 1 << 24
"""Attention weights computed at once (queries are taken in blocks beyond this)."""


def sparse(entries: list[tuple[int, int, float]], shape: tuple[int, int], dtype) -> torch.Tensor:
    """A coalesced sparse COO matrix from ``(row, column, value)`` entries."""
    if entries:
        rows, cols, vals = zip(*entries)
    else:
        rows, cols, vals = (), (), ()
    index = torch.tensor([rows, cols], dtype=torch.int64).reshape(2, -1)
    values = torch.tensor(vals, dtype=dtype)
    return torch.sparse_coo_tensor(index, values, shape, check_invariants=True).coalesce()


class CraspTransformer(nn.Module):
    """A compiled C-RASP program (see the module docstring); ``spec`` is its JSON description."""

    def __init__(self, spec: dict, tensors: dict[str, torch.Tensor]):
        super().__init__()
        self.spec = spec
        self.width = spec["width"]
        self.offsets = [list(x) for x in spec["head_offsets"]]
        for name, t in tensors.items():
            self.register_buffer(name.replace(".", "_"), t)
        self._dense: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self.decode_names = list(spec["decode"])
        self.count_mask = torch.tensor([spec["decode"][n] for n in self.decode_names])

    # -- building ------------------------------------------------------------------------
    @classmethod
    def from_plan(cls, plan: Plan, dtype: str) -> CraspTransformer:
        """Build the weights of ``plan`` in ``dtype`` (``"float32"`` or ``"float64"``)."""
        dt = getattr(torch, dtype)
        w = plan.width
        symbols = list(plan.tokens)
        t: dict[str, torch.Tensor] = {}
        emb = torch.zeros(w, len(symbols) + 1, dtype=dt)  # last column: padding (all zero)
        for k, s in enumerate(symbols):
            emb[0, k] = 1.0  # the ``one`` coordinate
            emb[plan.tokens[s], k] = 1.0
        t["tok_emb"] = emb
        t["pos_coords"] = torch.tensor([[c, m, r] for c, m, r in plan.positional]).reshape(-1, 3)
        offsets = []
        bos = plan.tokens[symbols[0]]
        for li, layer in enumerate(plan.layers):
            offs = []
            for hi, head in enumerate(layer.heads):
                p = f"l{li}_h{hi}_"
                dv = len(head.values)
                wv = [(k, c, x) for k, f in enumerate(head.values) for c, x in f.items()]
                t[p + "W_V"] = sparse(wv, (dv, w), dt)
                t[p + "W_O"] = torch.tensor(head.outputs, dtype=torch.int64)
                if head.offset is None:  # every score equal: W_Q = W_K = 0 (no dimensions)
                    t[p + "W_Q"] = sparse([], (0, w), dt)
                    t[p + "W_K"] = sparse([], (0, w), dt)
                else:  # score BOS_BONUS on the <bos> key, from the query's ``one``
                    t[p + "W_Q"] = sparse([(0, 0, BOS_BONUS)], (1, w), dt)
                    t[p + "W_K"] = sparse([(0, bos, 1.0)], (1, w), dt)
                offs.append(head.offset)
            offsets.append(offs)
            p = f"l{li}_mlp_"
            units = layer.units
            t[p + "W_1"] = sparse(
                [(k, c, x) for k, u in enumerate(units) for c, x in u.weights.items()],
                (len(units), w),
                dt,
            )
            t[p + "b_1"] = torch.tensor([u.bias for u in units], dtype=dt)
            t[p + "W_2"] = sparse(
                [(c, k, x) for k, u in enumerate(units) for c, x in u.outputs.items()],
                (w, len(units)),
                dt,
            )
        names = list(plan.forms)
        t["decode_matrix"] = sparse(
            [(k, c, x) for k, n in enumerate(names) for c, x in plan.forms[n].items()],
            (len(names), w),
            dt,
        )
        spec = {
            "program": plan.program,
            "alphabet": list(plan.alphabet),
            "symbols": symbols,
            "max_length": plan.max_length,
            "dtype": dtype,
            "width": w,
            "layers": len(plan.layers),
            "heads": plan.heads,
            "head_offsets": offsets,
            "coords": plan.coords,
            "decode": {n: n in plan.counts for n in names},
            "local_bias": LOCAL_BIAS,
        }
        return cls(spec, t)

    # -- running -------------------------------------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        return self.tok_emb.dtype

    def buffer(self, name: str) -> torch.Tensor:
        return getattr(self, name)

    def mm(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """The (sparse) weight ``name`` times ``x``; a small one multiplies densely (faster;
        the same products, summed in another order)."""
        w = self.buffer(name)
        if w.shape[0] * w.shape[1] > DENSE_LIMIT:
            return torch.sparse.mm(w, x)
        if name not in self._dense or self._dense[name][0] is not w:
            self._dense[name] = (w, w.to_dense())
        return self._dense[name][1] @ x

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """``[width, B*T]`` residual: token embedding (id -1 = padding) plus positions."""
        b, n = ids.shape
        cols = torch.where(ids < 0, self.tok_emb.shape[1] - 1, ids).reshape(-1)
        x = self.tok_emb.index_select(1, cols).clone()
        pos = torch.arange(n).repeat(b)
        for c, m, r in self.pos_coords.tolist():
            x[c] = (pos % m == r).to(x.dtype)
        return x

    def head(self, x: torch.Tensor, prefix: str, offset: int | None, shape) -> torch.Tensor:
        """One head's output ``[dv, B*T]``: softmax attention over ``j <= i`` (queries in
        blocks, so that the attention weights of long inputs stay within memory)."""
        b, n = shape
        v = self.mm(prefix + "W_V", x).reshape(-1, b, n).permute(1, 2, 0)
        q = self.mm(prefix + "W_Q", x).reshape(-1, b, n)
        k = self.mm(prefix + "W_K", x).reshape(-1, b, n)
        out = torch.empty(b, n, v.shape[2], dtype=x.dtype)
        block = max(1, ATTENTION_ENTRIES // max(1, b * n))
        j = torch.arange(n)
        for lo in range(0, n, block):
            i = torch.arange(lo, min(n, lo + block))
            scores = torch.einsum("dbi,dbj->bij", q[:, :, i], k) + self.bias(i, j, offset, x.dtype)
            out[:, i] = torch.bmm(torch.softmax(scores, dim=-1), v)
        return out.permute(2, 0, 1).reshape(-1, b * n)

    @staticmethod
    def bias(i: torch.Tensor, j: torch.Tensor, offset: int | None, dtype) -> torch.Tensor:
        """Additive scores ``[queries, keys]``: the causal mask (-inf on ``j > i``) plus, for a
        positional head, 0 on ``j = i - offset`` and -1500 elsewhere."""
        rel = i[:, None] - j[None, :]
        bias = torch.zeros(rel.shape, dtype=dtype)
        if offset is not None:
            bias = torch.where(rel == offset, 0.0, LOCAL_BIAS).to(dtype)
        return bias.masked_fill(rel < 0, float("-inf"))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """The final residual ``[width, B, T]`` for ids ``[B, T]`` (0 = <bos>, -1 = padding)."""
        shape = tuple(ids.shape)
        x = self.embed(ids)
        for li, offs in enumerate(self.offsets):
            heads = [self.head(x, f"l{li}_h{hi}_", off, shape) for hi, off in enumerate(offs)]
            for hi, out in enumerate(heads):  # every head reads the residual before the layer
                x.index_add_(0, self.buffer(f"l{li}_h{hi}_W_O"), out)
            p = f"l{li}_mlp_"
            pre = self.mm(p + "W_1", x) + self.buffer(p + "b_1")[:, None]
            x = x + self.mm(p + "W_2", torch.relu(pre))
        return x.reshape(-1, *shape)

    def decode(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Every operation's value ``[B, T]`` from the final residual ``[width, B, T]``."""
        values = self.decode_all(x)
        return {n: values[k] for k, n in enumerate(self.decode_names)}

    def decode_all(self, x: torch.Tensor) -> torch.Tensor:
        """``[ops, B, T]``: every operation at once, in program order (counts times i+1)."""
        _, b, n = x.shape
        y = self.mm("decode_matrix", x.reshape(x.shape[0], -1)).reshape(-1, b, n)
        scale = torch.arange(1, n + 1, dtype=y.dtype)
        return torch.where(self.count_mask[:, None, None], y * scale, y)
