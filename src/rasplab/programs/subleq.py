"""SUBLEQ: an interpreter for one-instruction programs that may rewrite themselves (ALTA App. D.3).

Machine. Memory is ``memory_size`` words (default 16), each an integer in
``[min_value, max_value]`` (default ``[-16, 15]``); arithmetic wraps around inside that range
(two's-complement style). Code and data share the memory, so a program may overwrite its own
instructions. Starting with ``pc = 0``, one step is::

    if not 0 <= pc <= memory_size - 3: halt          # e.g. a jump to a negative address
    a, b, c = mem[pc], mem[pc + 1], mem[pc + 2]
    if not (0 <= a < memory_size and 0 <= b < memory_size): halt
    mem[b] = wrap(mem[b] - mem[a])
    pc = c if mem[b] <= 0 else pc + 3

The answer is the memory after halting. A run that has not halted after ``max_steps`` steps
(default 48) is an error, both here and in the reference emulator :func:`run_subleq`.

Natural input: the initial memory as space-separated integers from address 0 (1 to
``memory_size`` words; the rest of memory is zero). The answer lists all ``memory_size`` words.

Program. Every position is one memory word (token = the word's value id ``v - min_value``);
position ``p`` is address ``p``. All positions hold the same copy of the machine state and
alternate two layers per step: *fetch* picks the next ``pc`` (``tgt`` = last ``c`` if the
last step jumped, else ``pcn`` = last ``pc + 3``) and copies ``mem[pc..pc+2]`` into ``a, b,
c`` through heads that read at both candidates; *execute* reads ``mem[a]`` and ``mem[b]``,
writes ``mem[b] - mem[a]`` at position ``b`` and decides the jump. Fetch reads memory after
the previous write, so self-modifying code runs as written. A step costs 2 layers (ALTA: 3).
Each pointer is reset to a fixed value in the layer that does not use it, so that every copy
rule reads a known old value (``O(V)`` rules per pointer instead of ``O(V^2)``); the
subtraction (``V(V-1)``) and jump (about ``V^2/2``) tables dominate: 2,176 rules for the
default ``V = 32`` values. A run of ``s`` steps takes ``2s + 1`` layers (the next fetch halts)
or ``2s + 2`` (an invalid ``a``/``b`` halts the execute layer); ``max_layers = 2 max_steps + 2``.

The library entry (``encode``, ``decode``, ``reference``, ``random_input``) uses the default
machine; ``random_input`` draws candidate programs until one halts within ``max_steps``
(non-halting draws are skipped, deterministically for a given generator).

>>> from rasplab.lang.interpreter import interpret
>>> ids = SUBLEQ.encode("3 4 -1 1 0")
>>> run = interpret(SUBLEQ.program(), [ids])
>>> SUBLEQ.decode(ids, run.outputs[0])[:6], run.layers
(['3', '4', '-1', '1', '-1', '0'], [3])
>>> run_subleq([3, 4, -1, 1, 0])[:6]
[3, 4, -1, 1, -1, 0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang import input_var, position_var, program, qkv, rules_from_function, var
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram, register_program

MEMORY_SIZE, MIN_VALUE, MAX_VALUE, MAX_STEPS = 16, -16, 15, 48
"""Default machine: 16 words of values in [-16, 15]; at most 48 steps."""
FETCH, EXECUTE, DONE = 0, 1, 2
"""Values of the ``state`` variable (the program halts when every position is DONE)."""


def _check_machine(memory_size: int, min_value: int, max_value: int, max_steps: int) -> None:
    """Raise a RasplabError naming the option that is out of range."""
    if not isinstance(memory_size, int) or memory_size < 3:
        raise RasplabError(
            f"memory_size must be an int >= 3 (one instruction), got {memory_size!r}"
        )
    if not isinstance(min_value, int) or min_value > -1:
        raise RasplabError(
            f"min_value must be a negative int (negative jumps halt), got {min_value!r}"
        )
    if not isinstance(max_value, int) or max_value < memory_size - 1:
        raise RasplabError(
            f"max_value must be an int >= memory_size - 1 = {memory_size - 1} "
            f"(every address must be a value), got {max_value!r}"
        )
    if not isinstance(max_steps, int) or max_steps < 1:
        raise RasplabError(f"max_steps must be a positive int, got {max_steps!r}")


def _wrap(v: int, min_value: int, max_value: int) -> int:
    """``v`` wrapped into ``[min_value, max_value]``."""
    return (v - min_value) % (max_value - min_value + 1) + min_value


def run_subleq(
    words: Sequence[int],
    memory_size: int = MEMORY_SIZE,
    min_value: int = MIN_VALUE,
    max_value: int = MAX_VALUE,
    max_steps: int = MAX_STEPS,
) -> list[int]:
    """The reference emulator: the final memory, or an error after ``max_steps`` steps.

    >>> run_subleq([0, 0, -1])[:3]  # mem[0] -= mem[0] gives 0 <= 0: jump to -1, halt
    [0, 0, -1]
    """
    _check_machine(memory_size, min_value, max_value, max_steps)
    mem = _memory(words, memory_size, min_value, max_value)
    pc = 0
    for _ in range(max_steps + 1):
        if not 0 <= pc <= memory_size - 3:
            return mem
        a, b, c = mem[pc : pc + 3]
        if not (0 <= a < memory_size and 0 <= b < memory_size):
            return mem
        if _ == max_steps:
            break
        mem[b] = _wrap(mem[b] - mem[a], min_value, max_value)
        pc = c if mem[b] <= 0 else pc + 3
    raise RasplabError(f"SUBLEQ program did not halt within {max_steps} steps")


def _memory(words: Sequence[int], memory_size: int, min_value: int, max_value: int) -> list[int]:
    """The initial memory: ``words`` then zeros, checked against the machine's limits."""
    words = [int(w) for w in words]
    if not 1 <= len(words) <= memory_size:
        raise RasplabError(f"SUBLEQ input needs 1 to {memory_size} memory words, got {len(words)}")
    bad = [w for w in words if not min_value <= w <= max_value]
    if bad:
        raise RasplabError(
            f"SUBLEQ word {bad[0]} is outside the value range [{min_value}, {max_value}]"
        )
    return words + [0] * (memory_size - len(words))


