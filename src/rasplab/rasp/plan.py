"""Deprecated alias of :mod:`rasplab.rasp_compiler.plan` (moved in 0.2; this alias goes in the next release)."""

import sys
import warnings

import rasplab.rasp_compiler.plan as _moved  # noqa: E402  (a deprecated alias: the arrow up is the point)

warnings.warn(
    "rasplab.rasp.plan moved to rasplab.rasp_compiler.plan; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
