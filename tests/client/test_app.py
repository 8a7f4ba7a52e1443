"""The app on a scripted session: what each key does, what the server's
answers and the connection's ups and downs look like — no server, no clock."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from textual.widgets import Input

import protocol as wire
from client.sdk import ConnectError, ConnectionLost, Reconnected
from client.tui.app import Plan, TulipsApp
from client.tui.identity import IdentityStore
from client.tui.screens.final import FinalScreen
from client.tui.screens.help import HelpScreen
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.table import TableScreen

from . import fakes
from .driver import until
from .screens import URL, running, screen_text, scripted, settle


def _notes(app: TulipsApp) -> list[str]:
    return [note.message for note in app._notifications]


def _acts(session: fakes.ScriptedSession) -> list[Any]:
    return [args[0] for kind, args, _ in session.requests if kind == "act"]


async def test_keys_act_with_the_offered_actions() -> None:
    """k keeps; keys for actions not offered do nothing."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        await pilot.press("x", "1")  # not choices now
        await pilot.press("k")
        await pilot.pause()
        assert _acts(session) == [wire.Keep()]
        assert app.table_screen.view is not None
        assert app.table_screen.view.actions.mode == "acting"


async def test_an_act_names_the_prompt_it_answers() -> None:
    """The action a key sends carries the ``seq`` of the prompt whose choices
    were on screen, so a late key press is refused rather than played on the
    next decision."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        shown = app.follow.seq
        assert app.follow.last_prompt is not None and app.follow.last_prompt.seq == shown
        await pilot.press("k")
        await pilot.pause()
        (act,) = [kw for kind, _, kw in session.requests if kind == "act"]
        assert act == {"seq": shown}


async def test_give_asks_whom_and_escape_goes_back() -> None:
    """g lists the receivers by seat number; Escape returns; g then 4 gives to seat 3."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        await pilot.press("g")
        await pilot.pause()
        text = screen_text(app)
        assert "Give it to Cy" in text and "Give it to Bot 4" in text
        await pilot.press("escape")
        await pilot.pause()
        assert "Keep it" in screen_text(app)
        await pilot.press("g", "4")
        await pilot.pause()
        assert _acts(session) == [wire.Give(to_seat=3)]


async def test_buttons_do_what_their_keys_do() -> None:
    """Tab to the first button and Enter: the same action as its key."""
    async with running(fakes.opening()) as (_app, pilot, session):
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert _acts(session) == [wire.Opening(secret="blue-3")]


async def test_a_refused_action_is_shown_and_the_choices_come_back() -> None:
    """The server says no: a notification in words, and the player may choose again."""
    refusal = wire.Error(id=5, code="illegal_action", message="no")
    async with running(fakes.mid_game(), act=lambda action: refusal) as (app, pilot, _):
        await pilot.press("f")
        await until(pilot, lambda: "That move is not allowed now." in _notes(app))
        assert app.table_screen.view is not None
        assert app.table_screen.view.actions.mode == "turn"


async def test_a_gap_in_the_events_asks_for_a_snapshot() -> None:
    """An event that skips a number is not applied; the app sends sync."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        session.feed(
            wire.Event(match=fakes.MATCH, seq=120, event=wire.TurnStarted(seat=0, turn=19))
        )
        await settle(pilot, session)
        assert ("sync", (), {}) in session.requests
        assert app.follow.seq == 97


async def test_a_lost_connection_shows_and_clears() -> None:
    """ConnectionLost: the title bar says so; Reconnected: it is gone."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        session.feed(ConnectionLost("1006"))
        await settle(pilot, session)
        assert "connection lost – reconnecting" in screen_text(app)
        session.feed(Reconnected(), *fakes.mid_game())
        await settle(pilot, session)
        assert "reconnecting" not in screen_text(app).split("\n")[0]
        assert isinstance(app.screen, TableScreen)


