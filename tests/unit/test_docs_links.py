"""Every link between the docs pages (and from the README) reaches a file that exists,
and a link to a section reaches a heading of that page."""

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
# [text](target) outside code: the target up to a space or the closing parenthesis.
LINK_RE = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE_RE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_RE = re.compile(r"`[^`\n]*`")


def _links(text: str) -> list[str]:
    prose = CODE_RE.sub("", FENCE_RE.sub("", text))
    return LINK_RE.findall(prose)


def _slug(heading: str) -> str:
    # GitHub's anchors: lower case, punctuation dropped, spaces to hyphens.
    text = CODE_RE.sub(lambda m: m.group(0).strip("`"), heading.strip()).lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE_RE.sub("", page.read_text(encoding="utf-8"))
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        slug, n = _slug(heading), 0
        while (slug if n == 0 else f"{slug}-{n}") in anchors:
            n += 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _broken(page: Path) -> list[str]:
    broken = []
    for target in _links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # http:, https:, mailto: — outside the repository
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_link_of_the_page_resolves(page):
    assert not _broken(page), f"{page.relative_to(REPO)}: {_broken(page)}"


def test_a_missing_page_or_heading_is_caught(tmp_path):
    # The check itself: a link to a page or a heading that is not there is reported.
    (tmp_path / "a.md").write_text("# Title\n\n## The dual path\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#the-dual-path) [gone](c.md) [no heading](a.md#history)\n"
                    "`[in code](d.md)` [web](https://example.org/x)\n", encoding="utf-8")
    assert _broken(page) == ["c.md: no such file", "a.md#history: no heading #history in a.md"]
