"""A whole evening by touch on a phone (issue "Game night on phones"): at
40×50, every step from the lobby to the final scores and back is a tap on a
button or a row — no key is pressed but for the letters of a chat line.

The lobby's New match opens the form, whose Create creates the match; in the
waiting room the host adds a bot, opens "remove a seat" and cancels it, and
starts; then every kind of decision (the opening, keep, give and to whom,
add face up, add secretly), the final scores, the replay viewer's controls
and back to the lobby. The rules open and close, and quitting asks, by taps."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Button

import protocol as wire
from client.tui.app import TulipsApp
from client.tui.i18n import t
from client.tui.screens.dialogs import (
    ChatScreen,
    ConfirmQuitScreen,
    CreateMatchScreen,
    JoinCodeScreen,
    PickScreen,
)
from client.tui.screens.final import FinalScreen
from client.tui.screens.help import HelpScreen
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.replay import ReplayScreen
from client.tui.screens.table import TableScreen

from . import fakes
from .driver import until
from .fakes import MATCH
from .screens import running, settle
from .test_clicks import acts, click, mode, option
from .test_cutoff import SECOND_CARD

PHONE = (40, 50)


def button(pilot: Pilot[Any], label: str) -> Button:
    """The one button on screen (shown, not hidden by the layout) labelled ``label``."""
    shown = [
        b
        for b in pilot.app.screen.query(Button).results(Button)
        if str(b.label) == label and b.display and b.region.area
    ]
    assert len(shown) == 1, f"{label!r}: {[str(b.label) for b in pilot.app.screen.query(Button)]}"
    return shown[0]


async def tap(pilot: Pilot[Any], label: str) -> None:
    """Tap the button labelled ``label`` (the text of a message id's)."""
    await click(pilot, button(pilot, label))


def requested(session: fakes.ScriptedSession, kind: str) -> bool:
    """Whether the app sent a request of ``kind``."""
    return any(request[0] == kind for request in session.requests)


async def _waiting_room_by_taps(
    app: TulipsApp, pilot: Pilot[Any], session: fakes.ScriptedSession
) -> None:
    await tap(pilot, t("keys.new"))
    assert isinstance(app.screen, CreateMatchScreen)
    await click(pilot, "#create-ok")
    await until(pilot, lambda: requested(session, "create_match"))
    session.feed(*fakes.waiting_room())
    await settle(pilot, session)
    assert isinstance(app.screen, TableScreen) and mode(app) == "waiting_room"
    await click(pilot, option(pilot, "b"))  # add a bot: how strong?
    assert isinstance(app.screen, PickScreen)
    await click(pilot, "#pick-2")
    await until(
        pilot, lambda: ("add_bot", (), {"seat": None, "strength": "hard"}) in session.requests
    )
    full = (*fakes.THREE_SEATS[:2], wire.SeatInfo(seat=2, kind="bot", name="bot 2"))
    session.feed(wire.MatchUpdate(match=fakes.summary("open", seats=full, name="Ada vs bots")))
    await settle(pilot, session)
    await click(pilot, option(pilot, "x"))  # remove a seat … and think again
    assert isinstance(app.screen, PickScreen)
    await click(pilot, "#pick-cancel")
    assert isinstance(app.screen, TableScreen) and not requested(session, "remove_seat")
    await click(pilot, option(pilot, "s"))
    await until(pilot, lambda: requested(session, "start"))


async def _decisions_by_taps(
    app: TulipsApp, pilot: Pilot[Any], session: fakes.ScriptedSession
) -> None:
    session.feed(*fakes.opening()[2:])
    await settle(pilot, session)
    await click(pilot, option(pilot, "2"))  # the opening: the pink 4 face down
    assert acts(session)[-1] == (wire.Opening(secret="pink-4"), 5)
    session.feed(*fakes.mid_game())
    await settle(pilot, session)
    await click(pilot, option(pilot, "g"))  # give … to whom?
    assert mode(app) == "give"
    await click(pilot, option(pilot, "escape"))  # back
    await click(pilot, option(pilot, "g"))
    await click(pilot, option(pilot, "3"))
    assert acts(session)[-1] == (wire.Give(to_seat=2), 97)
    await SECOND_CARD(pilot, session)
    await settle(pilot, session)
    await click(pilot, option(pilot, "f"))  # the second card face up
    assert acts(session)[-1] == (wire.AddFaceUp(), 99)
    session.feed(*fakes.mid_game())  # the next turn: keep, then add secretly
    await settle(pilot, session)
    await click(pilot, option(pilot, "k"))
    assert acts(session)[-1] == (wire.Keep(), 97)
    session.feed(
        wire.Event(match=MATCH, seq=98, event=wire.CardKept(seat=1, card="orange-4", points=1)),
        wire.Event(match=MATCH, seq=99, event=wire.CardDrawn(seat=1, card="pink-2", deck_count=20)),
        wire.Prompt(
            match=MATCH,
            seq=99,
            seat=1,
            actions=(wire.AddSecret(), wire.Give(to_seat=0)),
            points=(0, 2),
        ),
    )
    await settle(pilot, session)
    await click(pilot, option(pilot, "s"))
    assert acts(session)[-1] == (wire.AddSecret(), 99)


async def test_a_whole_evening_by_taps_at_40x50() -> None:
    """Lobby → new match → waiting room → every decision → final scores →
    replay → lobby, each step a tap."""
    replay = fakes.replay_pages(fakes.short_match(), match=MATCH)
    async with running([], size=PHONE, matches=fakes.lobby_matches(), replay=replay) as (
        app,
        pilot,
        session,
    ):
        assert isinstance(app.screen, LobbyScreen) and app.screen.has_class("-narrow")
        await _waiting_room_by_taps(app, pilot, session)
        await _decisions_by_taps(app, pilot, session)
        session.feed(*fakes.ending())
        await settle(pilot, session)
        await until(pilot, lambda: isinstance(app.screen, FinalScreen))
        await tap(pilot, t("keys.again"))
        assert requested(session, "play_again")
        await tap(pilot, t("keys.table"))  # back to the table, and to the scores again
        assert isinstance(app.screen, TableScreen)
        await tap(pilot, t("keys.scores"))
        assert isinstance(app.screen, FinalScreen)
        await tap(pilot, t("keys.replay"))
        assert isinstance(app.screen, ReplayScreen)
        viewer = app.screen
        await until(pilot, lambda: viewer.replay is not None)
        assert viewer.replay is not None
        await tap(pilot, t("replay.button.turn_next"))
        turn = viewer.replay.position
        await tap(pilot, t("replay.button.step_next"))
        assert viewer.replay.position == turn + 1
        await tap(pilot, t("replay.button.step_back"))
        assert viewer.replay.position == turn
        await tap(pilot, t("replay.button.turn_next"))
        later = viewer.replay.position
        assert later > turn
        await tap(pilot, t("replay.button.turn_back"))
        assert viewer.replay.position < later
        await tap(pilot, t("replay.button.end"))
        assert viewer.replay.position == viewer.replay.total
        await tap(pilot, t("replay.button.start"))
        assert viewer.replay.position == 1
        speed = viewer.replay.speed
        await tap(pilot, t("replay.button.faster"))
        assert viewer.replay.speed > speed
        await tap(pilot, t("replay.button.slower"))
        assert viewer.replay.speed == speed
        await tap(pilot, t("replay.button.play"))
        assert viewer.replay.playing
        await tap(pilot, t("replay.button.play"))
        assert not viewer.replay.playing
        await tap(pilot, t("replay.button.back"))
        assert isinstance(app.screen, FinalScreen)
        await tap(pilot, t("keys.lobby"))
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert requested(session, "leave")


async def test_the_rules_chat_and_quit_by_taps_at_40x50() -> None:
    """Rules open and close; the chat tab's button opens the line, Send sends
    it; quit asks, Stay stays, Quit quits."""
    async with running(fakes.mid_game(), size=PHONE) as (app, pilot, session):
        await tap(pilot, t("keys.help"))
        assert isinstance(app.screen, HelpScreen)
        await tap(pilot, t("help.close_button"))
        assert isinstance(app.screen, TableScreen)
        await tap(pilot, t("tab.chat"))
        await tap(pilot, t("chat.say"))
        assert isinstance(app.screen, ChatScreen)
        await pilot.press(*"hi all")
        await tap(pilot, t("chat.send"))
        await until(pilot, lambda: ("chat", ("hi all",), {}) in session.requests)
        await tap(pilot, t("keys.chat"))  # the key button opens the same line
        assert isinstance(app.screen, ChatScreen)
        await tap(pilot, t("create.cancel"))
        assert isinstance(app.screen, TableScreen)
        await tap(pilot, t("keys.quit"))
        assert isinstance(app.screen, ConfirmQuitScreen)
        await tap(pilot, t("quit.no"))
        assert isinstance(app.screen, TableScreen)
        await tap(pilot, t("keys.quit"))
        await tap(pilot, t("quit.yes"))
        await until(pilot, lambda: app.return_code is not None or not app.is_running)


async def test_the_lobby_by_taps_at_40x50() -> None:
    """A tap picks a match, Watch watches it; Refresh asks again; Join on a
    private match asks for its code, whose Join button joins; rules close."""
    async with running([], size=PHONE, matches=fakes.lobby_matches()) as (app, pilot, session):
        await tap(pilot, t("keys.refresh"))
        await until(pilot, lambda: len([r for r in session.requests if r[0] == "list_matches"]) > 1)
        await tap(pilot, t("keys.join"))  # the first match: private
        assert isinstance(app.screen, JoinCodeScreen)
        await pilot.press(*"tulip")
        await tap(pilot, t("join.ok"))
        await until(
            pilot,
            lambda: ("join", ("m1",), {"seat": None, "join_code": "tulip"}) in session.requests,
        )
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        table = app.screen.query_one("#matches")
        assert await pilot.click(table, offset=(3, 5))  # the second match's lines
        await pilot.pause()
        await tap(pilot, t("keys.watch"))
        await until(pilot, lambda: ("watch", ("m2",), {"join_code": None}) in session.requests)
        await tap(pilot, t("keys.help"))
        assert isinstance(app.screen, HelpScreen)
        await tap(pilot, t("help.close_button"))
        assert isinstance(app.screen, LobbyScreen)


async def test_the_replay_steps_by_mouse_at_80x24() -> None:
    """Side by side there are no step buttons (80×24 is drawn as before): a
    click on the ← or → half of the key bar's ←/→ steps back or on, on ↑ or ↓
    a turn, as the keys do."""
    from client.tui.widgets.bars import KeyBar

    matches = [*fakes.lobby_matches(), fakes.replayed_summary()]
    answer = fakes.replay_pages(fakes.short_match())
    async with running([], matches=matches, replay=answer) as (app, pilot, _session):
        await pilot.press("down", "down", "down", "v")
        await until(pilot, lambda: getattr(app.screen, "replay", None) is not None)
        viewer = app.screen
        assert isinstance(viewer, ReplayScreen) and viewer.replay is not None
        bar = viewer.query_one(KeyBar)
        start = viewer.replay.position
        arrows = Text(f" {t('keyname.arrows')} ").cell_len
        assert await pilot.click(bar, offset=(arrows - 2, 0))  # →
        await pilot.pause()
        assert viewer.replay.position == start + 1
        assert await pilot.click(bar, offset=(1, 0))  # ←
        await pilot.pause()
        assert viewer.replay.position == start
        words = Text(f" {t('keys.step')}  ").cell_len
        assert await pilot.click(bar, offset=(arrows + words + 3, 0))  # ↓: the next turn
        await pilot.pause()
        assert viewer.replay.position > start + 1
