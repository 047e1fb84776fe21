"""The design's floors, read from the imports: no module imports up a floor.

Every module under ``src/rasplab`` is parsed (``ast``; imports inside functions count too) and
each import of another rasplab stage is checked against the floors of docs/design.md:

    bottom (errors, files, bins, seeding, usercode, plotting, deprecation)
      <- tasks
      <- languages (lang, crasp, rasp)
      <- compilers (compiler, crasp_compiler, rasp_compiler, lens_bridge; rasp.compiling,
         Tracr's import path for rasp_compiler)
      <- programs (the ALTA library)
      <- models <- harness
      <- analysis, learned, explore, reports
      <- cli

An import may go to its own floor or any floor below, never up. On top of the floors: the
languages and tasks import no torch (not even inside a function), and the bottom imports
torch or safetensors only inside the function that needs it; and every import circle stays
inside one folder. A failure names the file, the line, the import and the rule it breaks.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "bottom",
        (
            "rasplab",
            "rasplab.errors",
            "rasplab.files",
            "rasplab.bins",
            "rasplab.seeding",
            "rasplab.usercode",
            "rasplab.plotting",
            "rasplab.deprecation",
        ),
    ),
    ("tasks", ("rasplab.tasks",)),
    ("languages", ("rasplab.lang", "rasplab.crasp", "rasplab.rasp")),
    (
        "compilers",
        (
            "rasplab.compiler",
            "rasplab.crasp_compiler",
            "rasplab.lens_bridge",
            "rasplab.rasp_compiler",
            # the one file of rasp/ on this floor: Tracr's import path for the RASP compiler
            # (``from rasplab.rasp import compiling``, as ``from tracr.compiler import
            # compiling``), a re-export of rasp_compiler.compile and nothing else (FACADES)
            "rasplab.rasp.compiling",
        ),
    ),
    ("programs", ("rasplab.programs",)),
    ("models", ("rasplab.models",)),
    ("harness", ("rasplab.harness",)),
    (
        "analysis, learned, explore, reports",
        ("rasplab.analysis", "rasplab.learned", "rasplab.explore", "rasplab.reports"),
    ),
    ("cli", ("rasplab.cli",)),
)
"""The floors, lowest first, each with the module prefixes on it (the longest prefix wins)."""

NO_TORCH = ("tasks", "languages")
"""Floors whose modules import no torch or safetensors at all."""

HEAVY = ("torch", "safetensors")

DEPRECATED_ALIASES = frozenset(
    [
        f"rasplab.crasp.{name}"
        for name in (
            "compile",
            "plan",
            "precision",
            "model",
            "export",
            "verify",
            "table",
            "measure",
            "table_text",
            "table_plot",
        )
    ]
    + [f"rasplab.rasp.{name}" for name in ("plan", "weights", "model", "export", "verify")]
)
"""The old ``rasplab.crasp.*`` paths of the C-RASP compiler and table and the old
``rasplab.rasp.*`` paths of the RASP compiler: one-release aliases that point up at
crasp_compiler/, reports/crasp_table/ and rasp_compiler/ on purpose."""

FACADES = {"rasplab.rasp.compiling": "rasp_compiler"}
"""Modules that re-export another folder's names at an import path users already know (here
Tracr's ``compiling``), each with the folder it stands for: their floor is that folder's, the
circle check counts them in it, and they hold nothing but imports (checked below)."""


@dataclass(frozen=True)
class Import:
    """One import statement's target, where it is, and whether it runs at module load."""

    module: str
    path: Path
    line: int
    target: str
    top_level: bool


def floor_of(module: str) -> int | None:
    """The floor index of a rasplab module (``None`` outside rasplab).

    >>> FLOORS[floor_of("rasplab.crasp.ir")][0], FLOORS[floor_of("rasplab.rasp.compiling")][0]
    ('languages', 'compilers')
    """
    best, floor = -1, None
    for index, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, floor = len(prefix), index
    return floor


