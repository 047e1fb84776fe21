"""Every import inside a library function says why it is not at the top of its module.

An import in a function body of ``src/rasplab`` needs a comment giving its reason (start-up
time, an optional extra, an import cycle that could not be removed, ...) on the import's own
line(s) or on the line above it; a comment above a run of consecutive imports covers the run.
Lint pragmas (``# noqa``, ``# type: ignore``, ``# fmt: ...``) are not reasons.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "rasplab"
PRAGMA = re.compile(r"#\s*(noqa\b[:\s\w,]*|type:\s*ignore\S*|fmt:\s*\w+|pragma:[^#]*)")


def reason(comment: str) -> bool:
    """Whether ``comment`` says something besides lint pragmas (at least two words).

    >>> reason("# noqa: F401"), reason("# optional extra: ray"), reason("# x")
    (False, True, False)
    """
    text = PRAGMA.sub("", comment).replace("#", " ").strip(" ()")
    return len(text.split()) >= 2


def comment_lines(source: str) -> dict[int, str]:
    """Line number -> the text of the comment on that line."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {tok.start[0]: tok.string for tok in tokens if tok.type == tokenize.COMMENT}


def inner_imports(source: str) -> list[tuple[int, str, bool]]:
    """(line, import text, has a reason) of each import inside a function of ``source``."""
    tree = ast.parse(source)
    comments = comment_lines(source)
    found: dict[int, tuple[int, str, bool]] = {}
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        imports = [n for n in ast.walk(func) if isinstance(n, (ast.Import, ast.ImportFrom))]
        starts = {n.end_lineno: n.lineno for n in imports}  # last line -> first line
        for node in imports:
            own = range(node.lineno, node.end_lineno + 1)
            above = node.lineno - 1
            while above in starts:  # the run of imports this one ends: its comment is above
                above = starts[above] - 1
            ok = any(reason(comments.get(line, "")) for line in [*own, above])
            found[node.lineno] = (node.lineno, ast.unparse(node), ok)
    return sorted(found.values())


def test_the_check_wants_a_reason_beside_or_above_an_inner_import():
    bare = "def f():\n    import json\n"
    assert inner_imports(bare) == [(2, "import json", False)]
    beside = "def f():\n    import ray  # optional extra: rasplab[ray]\n"
    assert [ok for *_, ok in inner_imports(beside)] == [True]
    run = "def f():\n    # start-up time: torch\n    import torch\n    import numpy\n"
    assert [ok for *_, ok in inner_imports(run)] == [True, True]
    pragma = "def f():\n    import json  # noqa: F401\n"
    assert [ok for *_, ok in inner_imports(pragma)] == [False]
    top = "import json\n\n\ndef f():\n    return json\n"
    assert inner_imports(top) == []


def test_every_inner_import_in_the_library_gives_its_reason():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for line, text, ok in inner_imports(path.read_text()):
            if not ok:
                offenders.append(f"{path.relative_to(SRC.parent)}:{line} {text}")
    assert not offenders, (
        f"{len(offenders)} imports inside functions give no reason (move them to the top of "
        "the module, or say why not in a comment on the line or the line above: start-up "
        "time, optional extra, import cycle):\n" + "\n".join(offenders)
    )
