"""The host's waiting room in the terminal client (issue "At the table"):
keys to add a bot (its strength picked in a small dialog), remove a seat, and
start a rematch with those who came; the spectators counted; and a player
the host removed is sent back to the lobby, told why."""

from __future__ import annotations

from typing import Any

from textual.app import App

import protocol as wire
from client.tui.screens.dialogs import PickScreen
from client.tui.screens.lobby import LobbyScreen

from . import fakes
from .screens import running, screen_text, settle


def _panel(app: App[Any]) -> str:
    """The screen's words, rows joined (a sentence wraps in the panel)."""
    rows = screen_text(app).splitlines()
    return " ".join(" ".join(row.split("│")[1].split()) for row in rows if row.count("│") >= 2)


async def test_the_host_adds_a_bot_of_the_strength_picked() -> None:
    async with running(fakes.waiting_room()) as (app, pilot, session):
        text = screen_text(app)
        assert "Add a bot" in text and "Remove a seat" in text
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)
        assert "How well should it play?" in screen_text(app)
        await pilot.press("3")
        await pilot.pause()
        await pilot.pause()
        assert not isinstance(app.screen, PickScreen)
        assert ("add_bot", (), {"seat": None, "strength": "hard"}) in session.requests


async def test_escape_adds_no_bot() -> None:
    async with running(fakes.waiting_room()) as (app, pilot, session):
        await pilot.press("b")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, PickScreen)
        assert not [r for r in session.requests if r[0] == "add_bot"]


async def test_the_host_removes_a_seat_chosen_from_the_others() -> None:
    async with running(fakes.waiting_room()) as (app, pilot, session):
        await pilot.press("x")
        await pilot.pause()
        text = screen_text(app)
        assert "Seat 2: bot 1" in text and "Seat 1:" not in text  # not the host's own
        await pilot.press("1")
        await pilot.pause()
        await pilot.pause()
        assert ("remove_seat", (), {"seat": 1}) in session.requests


async def test_a_guest_gets_no_host_keys() -> None:
    script = fakes.waiting_room()
    script[0] = wire.Joined(match=fakes.MATCH, seat=0, host=False)
    async with running(script) as (app, pilot, _session):
        assert "Add a bot" not in screen_text(app)
        await pilot.press("b")
        await pilot.pause()
        assert not isinstance(app.screen, PickScreen)


async def test_a_rematch_names_who_has_not_accepted_and_starts_with_those_here() -> None:
    async with running(fakes.rematch_waiting_room()) as (app, pilot, session):
        text = _panel(app)
        assert "Waiting for Bea to accept the rematch." in text
        assert "2 watching" in text and "Everyone is here" not in text
        assert "Start with those here" in text
        await pilot.press("w")
        await pilot.pause()
        await pilot.pause()
        assert ("start", (), {"without_absent": True}) in session.requests


async def test_a_removed_player_is_back_in_the_lobby_and_told() -> None:
    script = fakes.waiting_room()
    script[0] = wire.Joined(match=fakes.MATCH, seat=0, host=False)
    async with running(script) as (app, pilot, session):
        session.feed(wire.Removed(match=fakes.MATCH, host="Dan"))
        await settle(pilot, session)
        assert isinstance(app.screen, LobbyScreen)
        assert app.follow.match_id is None
        notes = [note.message for note in app._notifications]
        assert "Dan removed you from the match." in notes


async def test_the_log_says_when_the_number_watching_changes() -> None:
    async with running(fakes.waiting_room()) as (app, pilot, session):
        seats = (*fakes.THREE_SEATS[:2], wire.SeatInfo(seat=2, kind="empty"))
        watched = fakes.summary("open", seats=seats, name="Ada vs bots", spectators=1)
        session.feed(wire.MatchUpdate(match=watched))
        await settle(pilot, session)
        assert "1 watching" in screen_text(app)
    assert [line.plain for line in app.follow.log][-1] == "1 watching now."
