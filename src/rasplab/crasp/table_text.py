"""Deprecated alias of :mod:`rasplab.reports.crasp_table.text` (moved in 0.2; this alias goes in the next release)."""

import sys
import warnings

import rasplab.reports.crasp_table.text as _moved  # noqa: E402  (a deprecated alias: the arrow up is the point)

warnings.warn(
    "rasplab.crasp.table_text moved to rasplab.reports.crasp_table.text; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
