"""The modules moved out of ``rasplab.crasp`` in 0.2 stay importable under their old paths for
one release, as the moved module itself, with a DeprecationWarning."""

import importlib
import sys
import warnings

import pytest

MOVED = {
    "compile": "rasplab.crasp_compiler.compile",
    "plan": "rasplab.crasp_compiler.plan",
    "precision": "rasplab.crasp_compiler.precision",
    "model": "rasplab.crasp_compiler.model",
    "export": "rasplab.crasp_compiler.export",
    "verify": "rasplab.crasp_compiler.verify",
    "table": "rasplab.reports.crasp_table.table",
    "measure": "rasplab.reports.crasp_table.measure",
    "table_text": "rasplab.reports.crasp_table.text",
    "table_plot": "rasplab.reports.crasp_table.plot",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_is_the_moved_module_with_a_warning(old):
    name = f"rasplab.crasp.{old}"
    sys.modules.pop(name, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(name)
    assert module is importlib.import_module(MOVED[old])
    assert any(
        issubclass(w.category, DeprecationWarning) and MOVED[old] in str(w.message) for w in caught
    )
