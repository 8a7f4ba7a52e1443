"""Every relative link in the repository's Markdown leads somewhere inside it.

The project must stand on its own: a link to a file outside the repository,
to a file that is gone, or to a heading that was renamed is a broken promise
to the reader. Anchors follow GitHub's slug rules (:mod:`tests.docs.markdown`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.markdown import anchors, broken_links, links, markdown_files, slug

ROOT = Path(__file__).resolve().parents[2]


def test_every_relative_link_in_the_repository_resolves() -> None:
    """No tracked Markdown file links to a missing file, a missing heading, or outside."""
    files = markdown_files(ROOT)
    assert ROOT / "README.md" in files and ROOT / "PROTOCOL.md" in files
    assert ROOT / "docs" / "RULES.md" in files
    assert broken_links(ROOT, files) == []


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        (
            "Gift of Tulips — the wire protocol, version 1",
            "gift-of-tulips--the-wire-protocol-version-1",
        ),
        ("A connection's life", "a-connections-life"),
        ("Client→server messages", "clientserver-messages"),
        ("A whole 3-player match", "a-whole-3-player-match"),
        ("`list_matches`", "list_matches"),
        ("The engine in *five* lines", "the-engine-in-five-lines"),
        ("_Über_ [the link](x.md) <b>Ä</b>", "über-the-link-ä"),
        ("R1–R30: 2.0 & more!", "r1r30-20--more"),
    ],
)
def test_slug_follows_github(heading: str, expected: str) -> None:
    """Headings turn into anchors the way GitHub's renderer makes them."""
    assert slug(heading) == expected


def test_anchors_count_repeated_headings_and_skip_code() -> None:
    """A repeated heading gets -1, -2; HTML anchors count; headings in code do not."""
    text = '# Title\n\n## Notes\n\n## Notes\n\n```\n# not a heading\n```\n\n<a id="x-1"></a>\n'
    text += "Set-ext heading\n---\n"
    assert anchors(text) == {"title", "notes", "notes-1", "x-1", "set-ext-heading"}


def test_links_are_found_outside_code_only() -> None:
    """Inline links, images, definitions and HTML; nothing inside code spans or fences."""
    text = (
        'See [a](a.md#x) and ![b](img/b.png "title") and [[T](#t)].\n'
        "`[not](code.md)`\n"
        "```\n[not](fenced.md)\n```\n"
        "[ref]: <c d.md>\n"
        '<a href="e.md">e</a>\n'
    )
    assert [(link.line, link.target) for link in links(text)] == [
        (1, "a.md#x"),
        (1, "img/b.png"),
        (1, "#t"),
        (6, "c d.md"),
        (7, "e.md"),
    ]


def test_broken_links_names_each_problem(tmp_path: Path) -> None:
    """A missing file, a missing anchor and a path out of the root are each reported."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "RULES.md").write_text("# Rules\n\n## R1 Colours\n", encoding="utf-8")
    (tmp_path / "outside.md").write_text("# Out\n", encoding="utf-8")
    readme = tmp_path / "docs" / "README.md"
    readme.write_text(
        "[ok](RULES.md#r1-colours) [ok too](#intro) [web](https://example.org/x.md)\n"
        "[gone](MISSING.md) [renamed](RULES.md#r2-values) [up](../../elsewhere/RULES.md)\n"
        "# Intro\n",
        encoding="utf-8",
    )
    assert broken_links(tmp_path / "docs", [readme]) == [
        "README.md:2: MISSING.md: no such file",
        "README.md:2: RULES.md#r2-values: no heading or anchor #r2-values there",
        "README.md:2: ../../elsewhere/RULES.md: leads out of the repository",
    ]
