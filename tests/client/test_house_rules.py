"""House rulesets in the terminal client (R30): the new-match form offers the
server's rulesets, the lobby names a match's when it is not the printed
rules, and the waiting room's log says in words what differs from them."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from rich.console import Console
from textual.app import App
from textual.widgets import Select

import protocol as wire
from client.localserver import LocalServer, check_ruleset
from client.tui import i18n
from client.tui.houserules import house_rules_text
from client.tui.screens.dialogs import CreateMatchScreen
from client.tui.screens.help import HelpScreen, help_text
from protocol.examples import HOUSE_RULESET, STANDARD_RULESET

from . import fakes
from .driver import until
from .screens import running, screen_text, settle
from .test_cutoff import cut_off

ROOT = Path(__file__).resolve().parents[2]

EXPECTED = {
    "en": "House rules (short reveal): reveal 3 secret cards (printed: 5); "
    "KEEP points 0/1/2/3 (printed: 0/0/1/2)",
    "de": "Hausregeln (short reveal): 3 geheime Karten aufdecken (gedruckt: 5); "
    "BEHALTEN-Punkte 0/1/2/3 (gedruckt: 0/0/1/2)",
    "es": "Reglas de la casa (short reveal): revelar 3 cartas secretas (impreso: 5); "
    "puntos de GUARDAR 0/1/2/3 (impreso: 0/0/1/2)",
}


@pytest.mark.parametrize("lang", list(EXPECTED))
def test_the_changes_are_said_with_the_printed_numbers(lang: str) -> None:
    """R19, R14: the reveal size and KEEP points of the house ruleset, each
    with the printed rules' number; the printed rules themselves say nothing."""
    i18n.set_language(lang)
    assert house_rules_text(HOUSE_RULESET, STANDARD_RULESET) == EXPECTED[lang]
    assert house_rules_text(STANDARD_RULESET, STANDARD_RULESET) is None


def test_without_the_printed_numbers_the_changes_are_still_said() -> None:
    """A server that did not offer ``standard``: no "(printed: …)", the numbers all the same;
    a change per table size names it (R4)."""
    i18n.set_language("en")
    removed = HOUSE_RULESET.__class__(
        **{
            **{f: getattr(HOUSE_RULESET, f) for f in HOUSE_RULESET.__struct_fields__},
            "removed": (18, 6, 6, 14, 10),
            "changes": ("removed.3", "future.field"),
        }
    )
    assert (
        house_rules_text(removed, None)
        == "House rules (short reveal): 6 cards removed with 3 players"
    )


async def test_the_form_offers_the_servers_rulesets_and_sends_the_choice() -> None:
    """More than one ruleset offered: the form has a Rules choice; short reveal goes out."""
    i18n.set_language("en")
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        app.rulesets = dict(fakes.RULESETS)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, CreateMatchScreen)
        assert "Rules" in screen_text(app)
        assert app.screen.query_one("#create").region.bottom <= 24  # whole, border and all
        choice = app.screen.query_one("#ruleset", Select)
        assert choice.value == "standard"
        choice.value = "short reveal"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any(kind == "create_match" for kind, _, _ in session.requests))
    (kwargs,) = [kw for kind, _, kw in session.requests if kind == "create_match"]
    assert kwargs["ruleset"] == "short reveal"


async def test_one_ruleset_offered_means_no_choice_and_the_printed_rules() -> None:
    """A server with the printed rules only: no Rules row; create_match names none."""
    i18n.set_language("en")
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        await pilot.press("n")
        await pilot.pause()
        assert not app.screen.query("#ruleset")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any(kind == "create_match" for kind, _, _ in session.requests))
    (kwargs,) = [kw for kind, _, kw in session.requests if kind == "create_match"]
    assert kwargs["ruleset"] is None


def test_the_form_preselects_the_ruleset_it_is_given() -> None:
    """``tulips play --ruleset``: the form starts on that ruleset, if offered."""
    screen = CreateMatchScreen("t", rulesets=("standard", "short reveal"), ruleset="short reveal")
    assert screen.ruleset == "short reveal"
    assert CreateMatchScreen("t", rulesets=("standard",), ruleset="gone").ruleset is None


