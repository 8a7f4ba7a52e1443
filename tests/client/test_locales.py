"""The catalogue tools: reading and writing .po, compiling .mo that the
standard library reads, merging a translation with the template, and the
package shipping every catalogue."""

from __future__ import annotations

import fnmatch
import gettext
import io
import tomllib
from pathlib import Path

import pytest

from client.tui.i18n import LANGUAGES
from client.tui.locales import DOMAIN, LOCALEDIR, mo_path, po_path
from client.tui.locales.po import Catalogue, Entry, PoError, compile_mo, dump, parse, read
from client.tui.locales.tool import main, merge, new, template, update

ROOT = Path(__file__).resolve().parents[2]
HEADER = {"Language": "de", "Plural-Forms": "nplurals=2; plural=(n != 1);"}
ENGLISH = Catalogue(
    {**HEADER, "Language": "en"},
    (
        Entry("a.keep", ("Keep it",), notes=("A button.",)),
        Entry("a.cards", ("{n} card", "{n} cards"), plural="a.cards"),
        Entry("a.help", ('Say "hi"\n\tthen go \\ away',)),
    ),
)


def _gnu(catalogue: Catalogue) -> gettext.GNUTranslations:
    return gettext.GNUTranslations(io.BytesIO(compile_mo(catalogue)))


def test_a_catalogue_survives_dump_and_parse() -> None:
    """Quotes, backslashes, tabs and newlines come back as they went in."""
    assert parse(dump(ENGLISH)) == ENGLISH
    for lang in LANGUAGES:
        catalogue = read(po_path(lang))
        assert parse(dump(catalogue)) == catalogue


def test_the_standard_library_reads_what_compile_mo_writes() -> None:
    """gettext finds each text, picks plural forms by the header's rule."""
    english = _gnu(ENGLISH)
    assert english.gettext("a.keep") == "Keep it"
    assert english.gettext("a.help") == 'Say "hi"\n\tthen go \\ away'
    assert english.ngettext("a.cards", "a.cards", 1) == "{n} card"
    assert english.ngettext("a.cards", "a.cards", 0) == "{n} cards"
    assert english.info()["plural-forms"] == HEADER["Plural-Forms"]


def test_fuzzy_and_untranslated_entries_fall_back_to_english() -> None:
    """As with msgfmt: only reviewed, complete texts are compiled."""
    german = _gnu(
        Catalogue(
            HEADER,
            (
                Entry("a.keep", ("Behalten",), flags=("fuzzy",)),
                Entry("a.cards", ("{n} Karte", ""), plural="a.cards"),
                Entry("a.help", ("Hilfe",)),
            ),
        )
    )
    german.add_fallback(_gnu(ENGLISH))
    assert german.gettext("a.keep") == "Keep it"
    assert german.ngettext("a.cards", "a.cards", 1) == "{n} card"
    assert german.gettext("a.help") == "Hilfe"


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('msgid ""\nmsgstr ""\n\nmsgid "x"\nmsgstr "\\q"\n', 5, "unknown escape"),
        ('msgid ""\nmsgstr ""\n\nmsgctxt "c"\nmsgid "x"\n', 4, "msgctxt"),
        ('msgid ""\nmsgstr ""\n\nmsgid "x"\n\n', 5, "no msgstr"),
        ('msgid ""\nmsgstr ""\n\nmsgid "x"\nmsgstr[0] "y"\n', 6, "msgid_plural"),
        ('msgid "x"\nmsgstr "y"\n', 1, "header"),
        ('msgid ""\nmsgstr ""\nhello\n', 3, "cannot read"),
    ],
    ids=["escape", "msgctxt", "no-msgstr", "plural-form-alone", "no-header", "garbage"],
)
def test_a_bad_po_file_is_named_by_line(text: str, line: int, problem: str) -> None:
    """The error says which line and what is wrong with it."""
    with pytest.raises(PoError) as raised:
        parse(text, "de.po")
    assert raised.value.line == line and problem in raised.value.problem
    assert str(raised.value).startswith(f"de.po:{line}: ")


def test_merge_adds_keeps_and_flags() -> None:
    """A new id arrives untranslated, a changed English text marks the
    translation fuzzy, translator comments stay, a removed id turns obsolete."""
    german = Catalogue(
        HEADER,
        (
            Entry(
                "a.keep",
                ("Behalten",),
                notes=("A button.", "English: Keep it"),
                comments=("checked by Bea",),
            ),
            Entry("a.gone", ("Weg",)),
        ),
    )
    changed = Catalogue(ENGLISH.header, (Entry("a.keep", ("Keep the card",)), *ENGLISH.entries[1:]))
    merged = merge(german, template(ENGLISH))
    assert [entry.msgid for entry in merged.messages] == ["a.keep", "a.cards", "a.help"]
    assert merged.get("a.keep") == Entry(
        "a.keep",
        ("Behalten",),
        notes=("A button.", "English: Keep it"),
        comments=("checked by Bea",),
    )
    assert merged.get("a.cards") == Entry(
        "a.cards",
        ("", ""),
        plural="a.cards",
        notes=("English, one: {n} card", "English, other: {n} cards"),
    )
    assert [entry.msgid for entry in merged.entries if entry.obsolete] == ["a.gone"]
    assert merge(merged, template(ENGLISH)) == merged
    keep = merge(merged, template(changed)).get("a.keep")
    assert keep is not None and keep.fuzzy and keep.notes == ("English: Keep the card",)


def test_new_and_update_work_on_a_copy_of_the_catalogues(tmp_path: Path) -> None:
    """``new fr`` starts French from the template; ``update`` brings it along
    when English grows, and compiles every language."""
    for lang in LANGUAGES:
        po_path(lang, tmp_path).parent.mkdir(parents=True)
        po_path(lang, tmp_path).write_bytes(po_path(lang).read_bytes())
    (tmp_path / f"{DOMAIN}.pot").write_bytes((LOCALEDIR / f"{DOMAIN}.pot").read_bytes())
    french = new("fr", root=tmp_path)
    assert read(french).header["Language"] == "fr"
    assert not any(entry.translated for entry in read(french).messages)
    with pytest.raises(ValueError, match="exists already"):
        new("fr", root=tmp_path)
    english = read(po_path("en", tmp_path))
    grown = Catalogue(english.header, (*english.entries, Entry("zz.new", ("New",))))
    po_path("en", tmp_path).write_text(dump(grown), encoding="utf-8")
    reports = update(tmp_path)
    count = len(grown.messages)
    assert reports[-1] == f"fr: {count} messages, {count} untranslated, 0 fuzzy"
    assert read(po_path("de", tmp_path)).get("zz.new") == Entry(
        "zz.new", ("",), notes=("English: New",)
    )
    assert mo_path("fr", tmp_path).is_file()


def test_the_command_line_reports_a_bad_code(capsys: pytest.CaptureFixture[str]) -> None:
    """``new`` with something that is not a language code fails with a message."""
    assert main(["new", "French"]) == 1
    assert "not a language code: 'French'" in capsys.readouterr().err


def test_the_package_ships_every_catalogue() -> None:
    """pyproject's package data takes the template, each .po and each .mo."""
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-data"]
    client = ROOT / "client"
    files = [
        path.relative_to(client).as_posix()
        for path in LOCALEDIR.rglob("*")
        if path.suffix in (".po", ".mo", ".pot")
    ]
    assert len(files) == 1 + 2 * len(LANGUAGES)
    unshipped = [f for f in files if not any(fnmatch.fnmatch(f, p) for p in package_data["client"])]
    assert unshipped == []
