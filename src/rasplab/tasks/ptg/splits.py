"""The PTG splits of seed 000 (Tables 2 and 3) and the sampler that draws their instances.

Each split fixes the four factors (program lines, trace steps, variables, input list length).
Variables and list length are uniform in their ranges; lines are uniform and the program a
natural random one of that length kept only if its trace steps fall in the split's range
(``plan.Reach.draw`` does this exactly, without rejecting). The training splits are binned by
trace steps as in Table 3 and draw a bin uniformly first (the paper's bins hold equal numbers
of examples). Training programs get the first-line offset augmentation (p = 0.5, offset
1-100).

Train and test never share a program: a program belongs to the training side when the CRC32 of
its source is even and to the test side when it is odd, whatever the seed (a program drawn for
the wrong side gets a variable renamed, which changes its source but not what it does). Within
a dataset every program source is unique.

>>> insts = dataset("id_mid", n=3, seed=0)
>>> [(i.program.n_lines in range(21, 41), len(i.trace) in range(90, 104)) for i in insts]
[(True, True), (True, True), (True, True)]
>>> side(insts[0].program.source())
'test'
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from rasplab.bins import Bin
from rasplab.errors import RasplabError, unknown_name
from rasplab.seeding import generator
from rasplab.tasks.ptg.draws import Draws
from rasplab.tasks.ptg.generator import GenerationFailed, build_program, rename
from rasplab.tasks.ptg.knobs import Knobs
from rasplab.tasks.ptg.program import Instance
from rasplab.tasks.ptg.tokens import count_tokens
from rasplab.tasks.ptg.tracer import trace

#: consecutive failed attempts after which a knob combination is declared impossible
MAX_ATTEMPTS = 5000
OFFSET_P, OFFSET_MAX = 0.5, 100
#: renamings tried to move a program to the wanted side of the partition before redrawing it
RENAMES = 8


@dataclass(frozen=True)
class Split:
    """A named data distribution: its knobs, its trace-step bins and whether it is training."""

    name: str
    knobs: Knobs
    bins: tuple[Bin, ...]
    train: bool = False
    scale: str = "paper"

    def __post_init__(self) -> None:
        for b in self.bins:
            if b.lo < self.knobs.steps.lo or b.hi > self.knobs.steps.hi:
                raise RasplabError(
                    f"split {self.name}: bin {b} is outside steps={self.knobs.steps}"
                )

    def seed_names(self, steps: Bin | None) -> tuple[str, ...]:
        """The names mixed into the seed of this split's datasets (see ``rasplab.seeding``)."""
        head = ("ptg",) if self.scale == "paper" else ("ptg", self.scale)
        return (*head, self.name, str(self.knobs.steps if steps is None else steps))


def _split(scale: str, name: str, lines: str, steps: str, bins=None, train=False, **knobs) -> Split:
    shared = CPU_KNOBS if scale == "cpu" else {}
    k = Knobs(lines=Bin.parse(lines), steps=Bin.parse(steps), **{**shared, **knobs})
    return Split(name, k, tuple(Bin.parse(b) for b in (bins or (steps,))), train, scale)


#: seed 000 Tables 2 and 3 (training bins: trace steps (5,7], (7,8], ... written inclusively)
PAPER = (
    ("train_short", "5-20", "6-79", ("6-7", "8", "9-10", "11-15", "16-40", "41-59", "60-79"), True),
    ("train_mid", "21-40", "15-103", ("15-25", "26-48", "49-63", "64-77", "78-90", "91-103"), True),
    ("id_short", "5-20", "59-79"),
    ("id_mid", "21-40", "90-103"),
    ("longer_lists", "21-40", "5-103", None, False, {"list_length": Bin(10, 15)}),
    ("more_variables", "21-40", "5-103", None, False, {"variables": Bin(10, 50)}),
    ("longer_traces_1", "21-40", "121-142"),
    ("longer_traces_2", "21-40", "172-300"),
    ("longer_programs", "41-60", "5-103"),
)
#: a CPU-sized copy of the same design (every factor about a third to a half of the paper's)
CPU_KNOBS = {
    "variables": Bin(1, 5),
    "list_length": Bin(2, 5),
    "iterations": Bin(1, 8),
    "block": Bin(1, 4),
    "max_tokens": 1024,
}
CPU = (
    ("train_short", "5-10", "6-30", ("6-7", "8-10", "11-20", "21-30"), True),
    ("train_mid", "11-16", "12-40", ("12-20", "21-30", "31-40"), True),
    ("id_short", "5-10", "21-30"),
    ("id_mid", "11-16", "31-40"),
    ("longer_lists", "11-16", "5-40", None, False, {"list_length": Bin(6, 8)}),
    ("more_variables", "11-16", "5-40", None, False, {"variables": Bin(6, 12)}),
    ("longer_traces_1", "11-16", "46-55"),
    ("longer_traces_2", "11-16", "60-80"),
    ("longer_programs", "17-22", "5-40"),
)
SCALES = ("paper", "cpu")


def _table(scale: str, rows) -> dict[str, Split]:
    out = {}
    for row in rows:
        name, lines, steps, *rest = row
        bins = rest[0] if rest else None
        train = rest[1] if len(rest) > 1 else False
        extra = rest[2] if len(rest) > 2 else {}
        out[name] = _split(scale, name, lines, steps, bins, train, **extra)
    return out


