"""Running a user's own Python file (``FILE.py:NAME`` on the command line) as a fresh module.

Shared by the ALTA program loader (:mod:`rasplab.programs.loading`) and the C-RASP one
(:mod:`rasplab.crasp.load`): the file is the user's own code, run as given; any error it
raises becomes one :class:`~rasplab.errors.RasplabError` line prefixed with ``label``.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "mine.py")
>>> _ = open(path, "w").write("x = 1 + 1\\n")
>>> import_file(path, "mine.py").x
2
>>> _ = open(path, "w").write("1 / 0\\n")
>>> import_file(path, "mine.py:x")
Traceback (most recent call last):
rasplab.errors.RasplabError: mine.py:x: ZeroDivisionError: division by zero
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from rasplab.errors import RasplabError


def import_file(path: str | Path, label: str) -> ModuleType:
    """Import ``path`` as a fresh module (not kept in ``sys.modules``)."""
    file = Path(path)
    if not file.is_file():
        raise RasplabError(f"cannot read program file {str(path)!r}: No such file or directory")
    module_name = f"_rasplab_user_{abs(hash(str(file.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise RasplabError(f"cannot import {str(path)!r} as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except RasplabError as err:
        raise RasplabError(f"{label}: {err}") from err
    except Exception as err:  # the user's code failed: report it in one line
        raise RasplabError(f"{label}: {type(err).__name__}: {err}") from err
    except SystemExit as err:  # sys.exit() in the file would end rasplab silently
        raise RasplabError(
            f"{label}: the file called sys.exit({err.code!r}) while being imported; a program "
            "file must define the program, not exit"
        ) from err
    finally:
        sys.modules.pop(module_name, None)
    return module