async def test_offline_the_choices_are_held_back_with_the_reason() -> None:
    """Issue 30, "keys pressed while offline are lost": while the connection is
    lost the panel says why there is nothing to choose, a key sends nothing
    and is not swallowed into "…", and our own row shows us away; once back,
    the choices return and a key acts."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        assert app.table_screen.view is not None
        assert app.table_screen.view.actions.mode == "turn"
        session.feed(ConnectionLost("1006"))
        await settle(pilot, session)
        assert "Your choices come back" in screen_text(app)
        view = app.table_screen.view
        assert view.actions.mode == "offline" and not view.actions.choices
        assert not next(row for row in view.players if row.you).connected
        await pilot.press("k")
        await pilot.pause()
        assert _acts(session) == [] and not app.follow.acting
        session.feed(Reconnected(), *fakes.mid_game())
        await settle(pilot, session)
        assert app.table_screen.view.actions.mode == "turn"
        await pilot.press("k")
        await until(pilot, lambda: len(_acts(session)) == 1, what="the act")


async def test_the_reveal_is_shown_one_card_at_a_time() -> None:
    """Five secret_revealed events arriving together are applied one by one."""
    app, _session = scripted(fakes.ending())
    app.reveal_delay = 0.5  # a loaded machine may look only every second or so
    seen: set[int] = set()  # how many cards were revealed, at each look

    def revealed() -> int:
        count = len(app.follow.state.revealed) if app.follow.state is not None else 0
        seen.add(count)
        return count

    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: revealed() > 0)
        assert revealed() < 5  # held back: not all at once
        await until(  # the screen is painted a moment after the state changes
            pilot,
            lambda: (
                "The secret festival is revealed" in screen_text(app)
                or isinstance(app.screen, FinalScreen)
            ),
        )
        assert "The secret festival is revealed" in screen_text(app)
        await until(pilot, lambda: revealed() == 5 and isinstance(app.screen, FinalScreen), 30)
    assert len(seen - {0}) >= 2  # at least one card showed before the last


async def test_final_screen_offers_a_rematch_and_the_table() -> None:
    """a asks for play_again; t goes back to the table; r shows the scores again."""
    async with running(fakes.ending()) as (app, pilot, session):
        assert isinstance(app.screen, FinalScreen)
        await pilot.press("a")
        await pilot.pause()
        assert ("play_again", (), {}) in session.requests
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, TableScreen)
        assert "The match is over" in screen_text(app)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, FinalScreen)


async def test_the_host_starts_a_full_table_with_s() -> None:
    """Waiting room: once every seat is taken, s starts the match."""
    async with running(fakes.waiting_room()) as (app, pilot, session):
        assert "Waiting for players: 2 of 3" in screen_text(app)
        await pilot.press("s")
        assert ("start", (), {}) not in session.requests  # not full yet
        full = (*fakes.THREE_SEATS[:2], wire.SeatInfo(seat=2, kind="human", name="Bea"))
        session.feed(wire.MatchUpdate(match=fakes.summary("open", seats=full)))
        await settle(pilot, session)
        await pilot.press("s")
        await pilot.pause()
        assert ("start", (), {}) in session.requests


async def test_a_player_who_becomes_the_host_can_start() -> None:
    """The host left the open match: the unasked ``joined`` makes Bea the host
    of the table she already sits at, and s starts it."""
    seats = (
        wire.SeatInfo(seat=0, kind="human", name="Dan"),
        wire.SeatInfo(seat=1, kind="bot", name="bot 1", strength="easy"),
        wire.SeatInfo(seat=2, kind="human", name="Bea"),
    )
    script = [
        wire.Joined(match=fakes.MATCH, seat=2, host=False),
        wire.MatchUpdate(match=fakes.summary("open", seats=seats, host="Ada")),
    ]
    async with running(script) as (app, pilot, session):
        await pilot.press("s")
        await pilot.pause()
        assert ("start", (), {}) not in session.requests  # Ada still hosts
        session.feed(wire.Joined(match=fakes.MATCH, seat=2, host=True))
        session.feed(wire.MatchUpdate(match=fakes.summary("open", seats=seats, host="Bea")))
        await settle(pilot, session)
        assert isinstance(app.screen, TableScreen)
        assert app.follow.host and app.follow.seat == 2
        await pilot.press("s")
        await pilot.pause()
        assert ("start", (), {}) in session.requests


async def test_a_table_of_bots_starts_by_itself() -> None:
    """Hosting against bots only: the app starts the match without being asked."""
    script = [
        wire.Joined(match=fakes.MATCH, seat=0, host=True),
        wire.MatchUpdate(match=fakes.summary("open", seats=fakes.THREE_SEATS)),
    ]
    async with running(script) as (_app, pilot, session):
        await until(pilot, lambda: ("start", (), {}) in session.requests)


async def test_help_opens_and_closes_with_the_question_mark() -> None:
    """? shows the rules in brief over any screen; ? again closes them."""
    async with running(fakes.mid_game()) as (app, pilot, _):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "KEEP" in screen_text(app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, TableScreen)


async def test_lobby_join_asks_for_the_code_of_a_private_match() -> None:
    """Enter on a private match: the code dialog, then join with that code."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        assert isinstance(app.screen, LobbyScreen)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press(*"tulip", "enter")
        await pilot.pause()
        assert ("join", ("m1",), {"seat": None, "join_code": "tulip"}) in session.requests
        await pilot.press("down", "w")
        await pilot.pause()
        assert ("watch", ("m2",), {"join_code": None}) in session.requests