TABLES: dict[str, dict[str, Split]] = {"paper": _table("paper", PAPER), "cpu": _table("cpu", CPU)}
SPLITS = TABLES["paper"]
SPLIT_NAMES = tuple(SPLITS)
TRAIN_SPLITS = tuple(n for n, s in SPLITS.items() if s.train)
EVAL_SPLITS = tuple(n for n, s in SPLITS.items() if not s.train)


def get_split(name: str, scale: str = "paper") -> Split:
    """The split called ``name`` at ``scale`` (an unknown name is a user error)."""
    if scale not in TABLES:
        raise unknown_name("PTG scale", scale, SCALES)
    if name not in TABLES[scale]:
        raise unknown_name("PTG split", name, SPLIT_NAMES)
    return TABLES[scale][name]


def side(source: str) -> str:
    """``"train"`` or ``"test"``: the side of the train/test partition a program belongs to."""
    return "test" if zlib.crc32(source.encode()) & 1 else "train"


def sample(
    draws: Draws,
    knobs: Knobs,
    steps: Bin | None = None,
    want: str | None = None,
    augment: bool = False,
) -> Instance:
    """One instance under ``knobs`` with trace steps in ``steps`` (default ``knobs.steps``).

    ``want`` keeps only programs of that side of the train/test partition; ``augment``
    applies the first-line offset augmentation.
    """
    steps = knobs.steps if steps is None else steps
    k = knobs
    for _ in range(MAX_ATTEMPTS):
        n_vars = draws.randint(k.variables.lo, k.variables.hi)
        n_list = draws.randint(k.list_length.lo, k.list_length.hi)
        picked = k.reach(n_vars, n_list).draw(draws, k.lines, steps)
        if picked is None:
            continue
        n_lines, n_steps, shape = picked
        try:
            program, inputs = build_program(
                draws, shape, n_vars, n_list, (k.values.lo, k.values.hi)
            )
        except GenerationFailed:
            continue
        if want is not None:
            for _ in range(RENAMES):
                if side(program.source()) == want:
                    break
                renamed = rename(draws, program, inputs)
                if renamed is None:
                    break
                program, inputs = renamed
            if side(program.source()) != want:
                continue
        first = 1 + draws.randint(1, OFFSET_MAX) if augment and draws.chance(OFFSET_P) else 1
        out = trace(program, inputs, first)
        if len(out) != n_steps:
            raise AssertionError(f"shape promised {n_steps} steps, the trace has {len(out)}")
        inst = Instance(program, inputs, tuple(out), first)
        if _too_long(inst, k.max_tokens):
            continue
        return inst
    raise RasplabError(
        f"no program found in {MAX_ATTEMPTS} attempts for lines={k.lines}, steps={steps}, "
        f"variables={k.variables}, list_length={k.list_length}, iterations={k.iterations}, "
        f"max_tokens={k.max_tokens}: this combination of knobs is (nearly) impossible"
    )


def _too_long(inst: Instance, max_tokens: int) -> bool:
    """Whether the tokenized instance would exceed ``max_tokens`` (exact only when close)."""
    chars = len(inst.program.source()) + len(inst.call) + sum(map(len, inst.trace))
    bound = chars + 4 * (inst.program.n_lines + len(inst.trace)) + 4
    return bound > max_tokens and count_tokens(inst) > max_tokens


def sample_split(draws: Draws, split: Split, steps: Bin | None = None) -> Instance:
    """One instance of ``split`` (a training split draws one of its bins uniformly first)."""
    bins = split.bins
    if steps is not None:
        bins = tuple(
            Bin(max(b.lo, steps.lo), min(b.hi, steps.hi))
            for b in bins
            if b.lo <= steps.hi and steps.lo <= b.hi
        )
        if not bins:
            raise RasplabError(
                f"bin {steps} does not meet the trace steps {split.knobs.steps} of split {split.name}"
            )
    b = bins[int(draws.random() * len(bins))] if len(bins) > 1 else bins[0]
    want = "train" if split.train else "test"
    return sample(draws, split.knobs, b, want=want, augment=split.train)


def dataset(
    split: Split | str, n: int, seed: int = 0, steps: Bin | str | None = None
) -> list[Instance]:
    """``n`` instances of ``split`` with distinct programs, seeded by ``seed``.

    ``steps`` keeps only trace steps in that bin; a bin equal to the split's own steps is the
    same as none (same data).
    """
    split = get_split(split) if isinstance(split, str) else split
    steps = None if steps is None else Bin.parse(steps)
    if steps == split.knobs.steps:
        steps = None
    draws = Draws(generator(seed, *split.seed_names(steps)))
    seen: set[str] = set()
    out: list[Instance] = []
    misses = 0
    while len(out) < n:
        inst = sample_split(draws, split, steps)
        source = inst.program.source()
        if source in seen:
            misses += 1
            if misses > MAX_ATTEMPTS:
                raise RasplabError(
                    f"split {split.name} ran out of distinct programs after {len(out)}"
                )
            continue
        misses = 0
        seen.add(source)
        out.append(inst)
    return out
