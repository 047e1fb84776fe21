"""C-RASP: counting programs (Definition 8 of Huang et al.), their interpreter and library.

Write a program as Python expressions (:mod:`rasplab.crasp.build`), get the validated IR
(:mod:`rasplab.crasp.ir`: named operations in topological order), run it on a batch
(:mod:`rasplab.crasp.interpreter`), print a trace (:mod:`rasplab.crasp.trace`), check it
against a registered task (:mod:`rasplab.crasp.check`). The library of verified programs is
:mod:`rasplab.crasp.library`.

>>> from rasplab.crasp import Q, count, crasp_program, run
>>> p = crasp_program("tomita1", count(Q("0")) == 0, alphabet="01")
>>> run(p, ["1 1 1", "1 0"]).accept.tolist(), p.crasp_class
([True, False], 'C-RASP[]')
"""

from rasplab.crasp.build import (
    BOS_SYMBOL,
    Bool,
    Count,
    Q,
    all_of,
    any_of,
    cond,
    constant,
    count,
    crasp_program,
    exists,
    next_set,
    next_token,
    offset,
    periodic,
    window,
)
from rasplab.crasp.interpreter import CraspRun, run, run_ids
from rasplab.crasp.ir import (
    CLASSES,
    CraspProgram,
    Op,
    Periodic,
    Readout,
    Relation,
    program_from_json,
)
from rasplab.crasp.reference import reference_accepts, reference_run
from rasplab.crasp.trace import CraspTrace
from rasplab.deprecation import old_names

__getattr__ = old_names(
    __name__,
    {"Program": "rasplab.crasp.ir:CraspProgram", "program": "rasplab.crasp.build:crasp_program"},
)
"""``Program`` and ``program``, the old names of :class:`CraspProgram` and :func:`crasp_program`,
still importable (deprecated)."""

__all__ = [
    "BOS_SYMBOL",
    "CLASSES",
    "Bool",
    "Count",
    "CraspRun",
    "CraspTrace",
    "Op",
    "Periodic",
    "CraspProgram",
    "Q",
    "Readout",
    "Relation",
    "all_of",
    "any_of",
    "cond",
    "constant",
    "count",
    "exists",
    "next_set",
    "next_token",
    "offset",
    "crasp_program",
    "periodic",
    "program_from_json",
    "reference_accepts",
    "reference_run",
    "run",
    "run_ids",
    "window",
]
