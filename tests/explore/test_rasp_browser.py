"""The RASP page in a real browser (headless chromium): the evaluator's SOps beside the compiled
model's, titled as RASP, with the RASP summary; skipped locally without chromium/selenium."""

from __future__ import annotations

import pytest

from rasplab.cli import main

from .browser import open_page


def _table(driver, table_id: str) -> dict[str, list[str]]:
    rows = driver.execute_script(
        "return [...document.querySelectorAll('#' + arguments[0] + ' tr')].map("
        "r => [...r.children].map(c => c.textContent));",
        table_id,
    )
    return {r[0]: r[1:] for r in rows}


def test_rasp_page_shows_evaluator_and_compiled_sops(browser, tmp_path):
    out = tmp_path / "sort.html"
    with pytest.raises(SystemExit) as done:
        main(["explore", "lib:make_sort_unique", "--vocab", "1 2 3", "--max-seq-len", "4",
              "--input", "3 1 2", "--out", str(out)])  # fmt: skip
    assert done.value.code == 0
    log = open_page(browser, str(out))
    assert [m for m in log if m["level"] in ("SEVERE", "ERROR")] == []
    evaluated = _table(browser, "interp-table")
    compiled = _table(browser, "compiled-table")
    assert evaluated["symbol"] == ["BOS", "3", "1", "2"] and evaluated["tokens"][1:] == [
        "3",
        "1",
        "2",
    ]
    sort = next(name for name in evaluated if name.startswith("sort_"))
    assert evaluated[sort] == ["-", "1", "2", "3"] and compiled[sort][1:] == ["1", "2", "3"]
    assert browser.find_elements("css selector", "#compiled-table td.disagree") == []
    headings = [h.text for h in browser.find_elements("css selector", "h2")]
    assert "RASP evaluator: SOps × positions" in headings
    summary = browser.find_element("id", "summary").text
    assert "SOps" in summary and "output: 1 2 3" in summary and "agree on every cell" in summary
    assert browser.save_screenshot(str(tmp_path / "rasp.png"))
