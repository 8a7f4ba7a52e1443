"""Reading Markdown the way GitHub renders it, enough to check its links.

:func:`links` finds the relative targets a document links to (inline links,
images, reference definitions and HTML ``href``/``src``), outside code;
:func:`anchors` lists the fragments a document offers: its headings' slugs by
GitHub's rules (:func:`slug`, with ``-1``, ``-2`` … for repeats) and explicit
``<a id=…>`` / ``<a name=…>`` targets; :func:`broken_links` puts them
together for a set of files under one root.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

__all__ = ["Link", "anchors", "broken_links", "links", "markdown_files", "slug"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_INLINE = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)"
)
_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.M)
_HTML_TARGET = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]*)\"", re.I)
_HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)=\"([^\"]*)\"", re.I)
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True, slots=True)
class Link:
    """A link as written in a document: its line and its target."""

    line: int
    target: str


def _blank_code_blocks(text: str) -> list[str]:
    """The document's lines, with fenced and indented code blocks emptied."""
    lines = text.split("\n")
    out: list[str] = []
    fence = ""
    previous_blank = True
    for line in lines:
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            out.append("")
        elif opening:
            fence = opening.group(1)
            out.append("")
        elif previous_blank and line.startswith("    ") and line.strip():
            out.append("")  # an indented code block starts only after a blank line
            continue
        else:
            out.append(line)
        previous_blank = not line.strip()
    return out


def _without_code_spans(text: str) -> str:
    """``text`` with every inline code span replaced by spaces (newlines kept)."""
    return _CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def links(text: str) -> Iterator[Link]:
    """Every link target in a Markdown document, outside code, with its line."""
    body = _without_code_spans("\n".join(_blank_code_blocks(text)))
    for pattern in (_INLINE, _DEFINITION, _HTML_TARGET):
        for match in pattern.finditer(body):
            target = match.group(1).strip("<>")
            yield Link(body.count("\n", 0, match.start()) + 1, target)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower case, with
    everything but letters, digits, marks, ``_``, ``-`` and spaces removed and
    each space turned into ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]*>", "", text)  # HTML tags
    parts = re.split(r"(`+[^`]*`+)", text)
    plain = []
    for i, part in enumerate(parts):
        if i % 2:  # a code span: its content, verbatim
            plain.append(part.strip("`").strip())
        else:  # emphasis markers are not text
            plain.append(re.sub(r"(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])", "", part))
    kept = (
        c
        for c in "".join(plain).strip().lower()
        if c in " -_" or unicodedata.category(c)[0] in "LNM"
    )
    return "".join(kept).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every fragment a document offers: heading slugs and explicit HTML anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    lines = _blank_code_blocks(text)
    for i, line in enumerate(lines):
        atx = _ATX.match(line)
        setext = i > 0 and lines[i - 1].strip() and _SETEXT.match(line)
        if atx:
            heading = atx.group(1) or ""
        elif setext and not _ATX.match(lines[i - 1]) and not lines[i - 1].lstrip().startswith("|"):
            heading = lines[i - 1].strip()
        else:
            continue
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    found.update(_HTML_ANCHOR.findall(_without_code_spans("\n".join(lines))))
    return found


def markdown_files(root: Path) -> list[Path]:
    """The Markdown files under ``root`` that git tracks or would track (not the
    ignored ones); every ``*.md`` but tooling's if ``root`` is not a git tree."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.md"],
            cwd=root,
            capture_output=True,
            check=True,
            timeout=30,
        ).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        skip = {".git", ".venv", "node_modules", "build", "dist"}
        return sorted(
            p for p in root.rglob("*.md") if not skip & set(p.relative_to(root).parts[:-1])
        )
    return sorted({root / name for name in listed.split("\0") if name and (root / name).exists()})


def broken_links(root: Path, files: Iterable[Path]) -> list[str]:
    """One line per relative link in ``files`` that leads nowhere, or out of ``root``."""
    root = root.resolve()
    cache: dict[Path, set[str]] = {}
    problems = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        for link in links(text):
            if not link.target or _SCHEME.match(link.target) or link.target.startswith("//"):
                continue  # a URL (http:, mailto:, …) is not a file of the repository
            where = f"{path.relative_to(root)}:{link.line}: {link.target}"
            target, _, fragment = link.target.partition("#")
            target = unquote(target.split("?")[0])
            file = (path.parent / target).resolve() if target else path.resolve()
            if not file.is_relative_to(root):
                problems.append(f"{where}: leads out of the repository")
            elif not file.exists():
                problems.append(f"{where}: no such file")
            elif fragment and file.suffix.lower() == ".md":
                if file not in cache:
                    cache[file] = anchors(file.read_text(encoding="utf-8"))
                if unquote(fragment) not in cache[file]:
                    problems.append(f"{where}: no heading or anchor #{fragment} there")
    return problems
