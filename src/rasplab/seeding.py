"""Deterministic random generators derived from an explicit seed and a few names.

Every random draw in rasplab comes from a generator built here, so the same seed gives the
same data on every machine (names are mixed in with CRC32, never Python's ``hash()``).

>>> a = generator(0, "parity", "test", "1-50").integers(0, 1000, 3)
>>> b = generator(0, "parity", "test", "1-50").integers(0, 1000, 3)
>>> bool((a == b).all())
True
"""

from __future__ import annotations

import zlib

import numpy as np

from rasplab.errors import RasplabError

MAX_SEED = 2**63 - 1
"""The largest seed (it is stored as a 64-bit integer in the results store)."""


def check_seed(seed: object, what: str = "seed") -> int:
    """``seed`` as an int, or one RasplabError naming the allowed range (the one check every
    command and API uses).

    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: seed must be an integer from 0 to 2**63-1; got -1
    """
    if (
        isinstance(seed, bool)
        or not isinstance(seed, (int, np.integer))
        or not 0 <= seed <= MAX_SEED
    ):
        raise RasplabError(f"{what} must be an integer from 0 to 2**63-1; got {seed!r}")
    return int(seed)


def seed_words(seed: int, *names: object) -> list[int]:
    """The entropy words for ``(seed, *names)``: the seed, then a CRC32 per name.

    >>> seed_words(3, "a")
    [3, 3904355907]
    """
    return [check_seed(seed)] + [zlib.crc32(str(n).encode()) for n in names]


def generator(seed: int, *names: object) -> np.random.Generator:
    """A numpy Generator for ``seed`` specialised by ``names`` (task, split, bin, ...)."""
    return np.random.default_rng(seed_words(seed, *names))


def torch_generator(seed: int, *names: object):
    """A ``torch.Generator`` (CPU) seeded from the same words as :func:`generator`."""
    import torch  # start-up time: rasplab --help imports this module, torch is slow to load

    words = seed_words(seed, *names)
    g = torch.Generator()
    g.manual_seed(int(np.random.SeedSequence(words).generate_state(1, dtype=np.uint64)[0] >> 1))
    return g
