"""The explorer: one self-contained HTML page over a program's trace and weights, or a run.

* :func:`program_view` — an ALTA program on one input: interpreter and compiled weights
  side by side, per layer, with attention heatmaps and the rules that fired;
* :func:`crasp_view` — a C-RASP program on one string: every operation per position;
* :func:`rasp_view` — a compiled RASP program on one input: every SOp per position, from
  the evaluator and decoded from the compiled model;
* :func:`run_view` — a trained run on one input: attention per layer and head, predictions
  against targets, accuracy by length bin and the training curve;
* :func:`write_page` — the page itself (data as JSON, styles and script inline).
"""

from rasplab.explore.crasp_view import crasp_view
from rasplab.explore.page import render_page, write_page
from rasplab.explore.program_view import program_view
from rasplab.explore.rasp_view import rasp_view
from rasplab.explore.run_view import run_view

__all__ = ["crasp_view", "program_view", "rasp_view", "render_page", "run_view", "write_page"]
