"""Benchmark: explorer pages (size, generation time, time to open in a browser); prints JSON.

    python benchmarks/bench_explore.py [--quick]

Per case (program, input): positions x layers, page size in bytes, seconds to build the page
data (``program_view``: the interpreter trace, the compiled model run layer by layer with
its attention weights, the comparison) and to write the HTML, next to the two runs the page
wraps measured alone in the same process (``interpret(trace=True)`` + ``run_compiled(trace=True)``),
with the ratio page / runs. When Debian's chromium, chromium-driver and selenium are present,
also the milliseconds from navigation start until the page has rendered its first step
(``performance.now()`` at the end of ``init``), best of 3 loads. Targets (issue #16): a page
for 200 positions x 40 layers under 5 MB and open in under 2 s; the largest case here has
200 positions x 200 layers.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from rasplab.compiler import run_compiled  # noqa: E402
from rasplab.compiler.verify import compile_for  # noqa: E402
from rasplab.explore import program_view, write_page  # noqa: E402
from rasplab.lang.interpreter import interpret  # noqa: E402
from rasplab.programs import get_program  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "explore"))


def _bits(n: int) -> str:
    return " ".join("1" if i % 3 else "0" for i in range(n))


CASES = [
    ("parity_sequential_relative", _bits(40)),
    ("parity_sequential_relative", _bits(200)),
    ("scan", "jump opposite right twice and run around left thrice"),
    ("addition", "98765432+1234567"),
]


def _open_ms(paths: list[Path]) -> list[float | None]:
    """Best-of-3 milliseconds to render each page in headless chromium (None: no browser)."""
    try:
        from browser import find_browser
    except ImportError:
        return [None] * len(paths)
    path, driver_path, why = find_browser()
    if why:
        print(f"no browser timing: {why}", file=sys.stderr)
        return [None] * len(paths)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    options = Options()
    options.binary_location = path
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    out = []
    try:
        for page in paths:
            best = None
            for _ in range(3):
                driver.get("about:blank")
                driver.get(f"file://{page}")
                WebDriverWait(driver, 30).until(
                    lambda d: d.execute_script("return document.body.dataset.ready === '1'")
                )
                ms = float(driver.execute_script("return document.body.dataset.readyMs"))
                best = ms if best is None else min(best, ms)
            out.append(best)
    finally:
        driver.quit()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Only the smallest case.")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cases = CASES[:1] if args.quick else CASES
    results, pages = [], []
    folder = Path(tempfile.mkdtemp(prefix="bench_explore_"))
    for n, (name, text) in enumerate(cases):
        entry = get_program(name)
        ids = entry.encode(text)
        start = time.perf_counter()
        interpret(entry.program(), [ids], trace=True)
        run_compiled(compile_for(entry.program(), [len(ids)]), [ids], trace=True)
        runs = time.perf_counter() - start
        start = time.perf_counter()
        data = program_view(entry, text)
        build = time.perf_counter() - start
        start = time.perf_counter()
        page = write_page(data, folder / f"page{n}.html")
        write = time.perf_counter() - start
        pages.append(page)
        results.append(
            {
                "program": name,
                "positions": len(ids),
                "layers": data["summary"]["layers"],
                "all_agree": data["summary"]["all_agree"],
                "bytes": page.stat().st_size,
                "build_s": round(build, 3),
                "write_s": round(write, 3),
                "runs_alone_s": round(runs, 3),
                "ratio_page_over_runs": round((build + write) / runs, 2),
            }
        )
    for r, ms in zip(results, _open_ms(pages)):
        r["open_ms"] = ms
    print(json.dumps({"cases": results}, indent=1))


if __name__ == "__main__":
    main()
