"""One self-contained HTML page: styles, script and data inline; no network, no server.

The page data (a plain JSON-able dict from :mod:`rasplab.explore.program_view`,
:mod:`rasplab.explore.run_view` or :mod:`rasplab.explore.crasp_view`) is embedded as
``<script type="application/json">``; ``explore.js`` renders it. ``</`` inside the JSON is
written as ``<\\/`` so no value can close the script element.

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
<span class="legend"><span style="background:#fff4c2">changed</span><span
 style="background:#e6f5e6">agrees</span><span style="background:#f8caca">differs</span>
 - undefined &middot; ! invalid encoding &middot; keys: &larr; &rarr; Home End</span>
</div>
<div id="view"></div>
<script type="application/json" id="data">{data}</script>
<script>{js}</script>
</body>
</html>
"""


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
