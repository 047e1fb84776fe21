"""Checking a C-RASP program against a registered task's own labels: the oracle for a new task.

:func:`check_program` draws ``samples`` examples from the task's generator (lengths uniform
over the task's lengths in ``lengths``), runs the program on each example's symbols (the
task's ``<bos>`` is the program's start position; a final unscored ``<eos>`` is dropped) and
compares, at every scored position, what the task's target asks for:

* next-symbol-set tasks (the regular languages): a program with a ``"set"`` readout must give
  the target set; a program without one must accept exactly the prefixes whose target allows
  ``<eos>``. Language tasks also get as many strings *outside* the language (uniform random
  strings and one-symbol mutations of positive strings), labelled by the task's automaton:
  there the readout must give the automaton's next-symbol set (empty once dead) and the
  output must be membership of every prefix;
* answer and label tasks (next-token formulation): a ``"token"`` readout must give the target.

Programs run in chunks of similar length, keeping only the output and readout values, so that
programs with thousands of operations stay within a bounded memory. The disagreement reported
is one of the shortest strings that disagree (a counterexample a person can read), the first
drawn among those.

>>> from rasplab.crasp.library import program
>>> r = check_program(program("tomita2"), "tomita2", lengths="1-40", samples=50)
>>> r.total, r.agree, r.first_disagreement
(100, 100, None)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rasplab.bins import Bin
from rasplab.crasp.interpreter import CraspRun, encode, run_ids
from rasplab.crasp.ir import CraspProgram
from rasplab.errors import RasplabError
from rasplab.seeding import generator
from rasplab.tasks.base import BOS, EOS, Task, get_task

CHUNK_BYTES = 256 * 2**20
"""Memory budget of one chunk's live values."""


@dataclass
class CheckResult:
    """How many strings agreed at every scored position, and the first that did not."""

    task: str
    program: str
    total: int
    agree: int
    first_disagreement: dict | None

    @property
    def ok(self) -> bool:
        """Whether every string agreed."""
        return self.agree == self.total

    def to_json(self) -> dict:
        """Plain JSON data."""
        return {
            "task": self.task,
            "program": self.program,
            "total": self.total,
            "agree": self.agree,
            "first_disagreement": self.first_disagreement,
        }


@dataclass
class _Case:
    """One string and, per position, what the readout and the output must be (``None``: not
    scored there; ``readout`` or ``accepts`` ``None``: not checked)."""

    symbols: tuple[str, ...]
    readout: list | None
    accepts: list | None
    origin: str


def check_program(
    program: CraspProgram,
    task: str | Task,
    lengths: str | Bin = "1-500",
    samples: int = 1000,
    seed: int = 0,
) -> CheckResult:
    """Compare ``program`` with ``task``'s labels on ``samples`` generated examples (plus as
    many labelled strings outside a language task's language); see the module docstring."""
    task = get_task(task) if isinstance(task, str) else task
    if not isinstance(samples, int) or samples < 1:
        raise RasplabError(f"samples must be a positive number, got {samples!r}")
    mode = _mode(program, task)
    rng = generator(seed, "crasp-check", task.name)
    examples = task.sample_bin(rng, lengths, samples)
    cases = [_from_example(program, task, ex, mode) for ex in examples]
    automaton = getattr(task, "automaton", None)
    if automaton is not None:
        cases += _outside_language(rng, automaton, examples, mode, samples)
    agree, first, first_key = 0, None, None
    results = _evaluate(program, [c.symbols for c in cases])
    for index, (case, (readout, accepts)) in enumerate(zip(cases, results)):
        diff = _first_difference(
            case.readout, readout, "next set" if mode == "set" else "next token"
        )
        diff = diff or _first_difference(case.accepts, accepts, "membership")
        if diff is None:
            agree += 1
        elif first_key is None or (len(case.symbols), index) < first_key:
            first_key = (len(case.symbols), index)
            first = {"input": " ".join(case.symbols), "origin": case.origin, **diff}
    return CheckResult(task.name, program.name, len(cases), agree, first)


def _first_difference(expected: list | None, got: list, what: str) -> dict | None:
    """The first scored position where ``got`` differs from ``expected``."""
    if expected is None:
        return None
    if expected == got:
        return None
    for i, (e, g) in enumerate(zip(expected, got)):
        if e is not None and e != g:
            return {"position": i, "what": what, "expected": _plain(e), "got": _plain(g)}
    return None


def _mode(program: CraspProgram, task: Task) -> str:
    """``"set"``, ``"membership"`` or ``"token"``: what is compared with the targets."""
    ro = None if program.readout is None else program.readout.kind
    if task.target_kind == "next_set":
        if ro == "token":
            raise RasplabError(
                f"task {task.name!r} predicts next-symbol sets; program {program.name!r} has a "
                "token readout (use next_set, or no readout to check membership)"
            )
        return "set" if ro == "set" else "membership"
    if task.target_kind in ("answer", "labels"):
        if ro != "token":
            raise RasplabError(
                f"task {task.name!r} predicts one token per scored position; program "
                f"{program.name!r} needs a token readout (next_token)"
            )
        return "token"
    raise RasplabError(
        f"task {task.name!r} has {task.target_kind} targets; C-RASP programs are checked "
        "against next-symbol sets, answers or labels"
    )


