"""The catalogues: three languages with the same messages, each compiled from
its current ``.po``, and nothing on screen that did not pass through them
(checked under a pseudo-language whose letters are all accented look-alikes)."""

from __future__ import annotations

import ast
import asyncio
import pathlib
import re
import string
from collections.abc import Iterator

import pytest

import protocol as wire
from client.tui import i18n
from client.tui.app import _KNOWN_ERRORS, Plan, TulipsApp
from client.tui.cards import GLYPH, colour_legend, colour_name
from client.tui.i18n import LANGUAGES, detect_language, rich, set_language, t, tn
from client.tui.locales import DOMAIN, LOCALEDIR, mo_path, po_path
from client.tui.locales.po import Entry, compile_mo, dump, read, read_mo
from client.tui.locales.tool import merge, template

from . import fakes
from .screens import URL, running, screen_text

SOURCE = pathlib.Path(__file__).parents[2] / "client" / "tui"
#: Names and texts that come from the server or the player, not the catalogue.
DATA = (
    URL, "Friday tulips", "Bea's garden", "Lunch break", "Ada vs bots", "Ada", "Bea", "Cy", "Dan",
)  # fmt: skip
#: Every language's entries, by message id, read from its ``.po``.
CATALOGUE: dict[str, dict[str, Entry]] = {
    lang: {entry.msgid: entry for entry in read(po_path(lang)).messages} for lang in LANGUAGES
}


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def test_the_three_languages_have_catalogues() -> None:
    """English, German and Spanish, English first; each a .po and its .mo."""
    assert LANGUAGES == ("en", "de", "es")
    assert all(po_path(lang).is_file() and mo_path(lang).is_file() for lang in LANGUAGES)


def test_every_language_translates_every_message() -> None:
    """German and Spanish have exactly English's ids, none untranslated or fuzzy."""
    english = set(CATALOGUE["en"])
    for lang, entries in CATALOGUE.items():
        assert set(entries) == english, lang
        assert [key for key, entry in entries.items() if not entry.translated] == [], lang


def test_every_translation_has_the_same_fields() -> None:
    """Each form of a translation fills in the same {fields} as the English text."""
    for lang, entries in CATALOGUE.items():
        for key, entry in entries.items():
            english = CATALOGUE["en"][key]
            assert (entry.plural is None) == (english.plural is None), (lang, key)
            wanted = set().union(*(_fields(text) for text in english.strings))
            for text in entry.strings:
                assert _fields(text) == wanted, (lang, key, text)


def test_every_mo_is_compiled_from_its_po() -> None:
    """The .mo shipped holds exactly what its .po says, whoever compiled it
    (``python -m client.tui.locales compile``, msgfmt or Poedit)."""
    for lang in LANGUAGES:
        assert read_mo(mo_path(lang).read_bytes()) == read_mo(compile_mo(read(po_path(lang)))), (
            f"{mo_path(lang)} is stale: run python -m client.tui.locales compile"
        )


def test_the_template_and_translations_follow_english() -> None:
    """tulips.pot is made from the English catalogue, and every translation is
    merged with it: the English text beside each id is the current one."""
    pot = template(read(po_path("en")))
    assert (LOCALEDIR / f"{DOMAIN}.pot").read_text(encoding="utf-8") == dump(pot), (
        "run python -m client.tui.locales update"
    )
    for lang in LANGUAGES[1:]:
        catalogue = read(po_path(lang))
        assert merge(catalogue, pot) == catalogue, (
            f"{lang}: run python -m client.tui.locales update"
        )


def test_colours_have_their_own_shapes_and_names() -> None:
    """Colour-blind and monochrome players tell colours apart by their shapes, and
    the legend names each in every language."""
    assert set(GLYPH) == set(wire.COLOURS) and len(set(GLYPH.values())) == len(GLYPH)
    for lang in LANGUAGES:
        set_language(lang)
        names = [colour_name(colour) for colour in wire.COLOURS]
        assert len(set(names)) == len(names), lang
        assert colour_legend().plain == " ".join(GLYPH[c] + colour_name(c) for c in GLYPH)


def _calls(tree: ast.AST) -> Iterator[tuple[str, str, bool]]:
    """(function, message id, with a number) for each t/tn/rich call with a literal id."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("t", "tn", "rich")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            numbered = node.func.id == "tn" or any(k.arg == "number" for k in node.keywords)
            yield node.func.id, node.args[0].value, numbered


def test_plural_messages_are_read_with_a_number() -> None:
    """A message with plural forms is read by tn() or rich(number=…), every other
    one without: gettext finds neither the other way round."""
    plural = {key for key, entry in CATALOGUE["en"].items() if entry.plural is not None}
    calls = [call for path in SOURCE.rglob("*.py") for call in _calls(ast.parse(path.read_text()))]
    assert {key for _, key, numbered in calls if numbered} == plural
    assert [call for call in calls if call[1] in plural and not call[2]] == []


@pytest.mark.parametrize(
    ("lang", "one", "many", "free"),
    [
        ("en", "Bea (1 card, value 4) → 10", "Bea (3 cards, value 9) → 10", "(1 free) (2 free)"),
        ("de", "Bea (1 Karte, Wert 4) → 10", "Bea (3 Karten, Wert 9) → 10", "(1 frei) (2 frei)"),
        (
            "es",
            "Bea (1 carta, valor 4) → 10",
            "Bea (3 cartas, valor 9) → 10",
            "(1 libre) (2 libres)",
        ),
    ],
)
def test_counted_things_take_the_right_plural_form(
    lang: str, one: str, many: str, free: str
) -> None:
    """ "1 card", "3 cards": each language's own plural rule picks the form."""
    set_language(lang)
    assert tn("final.place", 1, name="Bea", cards=1, value=4, points=10) == one
    assert rich("final.place", number=3, name="Bea", cards=3, value=9, points=10).plain == many
    assert f"{tn('lobby.free', 1, count=1)} {tn('lobby.free', 2, count=2)}" == free


