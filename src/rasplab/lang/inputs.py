"""Token-id batches checked in one place, before the interpreter or a compiled model runs.

Both runners take a batch as a list of token-id sequences. :func:`check_batch` turns one into
lists of ints, or raises one :class:`~rasplab.errors.RasplabError` naming the argument and
the first bad item: a string where a batch is expected, a token that is not an integer, a
token outside the input range, a sequence longer than the position range.

>>> check_batch([[1, 0], (2,)], input_range=3)
[[1, 0], [2]]
>>> check_batch("1 0 1", input_range=2)
Traceback (most recent call last):
...
rasplab.errors.RasplabError: batch must be a list of token-id sequences, got a string; encode the input first (e.g. entry.encode(text)) and pass [ids]
>>> check_batch([[1, 0.5]], input_range=2)
Traceback (most recent call last):
...
rasplab.errors.RasplabError: batch: token 0.5 at position 1 is not an integer token id
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rasplab.errors import RasplabError


def _suffix(b: int, size: int) -> str:
    return f" (sequence {b} of the batch)" if size > 1 else ""


def _token(value: object) -> int | None:
    """``value`` as an int token id, or None when it is not an integer."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    return None


def check_batch(
    batch: object, input_range: int, position_range: int | None = None, what: str = "batch"
) -> list[list[int]]:
    """The batch as lists of int token ids in ``[0, input_range)``, each at most
    ``position_range`` long; anything else is one RasplabError naming ``what``."""
    if isinstance(batch, (str, bytes)):
        raise RasplabError(
            f"{what} must be a list of token-id sequences, got a string; encode the input "
            "first (e.g. entry.encode(text)) and pass [ids]"
        )
    if isinstance(batch, np.ndarray):
        batch = batch.tolist() if batch.ndim == 2 else list(batch)
    if not isinstance(batch, Sequence):
        raise RasplabError(
            f"{what} must be a list of token-id sequences, got {type(batch).__name__}"
        )
    out = []
    for b, seq in enumerate(batch):
        where = _suffix(b, len(batch))
        if isinstance(seq, np.ndarray):
            seq = seq.tolist()
        if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
            raise RasplabError(
                f"{what} must be a list of token-id sequences; item {b} is "
                f"{type(seq).__name__} {seq!r:.40}"
            )
        ids = []
        for pos, value in enumerate(seq):
            tok = _token(value)
            if tok is None:
                raise RasplabError(
                    f"{what}: token {value!r} at position {pos} is not an integer token id{where}"
                )
            if not 0 <= tok < input_range:
                raise RasplabError(
                    f"token id {tok} at position {pos} is outside the input range "
                    f"[0, {input_range}){where}"
                )
            ids.append(tok)
        if position_range is not None and len(ids) > position_range:
            raise RasplabError(
                f"input of length {len(ids)} exceeds the program's position_range "
                f"{position_range}{where}"
            )
        out.append(ids)
    return out
