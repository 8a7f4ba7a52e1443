"""The narrow layout (issue "Game night on phones"): a phone in portrait
shows the terminal client about 40 columns wide and 45–50 rows tall, in a
browser. Every screen a player meets is drawn there stacked, with nothing cut
off (the check of ``test_cutoff``, at 40×50), in English, German and Spanish;
80 columns and more keep the side-by-side layout."""

from __future__ import annotations

from typing import Any

import pytest

from client.tui import i18n
from client.tui.i18n import LANGUAGES
from client.tui.screens.replay import ReplayScreen
from client.tui.screens.table import TableScreen

from . import fakes
from .driver import until
from .screens import running, screen_text
from .test_cutoff import SCREENS, cut_off

PHONE = (40, 50)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("screen", list(SCREENS))
async def test_nothing_is_cut_off_at_40x50(screen: str, lang: str) -> None:
    """Every label, option, button, header and title of the screen is whole
    on a phone, and the screen is drawn in its narrow layout."""
    script, kwargs, steps = SCREENS[screen]
    i18n.set_language(lang)
    async with running(script(), size=PHONE, **kwargs) as (app, pilot, session):
        for step in steps:
            await step(pilot, session)
        assert app.screen.has_class("-narrow") or not app.screen.has_class("-too-narrow")
        assert list(cut_off(app)) == []


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_the_replay_viewer_is_whole_at_40x50(lang: str) -> None:
    """The replay viewer at turn 4: panels stacked, its buttons whole."""
    i18n.set_language(lang)
    matches = [*fakes.lobby_matches(), fakes.replayed_summary()]
    answer = fakes.replay_pages(fakes.short_match())
    async with running([], size=PHONE, matches=matches, replay=answer) as (app, pilot, _):
        await pilot.press("down", "down", "down", "v")
        await until(pilot, lambda: getattr(app.screen, "replay", None) is not None)
        await pilot.press("t", "4", "enter", "right", "right")
        await pilot.pause()
        assert isinstance(app.screen, ReplayScreen) and app.screen.has_class("-narrow")
        assert list(cut_off(app)) == []


def _rows(app: Any) -> list[str]:
    return screen_text(app).splitlines()


def _row_of(rows: list[str], text: str) -> int:
    return next(i for i, row in enumerate(rows) if text in row)


async def test_the_narrow_table_puts_your_move_first() -> None:
    """At 40 columns: your move, its options one under the other, then the
    festival, then the players; the tabs and the key buttons at the bottom;
    the key bar gone. At 80 the panels stand side by side again."""
    async with running(fakes.mid_game(), size=PHONE) as (app, pilot, _):
        rows = _rows(app)
        move, festival, players = (_row_of(rows, w) for w in ("Your move", "Festival", "Players"))
        assert move < festival < players
        keep, give = _row_of(rows, "Keep it"), _row_of(rows, "Give it")
        assert move < keep < give < festival and give - keep >= 3  # a finger's room each
        for word in ("Table", "Log", "Chat", "rules", "quit", "lobby"):
            assert _row_of(rows, word) > players, word
        assert not any("Esc back" in row or " ? " in row for row in rows)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        rows = _rows(app)
        assert _row_of(rows, "Festival") == _row_of(rows, "Players")  # side by side


async def test_the_tabs_show_the_log_and_the_chat() -> None:
    """Log: the moves fill the screen; Chat: the chat and a button to say
    something; Table: back to the move."""
    async with running(fakes.mid_game(), size=PHONE) as (app, pilot, _):
        screen = app.screen
        assert isinstance(screen, TableScreen)
        assert await pilot.click("#tab-log")
        await pilot.pause()
        text = screen_text(app)
        assert "What happened" in text and "Your move" not in text
        assert await pilot.click("#tab-chat")
        await pilot.pause()
        text = screen_text(app)
        assert "Nothing said yet" in text and "Say something…" in text
        assert screen.chatting
        assert await pilot.click("#tab-table")
        await pilot.pause()
        assert "Your move" in screen_text(app)


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_an_empty_lobby_on_a_phone_says_to_tap_not_to_press(lang: str) -> None:
    """No matches at 40×50: the hint names the button to tap; at 80×24, the key."""
    i18n.set_language(lang)
    async with running([], size=PHONE) as (app, _pilot, _session):
        text = " ".join(screen_text(app).split())
        assert " ".join(i18n.t("lobby.empty_touch").split()) in text
    async with running([]) as (app, _pilot, _session):
        assert i18n.t("lobby.empty") in screen_text(app)