@pytest.mark.parametrize("lang", list(EXPECTED))
async def test_the_waiting_room_log_says_the_house_rules(lang: str) -> None:
    """The waiting room of a short-reveal match: its log has the house-rules line."""
    i18n.set_language(lang)
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        app.rulesets = dict(fakes.RULESETS)
        session.feed(*fakes.house_waiting_room())
        await settle(pilot, session)
        said = [line.plain for line in app.follow.log]
        assert said.count(EXPECTED[lang]) == 1
        session.feed(fakes.house_waiting_room()[1])  # said once, not at every update
        await settle(pilot, session)
        assert [line.plain for line in app.follow.log].count(EXPECTED[lang]) == 1


async def test_the_snapshot_ruleset_is_the_matchs_own() -> None:
    """A match whose ruleset this server does not offer (another node's): the
    snapshot's numbers are told, as the table's truth."""
    i18n.set_language("en")
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        app.rulesets = {"standard": STANDARD_RULESET}
        script = fakes.mid_game()
        snapshot = next(m for m in script if isinstance(m, wire.Snapshot))
        script = [
            msgspec.structs.replace(m, ruleset=HOUSE_RULESET) if m is snapshot else m
            for m in script
        ]
        session.feed(*script)
        await settle(pilot, session)
        assert app.match_rules[fakes.MATCH] == HOUSE_RULESET
        assert EXPECTED["en"] in [line.plain for line in app.follow.log]


HELP_NUMBERS = {
    "en": ("up to 3 secret cards", "4th or unranked: 0/1/2/3"),
    "de": ("bis zu 3 geheime Karten", "ohne Rang: 0/1/2/3"),
    "es": ("hasta 3 cartas", "sin puesto: 0/1/2/3"),
}


def _help_page(app: object) -> str:
    """The whole help page as plain words (the screen shows only its top)."""
    assert isinstance(app, App) and isinstance(app.screen, HelpScreen)
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(help_text(app.screen.ruleset))
    return " ".join(console.export_text().split())


@pytest.mark.parametrize("lang", list(HELP_NUMBERS))
async def test_the_help_page_tells_the_matchs_own_numbers(lang: str) -> None:
    """R19, R14: at a short-reveal table, ``?`` says the reveal size and KEEP
    points of the match's ruleset, not the printed ones; in the lobby, the printed."""
    i18n.set_language(lang)
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        app.rulesets = dict(fakes.RULESETS)
        await pilot.press("question_mark")
        await pilot.pause()
        assert HELP_NUMBERS[lang][0].replace("3", "5") in _help_page(app)
        await pilot.press("escape")
        session.feed(*fakes.house_waiting_room())
        await settle(pilot, session)
        await pilot.press("question_mark")
        await pilot.pause()
        for words in HELP_NUMBERS[lang]:
            assert words in _help_page(app)


async def test_the_lobby_names_a_house_ruleset() -> None:
    """A listed match of house rules shows their name; printed-rules ones show none."""
    i18n.set_language("en")
    matches = fakes.lobby_matches()
    matches[0] = msgspec.structs.replace(matches[0], ruleset="short reveal")
    async with running([], matches=matches) as (app, _pilot, _session):
        text = screen_text(app)
        problems = list(cut_off(app))
    # the name column wraps at 80 columns (the mark after the name), nothing cut off
    assert "[short" in text and "reveal]" in text and problems == []
    assert "[standard]" not in text


def test_play_with_a_bad_ruleset_stops_before_the_screen_opens(tmp_path: Path) -> None:
    """``tulips play --ruleset FILE``: the server reads the file; a bad one is
    one line naming the file and field, exit code 2, and no terminal UI."""
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "b"\nreveal_size = "five"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "client.tui", "play", "--ruleset", str(bad)],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, "TERM": "dumb"},
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.decode().strip().splitlines()
    assert lines == [f"tulips: --ruleset {bad}: ruleset field 'reveal_size': expected int, got str"]
    assert b"\x1b[" not in done.stdout  # no screen was drawn


def test_a_good_ruleset_file_is_named_as_the_server_offers_it(tmp_path: Path) -> None:
    """The name ``tulips play`` preselects is the one the server reads from the file."""
    good = tmp_path / "good.toml"
    good.write_text('name = "short"\nreveal_size = 3\n', encoding="utf-8")
    assert check_ruleset(good) == "short"
    assert LocalServer(rulesets=(good,)).command(1234)[-2:] == ["--ruleset", str(good)]
