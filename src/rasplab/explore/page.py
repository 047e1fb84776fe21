"""One self-contained HTML page: styles, script and data inline; no network, no server.

The page data (a plain JSON-able dict from :mod:`rasplab.explore.program_view`,
:mod:`rasplab.explore.run_view` or :mod:`rasplab.explore.crasp_view`) is embedded as
``<script type="application/json">``; ``explore.js`` renders it. ``</`` inside the JSON is
written as ``<\\/`` so no value can close the script element.

A page opens at the step in its URL fragment (``page.html#step=3``, ``#step=last``), else at
the step its data names (:func:`set_initial_step`: ``rasplab explore --step N|last``; the
last step by default, which is what a saved page or a screenshot should show); moving
through the steps keeps the fragment up to date, so a link opens where the reader was.

>>> html = render_page({"kind": "crasp", "title": "a</script>b", "summary": {}})
>>> html.count("</script>"), "a<\\\\/script>b" in html
(2, True)
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from rasplab.errors import RasplabError
from rasplab.files import write_file

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rasplab explore</title>
<style>{css}</style>
</head>
<body>
<h1 id="title"></h1>
<div id="summary"></div>
<div id="controls">
<button id="prev" type="button" title="previous (left arrow)">&larr;</button>
<input id="step" type="range" min="0" max="0" value="0" aria-label="step">
<button id="next" type="button" title="next (right arrow)">&rarr;</button>
<span id="step-label"></span>
</div>
<div id="legend" class="legend"></div>
<div id="view"></div>
<script type="application/json" id="data">{data}</script>
<script>{js}</script>
</body>
</html>
"""


def step_count(data: dict) -> int:
    """How many steps the page moves through (1 for a page without steps)."""
    if data.get("kind") == "program":
        return len(data["steps"])
    if data.get("kind") == "run":
        return max(len(data["layers"]), 1)
    return 1


def set_initial_step(data: dict, step: str | int | None) -> dict:
    """Record the step the page opens at: ``"last"`` (default, ``None``) or ``0..n-1``.

    >>> set_initial_step({"kind": "run", "layers": [{}, {}]}, "1")["initial_step"]
    1
    >>> set_initial_step({"kind": "run", "layers": [{}, {}]}, "2")
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: --step 2 is outside this page's steps; give 0..1 or last
    """
    last = step_count(data) - 1
    if step is None or step == "last":
        data["initial_step"] = "last"
        return data
    try:
        value = int(step)
    except (TypeError, ValueError):
        raise RasplabError(f"--step must be a step number or 'last', got {step!r}") from None
    if not 0 <= value <= last:
        raise RasplabError(f"--step {value} is outside this page's steps; give 0..{last} or last")
    data["initial_step"] = value
    return data


def _asset(name: str) -> str:
    return files("rasplab.explore").joinpath(name).read_text(encoding="utf-8")


def render_page(data: dict) -> str:
    """The page's HTML text for ``data``."""
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return TEMPLATE.format(css=_asset("explore.css"), js=_asset("explore.js"), data=payload)


def write_page(data: dict, path: str | Path) -> Path:
    """Write the page to ``path`` atomically (a temporary file, then rename)."""
    out = Path(path)
    if not out.parent.is_dir():
        raise RasplabError(f"cannot write {str(out)!r}: folder {str(out.parent)!r} does not exist")
    write_file(out, render_page(data).encode("utf-8"), "page")
    return out