def _mlp_parts(m: int, lo: int, hi: int) -> list:
    """The MLP as independent functions (each writes its own variables; rules are concatenated):
    the fetch step's, then the execute step's."""
    return [*_fetch_parts(m, lo), *_execute_parts(m, lo, hi)]


def _ids(lo: int) -> tuple:
    """(value -> value id, value id -> value, the id of 0, which marks a slot as reset)."""
    vid = lambda v: v - lo  # noqa: E731
    val = lambda i: i + lo  # noqa: E731
    return vid, val, vid(0)


def _fetch_parts(m: int, lo: int) -> list:
    """The fetch step's functions: the next pc and its three words, bad addresses, ``isb``."""
    _, val, reset = _ids(lo)

    def fetch_src(x):
        """The next pc: ``tgt`` if the last step jumped, else ``pcn``."""
        return x["tgt"] if x["jump"] else x["pcn"]

    def fetched(x, word: int):
        """``mem[pc + word]`` at the chosen candidate pc (read through the matching head)."""
        return x[f"{'abc'[word]}_{'jump' if x['jump'] else 'next'}"]

    def fetch_state(x):
        if x["state"] == FETCH:
            x["state"] = EXECUTE if 0 <= val(fetch_src(x)) <= m - 3 else DONE

    def fetch_pc(x):
        if x["state"] == FETCH and x["pc"] == reset:
            src = fetch_src(x)
            if 0 <= val(src) <= m - 3:
                x["pc"] = src

    def fetch_word(word: int):
        name = "abc"[word]

        def copy(x):
            if x["state"] == FETCH and x[name] == reset:
                x[name] = fetched(x, word)

        return copy

    def fetch_bad(word: int):
        def flag(x):
            if x["state"] == FETCH and not 0 <= val(fetched(x, word)) < m:
                x[f"bad_{'abc'[word]}"] = 1

        return flag

    def fetch_isb(x):
        if x["state"] == FETCH:
            pos = x["pos"]
            if val(pos) < m and fetched(x, 1) == pos:
                x["isb"] = 1

    def fetch_resets(x):
        if x["state"] == FETCH:
            x["tgt"], x["pcn"], x["jump"] = reset, reset, 0

    return [
        fetch_state,
        fetch_pc,
        *(fetch_word(w) for w in range(3)),
        fetch_bad(0),
        fetch_bad(1),
        fetch_isb,
        fetch_resets,
    ]


def _execute_parts(m: int, lo: int, hi: int) -> list:
    """The execute step's functions: subtract, jump, the next state, pc and target, resets."""
    vid, val, reset = _ids(lo)

    def execute_sub(x):
        if x["state"] == EXECUTE and x["isb"] == 1:
            delta = val(x["mem_a"])
            if delta:
                x["mem"] = vid(_wrap(val(x["mem"]) - delta, lo, hi))

    def execute_jump(x):
        if x["state"] == EXECUTE and _wrap(val(x["mem_b"]) - val(x["mem_a"]), lo, hi) <= 0:
            x["jump"] = 1

    def execute_state(x):
        if x["state"] == EXECUTE:
            x["state"] = DONE if x["bad_a"] or x["bad_b"] else FETCH

    def execute_next(x):
        if x["state"] == EXECUTE and x["pcn"] == reset:
            pc = val(x["pc"])
            if 0 <= pc <= m - 3:
                x["pcn"] = vid(pc + 3) if pc + 3 <= m - 3 else vid(-1)

    def execute_tgt(x):
        if x["state"] == EXECUTE and x["tgt"] == reset:
            x["tgt"] = x["c"]

    def execute_resets(x):
        if x["state"] == EXECUTE:
            x["pc"], x["a"], x["b"], x["c"], x["isb"] = reset, reset, reset, reset, 0

    return [
        execute_sub,
        execute_jump,
        execute_state,
        execute_next,
        execute_tgt,
        execute_resets,
    ]


