"""The RASP compiler moved to rasp_compiler/: Tracr's import path stays silent, the old module
paths still import (the same modules) with a DeprecationWarning naming the new place."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import rasplab.rasp_compiler.compile
from rasplab.rasp import compiling

MOVED = ["plan", "weights", "model", "export", "verify"]


@pytest.mark.parametrize("name", MOVED)
def test_an_old_module_path_warns_and_is_the_moved_module(name):
    sys.modules.pop(f"rasplab.rasp.{name}", None)  # import it afresh: the warning is at import
    with pytest.warns(DeprecationWarning) as caught:
        old = importlib.import_module(f"rasplab.rasp.{name}")
    assert old is importlib.import_module(f"rasplab.rasp_compiler.{name}")
    assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
        f"rasplab.rasp.{name} moved to rasplab.rasp_compiler.{name}; import it from there"
    ]


def test_tracrs_import_path_works_without_any_warning():
    """A fresh interpreter that turns every warning into an error imports and compiles."""
    code = (
        "from rasplab.rasp import compiling, lib, rasp\n"
        "m = compiling.compile_rasp_to_model(lib.make_reverse(rasp.tokens), {1, 2}, 3)\n"
        "print(m.apply(['BOS', 1, 1, 2]).decoded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['BOS', 2, 1, 1]"


def test_the_facade_names_are_the_compilers_own():
    for name in compiling.__all__:
        assert getattr(compiling, name) is getattr(rasplab.rasp_compiler.compile, name)
