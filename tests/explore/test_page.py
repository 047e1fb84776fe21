"""The page is one self-contained file: no network, no external scripts, data embedded."""

from __future__ import annotations

import json
import re

import pytest

from rasplab.errors import RasplabError
from rasplab.explore import program_view, render_page, write_page
from rasplab.programs import get_program


def test_page_is_self_contained_and_embeds_the_data(tmp_path):
    data = program_view(get_program("parity_sequential_relative"), "1 0 1 1")
    path = write_page(data, tmp_path / "page.html")
    html = path.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|@import|url\(", html)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}  # an XML namespace name, never fetched
    embedded = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert json.loads(embedded.group(1).replace("<\\/", "</")) == json.loads(json.dumps(data))
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_script_end_tags_in_values_cannot_break_out():
    html = render_page({"kind": "crasp", "title": "</script><b>x", "summary": {}})
    body = html.split('id="data">', 1)[1].split("</script>", 1)[0]
    assert "</script><b>" not in body and json.loads(body.replace("<\\/", "</"))["title"]


def test_missing_folder_is_one_clear_error(tmp_path):
    with pytest.raises(RasplabError, match="does not exist"):
        write_page({"kind": "crasp"}, tmp_path / "nowhere" / "page.html")
