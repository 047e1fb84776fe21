"""The explorer's data for a compiled RASP program on one input: every SOp's value per position,
from the RASP evaluator and decoded from the compiled model's final residual stream, side by
side.

The page has the C-RASP page's shape (``symbols``, one row per operation with ``values`` and
``compiled`` and the positions that differ), with ``kind`` ``"rasp"``: its rows are the
program's SOps (children first, the input SOps included), not the compiler's lowered
variables. Position 0 is BOS, where the evaluator has no value ("-"); the compiled model's
value there is shown as decoded and not compared. Values are compared as ``rasplab rasp verify``
compares them (categorical exactly, None included; numerical to 1e-9 relative).

>>> from rasplab.rasp import lib
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> model = compile_rasp_to_model(lib.make_hist(), {1, 2, 3}, 4)
>>> data = rasp_view(model, [1, 3, 1])
>>> data["symbols"], data["summary"]["all_agree"]
(['BOS', '1', '3', '1'], True)
>>> [(op["name"].startswith("hist_"), op["values"]) for op in data["operations"] if op["output"]]
[(True, ['-', '2', '1', '2'])]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rasplab.rasp import rasp
from rasplab.rasp.evaluate import evaluate_all
from rasplab.rasp.graph import nodes
from rasplab.rasp_compiler.compile import CompiledRasp
from rasplab.rasp_compiler.verify import _same


def _cell(value: Any) -> str:
    """A value as the page shows it (None: ``None``; a float without trailing zeros)."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _definition(sop: rasp.SOp) -> str:
    """``Kind(child, ...)`` and the SOp's encoding, e.g. ``SelectorWidth(select_6), categorical``."""
    kind = type(sop).__name__.removesuffix("Type")
    children = ", ".join(child.label for child in sop.children)
    encoding = "numerical" if rasp.is_numerical(sop) else "categorical"
    return f"{kind}({children}), {encoding}" if children else f"{kind}, {encoding}"


def rasp_view(model: CompiledRasp, tokens: Sequence[Any]) -> dict:
    """Page data for ``model`` on ``tokens`` (without BOS; checked as the model checks them)."""
    program = model.program
    order = nodes(program)
    ids = model.encode([model.bos, *tokens])
    expected = evaluate_all(program, list(tokens), order)
    x = model.run([ids])
    operations, all_agree = [], True
    for sop in (e for e in order if isinstance(e, rasp.SOp)):
        want = expected[id(sop)]
        codes = model.decode(x, sop)[0]
        got = [model.value(sop, int(c)) for c in codes]
        numerical = rasp.is_numerical(sop)
        differs = [p + 1 for p, w in enumerate(want) if not _same(w, got[p + 1], numerical)]
        all_agree &= not differs
        operations.append(
            {
                "name": sop.label,
                "definition": _definition(sop),
                "output": sop is program,
                "values": ["-", *(_cell(w) for w in want)],
                "compiled": [_cell(g) for g in got],
                "differs": differs,
            }
        )
    output = [_cell(v) for v in expected[id(program)]]
    return {
        "kind": "rasp",
        "title": f"{program.label} (RASP): {' '.join(map(str, tokens))}",
        "headings": ["RASP evaluator: SOps × positions", "Compiled model, decoded"],
        "symbols": [str(model.bos), *(str(t) for t in tokens)],
        "operations": operations,
        "summary": {
            "operations": len(operations),
            "output": " ".join(output),
            "all_agree": all_agree,
        },
    }
