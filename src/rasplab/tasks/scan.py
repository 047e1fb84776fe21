"""SCAN (Lake and Baroni 2018), generated from its grammar: commands, their actions, the splits.

Plain functions for programs and analyses, and the ``scan`` task built on them.

The grammar (``docs/tasks.md``, SCAN): a phrase V is ``u``, ``x left|right``,
``x opposite left|right`` or ``x around left|right`` with u in {walk, look, run, jump} and x in
{walk, look, run, jump, turn} (``turn`` has no action of its own); S is ``V``, ``V twice`` or
``V thrice``; a command is ``S``, ``S and S`` or ``S after S``.

>>> len(all_commands())
20910
>>> interpret("jump around right after turn left twice")
['I_TURN_LEFT', 'I_TURN_LEFT', 'I_TURN_RIGHT', 'I_JUMP', 'I_TURN_RIGHT', 'I_JUMP', 'I_TURN_RIGHT', 'I_JUMP', 'I_TURN_RIGHT', 'I_JUMP']
>>> canonical_line("walk opposite left thrice")
'IN: walk opposite left thrice OUT: I_TURN_LEFT I_TURN_LEFT I_WALK I_TURN_LEFT I_TURN_LEFT I_WALK I_TURN_LEFT I_TURN_LEFT I_WALK'
>>> train, test = length_split()
>>> (len(train), len(test))
(16990, 3920)
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.seeding import generator
from rasplab.tasks.base import BOS, SEP, SPECIALS, Example, Task, answer_example, register

PRIMITIVES = ("walk", "look", "run", "jump")
"""The primitives u with an action of their own, in the order the command list uses."""
ACTIONS = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP", "turn": None}
TURNS = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
MODIFIERS = ("", "opposite", "around")
REPEATS = {"": 1, "twice": 2, "thrice": 3}
CONJUNCTIONS = ("and", "after")
WORDS = (
    "walk",
    "look",
    "run",
    "jump",
    "turn",
    "left",
    "right",
    "opposite",
    "around",
    "twice",
    "thrice",
    "and",
    "after",
)
"""Every command word, in a fixed order (the ``scan`` task's input vocabulary)."""
ACTION_TOKENS = ("I_WALK", "I_LOOK", "I_RUN", "I_JUMP", "I_TURN_LEFT", "I_TURN_RIGHT")
"""Every action token, in a fixed order."""
LENGTH_SPLIT_MAX_ACTIONS = 22
"""The length split trains on commands whose action sequence has at most this many actions."""


@lru_cache(maxsize=1)
def _phrases() -> tuple[str, ...]:
    """The 34 phrases V: the four primitives, then for each x (walk, look, run, jump, turn) and
    direction (left, right) the plain, ``opposite`` and ``around`` forms."""
    out = list(PRIMITIVES)
    for x in (*PRIMITIVES, "turn"):
        for direction in TURNS:
            for modifier in MODIFIERS:
                out.append(" ".join(w for w in (x, modifier, direction) if w))
    return tuple(out)


@lru_cache(maxsize=1)
def _sentences() -> tuple[str, ...]:
    """The 102 repeated phrases S: each phrase V, then ``V twice``, then ``V thrice``."""
    return tuple(f"{v} {r}".strip() for v in _phrases() for r in REPEATS)


@lru_cache(maxsize=1)
def _commands() -> tuple[str, ...]:
    """All 20,910 commands in the documented order (see :func:`all_commands`)."""
    s = _sentences()
    out = list(s)
    for conj in CONJUNCTIONS:
        out.extend(f"{a} {conj} {b}" for a in s for b in s)
    return tuple(out)


def all_commands() -> list[str]:
    """The 20,910 SCAN commands in a fixed order: the 102 single clauses S, then every
    ``S1 and S2``, then every ``S1 after S2`` (S1 outer loop, S2 inner, both in clause order).

    Clause order: each phrase V followed by its ``twice`` and ``thrice`` forms; phrase order:
    ``walk, look, run, jump``, then for x in ``walk, look, run, jump, turn`` and direction in
    ``left, right``: ``x d``, ``x opposite d``, ``x around d``.

    >>> all_commands()[:5]
    ['walk', 'walk twice', 'walk thrice', 'look', 'look twice']
    """
    return list(_commands())


def _phrase_actions(words: list[str], command: str) -> list[str]:
    """The actions of one phrase V given as words."""
    x = words[0] if words else ""
    if x not in ACTIONS:
        raise RasplabError(f"malformed SCAN command {command!r}: {x!r} is not a primitive")
    own = [ACTIONS[x]] if ACTIONS[x] else []
    if len(words) == 1:
        if not own:
            raise RasplabError(f"malformed SCAN command {command!r}: 'turn' needs a direction")
        return own
    direction = words[-1]
    if direction not in TURNS or len(words) > 3:
        raise RasplabError(f"malformed SCAN command {command!r}: bad phrase {' '.join(words)!r}")
    turn = TURNS[direction]
    modifier = words[1] if len(words) == 3 else ""
    if modifier == "":
        return [turn, *own]
    if modifier == "opposite":
        return [turn, turn, *own]
    if modifier == "around":
        return [turn, *own] * 4
    raise RasplabError(f"malformed SCAN command {command!r}: unknown modifier {modifier!r}")


def _clause_actions(words: list[str], command: str) -> list[str]:
    """The actions of one clause S (a phrase, optionally ``twice``/``thrice``)."""
    times = 1
    if words and words[-1] in ("twice", "thrice"):
        times = REPEATS[words[-1]]
        words = words[:-1]
    return _phrase_actions(words, command) * times


def interpret(command: str) -> list[str]:
    """The action tokens of a SCAN command (``⟦a and b⟧ = ⟦a⟧⟦b⟧``, ``⟦a after b⟧ = ⟦b⟧⟦a⟧``).

    >>> interpret("turn right and jump")
    ['I_TURN_RIGHT', 'I_JUMP']
    """
    words = command.split()
    joins = [i for i, w in enumerate(words) if w in CONJUNCTIONS]
    if len(joins) > 1:
        raise RasplabError(f"malformed SCAN command {command!r}: at most one 'and'/'after'")
    if not joins:
        return _clause_actions(words, command)
    i = joins[0]
    first = _clause_actions(words[:i], command)
    second = _clause_actions(words[i + 1 :], command)
    return first + second if words[i] == "and" else second + first


def canonical_line(command: str) -> str:
    """The canonical text form ``IN: <command> OUT: <actions>``."""
    return f"IN: {command} OUT: {' '.join(interpret(command))}"


@lru_cache(maxsize=1)
def _action_counts() -> tuple[int, ...]:
    """Number of actions of every command, in :func:`all_commands` order."""
    return tuple(len(interpret(c)) for c in _commands())


@lru_cache(maxsize=1)
def _longest_actions() -> dict[int, int]:
    """Number of command words -> most actions of a command with that many words."""
    out: dict[int, int] = {}
    for c, k in zip(_commands(), _action_counts()):
        n = len(c.split())
        out[n] = max(out.get(n, 0), k)
    return out


def length_split() -> tuple[list[str], list[str]]:
    """The standard length split: (train, test) commands, each in :func:`all_commands` order;
    train holds the commands with at most 22 actions (16,990), test the rest (3,920)."""
    train, test = [], []
    for c, k in zip(_commands(), _action_counts()):
        (train if k <= LENGTH_SPLIT_MAX_ACTIONS else test).append(c)
    return train, test


def simple_split(seed: int = 0, train_fraction: float = 0.8) -> tuple[list[str], list[str]]:
    """The simple split: a seeded random 80/20 partition (train, test), each in command order.

    >>> train, test = simple_split(0)
    >>> (len(train), len(test), len(set(train) & set(test)))
    (16728, 4182, 0)
    """
    commands = _commands()
    n_train = int(round(train_fraction * len(commands)))
    order = generator(seed, "scan", "simple_split").permutation(len(commands))
    is_train = np.zeros(len(commands), dtype=bool)
    is_train[order[:n_train]] = True
    train = [c for c, t in zip(commands, is_train) if t]
    test = [c for c, t in zip(commands, is_train) if not t]
    return train, test


SPLIT_TYPES = (
    "length",
    "simple",
    "add_jump",
    "add_turn_left",
    "jump_around_right",
    "around_right",
    "opposite_right",
    "right",
    "mcd1",
    "mcd2",
    "mcd3",
)
"""Every split type (see :mod:`rasplab.tasks.scan_splits` and :mod:`rasplab.tasks.scan_mcd`)."""


def split_commands(split_type: str, split_seed: int = 0) -> tuple[list[str], list[str]]:
    """``(train, test)`` commands of a split type, each in :func:`all_commands` order.

    >>> [len(part) for part in split_commands("add_turn_left")]
    [19702, 1208]
    """
    # import cycle: scan_mcd and scan_splits import this module
    from rasplab.tasks import scan_mcd, scan_splits

    if split_type == "length":
        return length_split()
    if split_type == "simple":
        return simple_split(split_seed)
    if split_type.startswith("add_"):
        return scan_splits.add_primitive_split(split_type[len("add_") :])
    if split_type in scan_splits.TEMPLATES:
        return scan_splits.template_split(split_type)
    if split_type in scan_mcd.MCD_SEEDS:
        return scan_mcd.named_mcd_split(split_type)
    raise RasplabError(
        f"scan option split must be one of: {', '.join(SPLIT_TYPES)} (got {split_type!r})"
    )


@register("scan")
class ScanTask(Task):
    """SCAN as an answer task: ``<bos> command words <sep> actions <eos>``; length = number of
    command words (1-9). Splits: ``train``/``test`` of the chosen split type (``length``, the
    default; ``simple`` with ``split_seed``; ``add_jump``, ``add_turn_left``, the templates
    ``jump_around_right``, ``around_right``, ``opposite_right``, ``right``; ``mcd1``-``mcd3``:
    see :data:`SPLIT_TYPES`), and ``all`` (every command, canonical order).
    SCAN is finite, so :meth:`sample` draws only from the training split.

    >>> task = ScanTask()
    >>> ex = task.example("jump twice")
    >>> " ".join(ex.tokens)
    '<bos> jump twice <sep> I_JUMP I_JUMP <eos>'
    >>> task.text(ex)
    'IN: jump twice OUT: I_JUMP I_JUMP'
    >>> [len(task.dataset(s)) for s in task.splits]
    [16990, 3920, 20910]
    """

    name = "scan"
    description = "SCAN commands to action sequences (split: length, simple, add_jump, ...)"
    vocab = SPECIALS + WORDS + ACTION_TOKENS
    splits = ("train", "test", "all")
    train_bin = Bin(1, 9)
    test_bins = (Bin(1, 9),)
    max_length = 9

    def __init__(self, split: str = "length", split_seed: int = 0) -> None:
        if split not in SPLIT_TYPES:
            raise RasplabError(
                f"scan option split must be one of: {', '.join(SPLIT_TYPES)} (got {split!r})"
            )
        if not isinstance(split_seed, int) or not 0 <= split_seed < 2**32:
            raise RasplabError(
                f"scan option split_seed must be an int in [0, 2**32), got {split_seed!r}"
            )
        if split_seed and split != "simple":  # it would be accepted and ignored
            raise RasplabError(
                f"scan option split_seed applies to the simple split only; split={split} has "
                "one fixed train/test division, so drop split_seed"
            )
        self.split_type, self.split_seed = split, split_seed
        self.description = f"SCAN commands to action sequences ({split} split)"

    def pool(self, split: str) -> list[str]:
        """The commands of ``split`` (``train``, ``test`` or ``all``), in canonical order."""
        if split == "all":
            return all_commands()
        if split not in self.splits:
            raise RasplabError(
                f"scan has no split {split!r}; choose one of: {', '.join(self.splits)}"
            )
        train, test = split_commands(self.split_type, self.split_seed)
        return train if split == "train" else test

    def example(self, command: str) -> Example:
        """The example for one command."""
        words = command.split()
        return answer_example([BOS, *words, SEP], interpret(command), len(words))

    def text(self, example: Example) -> str:
        """The canonical ``IN: ... OUT: ...`` line."""
        sep = example.tokens.index(SEP)
        return (
            f"IN: {' '.join(example.tokens[1:sep])} OUT: {' '.join(example.tokens[sep + 1 : -1])}"
        )

    def max_tokens(self, length: int) -> int:
        """``<bos>``, the words, ``<sep>``, the longest action sequence of that length, ``<eos>``."""
        return length + 3 + _longest_actions().get(length, 0)

    def sample(self, rng: np.random.Generator, length: int) -> Example:
        """A uniform training-split command with ``length`` words (where the split has none of
        that length, e.g. some MCD splits, with the nearest length it has, shorter first)."""
        if not hasattr(self, "_train_by_length"):
            self._train_by_length: dict[int, list[str]] = {}
            for c in self.pool("train"):
                self._train_by_length.setdefault(len(c.split()), []).append(c)
        if not self._train_by_length:
            raise RasplabError(f"scan's {self.split_type} training split is empty")
        if length not in self._train_by_length:  # e.g. MCD splits lack some lengths: nearest
            length = min(self._train_by_length, key=lambda n: (abs(n - length), n))
        pool = self._train_by_length[length]
        return self.example(pool[int(rng.integers(len(pool)))])

    def default_bin(self, split: str) -> Bin:
        """Every command length."""
        return Bin(1, 9)

    def default_size(self, split: str) -> int:
        """The whole split."""
        return len(self.pool(split))

    def stream(
        self, split: str, bin: Bin | str | None = None, n: int | None = None, seed: int = 0
    ) -> Iterator[Example]:
        """The commands of ``split`` with length in ``bin`` in canonical order; with ``n``
        smaller than that, a seeded subset (still in canonical order). The commands are a
        finite pool held in memory; their examples are built as they are consumed."""
        bin = Bin(1, 9) if bin is None else Bin.parse(bin)
        commands = [c for c in self.pool(split) if len(c.split()) in bin]
        if n is not None and n < 0:
            raise RasplabError(f"n must be a non-negative number of examples, got {n}")
        if n is not None and n < len(commands):
            rng = generator(seed, self.name, self.split_type, split, str(bin))
            keep = np.sort(rng.choice(len(commands), size=n, replace=False))
            commands = [commands[i] for i in keep.tolist()]
        return (self.example(c) for c in commands)