def _from_example(program: CraspProgram, task: Task, example, mode: str) -> _Case:
    """The program's input and the expected values of one task example."""
    tokens, targets = list(example.tokens), list(example.targets)
    if not tokens or tokens[0] != BOS:
        raise RasplabError(f"task {task.name!r}: examples do not start with {BOS}")
    if tokens[-1] == EOS and targets[-1] is None:
        tokens, targets = tokens[:-1], targets[:-1]
    missing = sorted(set(tokens[1:]) - set(program.alphabet))
    if missing:
        raise RasplabError(
            f"task {task.name!r} uses symbols {', '.join(missing[:5])} that are not in the "
            f"alphabet of program {program.name!r}"
        )
    symbols = tuple(tokens[1:])
    if mode == "token":
        return _Case(symbols, [None if t is None else str(t) for t in targets], None, "task")
    accepts = [None if t is None else EOS in t for t in targets]
    return _Case(symbols, targets if mode == "set" else None, accepts, "task")


def _outside_language(rng, automaton, examples, mode: str, n: int) -> list[_Case]:
    """``n`` labelled strings that are mostly not in the language: half uniform random, half
    positive strings with one symbol changed; expected values from the automaton's table."""
    alphabet = list(automaton.alphabet)
    strings, origins = [], []
    for k in range(n):
        base = list(examples[k % len(examples)].tokens[1:-1])
        if k % 2 == 0 or not base:
            base = [alphabet[int(x)] for x in rng.integers(len(alphabet), size=len(base))]
            origins.append("random string")
        else:
            base[int(rng.integers(len(base)))] = alphabet[int(rng.integers(len(alphabet)))]
            origins.append("mutated task string")
        strings.append(base)
    states = _run_automaton(automaton, strings)
    q = automaton.num_states  # the dead state's row in the tables below
    accepting = np.array([s in automaton.accepting for s in range(q)] + [False])
    sets = np.empty(q + 1, dtype=object)
    sets[:] = [automaton.next_set(s) for s in range(q)] + [()]
    out = []
    for s, row, origin in zip(strings, states, origins):
        row = row[: len(s) + 1]
        accepts = accepting[row].tolist()
        out.append(_Case(tuple(s), sets[row].tolist() if mode == "set" else None, accepts, origin))
    return out


def _run_automaton(automaton, strings: list[list[str]]) -> np.ndarray:
    """``[B, T]`` states after each prefix (dead = ``num_states``), all strings at once."""
    q = automaton.num_states
    delta = np.array(automaton.delta + ((-1,) * len(automaton.alphabet),), dtype=np.int64)
    delta[delta < 0] = q
    index = {a: k for k, a in enumerate(automaton.alphabet)}
    width = max((len(s) for s in strings), default=0)
    ids = np.zeros((len(strings), width), dtype=np.int64)
    for b, s in enumerate(strings):
        ids[b, : len(s)] = [index[a] for a in s]
    states = np.zeros((len(strings), width + 1), dtype=np.int64)
    for i in range(width):
        states[:, i + 1] = delta[states[:, i], ids[:, i]]
    return states


def _evaluate(program: CraspProgram, strings: Sequence[tuple[str, ...]]) -> list[tuple[list, list]]:
    """Per string, ``(readout per position, output per position)``, computed in chunks."""
    order = sorted(range(len(strings)), key=lambda b: len(strings[b]))
    results: list = [None] * len(strings)
    per_cell = 9 * max(1, _peak_live(program))
    start = 0
    while start < len(order):
        stop = start + 1
        while stop < len(order):
            t = len(strings[order[stop]]) + 1
            if (stop - start + 1) * t * per_cell > CHUNK_BYTES:
                break
            stop += 1
        chunk = order[start:stop]
        symbols, ids, lens = encode(program, [strings[b] for b in chunk])
        run = CraspRun(program, symbols, ids, lens, run_ids(program, ids, keep=()))
        for row, b in enumerate(chunk):
            results[b] = (run.readout(row), run.prefix_accept(row))
        start = stop
    return results


def _peak_live(program: CraspProgram) -> int:
    """The most operation values alive at once when running with ``keep=()``."""
    last = {a: k for k, op in enumerate(program.ops) for a in op.args}
    kept = {program.output} | set(program.readout.ops if program.readout else ())
    live, peak = 0, 0
    for k, op in enumerate(program.ops):
        live += 1
        peak = max(peak, live)
        live -= sum(1 for a in set(op.args) if last[a] == k and a not in kept)
    return peak


def _plain(v):
    return list(v) if isinstance(v, tuple) else v
