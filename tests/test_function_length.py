"""No library function over 80 lines without a comment saying why it cannot be split.

A function (or method) in ``src/rasplab`` longer than :data:`LIMIT` lines, from its ``def``
(or first decorator) to its last line, needs a comment ``# long: <why>`` in the comment block
right above it, in its signature, or on the first line of its body. The reason must say something (at least
a few words), so the comment is a decision a reader can check, not a switch.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "rasplab"
LIMIT = 80
REASON = re.compile(r"#.*\blong:\s*(\S.{9,})")


def comment_lines(source: str) -> dict[int, str]:
    """Line number -> the text of the comment on that line."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {tok.start[0]: tok.string for tok in tokens if tok.type == tokenize.COMMENT}


def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int, int, bool]]:
    """(name, first line, length, has a ``# long:`` reason) of each function over ``limit``."""
    tree = ast.parse(source)
    comments = comment_lines(source)
    lines = source.splitlines()
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        length = node.end_lineno - first + 1
        if length <= limit:
            continue
        # the comment block above, the signature (def up to the body) and the body's first line
        above = first - 1
        while above - 1 in comments and comments[above - 1] == lines[above - 2].strip():
            above -= 1
        where = [*range(above, first), *range(node.lineno, node.body[0].lineno + 1)]
        explained = any(REASON.search(comments.get(line, "")) for line in where)
        found.append((node.name, first, length, explained))
    return found


def test_the_check_finds_a_long_function_and_accepts_a_reason():
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    plain = "def f():\n" + body
    assert [(n, f, ok) for n, f, _, ok in long_functions(plain)] == [("f", 1, False)]
    above = "# long: one table of cases, each line independent\ndef f():\n" + body
    assert [ok for *_, ok in long_functions(above)] == [True]
    inside = "def f():  # long: one table of cases, each independent\n" + body
    assert [ok for *_, ok in long_functions(inside)] == [True]
    block = "# long: one table of cases,\n# each line independent\ndef f():\n" + body
    assert [ok for *_, ok in long_functions(block)] == [True]
    bare = "# long:\ndef f():\n" + body
    assert [ok for *_, ok in long_functions(bare)] == [False]
    short = "def f():\n" + "".join(f"    x{i} = {i}\n" for i in range(LIMIT - 1))
    assert long_functions(short) == []


def test_no_library_function_is_long_without_a_reason():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for name, line, length, explained in long_functions(path.read_text()):
            if not explained:
                offenders.append(f"{path.relative_to(SRC.parent)}:{line} {name} ({length} lines)")
    assert not offenders, (
        f"functions over {LIMIT} lines without a '# long: <why>' comment (split them, or say "
        "why they cannot be split):\n" + "\n".join(offenders)
    )
