"""The C-RASP program library: a program for every "yes" of the seed's Tables 2 and 3.

Each :class:`LibraryEntry` names its program after the registered task it solves (``task``),
records the class the seed names for that task (``seed_class``: the smallest column of Table
2/3 with a "yes") and computes the program's own class from its operations
(:attr:`LibraryEntry.crasp_class`), which is always within the seed's. Entries without a task
are the other constructions of the seed (Theorem 10, Appendix C.2.2, the second Tomita-7
program). The "no" and "none found" entries of the tables live with the expressibility table,
not here.

>>> get("tomita4").task, get("tomita4").seed_class, get("tomita4").crasp_class
('tomita4', 'C-RASP[periodic,local]', 'C-RASP[local]')
>>> [e.name for e in for_task("tomita7")]
['tomita7', 'tomita7_bigrams']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from rasplab.crasp.ir import CraspProgram
from rasplab.crasp.library import algorithmic as alg
from rasplab.crasp.library import chomsky
from rasplab.crasp.library import languages as lang
from rasplab.errors import unknown_name

PLAIN, PERIODIC_LOCAL = "C-RASP[]", "C-RASP[periodic,local]"


@dataclass(frozen=True)
class LibraryEntry:
    """A library program: its builder, the task it is checked against, where Huang et al. give
    it (``source``) and the class they name for its task (``seed_class``)."""

    name: str
    build: Callable[[], CraspProgram]
    task: str | None
    source: str
    seed_class: str
    distinct: bool = False
    """The program is right only on inputs whose symbols before <sep> are distinct (its task
    draws them so); ``crasp run`` refuses other inputs."""

    def program(self) -> CraspProgram:
        """The program (built once, then cached)."""
        if self.name not in _CACHE:
            _CACHE[self.name] = self.build()
        return _CACHE[self.name]

    @property
    def crasp_class(self) -> str:
        """The program's class, computed from its operations."""
        return self.program().crasp_class

    @property
    def description(self) -> str:
        """The program's one-line description."""
        return self.program().description


_CACHE: dict[str, CraspProgram] = {}
_ENTRIES = [
    LibraryEntry("tomita1", lang.tomita1, "tomita1", "Huang et al. Table 2 #1, App. E.1.2", PLAIN),
    LibraryEntry("tomita2", lang.tomita2, "tomita2", "Huang et al. Table 2 #2, App. E.1.2", PLAIN),
    LibraryEntry(
        "tomita4", lang.tomita4, "tomita4", "Huang et al. Table 2 #4, App. E.1.2", PERIODIC_LOCAL
    ),
    LibraryEntry(
        "tomita7", lang.tomita7, "tomita7", "Huang et al. Table 2 #7, App. E.1.2, C.1.5", PLAIN
    ),
    LibraryEntry(
        "tomita7_bigrams",
        lang.tomita7_bigrams,
        "tomita7",
        "Huang et al. App. E.1.2 (2nd construction)",
        PERIODIC_LOCAL,
    ),
    *(
        LibraryEntry(
            f"d{n}", partial(lang.dyck, n), f"d{n}", f"Huang et al. Table 2 #{k}, App. E.1.2", PLAIN
        )
        for k, n in zip((8, 9, 10, 11), (2, 3, 4, 12))
    ),
    LibraryEntry(
        "aa_bb_cc_dd_ee",
        lang.aa_bb_cc_dd_ee,
        "aa_bb_cc_dd_ee",
        "Huang et al. Table 2 #15, App. E.1.2",
        PLAIN,
    ),
    LibraryEntry("ab_d_bc", lang.ab_d_bc, "ab_d_bc", "Huang et al. Table 2 #16, App. E.1.2", PLAIN),
    LibraryEntry(
        "aa_star",
        partial(lang.a_power_star, 2),
        "aa_star",
        "Huang et al. Table 2 #12, App. C.2.3",
        PERIODIC_LOCAL,
    ),
    LibraryEntry(
        "aaaa_star",
        partial(lang.a_power_star, 4),
        "aaaa_star",
        "Huang et al. Table 2 #13, App. E.1.2",
        PERIODIC_LOCAL,
    ),
    LibraryEntry(
        "abab_star",
        lang.abab_star,
        "abab_star",
        "Huang et al. Table 2 #14, App. E.1.2",
        PERIODIC_LOCAL,
    ),
    LibraryEntry(
        "binary_majority",
        alg.binary_majority,
        "binary_majority",
        "Huang et al. Table 3, App. E.2.2",
        PLAIN,
    ),
    LibraryEntry(
        "binary_majority_interleave",
        alg.binary_majority_interleave,
        "binary_majority_interleave",
        "Huang et al. Table 3, App. E.2.2",
        PERIODIC_LOCAL,
    ),
    LibraryEntry("majority", alg.majority, "majority", "Huang et al. Table 3, App. E.2.2", PLAIN),
    LibraryEntry(
        "sort", alg.sort, "sort", "Huang et al. Table 3, App. E.2.2", PLAIN, distinct=True
    ),
    LibraryEntry(
        "copy_unique",
        alg.copy_unique,
        "copy_unique",
        "Huang et al. Table 3, App. E.2.2, C.2.2",
        PERIODIC_LOCAL,
        distinct=True,
    ),
    LibraryEntry(
        "majority_ab", lang.majority_ab, None, "Huang et al. Theorem 10 (1), App. C.1.1", PLAIN
    ),
    LibraryEntry("dyck1", lang.dyck1, None, "Huang et al. Theorem 10 (2), App. C.1.2", PLAIN),
    LibraryEntry("anbn", lang.anbn, None, "Huang et al. Theorem 10 (3), App. C.1.3", PLAIN),
    LibraryEntry(
        "induction_head", alg.induction_head, None, "Huang et al. App. C.2.2", PERIODIC_LOCAL
    ),
    # Delétang et al.'s Chomsky-hierarchy tasks: not in the seed; the class is rasplab's own
    LibraryEntry("bucket_sort", chomsky.bucket_sort, "bucket_sort", "rasplab (#37)", PLAIN),
    LibraryEntry("even_pairs", chomsky.even_pairs, "even_pairs", "rasplab (#37)", PERIODIC_LOCAL),
]
_BY_NAME = {e.name: e for e in _ENTRIES}


def names() -> list[str]:
    """Every library program name, tasks' programs first (Table 2, then Table 3 order)."""
    return [e.name for e in _ENTRIES]


def get(name: str) -> LibraryEntry:
    """The entry called ``name`` (an error lists the known names)."""
    if name not in _BY_NAME:
        raise unknown_name("C-RASP program", name, _BY_NAME)
    return _BY_NAME[name]


def program(name: str) -> CraspProgram:
    """The program called ``name``."""
    return get(name).program()


def for_task(task: str) -> list[LibraryEntry]:
    """The entries checked against registered task ``task``, the task's namesake first."""
    return [e for e in _ENTRIES if e.task == task]


def entries() -> list[LibraryEntry]:
    """Every entry, in :func:`names` order."""
    return list(_ENTRIES)


__all__ = ["LibraryEntry", "entries", "for_task", "get", "names", "program"]
