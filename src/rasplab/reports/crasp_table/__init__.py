"""The C-RASP table: each task's predicted length generalization beside a results store's runs.

It reads the expressibility rows of the language (:mod:`rasplab.crasp.expressibility`) and
the measured runs (:mod:`rasplab.reports.crasp_table.measure`), joins them
(:mod:`rasplab.reports.crasp_table.table`) and writes Markdown, CSV and PNG
(:mod:`rasplab.reports.crasp_table.text`, :mod:`rasplab.reports.crasp_table.plot`).
"""

from rasplab.reports.crasp_table.table import CraspTable, TableRow, build_table, write_table

__all__ = ["CraspTable", "TableRow", "build_table", "write_table"]
