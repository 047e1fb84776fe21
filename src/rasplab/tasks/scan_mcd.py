"""Maximum-compound-divergence (MCD) splits of SCAN, after Keysers et al. 2020.

Every command is parsed with the SCAN grammar into a tree of rule applications::

    C -> S | S and S | S after S        S -> V | V twice | V thrice
    V -> U | X D | X opposite D | X around D
    X -> U | turn      U -> walk | look | run | jump      D -> left | right

The **atoms** of a command are the rules it uses (``V -> X around D``, ``U -> jump``, ...);
its **compounds** are the rule applications together with the rules of their children
(depth 1, e.g. ``V -> X around D`` over ``X -> jump`` and ``D -> right``) and of their
grandchildren (depth 2). Over a set of commands these give frequency distributions; the
divergence of train and test is ``D_a(P||Q) = 1 - sum_k p_k^a q_k^(1-a)``, with ``a = 0.5`` for
atoms and ``a = 0.1`` for compounds (Keysers et al.).

:func:`mcd_split` builds a split greedily, as Keysers et al. do: starting from one random
command on each side, it repeatedly grows the side that is furthest from its target size by
the candidate that maximises compound divergence while keeping atom divergence at most
``max_atom_divergence`` (a penalty above it). Each step scores a seeded random sample of
``candidates`` unused commands rather than all of them (the one simplification, for speed).
Sizes follow the published SCAN MCD splits: half of SCAN is used, 8,365 train and 1,045 test
commands (the published splits also hold a 1,045-command dev set, not built here). MCD1-3 are
the splits of seeds 1-3.

>>> parse_atoms("jump around right twice")
('C -> S', 'S -> V twice', 'V -> X around D', 'X -> U', 'U -> jump', 'D -> right')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rasplab.errors import RasplabError
from rasplab.seeding import generator
from rasplab.tasks.scan import all_commands
from rasplab.tasks.scan_splits import Clause, clauses

TRAIN_SIZE, TEST_SIZE = 8365, 1045
"""Sizes of the published SCAN MCD train and test sets."""
ATOM_ALPHA, COMPOUND_ALPHA = 0.5, 0.1
"""Chernoff coefficients of atom and compound divergence (Keysers et al. 2020)."""
MAX_ATOM_DIVERGENCE = 0.02
"""The atom-divergence bound the construction keeps (our choice: small, as MCD asks)."""
MCD_SEEDS = {"mcd1": 1, "mcd2": 2, "mcd3": 3}


@dataclass(frozen=True)
class _Node:
    rule: str
    children: tuple[_Node, ...] = ()

    def depth1(self) -> str:
        return f"{self.rule} [{' | '.join(c.rule for c in self.children)}]"

    def depth2(self) -> str:
        inner = " | ".join(c.depth1() if c.children else c.rule for c in self.children)
        return f"{self.rule} [{inner}]"

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def _phrase_tree(k: Clause) -> _Node:
    if k.direction == "":
        return _Node("V -> U", (_Node(f"U -> {k.x}"),))
    x = _Node("X -> turn") if k.x == "turn" else _Node("X -> U", (_Node(f"U -> {k.x}"),))
    rule = {"": "V -> X D", "opposite": "V -> X opposite D", "around": "V -> X around D"}
    return _Node(rule[k.modifier], (x, _Node(f"D -> {k.direction}")))


def _tree(command: str) -> _Node:
    words = command.split()
    conj = next((w for w in words if w in ("and", "after")), None)
    reps = {1: "S -> V", 2: "S -> V twice", 3: "S -> V thrice"}
    sentences = tuple(_Node(reps[k.reps], (_phrase_tree(k),)) for k in clauses(command))
    return _Node("C -> S" if conj is None else f"C -> S {conj} S", sentences)


def parse_atoms(command: str) -> tuple[str, ...]:
    """The rules a command uses, in tree (pre-)order, with repeats."""
    return tuple(n.rule for n in _tree(command).walk())


def parse_compounds(command: str) -> tuple[str, ...]:
    """The depth-1 and depth-2 compounds of a command, with repeats.

    >>> parse_compounds("walk")
    ('C -> S [S -> V]', 'C -> S [S -> V [V -> U]]', 'S -> V [V -> U]', 'S -> V [V -> U [U -> walk]]', 'V -> U [U -> walk]', 'V -> U [U -> walk]')
    """
    out = []
    for n in _tree(command).walk():
        if n.children:
            out += [n.depth1(), n.depth2()]
    return tuple(out)


def divergence(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    """``1 - sum p^alpha q^(1-alpha)`` of two count vectors (normalised here)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.sum() == 0 or q.sum() == 0:
        return 0.0
    return float(1.0 - np.sum((p / p.sum()) ** alpha * (q / q.sum()) ** (1.0 - alpha)))


