"""Deprecated alias of :mod:`rasplab.reports.crasp_table.table` (moved in 0.2; this alias goes in the next release)."""

import sys
import warnings

import rasplab.reports.crasp_table.table as _moved  # noqa: E402  (a deprecated alias: the arrow up is the point)

warnings.warn(
    "rasplab.crasp.table moved to rasplab.reports.crasp_table.table; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