def _keys_in_source() -> set[str]:
    keys: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        if "locales" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)+", node.value)
            ):
                keys.add(node.value)
    return keys


def test_every_message_id_in_the_source_is_in_the_catalogue() -> None:
    """A literal message id used anywhere in client/tui exists in English."""
    namespaces = {key.split(".")[0] for key in CATALOGUE["en"]} - {"app"}
    used = {key for key in _keys_in_source() if key.split(".")[0] in namespaces}
    assert used - set(CATALOGUE["en"]) == set()
    assert len(used) > 150


def test_every_message_id_built_at_run_time_is_in_the_catalogue() -> None:
    """The families of ids the code builds from a value (a colour, a rank, a code …)."""
    built = [
        *(f"colour.{c}" for c in wire.COLOURS),
        *(f"rank.{n}" for n in range(1, 7)),  # colours 1st-4th, places 1st-6th
        *(f"status.{s}" for s in ("open", "running", "paused", "finished")),
        *(f"strength.{s}" for s in ("easy", "medium", "hard")),
        *(f"errcode.{code}" for code in _KNOWN_ERRORS),
        *(f"keyname.{k}" for k in ("k", "g", "f", "s", "escape", "b", "x", "w")),
        *(f"choice.{kind}" for kind in ("keep", "give", "add_face_up", "add_secret")),
        *(f"log.{kind}.you" for kind in ("turn", "kept", "face_up")),
    ]
    assert [key for key in built if key not in CATALOGUE["en"]] == []


def test_rich_keeps_names_verbatim() -> None:
    """A name with markup-like text is shown as typed, never parsed."""
    assert rich("log.kept", who="[bold]Eve[/]", card="x", points=1).plain.startswith(
        "[bold]Eve[/] kept"
    )


def test_detect_language_follows_the_posix_order() -> None:
    """LC_ALL, then LC_MESSAGES, then LANG; English when none of ours."""
    assert detect_language({"LANG": "de_DE.UTF-8"}) == "de"
    assert detect_language({"LC_ALL": "es_ES.UTF-8", "LANG": "de_DE.UTF-8"}) == "es"
    assert detect_language({"LC_MESSAGES": "es", "LANG": "de_DE"}) == "es"
    assert detect_language({"LANG": "fr_FR.UTF-8"}) == "en"
    assert detect_language({"LANG": "C.UTF-8"}) == "en"
    assert detect_language({}) == "en"


def test_translations_are_used() -> None:
    """t() follows the language in use."""
    set_language("de")
    assert t("festival.title") == "Festival" and t("choice.keep") == "Behalten"
    set_language("es")
    assert t("colour.orange") == "Naranja"
    with pytest.raises(ValueError):
        set_language("fr")


def _untranslated(text: str) -> list[str]:
    for data in sorted(DATA, key=len, reverse=True):
        text = text.replace(data, "")
    return [line.strip() for line in text.splitlines() if re.search("[A-Za-z]", line)]


async def _check(script: list[object], keys: tuple[str, ...] = (), **kwargs: object) -> None:
    i18n.set_language("en", pseudo=True)
    async with running(script, size=(120, 40), **kwargs) as (app, pilot, _):  # type: ignore[arg-type]
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        assert not _untranslated(screen_text(app)), screen_text(app)


@pytest.mark.parametrize(
    ("script", "keys"),
    [
        (fakes.mid_game, ()),
        (fakes.mid_game, ("g",)),
        (fakes.mid_game, ("question_mark",)),
        (fakes.opening, ()),
        (fakes.ending, ()),
        (fakes.spectator, ()),
        (fakes.waiting_room, ()),
    ],
    ids=["turn", "give", "help", "opening", "final", "watching", "waiting-room"],
)
async def test_every_string_on_the_table_passes_through_the_catalogue(
    script: object, keys: tuple[str, ...]
) -> None:
    """Under the pseudo-language no plain ASCII letter is left but names from the server."""
    await _check(script(), keys)  # type: ignore[operator]


@pytest.mark.parametrize("keys", [(), ("n",), ("j",)], ids=["lobby", "create-dialog", "join-code"])
async def test_every_string_in_the_lobby_passes_through_the_catalogue(
    keys: tuple[str, ...],
) -> None:
    """The lobby, the new-match form and the join-code dialog, pseudo-translated."""
    await _check([], keys, matches=fakes.lobby_matches())


async def test_the_connecting_screen_passes_through_the_catalogue() -> None:
    """The first screen, while the server has not answered yet."""

    class Silent(fakes.ScriptedSession):
        async def open(self) -> wire.Welcome:
            await asyncio.Event().wait()  # never answers
            raise AssertionError

    i18n.set_language("en", pseudo=True)
    session = Silent()
    app = TulipsApp(Plan(name="Ada", url=URL), sessions=fakes.factory(session))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "127.0.0.1" in text  # the status line is there …
        assert not _untranslated(text), text  # … and in the catalogue's words
