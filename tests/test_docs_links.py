"""The docs a reader follows: every relative link lands, no page is too long to find things in.

Links are checked the way GitHub renders them: a relative target must name an existing file or
folder (relative to the page), and a ``#anchor`` must be the slug of a heading of the target
page (GitHub's rule: lower case, punctuation dropped, spaces to hyphens, ``-1``, ``-2`` for
repeats). Links inside fenced code blocks and inline code are not links and are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MAX_LINES = 800

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`]*`")


def pages() -> list[Path]:
    """README.md, docs/*.md and docs/results/*.md: the pages the README leads to."""
    found = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted(DOCS.glob("results/*.md"))]
    return [p for p in found if p.is_file()]


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code removed.

    >>> prose_lines("a `[x](y)` b\\n```\\n[c](d)\\n```\\n[e](f)")
    ['a  b', '[e](f)']
    """
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(INLINE_CODE.sub("", line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text.

    >>> slug("SCAN: end-to-end training (seed 001 Table 5, Figure 18)")
    'scan-end-to-end-training-seed-001-table-5-figure-18'
    >>> slug("Export to a `rasplab.lang` program")
    'export-to-a-rasplablang-program'
    """
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown page, repeats numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or heading does not exist."""
    bad = []
    for line in prose_lines(page.read_text()):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            if not dest.exists():
                bad.append(f"{target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{target} (no heading #{anchor})")
    return bad


def test_the_pages_exist():
    names = {p.relative_to(ROOT).as_posix() for p in pages()}
    assert {"README.md", "docs/results.md", "docs/results/fig1.md"} <= names


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_lands(page):
    assert broken_links(page) == []


def test_a_broken_link_and_a_missing_anchor_are_caught(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A heading\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-heading) [gone](missing.md) [no anchor](other.md#nothing)\n"
        "`[in code](missing.md)` [web](https://example.org)\n"
    )
    assert broken_links(page) == [
        "missing.md (no such file)",
        "other.md#nothing (no heading #nothing)",
    ]


@pytest.mark.parametrize(
    "page", sorted(DOCS.rglob("*.md")), ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_no_docs_page_is_over_800_lines(page):
    assert len(page.read_text().splitlines()) <= MAX_LINES


def test_the_results_index_lists_every_study_page():
    index = (DOCS / "results.md").read_text()
    listed = set(re.findall(r"\]\(results/([\w.-]+\.md)\)", index))
    assert listed == {p.name for p in (DOCS / "results").glob("*.md")}
