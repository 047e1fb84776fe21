"""Finding a C-RASP program by name: a library program, ``FILE.py:NAME`` or ``FILE.json``.

``FILE.py:NAME`` imports the Python file (it is the user's own code, run as given) and takes
its attribute ``NAME``: a :class:`~rasplab.crasp.ir.CraspProgram`, or a function of no arguments
returning one. ``FILE.json`` holds :meth:`CraspProgram.to_json` data. Anything else is a library
name. Every failure is one :class:`RasplabError` naming the file and what is wrong.

>>> load_crasp_program("tomita1").name
'tomita1'
>>> load_crasp_program("nowhere.py:prog")
Traceback (most recent call last):
rasplab.errors.RasplabError: cannot read program file 'nowhere.py': No such file or directory
"""

from __future__ import annotations

import json
from pathlib import Path

from rasplab.crasp import library
from rasplab.crasp.ir import CraspProgram, program_from_json
from rasplab.deprecation import old_names
from rasplab.errors import RasplabError
from rasplab.usercode import import_file

__getattr__ = old_names(__name__, {"load_program": "rasplab.crasp.load:load_crasp_program"})
"""``load_program``, the old name of :func:`load_crasp_program`, still importable (deprecated)."""


def load_crasp_program(spec: str) -> CraspProgram:
    """The program named by ``spec`` (see the module docstring)."""
    if ".py:" in spec or spec.endswith(".py"):
        path, _, attr = spec.rpartition(":") if ".py:" in spec else (spec, "", "")
        if not attr:
            raise RasplabError(f"{spec!r}: name the program in the file, as FILE.py:NAME")
        return _from_python(Path(path), attr)
    if spec.endswith(".json"):
        return _from_json(Path(spec))
    return library.program(spec)


def _from_python(path: Path, attr: str) -> CraspProgram:
    """Import ``path`` as a fresh module and take its program ``attr``."""
    module = import_file(path, f"{path}:{attr}")
    try:
        obj = getattr(module, attr, None)
        if callable(obj) and not isinstance(obj, CraspProgram):
            obj = obj()
    except RasplabError as err:
        raise RasplabError(f"{path}:{attr}: {err}") from err
    except Exception as err:  # the user's code failed: report it in one line
        raise RasplabError(f"{path}:{attr}: {type(err).__name__}: {err}") from err
    if obj is None:
        raise RasplabError(f"{path} defines no {attr!r}")
    if not isinstance(obj, CraspProgram):
        raise RasplabError(
            f"{path}:{attr} is {type(obj).__name__}, not a C-RASP Program (build one with "
            "rasplab.crasp.crasp_program, or a function of no arguments returning one)"
        )
    return obj


def _from_json(path: Path) -> CraspProgram:
    """A program from :meth:`Program.to_json` data."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise RasplabError(f"cannot read program file {str(path)!r}: {err.strerror}") from err
    except json.JSONDecodeError as err:
        raise RasplabError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from err
    try:
        return program_from_json(data)  # malformed data is a RasplabError from there
    except RasplabError as err:
        raise RasplabError(f"{path}: {err}") from err