async def test_a_match_that_leaves_the_lobby_leaves_the_list() -> None:
    """``match_removed``: the match's row goes from the lobby at once."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        assert "Friday tulips" in screen_text(app)
        session.feed(wire.MatchRemoved(match="m2"))
        await until(pilot, lambda: "Friday tulips" not in screen_text(app))
        assert "Bea's garden" in screen_text(app)
        assert "m2" not in app.lobby.matches


async def test_leaving_returns_to_the_lobby() -> None:
    """l leaves the match and lists the server's matches again."""
    async with running(fakes.mid_game(), matches=fakes.lobby_matches()) as (app, pilot, session):
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert ("leave", (), {}) in session.requests
        assert app.follow.match_id is None


async def test_an_unreachable_server_ends_the_app_with_one_message() -> None:
    """The first connection fails: the app exits with status 1 and says why."""

    class Unreachable(fakes.ScriptedSession):
        async def open(self) -> wire.Welcome:
            raise ConnectError("cannot reach ws://nowhere:1: refused")

    session = Unreachable()
    app = TulipsApp(Plan(name="Ada", url=URL), sessions=fakes.factory(session))
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.failure is not None)
    assert app.return_code == 1
    assert app.failure == "could not connect: cannot reach ws://nowhere:1: refused"


async def test_a_forgotten_token_is_dropped_and_a_new_identity_kept(tmp_path: Any) -> None:
    """bad_token on resume: forget it, say hello afresh, keep the new token."""
    store = IdentityStore(tmp_path / "identity.json")
    store.remember(URL, "old-token")
    tokens: list[str | None] = []

    class Forgotten(fakes.ScriptedSession):
        async def open(self) -> wire.Welcome:
            if tokens[-1] is not None:
                raise ConnectError(
                    f"{URL} refused us: bad_token: unknown resume token", "bad_token"
                )
            return await super().open()

    session = Forgotten()

    def make(
        url: str, name: str, token: str | None, *, link: str | None = None
    ) -> fakes.ScriptedSession:
        tokens.append(token)
        return session

    app = TulipsApp(Plan(name="Ada", url=URL), sessions=make, identity=store)
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen))
    assert tokens == ["old-token", None]
    assert store.token_for(URL) == fakes.WELCOME.token


async def test_quick_play_creates_a_match_against_bots() -> None:
    """`tulips play`: one create_match with a bot in every other seat."""
    app, session = scripted(quick=True)
    async with app.run_test() as pilot:
        await until(pilot, lambda: any(kind == "create_match" for kind, _, _ in session.requests))
        await asyncio.sleep(0)
    (kwargs,) = [kw for kind, _, kw in session.requests if kind == "create_match"]
    assert kwargs["seats"] == 3 and kwargs["bots"] == [(1, "easy"), (2, "easy")]
    assert kwargs["name"] == "Ada's table"


