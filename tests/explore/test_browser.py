"""The pages in a real browser: headless Debian chromium through selenium.

Each test opens a page written by the real CLI entry point and checks what a user sees: no
console errors, the interpreter's values in the table, the stepper moving between layers,
the run's predictions; each saves a screenshot.
"""

from __future__ import annotations

import pytest

from rasplab.cli import main
from rasplab.lang.interpreter import interpret
from rasplab.programs import get_program

from .browser import open_page


def _write(tmp_path, *args, name: str = "page.html") -> str:
    out = tmp_path / name
    with pytest.raises(SystemExit) as done:
        main(["explore", *args, "--out", str(out)])
    assert done.value.code == 0
    return str(out)


def _inked(driver, selector: str) -> list[int]:
    """Per canvas matching ``selector``: how many of its pixels are not white (drawn on)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(c => {"
        " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 0; i < d.length; i += 4)"
        "  if (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250) n++; return n; });",
        selector,
    )


def _table(driver, table_id: str) -> dict[str, list[str]]:
    rows = driver.execute_script(
        "return [...document.querySelectorAll('#' + arguments[0] + ' tr')].map("
        "r => [...r.children].map(c => c.textContent));",
        table_id,
    )
    return {r[0]: r[1:] for r in rows}


def _errors(log: list[dict]) -> list[dict]:
    return [m for m in log if m["level"] in ("SEVERE", "ERROR")]


def test_program_page_shows_the_interpreters_values_and_steps_through_layers(browser, tmp_path):
    entry = get_program("parity_sequential_relative")
    text = "1 0 1 1 0"
    page = _write(tmp_path, "parity_sequential_relative", "--input", text)
    trace = interpret(entry.program(), [entry.encode(text)], trace=True).traces[0]
    last = 2 * len(trace.layers)
    assert _errors(open_page(browser, page)) == []  # a saved page opens at its last step
    assert browser.find_element("id", "step-label").text.startswith(f"step {last}: ")
    assert browser.execute_script("return location.hash") == f"#step={last}"
    log = open_page(browser, page + "#step=0")  # a link to step 0
    assert _errors(log) == []
    summary = browser.find_element("id", "summary").text
    assert f"layers run: {len(trace.layers)}" in summary and "agree on every cell" in summary

    table = _table(browser, "interp-table")
    for name, values in trace.initial.items():
        assert table[name] == ["-" if v is None else str(v) for v in values]

    label = browser.find_element("id", "step-label")
    assert label.text.startswith("step 0")
    browser.find_element("id", "next").click()
    assert label.text.startswith("step 1: layer 1, after attention")
    after = trace.layers[0].after_attention
    table = _table(browser, "interp-table")
    for name, values in after.items():
        assert table[name] == ["-" if v is None else str(v) for v in values]
    assert browser.find_elements("css selector", ".head canvas")

    from selenium.webdriver.common.keys import Keys

    browser.find_element("tag name", "body").send_keys(Keys.END)
    assert label.text.startswith(f"step {last}: layer {len(trace.layers)}, after MLP")
    out = _table(browser, "interp-table")[f"{entry.program().output}"]
    assert out == [str(v) for v in trace.layers[-1].after_mlp[entry.program().output]]
    compiled = browser.find_elements("css selector", "#compiled-table td.disagree")
    assert compiled == []
    browser.find_element("tag name", "body").send_keys(Keys.ARROW_LEFT)
    assert label.text.startswith(f"step {last - 1}:")
    shot = tmp_path / "program.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 1000


def test_explore_step_opens_the_page_there_with_labelled_heatmaps(browser, tmp_path):
    page = _write(tmp_path, "parity_sequential_relative", "--input", "1 0 1", "--step", "3")
    assert _errors(open_page(browser, page)) == []
    assert browser.find_element("id", "step-label").text.startswith("step 3: layer 2, after")
    heads = browser.find_elements("css selector", ".head canvas")
    assert heads and all(n > 0 for n in _inked(browser, ".head canvas"))
    assert browser.find_element("css selector", ".head .head-title").text.startswith("head ")
    shot = tmp_path / "program_step3.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 1000


def test_crasp_page_shows_the_compiled_values_and_no_dead_controls(browser, tmp_path):
    page = _write(tmp_path, "tomita1", "--input", "1 1 0")
    assert _errors(open_page(browser, page)) == []
    table = _table(browser, "interp-table")
    assert table["symbol"][1:] == ["1", "1", "0"]
    compiled = _table(browser, "compiled-table")
    for name, values in compiled.items():
        assert values == table[name], name
    assert browser.find_elements("css selector", "#compiled-table td.disagree") == []
    assert not browser.find_element("id", "controls").is_displayed()
    legend = browser.find_element("id", "legend").text
    assert "agrees" in legend and "changed" not in legend and "keys" not in legend
    assert "agree on every cell" in browser.find_element("id", "summary").text
    assert browser.save_screenshot(str(tmp_path / "crasp.png"))


def test_run_page_shows_predictions_heatmaps_and_charts(browser, tmp_path, run_dir):
    page = _write(tmp_path, "--run", str(run_dir), "--input", "1 1 1 1")
    assert _errors(open_page(browser, page)) == []
    table = _table(browser, "predictions")
    assert table["token"][:1] and len(table["prediction"]) == len(table["token"])
    assert browser.find_elements("id", "bins-chart") and browser.find_elements("id", "curve-chart")
    label = browser.find_element("id", "step-label")
    assert label.text == "layer 2 of 2"  # the last step by default
    assert len(browser.find_elements("css selector", ".head canvas")) == 2  # 2 heads
    assert all(n > 0 for n in _inked(browser, ".head canvas"))
    assert browser.save_screenshot(str(tmp_path / "run.png"))  # step 1: heatmaps of layer 2
    browser.find_element("id", "prev").click()
    assert label.text == "layer 1 of 2"
    title = browser.find_element("id", "title").text
    assert title.replace(",", "").split().count("tomita1") == 1  # the task named once