def build_subleq(
    memory_size: int = MEMORY_SIZE,
    min_value: int = MIN_VALUE,
    max_value: int = MAX_VALUE,
    max_steps: int = MAX_STEPS,
) -> Program:
    """The SUBLEQ program for a machine of ``memory_size`` words in ``[min_value, max_value]``."""
    _check_machine(memory_size, min_value, max_value, max_steps)
    v = max_value - min_value + 1

    def address_key(shift: int):
        """Key at position p: the value id of ``p - shift`` (so query x finds ``mem[x + shift]``)."""
        return position_var(v, lambda p: max(p - shift, min_value) - min_value)

    reset = -min_value
    variables = {
        "mem": input_var(v),
        "pos": address_key(0),
        "pos1": address_key(1),
        "pos2": address_key(2),
        "state": var(3, default=FETCH),
        "pcn": var(v, default=reset),
        "tgt": var(v, default=reset),
        "pc": var(v, default=reset),
        "a": var(v, default=reset),
        "b": var(v, default=reset),
        "c": var(v, default=reset),
        "jump": var(2),
        "bad_a": var(2),
        "bad_b": var(2),
        "isb": var(2),
    }
    heads = {
        **{
            f"{w}_{src}": qkv(q, key, "mem")
            for src, q in (("jump", "tgt"), ("next", "pcn"))
            for w, key in zip("abc", ("pos", "pos1", "pos2"))
        },
        "mem_a": qkv("a", "pos", "mem"),
        "mem_b": qkv("b", "pos", "mem"),
    }
    options = dict(
        output="mem",
        input_range=v,
        position_range=memory_size,
        halt=("state", DONE),
        max_layers=2 * max_steps + 2,
        name="subleq",
        undefined="no_match",  # mem_a/mem_b are undefined where no cell has the address
    )
    skeleton = program(variables, heads, [], **options)
    rules = [
        r
        for part in _mlp_parts(memory_size, min_value, max_value)
        for r in rules_from_function(part, skeleton.variables, skeleton.all_variables)
    ]
    return program(variables, heads, rules, **options)


def encode(text: str) -> list[int]:
    """``"3 4 -1"`` -> the value ids of the memory words, zero-padded to ``MEMORY_SIZE``."""
    try:
        words = [int(w) for w in text.split()]
    except ValueError as err:
        raise RasplabError(f"SUBLEQ input must be space-separated integers, got {text!r}") from err
    return [w - MIN_VALUE for w in _memory(words, MEMORY_SIZE, MIN_VALUE, MAX_VALUE)]


def decode(ids: Sequence[int], outputs: Sequence[int]) -> list[str]:
    """The final memory words (every address) as strings."""
    return [str(int(o) + MIN_VALUE) for o in outputs]


def reference(text: str) -> list[str]:
    """The final memory from the plain Python emulator :func:`run_subleq`."""
    words = [int(w) for w in text.split()]
    return [str(w) for w in run_subleq(words)]


def random_words(
    rng: np.random.Generator, length: int, memory_size: int = MEMORY_SIZE
) -> list[int]:
    """``length`` random words: addresses in the ``a``/``b`` slots (rarely negative), jump
    targets in ``[-1, memory_size - 3]`` in the ``c`` slots, and some arbitrary values."""
    words = []
    for i in range(length):
        if rng.random() < 0.15:
            words.append(int(rng.integers(MIN_VALUE, MAX_VALUE + 1)))
        elif i % 3 == 2:
            words.append(int(rng.integers(-1, memory_size - 2)))
        else:
            words.append(int(rng.integers(0, memory_size)))
    return words


def random_input(rng: np.random.Generator, length: int) -> str:
    """A random ``length``-word program that halts within ``MAX_STEPS`` steps: candidates from
    :func:`random_words` are drawn until one halts (deterministic for a given ``rng``)."""
    if not 1 <= length <= MEMORY_SIZE:
        raise RasplabError(f"SUBLEQ programs have 1 to {MEMORY_SIZE} words, got length {length}")
    for _ in range(10_000):
        words = random_words(rng, length)
        try:
            run_subleq(words)
        except RasplabError:
            continue
        return " ".join(map(str, words))
    raise RasplabError(f"no halting SUBLEQ program of length {length} found in 10,000 draws")


SUBLEQ = register_program(
    LibraryProgram(
        name="subleq",
        description="SUBLEQ interpreter with self-modifying code: initial memory in, final memory out (ALTA App. D.3)",
        build=build_subleq,
        encode=encode,
        decode=decode,
        reference=reference,
        random_input=random_input,
        length_unit="memory words given",
        min_length=1,
        max_length=MEMORY_SIZE,
    )
)
