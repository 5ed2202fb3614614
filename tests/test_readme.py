"""The README a new user reads: short, licensed, its commands table the CLI's own (tools/cli_docs.py), and
no relative link in it or in docs/ that points to a missing file or heading."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def test_readme_commands_table_and_reference_are_the_clis() -> None:
    sys.path.insert(0, str(ROOT))
    from tools import cli_docs

    assert cli_docs.main(["--check"]) == 0, "README.md / docs/commands.md are stale (fix: make docs-cli)"
    table = cli_docs.readme_table()
    for name, _, _ in cli_docs.commands():
        assert f"`fabricgen {name}`" in table


def test_license_ships_and_readme_is_short() -> None:
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


# --------------------------------------------------------------------------- links

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")  # [text](target "title")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:, ...


def _prose(text: str) -> list[str]:
    """The lines of a Markdown file outside fenced code blocks, with inline code removed."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, repeats suffixed -1, -2 ... as GitHub does."""
    out: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = anchor(m.group(1))
            n = seen.get(slug, 0)
            out.add(slug if n == 0 else f"{slug}-{n}")
            seen[slug] = n + 1
    return out


def links(path: Path) -> list[str]:
    return [m.group(1) for line in _prose(path.read_text(encoding="utf-8")) for m in LINK.finditer(line)]


def broken_links(doc: Path, root: Path = ROOT) -> list[str]:
    """The relative links of `doc` that name no existing file under `root`, or no heading of it."""
    broken = []
    for target in links(doc):
        if EXTERNAL.match(target):
            continue
        path_part, _, fragment = target.partition("#")
        dest = (doc.parent / path_part).resolve() if path_part else doc
        if not dest.exists() or (dest != root and root not in dest.parents):
            broken.append(f"{target}: no such file in the checkout")
        elif fragment and (dest.suffix != ".md" or fragment not in anchors(dest)):
            broken.append(f"{target}: no heading #{fragment} in {dest.relative_to(root)}")
    return broken


def test_anchors_are_githubs(tmp_path: Path) -> None:
    assert anchor("`fabricgen check`") == "fabricgen-check"
    assert anchor("SONiC buffers, the SKU's way") == "sonic-buffers-the-skus-way"
    assert anchor("1. Dry run with impact labels") == "1-dry-run-with-impact-labels"
    page = tmp_path / "page.md"
    page.write_text("# A\n## A\n```\n# not a heading\n```\n[ok](#a-1) [bad](#not-a-heading) [gone](nope.md)\n",
                    encoding="utf-8")
    assert anchors(page) == {"a", "a-1"}
    assert [b.split(":")[0] for b in broken_links(page, tmp_path)] == ["#not-a-heading", "nope.md"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(doc: Path) -> None:
    """Each relative link of the README and docs/ names a file that exists and, with a #anchor, its heading."""
    assert not broken_links(doc), f"{doc.relative_to(ROOT)}: " + "; ".join(broken_links(doc))
