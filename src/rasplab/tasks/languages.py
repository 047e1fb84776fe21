"""The 17 regular languages of Bhattamishra et al. (2020) as next-symbol-set prediction tasks.

Each language is one :class:`~rasplab.tasks.automata.Automaton` (D_n: the depth counter
compiled to states 0..n); membership, next-symbol sets, the class vocabulary and uniform
sampling are all derived from it (``docs/tasks.md``, regular languages).

>>> t = get_task("tomita2")
>>> ex = t.sample(generator(0, "doc"), 4)
>>> ex.tokens
('<bos>', '1', '0', '1', '0', '<eos>')
>>> ex.targets
(('1', '<eos>'), ('0',), ('1', '<eos>'), ('0',), ('1', '<eos>'), None)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError, unknown_name
from rasplab.seeding import generator  # noqa: F401 (doctests)
from rasplab.tasks.automata import Automaton
from rasplab.tasks.base import Example, Task, get_task, register

BOS, EOS, PAD = "<bos>", "<eos>", "<pad>"
COMPAT = (None, "huang")


def _tomita() -> dict[str, tuple[str, Automaton]]:
    """Tomita 1-7 over {0, 1}."""
    b = "01"
    return {
        "tomita1": ("1*", Automaton.build(b, {"s": {"1": "s"}}, "s", {"s"})),
        "tomita2": ("(10)*", Automaton.build(b, {"s": {"1": "t"}, "t": {"0": "s"}}, "s", {"s"})),
        "tomita3": (
            "no odd run of 1s immediately followed by an odd run of 0s",
            # e: even 1-run (or start); o: odd 1-run; z: odd 1-run then even 0-run; x: ... odd 0-run
            Automaton.build(
                b,
                {
                    "e": {"0": "e", "1": "o"},
                    "o": {"0": "x", "1": "e"},
                    "x": {"0": "z"},
                    "z": {"0": "x", "1": "o"},
                },
                "e",
                {"e", "o", "z"},
            ),
        ),
        "tomita4": (
            "no substring 000",
            Automaton.build(
                b,
                {"s": {"0": "z1", "1": "s"}, "z1": {"0": "z2", "1": "s"}, "z2": {"1": "s"}},
                "s",
                {"s", "z1", "z2"},
            ),
        ),
        "tomita5": (
            "even number of 0s and even number of 1s",
            Automaton.build(
                b,
                {
                    "ee": {"0": "oe", "1": "eo"},
                    "oe": {"0": "ee", "1": "oo"},
                    "eo": {"0": "oo", "1": "ee"},
                    "oo": {"0": "eo", "1": "oe"},
                },
                "ee",
                {"ee"},
            ),
        ),
        "tomita6": (
            "(#0 - #1) divisible by 3",
            Automaton.build(
                b,
                {f"m{i}": {"0": f"m{(i + 1) % 3}", "1": f"m{(i + 2) % 3}"} for i in range(3)},
                "m0",
                {"m0"},
            ),
        ),
        "tomita7": (
            "0*1*0*1*",
            Automaton.build(
                b,
                {
                    "p0": {"0": "p0", "1": "p1"},
                    "p1": {"0": "p2", "1": "p1"},
                    "p2": {"0": "p2", "1": "p3"},
                    "p3": {"1": "p3"},
                },
                "p0",
                {"p0", "p1", "p2", "p3"},
            ),
        ),
    }


def dyck_bounded(depth: int) -> Automaton:
    """D_n: Dyck-1 words over {a (open), b (close)} of nesting depth at most ``depth``."""
    rows = {
        f"d{i}": {**({"a": f"d{i + 1}"} if i < depth else {}), **({"b": f"d{i - 1}"} if i else {})}
        for i in range(depth + 1)
    }
    return Automaton.build("ab", rows, "d0", {"d0"})


def _others() -> dict[str, tuple[str, Automaton]]:
    """D_2, D_3, D_4, D_12 and the six remaining languages."""
    chain = {
        "s": {"a": "a"},
        "a": {"a": "a", "b": "b"},
        "b": {"b": "b", "c": "c"},
        "c": {"c": "c", "d": "d"},
    }
    chain |= {"d": {"d": "d", "e": "e"}, "e": {"e": "e"}}
    out = {
        f"d{n}": (f"D_{n}: Dyck-1 over a/b, depth <= {n}", dyck_bounded(n)) for n in (2, 3, 4, 12)
    }
    out |= {
        "aa_bb_cc_dd_ee": ("aa*bb*cc*dd*ee*", Automaton.build("abcde", chain, "s", {"e"})),
        "ab_d_bc": (
            "{a,b}* d {b,c}*",
            Automaton.build(
                "abcd",
                {"pre": {"a": "pre", "b": "pre", "d": "post"}, "post": {"b": "post", "c": "post"}},
                "pre",
                {"post"},
            ),
        ),
        "zot_0_two": (
            "{0,1,2}* 0 2*",
            Automaton.build(
                "012",
                {
                    "any": {"0": "z", "1": "any", "2": "any"},
                    "z": {"0": "z", "1": "any", "2": "z2"},
                    "z2": {"0": "z", "1": "any", "2": "z2"},
                },
                "any",
                {"z", "z2"},
            ),
        ),
        "aa_star": ("(aa)*", Automaton.build("a", {"e": {"a": "o"}, "o": {"a": "e"}}, "e", {"e"})),
        "aaaa_star": (
            "(aaaa)*",
            Automaton.build(
                "a", {f"r{i}": {"a": f"r{(i + 1) % 4}"} for i in range(4)}, "r0", {"r0"}
            ),
        ),
        "abab_star": (
            "(abab)*",
            Automaton.build(
                "ab",
                {"r0": {"a": "r1"}, "r1": {"b": "r2"}, "r2": {"a": "r3"}, "r3": {"b": "r0"}},
                "r0",
                {"r0"},
            ),
        ),
    }
    return out


LANGUAGES: dict[str, tuple[str, Automaton]] = {**_tomita(), **_others()}
"""name -> (definition, automaton), in the order of ``docs/tasks.md``."""

PARITY_LANGUAGE: tuple[str, Automaton] = (
    "even number of 1s",
    Automaton.build("01", {"e": {"0": "e", "1": "o"}, "o": {"0": "o", "1": "e"}}, "e", {"e"}),
)
"""PARITY over {0, 1} as a language (the reference row of Huang et al.'s Table 2). Data only:
it is not a registered task (the ``parity`` task is the algorithmic formulation)."""


def _windows(lo: int, hi: int, incr: int, style: str) -> tuple[Bin, tuple[Bin, ...]]:
    """The train bin and test bins the published configs produce (see HUANG_WINDOWS)."""
    if style == "tomita":  # leak branch: the 2nd and 3rd bins coincide; kept once
        tests = (Bin(lo, hi), Bin(hi + 1, hi + incr))
    elif style == "nonstarfree":  # each later bin starts at the previous upper bound
        tests = (Bin(lo, hi), Bin(hi + 1, hi + incr), Bin(hi + incr, hi + 2 * incr))
    elif style == "starfree":
        tests = (Bin(lo, hi), Bin(hi + 1, hi + incr), Bin(hi + incr + 1, hi + 2 * incr))
    else:  # "special": the lower bound never moves
        tests = (Bin(lo, hi), Bin(lo, hi + incr), Bin(lo, hi + 2 * incr))
    return Bin(lo, hi), tests


HUANG_WINDOWS = {
    **{f"tomita{i}": _windows(1, 100, 50, "tomita") for i in range(1, 8)},
    "d2": _windows(2, 50, 50, "starfree"),
    "d3": _windows(2, 50, 50, "starfree"),
    "d4": _windows(2, 100, 100, "starfree"),
    "d12": _windows(2, 100, 100, "starfree"),
    "aa_bb_cc_dd_ee": _windows(5, 200, 100, "starfree"),
    "ab_d_bc": _windows(2, 50, 50, "special"),
    "zot_0_two": _windows(2, 50, 50, "special"),
    "aa_star": _windows(2, 100, 50, "nonstarfree"),
    "aaaa_star": _windows(4, 500, 100, "nonstarfree"),
    "abab_star": _windows(4, 500, 100, "nonstarfree"),
}
"""``compat="huang"``: the string-length windows of the published formal-language configs
(lacoco-lab/length_generalization, ``formal_lang_suite/configs/dataset``: lower_window,
upper_window, len_incr, three bins, reproduced through its bin-building code). Tomita-5 and 6
have no stored config; they use the other Tomita grammars' (1, 100, 50). The published label
and vocabulary defects are not reproduced, only the windows."""


class LanguageTask(Task):
    """Next-symbol-set prediction on a regular language; length = string length.

    ``<bos> s1 .. sn <eos>``; the target at position i (after ``<bos> s1..si``) is the sorted
    tuple of legal next symbols (``<eos>`` when the prefix is in the language); the
    ``<eos>`` position is not scored. Strings: length uniform over the bin's lengths that have
    strings, then uniform among the strings of that length.

    >>> t = get_task("ab_d_bc")
    >>> ex = t.sample(generator(1, "doc"), 3)
    >>> ex.tokens, ex.targets[:2]
    (('<bos>', 'a', 'b', 'd', '<eos>'), (('a', 'b', 'd'), ('a', 'b', 'd')))
    >>> t.classes
    (('<eos>', 'b', 'c'), ('a', 'b', 'd'))
    """

    target_kind = "next_set"

    def __init__(self, name: str, compat: str | None = None) -> None:
        if compat not in COMPAT:
            raise RasplabError(f"compat must be one of: none, huang (got {compat!r})")
        definition, automaton = LANGUAGES[name]
        self.name, self.automaton, self.compat = name, automaton, compat
        self.description = f"regular language {definition}; predict the set of legal next symbols"
        self.vocab = (PAD, BOS, EOS, *automaton.alphabet)
        if compat == "huang":
            self.train_bin, self.test_bins = HUANG_WINDOWS[name]
        self._sets = [automaton.next_set(q) for q in range(automaton.num_states)]

    @property
    def classes(self) -> tuple[tuple[str, ...], ...]:
        """Every next-symbol set of the language, sorted (fixed, never built per string)."""
        return self.automaton.classes

    def allows_length(self, length: int) -> bool:
        """Whether the language has a string of this length."""
        return self.automaton.count(length) > 0

    def lengths(self, bin: Bin | str) -> list[int]:
        """The lengths in ``bin`` with strings; the error names the nearest lengths that have.
        (Cached per bin: every training batch asks.)"""
        bin = Bin.parse(bin)
        cache = self.__dict__.setdefault("_lengths_cache", {})
        key = (bin.lo, bin.hi)
        if key not in cache:
            cache[key] = self._lengths(bin)
        return list(cache[key])

    def _lengths(self, bin: Bin) -> list[int]:
        """:meth:`lengths`, computed."""
        out = [n for n in range(max(bin.lo, 1), bin.hi + 1) if self.has_length(n)]
        if not out:
            near = [n for n in range(max(bin.lo - 8, 1), bin.hi + 9) if self.has_length(n)]
            raise RasplabError(
                f"{self.name} has no strings with length in bin {bin}"
                + (f"; nearby lengths with strings: {', '.join(map(str, near))}" if near else "")
            )
        return out

    def count(self, bin: Bin | str) -> int:
        """Number of strings with length in ``bin``."""
        return sum(self.automaton.count(n) for n in self.lengths(bin))

    def example(self, string: Sequence[str]) -> Example:
        """The example for a string of the language (error if it is not in it)."""
        states = self.automaton.run(string)
        if states[-1] not in self.automaton.accepting:
            raise RasplabError(f"{''.join(string)!r} is not in {self.name}")
        return self._example(list(string), states)

    def _example(self, symbols: list[str], states: Sequence[int]) -> Example:
        """Assemble tokens and next-set targets from symbols and the states after each prefix."""
        targets = tuple(self._sets[q] for q in states) + (None,)
        return Example(tokens=(BOS, *symbols, EOS), targets=targets, length=len(symbols))

    def sample(self, rng: np.random.Generator, length: int) -> Example:
        """A uniform string of exactly ``length`` (exact unranking)."""
        if not self.has_length(length):
            raise RasplabError(f"{self.name} has no strings of length {length}")
        return self.example(self.automaton.sample(rng, length))

    def sample_many(self, rng: np.random.Generator, lengths: Sequence[int]) -> list[Example]:
        """Uniform strings for many lengths at once (vectorized walk, same distribution)."""
        for n in set(np.asarray(lengths).tolist()):
            if not self.has_length(n):
                raise RasplabError(f"{self.name} has no strings of length {n}")
        symbols, states = self.automaton.sample_batch(rng, lengths)
        alphabet = np.array(self.automaton.alphabet, dtype=object)
        out = []
        for row, qs, n in zip(symbols.tolist(), states.tolist(), lengths):
            out.append(self._example(alphabet[row[:n]].tolist(), qs[: n + 1]))
        return out

    def sample_label_arrays(
        self, rng: np.random.Generator, lengths: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`sample_many`'s draws as arrays, without per-example objects: (token counts
        [B], vocabulary indices [B, T], class indices [B, T]; -1 past a row's tokens and, for
        classes, where the example's target is None).

        >>> t = get_task("tomita2")
        >>> ex = t.sample_many(generator(0, "doc"), [2, 4])[0]
        >>> n, tok, cls = t.sample_label_arrays(generator(0, "doc"), [2, 4])
        >>> [t.vocab[i] for i in tok[0][: n[0]]] == list(ex.tokens)
        True
        >>> [t.classes[i] if i >= 0 else None for i in cls[0][: n[0]]] == list(ex.targets)
        True
        """
        lengths = np.asarray(lengths, dtype=np.int64)
        for n in set(lengths.tolist()):
            if not self.has_length(n):
                raise RasplabError(f"{self.name} has no strings of length {n}")
        symbols, states = self.automaton.sample_batch(rng, lengths)
        B, top = symbols.shape
        T = top + 2
        t = np.arange(T)[None, :]
        n = lengths[:, None]
        index = {tok: i for i, tok in enumerate(self.vocab)}
        tokens = np.full((B, T), -1, dtype=np.int64)
        tokens[:, 0] = index[BOS]
        tokens[:, 1:-1] = np.where(
            symbols >= 0, symbols + len(self.vocab) - len(self.automaton.alphabet), -1
        )
        tokens[np.arange(B), lengths + 1] = index[EOS]
        classes = {c: i for i, c in enumerate(self.classes)}
        state_class = np.array([classes.get(s, -1) for s in self._sets], dtype=np.int64)
        targets = np.full((B, T), -1, dtype=np.int64)
        targets[:, :-1] = np.where(t[:, :-1] <= n, state_class[states], -1)
        return lengths + 2, tokens, targets

    def exhaustive(self, bin: Bin, limit: int) -> list[Example] | None:
        """All strings of the bin (length order, then alphabet order) when at most ``limit``."""
        if self.count(bin) > limit:
            return None
        return [self.example(s) for n in self.lengths(bin) for s in self.automaton.strings(n)]


def _factory(name: str):
    """The registry constructor for language ``name`` (option: ``compat``)."""

    def make(compat: str | None = None) -> LanguageTask:
        return LanguageTask(name, compat=compat)

    make.__doc__ = f"Build the {name} next-symbol task (compat: None or 'huang')."
    return make


for _name in LANGUAGES:
    register(_name)(_factory(_name))


def language(name: str) -> Automaton:
    """The automaton of language ``name``."""
    if name not in LANGUAGES:
        raise unknown_name("language", name, LANGUAGES)
    return LANGUAGES[name][1]


__all__ = [
    "HUANG_WINDOWS",
    "LANGUAGES",
    "PARITY_LANGUAGE",
    "LanguageTask",
    "dyck_bounded",
    "get_task",
    "language",
]
