"""Data knows no training loop: nothing under ``rasplab.tasks`` imports the harness or models."""

import ast
from pathlib import Path

import rasplab.tasks

FORBIDDEN = ("rasplab.harness", "rasplab.models")


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_no_task_module_imports_the_harness_or_the_models():
    root = Path(rasplab.tasks.__file__).parent
    files = sorted(root.rglob("*.py"))
    assert any(f.name == "evaluate.py" for f in files)  # the PTG split scorer is looked at
    bad = [
        (f.relative_to(root).as_posix(), m)
        for f in files
        for m in _imports(f)
        if m.startswith(FORBIDDEN)
    ]
    assert bad == []