def module_name(path: Path) -> str:
    """``src/rasplab/crasp/ir.py`` -> ``rasplab.crasp.ir`` (a package: its ``__init__``)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(module: str, source: str, path: Path) -> list[Import]:
    """Every import in ``source`` (relative ones resolved), inside functions too."""
    tree = ast.parse(source)
    top = {id(node) for node in tree.body}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # ``from rasplab.cli import run`` imports the module rasplab.cli.run
            targets = [base]
            targets += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
        else:
            continue
        for target in targets:
            found.append(Import(module, path, node.lineno, target, id(node) in top))
    return found


def violations(imp: Import) -> list[str]:
    """The rules ``imp`` breaks, one line each (empty if none)."""
    where = f"{imp.path.relative_to(SRC.parent)}:{imp.line} imports {imp.target}"
    own = floor_of(imp.module)
    if own is None or imp.module in DEPRECATED_ALIASES:
        return []
    own_name = FLOORS[own][0]
    root = imp.target.split(".")[0]
    if root in HEAVY:
        if own_name in NO_TORCH:
            return [f"{where}: {imp.module} is on the {own_name} floor, which imports no {root}"]
        if own_name == "bottom" and imp.top_level:
            return [f"{where}: the bottom imports {root} only inside the function needing it"]
        return []
    other = floor_of(imp.target)
    if other is None or other <= own:
        return []
    return [
        f"{where}: {imp.module} ({own_name}) may not import {FLOORS[other][0]}, a floor above it"
    ]


def all_imports() -> list[Import]:
    """The imports of every module under src/rasplab."""
    found = []
    for path in sorted((SRC / "rasplab").rglob("*.py")):
        found += imports_of(module_name(path), path.read_text(encoding="utf-8"), path)
    return found


def test_every_module_is_on_a_floor():
    unplaced = sorted(
        {imp.module for imp in all_imports() if floor_of(imp.module) is None}
        | {
            module_name(p)
            for p in (SRC / "rasplab").rglob("*.py")
            if floor_of(module_name(p)) is None
        }
    )
    assert unplaced == [], f"modules on no floor (add them to FLOORS): {unplaced}"


def report(imports: list[Import]) -> list[str]:
    """The violations of ``imports``, one per import statement (``from a import b`` checks
    both ``a`` and the module ``a.b``; the first rule broken is reported)."""
    seen, lines = set(), []
    for imp in imports:
        broken = violations(imp)
        if broken and (imp.path, imp.line) not in seen:
            seen.add((imp.path, imp.line))
            lines.append(broken[0])
    return lines


def test_no_import_goes_up_a_floor():
    broken = report(all_imports())
    assert not broken, "imports that break the floors:\n" + "\n".join(broken)


def test_the_deprecated_aliases_still_exist():
    """The exceptions are listed by name: one that is gone must leave the list too."""
    missing = [
        m for m in sorted(DEPRECATED_ALIASES) if not (SRC / f"{m.replace('.', '/')}.py").exists()
    ]
    assert missing == [], f"listed as deprecated aliases but gone: {missing}"


def _check(module: str, source: str) -> list[str]:
    """The violations of ``source`` if it were the module ``module``."""
    path = SRC / (module.replace(".", "/") + ".py")
    return report(imports_of(module, source, path))


def test_the_checker_catches_an_arrow_up_and_names_it():
    """A known-bad import (also inside a function) is caught, with file, line and rule."""
    bad = _check(
        "rasplab.crasp.ir", "import json\n\ndef f():\n    from rasplab.harness import store\n"
    )
    assert bad == [
        "src/rasplab/crasp/ir.py:4 imports rasplab.harness: rasplab.crasp.ir (languages) may "
        "not import harness, a floor above it"
    ]
    assert "may not import cli" in _check("rasplab.reports.text", "from rasplab import cli\n")[0]
    assert _check("rasplab.lang.trace", "from ..compiler import run\n")[0].endswith(
        "rasplab.lang.trace (languages) may not import compilers, a floor above it"
    )
    assert "imports no torch" in _check("rasplab.tasks.base", "def f():\n    import torch\n")[0]
    assert "only inside the function" in _check("rasplab.seeding", "import torch\n")[0]
    assert _check("rasplab.seeding", "def f():\n    import torch\n") == []
    assert _check("rasplab.cli.run", "from rasplab.harness import train\n") == []
    assert _check("rasplab.crasp.compile", "import rasplab.crasp_compiler.compile\n") == []
    assert (
        "may not import cli" in _check("rasplab.reports.text", "from rasplab.cli import main\n")[0]
    )


def _folder(module: str) -> str:
    """The top folder (or bottom module) of a rasplab module: ``rasplab.crasp.ir`` -> ``crasp``
    (a facade: the folder it stands for)."""
    if module in FACADES:
        return FACADES[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def circles(imports: list[Import]) -> list[list[str]]:
    """The import circles between folders (each a list of folders, the first repeated last)."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if imp.module in DEPRECATED_ALIASES or not imp.target.startswith("rasplab."):
            continue
        a, b = _folder(imp.module), _folder(imp.target)
        if a and b and a != b:
            graph.setdefault(a, set()).add(b)
    found = []

    def walk(path: list[str]) -> None:
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == path[0]:
                found.append([*path, nxt])
            elif nxt not in path and nxt > path[0]:  # each circle once, from its least folder
                walk([*path, nxt])

    for start in sorted(graph):
        walk([start])
    return found


def test_every_import_circle_stays_inside_one_folder():
    assert circles(all_imports()) == []


def test_a_facade_holds_only_imports_from_the_folder_it_stands_for():
    """A facade is exempt from its own folder's floor and circles only while it holds no code."""
    for module, folder in FACADES.items():
        path = SRC / (module.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        kinds = {type(node).__name__ for node in tree.body[1:]}  # after the docstring
        assert kinds <= {"ImportFrom", "Assign"}, f"{module} holds more than imports: {kinds}"
        targets = {n.targets[0].id for n in tree.body if isinstance(n, ast.Assign)}
        assert targets <= {"__all__"}, f"{module} assigns {targets}"
        sources = {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
        assert sources and all(s.startswith(f"rasplab.{folder}.") for s in sources), sources


def test_the_circle_check_finds_a_circle():
    fake = [
        Import("rasplab.analysis.a", SRC, 1, "rasplab.reports.b", True),
        Import("rasplab.reports.b", SRC, 1, "rasplab.analysis.c", False),
        Import("rasplab.crasp.compile", SRC, 1, "rasplab.crasp_compiler.compile", True),
        Import("rasplab.crasp_compiler.plan", SRC, 1, "rasplab.crasp.ir", True),
    ]
    assert circles(fake) == [["analysis", "reports", "analysis"]]
