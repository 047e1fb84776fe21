"""Old public names kept importable for one release, each access warning where the name went.

A module that renamed or moved a public name sets its module ``__getattr__`` with
:func:`old_names`; ``from module import OldName`` keeps working and emits a
:class:`DeprecationWarning` naming the new place.

>>> import warnings
>>> __getattr__ = old_names("rasplab.example", {"OldSplit": "rasplab.bins:Bin"})
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     __getattr__("OldSplit").__name__, str(caught[0].message)
('Bin', 'rasplab.example.OldSplit is deprecated: use rasplab.bins.Bin (the old name goes in the next release)')
>>> __getattr__("Nothing")
Traceback (most recent call last):
AttributeError: module 'rasplab.example' has no attribute 'Nothing'
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable


def old_names(module: str, moved: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``module`` serving each old name of ``moved`` (old name ->
    ``"package.module:new_name"``) from its new place, with a :class:`DeprecationWarning`."""

    def __getattr__(name: str) -> object:
        """The new object for an old name (warning); any other name is missing."""
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, new = moved[name].split(":")
        warnings.warn(
            f"{module}.{name} is deprecated: use {where}.{new} (the old name goes in the next "
            "release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(where), new)

    return __getattr__
