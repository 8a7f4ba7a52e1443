"""Keeping the catalogues in step: ``python -m client.tui.locales COMMAND``.

- ``update``: make ``tulips.pot`` from the English catalogue, bring every
  other language up to it (new ids added untranslated, removed ones kept as
  obsolete, an entry whose English text changed marked fuzzy), then compile.
- ``compile``: write each language's ``.mo`` from its ``.po``.
- ``new LANG``: start a language from the template.

The English ``.po`` is the source: its entries are the ids, its texts the
English originals, its ``#.`` notes what translators should know (space,
context). The template and every translation carry the English text as the
last notes (``English: …``), which Poedit shows next to the id, and which
``update`` compares to notice a changed original. Needs nothing but the
standard library; GNU ``msgmerge``/``msgfmt`` and Poedit work on the same files.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from . import DOMAIN, LOCALEDIR, SOURCE, mo_path, po_path
from .po import Catalogue, Entry, compile_mo, dump, read

__all__ = ["english_notes", "main", "merge", "nplurals", "template"]

#: The template's header: the fields GNU gettext expects, no dates (they churn diffs).
TEMPLATE_HEADER = {
    "Project-Id-Version": "gift-of-tulips",
    "Language": "",
    "MIME-Version": "1.0",
    "Content-Type": "text/plain; charset=UTF-8",
    "Content-Transfer-Encoding": "8bit",
    "Plural-Forms": "nplurals=INTEGER; plural=EXPRESSION;",
}
#: The plural rule a new language starts with (English's; change it if yours differs).
DEFAULT_PLURAL_FORMS = "nplurals=2; plural=(n != 1);"
_ENGLISH = "English"


def nplurals(catalogue: Catalogue) -> int:
    """How many plural forms the catalogue's language has (2 when it does not say)."""
    match = re.search(r"nplurals\s*=\s*(\d+)", catalogue.header.get("Plural-Forms", ""))
    return int(match.group(1)) if match else 2


def english_notes(entry: Entry) -> tuple[str, ...]:
    """The English text of an English entry, as notes for translators."""
    labels = ["English"] if entry.plural is None else ["English, one", "English, other"]
    lines: list[str] = []
    for label, text in zip(labels, entry.strings, strict=False):
        first, *more = text.split("\n")
        lines.append(f"{label}: {first}")
        lines += [f"  {line}" for line in more]
    return tuple(lines)


def _own_notes(entry: Entry) -> tuple[str, ...]:
    """The notes before the English text."""
    for index, note in enumerate(entry.notes):
        if note.startswith(_ENGLISH):
            return entry.notes[:index]
    return entry.notes


def _english_part(entry: Entry) -> tuple[str, ...]:
    return entry.notes[len(_own_notes(entry)) :]


def template(english: Catalogue) -> Catalogue:
    """The template: every English id with its notes and English text, untranslated."""
    entries = [
        Entry(
            msgid=entry.msgid,
            plural=entry.plural,
            strings=("",) if entry.plural is None else ("", ""),
            notes=entry.notes + english_notes(entry),
        )
        for entry in english.messages
    ]
    comments = (
        "Template of the Gift of Tulips terminal client's texts, made from English by",
        "python -m client.tui.locales update: do not edit (see README.md).",
    )
    return Catalogue(dict(TEMPLATE_HEADER), tuple(entries), comments)


def merge(old: Catalogue, pot: Catalogue) -> Catalogue:
    """``old`` brought up to the template ``pot``: its ids in the template's order,
    translations kept, fuzzy where the English changed or a message became
    (or stopped being) plural; ids the template lost kept at the end as obsolete."""
    forms = nplurals(old)
    entries: list[Entry] = []
    for new in pot.messages:
        previous = old.get(new.msgid)
        empty = ("",) if new.plural is None else ("",) * forms
        if previous is None:
            entries.append(replace(new, strings=empty))
            continue
        flags = [flag for flag in previous.flags if flag != "fuzzy"]
        strings = previous.strings
        changed = _english_part(previous) != _english_part(new) and any(strings)
        if (previous.plural is None) != (new.plural is None):
            strings = (strings[0],) if new.plural is None else (strings[0],) * forms
            changed = True
        if changed or previous.fuzzy:
            flags.append("fuzzy")
        entries.append(
            replace(new, strings=strings, comments=previous.comments, flags=tuple(flags))
        )
    kept = {entry.msgid for entry in entries}
    entries += [
        replace(entry, obsolete=True)
        for entry in old.entries
        if entry.msgid not in kept and any(entry.strings)
    ]
    return Catalogue(old.header, tuple(entries), old.header_comments)


def _write(path: Path, text: str | bytes) -> bool:
    """Write ``path`` if its content changes; whether it did."""
    data = text.encode() if isinstance(text, str) else text
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def _report(lang: str, catalogue: Catalogue) -> str:
    messages = catalogue.messages
    fuzzy = sum(entry.fuzzy for entry in messages)
    missing = sum(not entry.fuzzy and not entry.translated for entry in messages)
    return f"{lang}: {len(messages)} messages, {missing} untranslated, {fuzzy} fuzzy"


def compile_all(root: Path = LOCALEDIR) -> list[str]:
    """Compile every language's ``.po`` under ``root``; how complete each is."""
    reports = []
    for path in sorted(root.glob(f"*/LC_MESSAGES/{DOMAIN}.po")):
        lang = path.parent.parent.name
        catalogue = read(path)
        _write(mo_path(lang, root), compile_mo(catalogue))
        reports.append(_report(lang, catalogue))
    return reports


def update(root: Path = LOCALEDIR) -> list[str]:
    """Template from English, every language merged with it, all compiled."""
    pot = template(read(po_path(SOURCE, root)))
    _write(root / f"{DOMAIN}.pot", dump(pot))
    for path in sorted(root.glob(f"*/LC_MESSAGES/{DOMAIN}.po")):
        if path.parent.parent.name != SOURCE:
            _write(path, dump(merge(read(path), pot)))
    return compile_all(root)


def new(lang: str, plural_forms: str = DEFAULT_PLURAL_FORMS, root: Path = LOCALEDIR) -> Path:
    """Start ``lang`` from the template, every text still to translate; its ``.po``."""
    if not re.fullmatch(r"[a-z]{2,3}(_[A-Z]{2})?", lang):
        raise ValueError(f"not a language code: {lang!r} (like 'fr' or 'pt_BR')")
    path = po_path(lang, root)
    if path.exists():
        raise ValueError(f"{lang} exists already: {path}")
    pot = read(root / f"{DOMAIN}.pot")
    header = {**pot.header, "Language": lang, "Plural-Forms": plural_forms}
    _write(path, dump(merge(Catalogue(header, ()), pot)))
    _write(mo_path(lang, root), compile_mo(read(path)))
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m client.tui.locales",
        description="Keep the terminal client's translations in step with its English texts.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("update", help="make the template from English, merge it, compile")
    commands.add_parser("compile", help="compile every language's .po into its .mo")
    start = commands.add_parser("new", help="start a new language from the template")
    start.add_argument("lang", help="its code, like fr or pt_BR")
    start.add_argument("--plural-forms", default=DEFAULT_PLURAL_FORMS, help="its plural rule")
    args = parser.parse_args(argv)
    try:
        if args.command == "update":
            print("\n".join(update()))
        elif args.command == "compile":
            print("\n".join(compile_all()))
        else:
            path = new(args.lang, args.plural_forms)
            print(f"{path}: translate it, then run python -m client.tui.locales compile")
    except (OSError, ValueError) as error:  # PoError is a ValueError naming file and line
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