@lru_cache(maxsize=1)
def _features() -> tuple[np.ndarray, np.ndarray, tuple[str, ...], tuple[str, ...]]:
    """Atom and compound count matrices over all commands (rows in command order)."""
    commands = all_commands()
    atoms = [Counter(parse_atoms(c)) for c in commands]
    compounds = [Counter(parse_compounds(c)) for c in commands]
    atom_names = tuple(sorted({a for row in atoms for a in row}))
    compound_names = tuple(sorted({k for row in compounds for k in row}))
    ai = {a: i for i, a in enumerate(atom_names)}
    ci = {k: i for i, k in enumerate(compound_names)}
    A = np.zeros((len(commands), len(atom_names)), dtype=np.float32)
    C = np.zeros((len(commands), len(compound_names)), dtype=np.float32)
    for r, (a_row, c_row) in enumerate(zip(atoms, compounds)):
        for a, n in a_row.items():
            A[r, ai[a]] = n
        for k, n in c_row.items():
            C[r, ci[k]] = n
    return A, C, atom_names, compound_names


def _grown_divergence(train, test, add, alpha: float, grow: str) -> np.ndarray:
    """``D(train || test)`` (counts) with ``add[i]`` added to the ``grow`` side, for every
    row ``i`` of ``add``."""
    base, other = (train, test) if grow == "train" else (test, train)
    grown = base[None, :] + add
    grown = grown / grown.sum(axis=1, keepdims=True)
    fixed = (other / other.sum())[None, :]
    p, q = (grown, fixed) if grow == "train" else (fixed, grown)
    return 1.0 - (p**alpha * q ** (1.0 - alpha)).sum(axis=1)


@dataclass(frozen=True)
class McdSplit:
    """An MCD split and the divergences it reaches."""

    train: list[str]
    test: list[str]
    atom_divergence: float
    compound_divergence: float


def split_divergences(train: list[str], test: list[str]) -> tuple[float, float]:
    """``(atom, compound)`` divergence of two command lists, computed afresh from parses."""
    atoms_p, atoms_q = Counter(), Counter()
    comp_p, comp_q = Counter(), Counter()
    for c in train:
        atoms_p.update(parse_atoms(c))
        comp_p.update(parse_compounds(c))
    for c in test:
        atoms_q.update(parse_atoms(c))
        comp_q.update(parse_compounds(c))
    a_keys = sorted(set(atoms_p) | set(atoms_q))
    c_keys = sorted(set(comp_p) | set(comp_q))
    da = divergence([atoms_p[k] for k in a_keys], [atoms_q[k] for k in a_keys], ATOM_ALPHA)
    dc = divergence([comp_p[k] for k in c_keys], [comp_q[k] for k in c_keys], COMPOUND_ALPHA)
    return da, dc


def mcd_split(
    seed: int,
    train_size: int = TRAIN_SIZE,
    test_size: int = TEST_SIZE,
    candidates: int = 256,
    max_atom_divergence: float = MAX_ATOM_DIVERGENCE,
) -> McdSplit:
    """A greedy maximum-compound-divergence split (see the module docstring)."""
    if train_size < 1 or test_size < 1 or train_size + test_size > len(all_commands()):
        raise RasplabError(
            f"MCD sizes must be positive and fit the {len(all_commands())} commands; "
            f"got train {train_size}, test {test_size}"
        )
    return _mcd(seed, train_size, test_size, candidates, max_atom_divergence)


@lru_cache(maxsize=8)
def _mcd(seed, train_size, test_size, candidates, max_da, per_step=1) -> McdSplit:
    A, C, _, _ = _features()
    commands = all_commands()
    rng = generator(seed, "scan", "mcd")
    unused = np.ones(len(commands), dtype=bool)
    first = rng.choice(len(commands), size=2, replace=False)
    sides = {"train": [int(first[0])], "test": [int(first[1])]}
    unused[first] = False
    atoms = {s: A[i].copy() for s, (i,) in sides.items()}
    comps = {s: C[i].copy() for s, (i,) in sides.items()}
    targets = {"train": train_size, "test": test_size}
    while len(sides["train"]) < train_size or len(sides["test"]) < test_size:
        side = min(targets, key=lambda s: len(sides[s]) / targets[s])
        pool = np.flatnonzero(unused)
        pick = pool if len(pool) <= candidates else rng.choice(pool, candidates, replace=False)
        da = _grown_divergence(atoms["train"], atoms["test"], A[pick], ATOM_ALPHA, side)
        dc = _grown_divergence(comps["train"], comps["test"], C[pick], COMPOUND_ALPHA, side)
        score = dc - 10.0 * np.maximum(0.0, da - max_da)
        room = targets[side] - len(sides[side])
        take = min(room, 1 if side == "test" else per_step)
        for best in pick[np.argsort(-score, kind="stable")[:take]].tolist():
            sides[side].append(best)
            unused[best] = False
            atoms[side] += A[best]
            comps[side] += C[best]
    train = [commands[i] for i in sorted(sides["train"])]
    test = [commands[i] for i in sorted(sides["test"])]
    da, dc = split_divergences(train, test)
    return McdSplit(train, test, da, dc)


def named_mcd_split(name: str) -> tuple[list[str], list[str]]:
    """``(train, test)`` of ``mcd1``, ``mcd2`` or ``mcd3``."""
    if name not in MCD_SEEDS:
        raise RasplabError(f"MCD splits are {', '.join(MCD_SEEDS)}; got {name!r}")
    split = mcd_split(MCD_SEEDS[name])
    return split.train, split.test