async def test_chat_goes_out_and_comes_back_in_the_log() -> None:
    """c opens a line to the table; what others say shows in the log."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        await pilot.press("c")
        await pilot.pause()
        await pilot.press(*"gl hf", "enter")
        await pilot.pause()
        assert ("chat", ("gl hf",), {}) in session.requests
        session.feed(wire.ChatLine(match=fakes.MATCH, seat=0, name="Cy", text="thanks!"))
        await settle(pilot, session)
        assert "Cy: thanks!" in screen_text(app)


async def test_a_chat_line_does_not_cancel_a_leave_under_way() -> None:
    """Issue 30, "requests cancel each other": a leave the server has not yet
    answered, then a chat line — both complete, and the leave takes the
    player to the lobby."""
    let_go = asyncio.Event()
    finished: list[str] = []
    session = fakes.ScriptedSession(fakes.mid_game())

    async def slow_leave() -> None:
        session.requests.append(("leave", (), {}))
        await let_go.wait()
        finished.append("leave")

    session.leave = slow_leave  # type: ignore[method-assign]
    app = TulipsApp(Plan(name="Ada", url=URL), sessions=fakes.factory(session), reveal_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, session)
        app.action_leave()
        await until(pilot, lambda: ("leave", (), {}) in session.requests, what="the leave")
        app.request(lambda s: s.chat("bye"))
        await until(pilot, lambda: ("chat", ("bye",), {}) in session.requests, what="the chat")
        let_go.set()
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
    assert finished == ["leave"]


async def test_a_second_match_of_the_evening_gets_another_default_name() -> None:
    """Issue 30: the lobby lists "Ada's table" already (her first match of the
    evening): the form offers "Ada's table 2"."""
    first = msgspec.structs.replace(fakes.lobby_matches()[0], name="Ada's table")
    async with running([], matches=[first, *fakes.lobby_matches()[1:]]) as (app, pilot, _s):
        await pilot.press("n")
        await pilot.pause()
        assert app.screen.query_one("#name", Input).value == "Ada's table 2"


async def test_after_the_end_the_panel_is_not_titled_your_move() -> None:
    """Issue 30, cosmetics: back at the table after the final scores, the
    action panel says the match is over, not "Your move"."""
    from client.tui.widgets.actions import ActionsPanel

    async with running(fakes.ending()) as (app, pilot, _session):
        await pilot.press("t")
        await pilot.pause()
        assert app.screen.query_one(ActionsPanel).border_title == "The end"


async def test_the_host_of_a_private_match_is_shown_its_join_code() -> None:
    """Issue 30, hosting: the waiting room shows the host the code to pass on."""
    async with running(fakes.waiting_room()) as (app, pilot, _session):
        assert "Join code" not in screen_text(app)
        app._join_codes[fakes.MATCH] = "tulip"
        app._render_table()
        await pilot.pause()
        assert "Join code: tulip" in screen_text(app)


async def test_the_waiting_room_log_says_who_sits_down_and_who_leaves() -> None:
    """Issue 30, hosting: everyone sees who joins and leaves before the start."""
    open_seats = (*fakes.THREE_SEATS[:2], wire.SeatInfo(seat=2, kind="empty"))
    bea = wire.SeatInfo(seat=2, kind="human", name="Bea", connected=True)
    async with running(fakes.waiting_room()) as (app, pilot, session):
        summary = fakes.summary("open", seats=(*open_seats[:2], bea), name="Ada vs bots")
        session.feed(wire.MatchUpdate(match=summary))
        await settle(pilot, session)
        session.feed(
            wire.MatchUpdate(match=fakes.summary("open", seats=open_seats, name="Ada vs bots"))
        )
        await settle(pilot, session)
    told = [line.plain for line in app.follow.log]
    assert told[-2:] == ["Bea takes seat 3.", "Bea left the table."]


async def test_the_bell_rings_for_your_move_unless_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 30: a setting turns the bell off (``--no-bell``, Plan.bell)."""
    from client.tui.cli import _parser

    assert _parser().parse_args(["play", "--no-bell"]).no_bell
    assert not _parser().parse_args(["connect", "ws://127.0.0.1:1"]).no_bell
    rung: list[bool] = []
    monkeypatch.setattr(TulipsApp, "bell", lambda self: rung.append(self.plan.bell))
    for bell, rings in ((True, 1), (False, 0)):
        rung.clear()
        session = fakes.ScriptedSession(fakes.mid_game())
        app = TulipsApp(
            Plan(name="Ada", url=URL, bell=bell), sessions=fakes.factory(session), reveal_delay=0
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, session)
        assert len(rung) == rings


async def test_a_turn_timer_counts_down() -> None:
    """A prompt with a deadline: the seconds left show, and go down with the clock."""
    now = [1000.0]
    script = fakes.mid_game()
    last = script[-1]
    assert isinstance(last, wire.Prompt)
    script[-1] = msgspec.structs.replace(last, deadline=42.0)
    session = fakes.ScriptedSession(script)
    app = TulipsApp(
        Plan(name="Ada", url=URL), sessions=fakes.factory(session), clock=lambda: now[0]
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, session)
        assert "timer 42 s" in screen_text(app)
        now[0] += 10
        await until(pilot, lambda: "timer 32 s" in screen_text(app), timeout=3)
        await pilot.press("k")
        await until(pilot, lambda: "timer " not in screen_text(app), timeout=3)
