"""Open-box matches in the terminal client (R27): the lobby marks them, the
waiting room says so before the deal, and the new-match form lets the host
choose one."""

from __future__ import annotations

import protocol as wire
from client.tui.screens.dialogs import CreateMatchScreen
from client.tui.screens.lobby import LobbyScreen
from client.tui.viewmodel import lobby_rows

from . import fakes
from .driver import until
from .screens import running, screen_text, settle

OPEN_SEATS = (*fakes.THREE_SEATS[:2], wire.SeatInfo(seat=2, kind="empty"))


def _open_box_match() -> wire.MatchSummary:
    return fakes.summary(
        "open", seats=OPEN_SEATS, match="m9", name="Check my shuffle", host="Bea", open_box=True
    )


def _created(session: fakes.ScriptedSession) -> list[dict[str, object]]:
    return [kwargs for kind, _, kwargs in session.requests if kind == "create_match"]


def test_r27_lobby_rows_carry_the_open_box_choice() -> None:
    """The lobby's rows say which matches are open-box, and only those."""
    rows = lobby_rows({s.match: s for s in [*fakes.lobby_matches(), _open_box_match()]})
    assert {row.match: row.open_box for row in rows} == {
        "m1": False,
        "m2": False,
        "m3": False,
        "m9": True,
    }


async def test_r27_the_lobby_marks_an_open_box_match() -> None:
    """An open-box match's row shows the mark; the others do not."""
    matches = [*fakes.lobby_matches(), _open_box_match()]
    async with running([], matches=matches, size=(120, 40)) as (app, _pilot, _session):
        assert isinstance(app.screen, LobbyScreen)
        lines = screen_text(app).splitlines()
        (marked,) = [line for line in lines if "open box" in line]
        assert "Check my shuffle" in marked


async def test_r27_the_waiting_room_says_the_box_is_open() -> None:
    """Before the deal, everyone in an open-box match's waiting room is told."""
    script = [
        wire.Joined(match=fakes.MATCH, seat=1, host=False),
        wire.MatchUpdate(match=fakes.summary("open", seats=OPEN_SEATS, open_box=True)),
    ]
    async with running(script) as (app, _pilot, _session):
        assert "Open box: once it is over" in screen_text(app)
    async with running(fakes.waiting_room()) as (app, _pilot, _session):
        assert "Open box" not in screen_text(app)


async def test_r27_the_new_match_form_sets_open_box() -> None:
    """n, tick "Open box", create: the request asks for an open box."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, CreateMatchScreen), what="the form")
        assert "Open box" in screen_text(app)
        await pilot.click("#open-box")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: bool(_created(session)), what="create_match")
        await settle(pilot, session)
    assert _created(session)[0]["open_box"] is True


async def test_r27_the_new_match_form_leaves_the_box_closed_by_default() -> None:
    """n, Enter: the form's default is a closed box."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, CreateMatchScreen), what="the form")
        await pilot.press("enter")
        await until(pilot, lambda: bool(_created(session)), what="create_match")
    assert _created(session)[0]["open_box"] is False
