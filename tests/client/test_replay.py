"""The replay viewer: a finished match rebuilt from its events alone, stepped
through with keys — from the lobby and from the final scores, on a scripted
session serving replay pages (and once on a real server). Playing runs on a
ticker the test fires by hand: no clock, no timing."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

import protocol as wire
from client.sdk import connect
from client.tui import i18n
from client.tui.app import Plan, QuickMatch, TulipsApp
from client.tui.replay import Record, Replay, ReplayLoadError, caption, fetch_record
from client.tui.screens.final import FinalScreen
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.replay import ReplayScreen
from client.tui.widgets.bouquets import PlayersPanel
from protocol import examples

from . import fakes
from .conftest import Running
from .driver import play_to_the_end, until
from .screens import running, screen_text, scripted, settle

EVENTS = fakes.short_match()
MATCHES = [*fakes.lobby_matches(), fakes.replayed_summary()]


class ManualTicks:
    """A scheduler for the viewer's playing that ticks only when the test says."""

    def __init__(self) -> None:
        self.callback: Callable[[], None] | None = None
        self.interval: float | None = None

    def __call__(self, interval: float, callback: Callable[[], None]) -> ManualTicks:
        self.interval, self.callback = interval, callback
        return self

    def stop(self) -> None:
        """The viewer stopped playing."""
        self.callback = None

    def fire(self, times: int = 1) -> None:
        """``times`` ticks of the timer."""
        for _ in range(times):
            assert self.callback is not None, "not playing"
            self.callback()


def _record(events: list[wire.GameEvent] = EVENTS, seat: int | None = None) -> Record:
    return Record(fakes.REPLAYED, "finished", "standard", seat, tuple(events))


def _replays(session: fakes.ScriptedSession) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [(args, kwargs) for kind, args, kwargs in session.requests if kind == "replay"]


def _viewer(app: TulipsApp) -> ReplayScreen:
    assert isinstance(app.screen, ReplayScreen), app.screen
    return app.screen


def _loaded(app: TulipsApp) -> bool:
    return isinstance(app.screen, ReplayScreen) and app.screen.replay is not None


async def _open_from_lobby(pilot: Pilot[Any], app: TulipsApp, match: str) -> None:
    """Put the lobby's cursor on ``match`` and press v."""
    assert isinstance(app.screen, LobbyScreen)
    table = app.screen.query_one("#matches")
    table.move_cursor(row=table.get_row_index(match))  # type: ignore[attr-defined]
    await pilot.press("v")


# -- the record, folded -----------------------------------------------------------------------


def test_the_table_is_rebuilt_from_the_events_alone() -> None:
    """From an empty table, the events give the final bouquets, festival and scoring."""
    replay = Replay(_record())
    replay.go(replay.total)
    state = replay.state
    assert state.phase == "over" and state.scoring == fakes.short_match_scoring()
    bouquets = {s.seat: s.bouquet for s in state.seats}
    assert bouquets == {
        0: ("orange-2", "orange-4", "blue-4", "pink-2"),
        1: ("purple-3", "pink-3", "purple-2", "blue-3"),
        2: ("blue-2", "orange-3", "orange-2", "purple-2"),
    }
    assert [(s.keeping, s.giving) for s in state.seats] == [(3, 6), (2, 5), (2, 5)]
    assert state.ranking == ("pink", "blue", "orange", "purple")
    assert state.totals == {"purple": 4, "blue": 7, "pink": 7, "orange": 4}
    assert state.deck_count == 0 and state.secret_count == 2
    assert state.revealed == ("blue-4", "pink-3")


def test_the_setup_shows_the_deck_the_first_draw_left_and_no_private_card() -> None:
    """Before the first draw the deck holds that draw's count plus one; a
    spectator's record fills in no hand, opening or secret card."""
    replay = Replay(_record())
    assert replay.go_to_turn(1)
    before = replay.states[replay.position - 2]  # the opening revealed, nobody drew yet
    assert before.deck_count == 12 and before.phase == "turn"
    assert [s.bouquet for s in before.seats] == [("orange-2",), ("purple-3",), ("blue-2",)]
    assert all(not s.hand and not s.opening and not s.my_secret for s in replay.states)
    assert replay.states[0].to_act == (0, 1, 2)  # R11: everyone still to choose


def test_a_seats_own_record_shows_its_cards() -> None:
    """A record in a seat's view: its deal, opening, draws and secret, folded as live."""
    replay = Replay(_record(fakes.short_match_as_ada(), seat=0))
    replay.go(2)
    assert replay.state.hand == ("orange-2", "pink-3")
    assert caption(replay.event, replay.names, 0).plain == "You were dealt ▲2 ♥3."
    replay.go(8)
    assert replay.state.my_secret == ("pink-3",) and replay.state.opening == ("orange-2", "pink-3")
    replay.go(10)
    assert replay.state.drawn == "orange-4"
    replay.go(11)
    assert replay.state.drawn is None
    assert replay.view().spectator is False


def test_steps_turns_and_ends() -> None:
    """One event either way, turn starts, a turn by number, and both ends."""
    replay = Replay(_record())
    assert replay.position == 1 and not replay.step(-1)
    assert replay.next_turn() and replay.position == replay.turn_at[1] == 9
    replay.step(2)
    assert replay.previous_turn() and replay.position == 9  # the start of this turn
    assert replay.previous_turn() and replay.position == 1  # before turn 1: the first event
    assert replay.go_to_turn(4) and replay.state.turn == 4 and replay.state.active == 0
    assert not replay.go_to_turn(7) and replay.state.turn == 4
    replay.go(10_000)
    assert replay.position == replay.total == 41
    assert not replay.next_turn() and isinstance(replay.event, wire.MatchEnded)


def test_playing_pauses_at_the_end_and_starts_again_from_the_first() -> None:
    """tick() moves only while playing; the last event pauses; play again restarts."""
    replay = Replay(_record())
    assert not replay.tick()
    replay.toggle()
    for _ in range(100):
        if not replay.tick():
            break
    assert replay.position == replay.total and not replay.playing
    replay.toggle()
    assert replay.playing and replay.position == 1
    replay.faster(10)
    assert replay.speed == 32.0
    replay.faster(-10)
    assert replay.speed == 1.0


def test_a_record_without_events_is_refused() -> None:
    """Nothing to show is an error naming the match, not an empty screen."""
    with pytest.raises(ValueError, match=fakes.REPLAYED):
        Replay(_record([]))


def test_every_event_has_words() -> None:
    """Even the events the log leaves out (another seat's deal and draw) are said."""
    replay = Replay(_record(), fakes.replayed_summary())
    words = [caption(e, replay.names, None).plain for e in EVENTS]
    assert all(words)
    assert words[1] == "Ada was dealt their cards."
    assert words[9] == "Ada drew a card (11 left in the deck)."


class _Pages:
    def __init__(self, answer: Callable[..., Any]) -> None:
        self.answer = answer
        self.asked: list[int] = []

    async def replay(
        self, match: str, *, join_code: str | None = None, from_seq: int = 1
    ) -> wire.ReplayPage:
        self.asked.append(from_seq)
        page = self.answer(match, join_code=join_code, from_seq=from_seq)
        assert isinstance(page, wire.ReplayPage)
        return page


async def test_fetch_follows_next_seq_to_the_last_page() -> None:
    """Every page is asked for, in order, and the events joined."""
    pages = _Pages(fakes.replay_pages(EVENTS, size=16))
    seen: list[int] = []
    record = await fetch_record(pages, fakes.REPLAYED, progress=seen.append)
    assert pages.asked == [1, 17, 33] and seen == [16, 32, 41]
    assert record.events == tuple(EVENTS) and record.seat is None


async def test_fetch_keeps_who_played_each_move_across_pages() -> None:
    """`replay.by` of every page joins into one list aligned with the events;
    the viewer badges those moves in the log and the caption, and no other."""
    marks: dict[int, wire.PlayedBy] = {11: "stand_in", 21: "timer"}  # pages 1 and 2
    pages = _Pages(fakes.replay_pages(EVENTS, size=16, by=marks))
    record = await fetch_record(pages, fakes.REPLAYED)
    assert len(record.by) == len(EVENTS)
    assert {i + 1: by for i, by in enumerate(record.by) if by is not None} == marks
    replay = Replay(record, fakes.replayed_summary())
    badged = [i + 1 for i, line in enumerate(replay.lines) if line and "time ran out" in line.plain]
    assert badged == [21]
    stood_in = [i + 1 for i, line in enumerate(replay.lines) if line and "bot for" in line.plain]
    assert stood_in == [11]
    replay.go(11)
    assert "bot for" in replay.view().caption.plain
    replay.go(12)
    assert "bot for" not in replay.view().caption.plain
    unmarked = await fetch_record(_Pages(fakes.replay_pages(EVENTS, size=16)), fakes.REPLAYED)
    assert unmarked.by == ()


async def test_fetch_refuses_pages_that_do_not_follow_each_other() -> None:
    """A page whose next_seq skips events is an error, not a silent gap."""

    def skipping(match: str, *, join_code: str | None = None, from_seq: int = 1) -> Any:
        page = fakes.replay_pages(EVENTS, size=16)(match, from_seq=from_seq)
        assert isinstance(page, wire.ReplayPage)
        if page.next_seq is not None:
            page = wire.ReplayPage(**{**_fields(page), "next_seq": page.next_seq + 1})
        return page

    with pytest.raises(ReplayLoadError, match="says the next is 18"):
        await fetch_record(_Pages(skipping), fakes.REPLAYED)


def _fields(page: wire.ReplayPage) -> dict[str, Any]:
    return {name: getattr(page, name) for name in page.__struct_fields__}


# -- the viewer, on a scripted session ------------------------------------------------------


def _app(
    script: list[object] | None = None, *, match: str = fakes.REPLAYED, **answers: Any
) -> tuple[TulipsApp, fakes.ScriptedSession, ManualTicks]:
    answers.setdefault("replay", fakes.replay_pages(EVENTS, match=match))
    app, session = scripted(script or [], matches=MATCHES, **answers)
    ticks = ManualTicks()
    app.replay_scheduler = ticks
    return app, session, ticks


async def test_from_the_lobby_every_page_then_step_forwards_and_back() -> None:
    """v on a finished match loads all its pages; → and ← move the table with the events."""
    app, session, _ = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: _loaded(app), what="the replay")
        assert [kwargs["from_seq"] for _, kwargs in _replays(session)] == [1, 17, 33]
        assert "Event 1 of 41" in screen_text(app)
        viewer = _viewer(app)
        await pilot.press("t", "1", "enter", "right", "right")
        await pilot.pause()
        text = screen_text(app)
        assert "Event 11 of 41" in text and "turn 1 of 6" in text
        assert "Ada kept ▲4 (+2)." in text  # the current event, in words
        rows = viewer.query_one(PlayersPanel).rows
        assert (rows[0].keeping, rows[0].tulips) == (2, 2)
        await pilot.press("left", "left")
        await pilot.pause()
        rows = viewer.query_one(PlayersPanel).rows
        assert (rows[0].keeping, rows[0].tulips) == (0, 1)
        assert "Event 9 of 41" in screen_text(app)
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")


async def test_turn_keys_jump_and_a_turn_that_does_not_exist_is_said() -> None:
    """↓ next turn, ↑ back; t 5 Enter goes to turn 5; t 9 Enter says there is none."""
    app, session, _ = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: _loaded(app), what="the replay")
        replay = _viewer(app).replay
        assert replay is not None
        await pilot.press("down", "down")
        assert replay.position == replay.turn_at[2]
        await pilot.press("up")
        assert replay.position == replay.turn_at[1]
        await pilot.press("t", "5")
        await pilot.pause()
        assert "Go to turn: 5" in screen_text(app)
        await pilot.press("right")  # stepping waits while a number is typed
        await pilot.press("enter")
        await pilot.pause()
        assert replay.position == replay.turn_at[5] and replay.state.active == 1
        await pilot.press("t", "9", "enter")
        await pilot.pause()
        assert "There is no turn 9: the turns are 1 to 6." in screen_text(app)
        assert replay.position == replay.turn_at[5]
        await pilot.press("t", "3", "escape")  # Esc drops the number, and stays
        assert isinstance(app.screen, ReplayScreen) and replay.state.turn == 5
        await pilot.press("end")
        await pilot.pause()
        text = screen_text(app)
        assert "Event 41 of 41" in text and "The match is over. Won by Ada." in text
        await pilot.press("home")
        assert replay.position == 1


async def test_play_advances_on_its_own_and_pauses() -> None:
    """Space plays: each tick is one event; + doubles the speed; space pauses."""
    app, session, ticks = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: _loaded(app), what="the replay")
        replay = _viewer(app).replay
        assert replay is not None
        await pilot.press("space")
        await pilot.pause()
        assert ticks.interval == 0.25 and "playing · 4 events a second" in screen_text(app)
        ticks.fire(5)
        await pilot.pause()
        assert replay.position == 6 and "Event 6 of 41" in screen_text(app)
        await pilot.press("plus")
        assert ticks.interval == 0.125
        ticks.fire(2)
        await pilot.press("space")
        await pilot.pause()
        assert ticks.callback is None and replay.position == 8
        assert "paused · 8 events a second" in screen_text(app)
        await pilot.press("space")
        for _ in range(100):  # more ticks than events: it pauses at the end by itself
            if ticks.callback is None:
                break
            ticks.fire()
        assert replay.position == 41 and not replay.playing


async def test_from_the_final_scores_and_back() -> None:
    """v on the final screen replays the match just played, with the festival's
    legend from our own state; Esc goes back to the final scores."""
    app, session, _ = _app(fakes.ending(), match=fakes.MATCH)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await until(pilot, lambda: isinstance(app.screen, FinalScreen), what="the scores")
        await pilot.press("v")
        await until(pilot, lambda: _loaded(app), what="the replay")
        assert _replays(session)[0][0] == (fakes.MATCH,)
        text = screen_text(app)
        assert "Give" in text and "Majority" in text  # the legend: points known from the match
        await pilot.press("end")
        await pilot.pause()
        assert "match over" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, FinalScreen), what="the scores again")


async def test_a_player_replays_their_own_seats_view() -> None:
    """The server sends Ada's own view: her draws and secret card are shown, as "you"."""
    own = fakes.replay_pages(fakes.short_match_as_ada(), fakes.MATCH, seat=0)
    app, session, _ = _app(fakes.ending(), replay=own)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await until(pilot, lambda: isinstance(app.screen, FinalScreen), what="the scores")
        await pilot.press("v")
        await until(pilot, lambda: _loaded(app), what="the replay")
        await pilot.press("t", "1", "enter", "right")
        await pilot.pause()
        text = screen_text(app)
        assert "You drew ▲4." in text and "Your secret cards: ♥3" in text
        assert "As your seat saw it" in text and "Ada (you)" in text


async def _last_screen_from_the_lobby(points: wire.Points | None) -> str:
    """The viewer's screen at the last event of a match opened from the lobby,
    its pages carrying ``points`` (None: as an older server sends them)."""
    app, session, _ = _app(replay=fakes.replay_pages(EVENTS, points=points))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: _loaded(app), what="the replay")
        await pilot.press("end")
        await pilot.pause()
        return screen_text(app)


async def test_from_the_lobby_the_legend_comes_from_the_record() -> None:
    """A match we did not follow: the festival numbers the replay pages carry."""
    text = await _last_screen_from_the_lobby(examples.STANDARD_POINTS)
    assert "Give" in text and "Majority" in text


async def test_from_the_lobby_the_legend_is_left_out() -> None:
    """A match we did not follow, from an older server that sends no points:
    no festival numbers the server did not send."""
    text = await _last_screen_from_the_lobby(None)
    assert "Majority" not in text and "Total" in text
    assert "Public information only" in text


async def test_no_such_match_is_said_clearly() -> None:
    """The server no longer has it: the viewer says so, and q goes back."""
    app, session, _ = _app(match="elsewhere")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(
            pilot,
            lambda: f"There is no match {fakes.REPLAYED} on this server." in screen_text(app),
            what="the error",
        )
        await pilot.press("right", "space")  # nothing to step through
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")


async def test_a_connection_lost_while_loading_is_said() -> None:
    """The connection drops between two pages: no half replay, a clear message."""
    serve = fakes.replay_pages(EVENTS)

    def dropping(match: str, *, join_code: str | None = None, from_seq: int = 1) -> object:
        if from_seq > 1:
            raise ConnectionError("connection closed (1006)")
        return serve(match, from_seq=from_seq)

    app, session, _ = _app(replay=dropping)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        lost = "The connection was lost"
        await until(pilot, lambda: lost in screen_text(app), what="the message")
        assert _viewer(app).replay is None


async def test_a_join_code_is_asked_for_when_the_server_wants_one() -> None:
    """First without a code; on bad_join_code the dialog asks, and the code opens it."""
    private = fakes.summary(
        "finished", seats=fakes.THREE_SEATS, match=fakes.REPLAYED, has_join_code=True
    )
    serve = fakes.replay_pages(EVENTS)

    def guarded(match: str, *, join_code: str | None = None, from_seq: int = 1) -> object:
        if join_code != "tulip":
            return wire.Error(code="bad_join_code", message="wrong code")
        return serve(match, from_seq=from_seq)

    app, session, _ = _app(replay=guarded)
    session.matches = [private]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: "join code" in screen_text(app), what="the code dialog")
        await pilot.press(*"tulip", "enter")
        await until(pilot, lambda: _loaded(app), what="the replay")
        assert [kwargs["join_code"] for _, kwargs in _replays(session)] == [
            None,
            "tulip",
            "tulip",
            "tulip",
        ]


async def test_a_join_code_that_let_us_in_is_offered_to_the_replay() -> None:
    """Watched with a code: the replay asks with it at once, no dialog."""
    private = fakes.summary(
        "finished", seats=fakes.THREE_SEATS, match=fakes.REPLAYED, has_join_code=True
    )
    joined = wire.Joined(match=fakes.REPLAYED, seat=None, host=False)
    app, session, _ = _app(watch=lambda *a, **k: joined)
    session.matches = [private]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await pilot.press("w")
        await until(pilot, lambda: "join code" in screen_text(app), what="the code dialog")
        await pilot.press(*"tulip", "enter")
        await until(pilot, lambda: "tulip" in app._join_codes.values(), what="the watch")
        app.open_replay(fakes.REPLAYED)
        await until(pilot, lambda: _loaded(app), what="the replay")
        assert {kwargs["join_code"] for _, kwargs in _replays(session)} == {"tulip"}


async def test_a_wrong_join_code_is_said_and_cancelling_goes_back() -> None:
    """A code the server refuses is said; Esc in the code dialog returns to the lobby."""
    refuse = wire.Error(code="bad_join_code", message="wrong code")
    app, session, _ = _app(replay=lambda *a, **k: refuse)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: "join code" in screen_text(app), what="the code dialog")
        await pilot.press("x", "enter")
        await until(pilot, lambda: "join code is not right" in screen_text(app), what="refusal")
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: "join code" in screen_text(app), what="the code dialog")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")


async def test_the_lobby_offers_a_replay_on_a_finished_match() -> None:
    """The key bar says v replay where w watch was, while the cursor is on a finished match."""
    async with running([], matches=MATCHES) as (app, pilot, _session):
        assert " w  watch" in screen_text(app) and " v  replay" not in screen_text(app)
        await pilot.press("down", "down")
        await pilot.pause()
        assert " v  replay" in screen_text(app) and " w  watch" not in screen_text(app)


async def test_only_finished_matches_are_replayed_from_the_lobby() -> None:
    """v on a running match says why not and asks the server nothing."""
    async with running([], matches=MATCHES) as (app, pilot, session):
        await _open_from_lobby(pilot, app, "m2")
        await until(
            pilot,
            lambda: (
                "Only a finished match can be replayed."
                in [note.message for note in app._notifications]
            ),
            what="the note",
        )
        assert isinstance(app.screen, LobbyScreen) and not _replays(session)


async def test_every_string_in_the_viewer_passes_through_the_catalogue() -> None:
    """Under the pseudo-language, only names from the server are plain letters."""
    i18n.set_language("en", pseudo=True)
    app, session, _ = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: _loaded(app), what="the replay")
        await pilot.press("t", "4")
        await pilot.pause()
        text = screen_text(app).replace("Short and sweet", "").replace("Ada", "")
        plain = [line for line in text.splitlines() if re.search("[A-Za-z]", line)]
        assert not plain, text


# -- on a real server --------------------------------------------------------------------------


async def test_a_real_finished_match_loads_every_page_and_ends_in_its_scoring(
    server: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bots play a match on a real server; the viewer, opened from the lobby,
    follows next_seq over several pages and ends on the server's final scoring."""
    monkeypatch.setattr("server.match.views.MAX_REPLAY_EVENTS", 40)  # pages of 40: several
    async with connect(server.url, "Host", reconnect=False) as host:
        bots = [(seat, "easy") for seat in range(3)]
        joined = await host.create_match(name="Bots only", seats=3, bots=bots)
        await host.start()
        for _ in range(1000):
            ended = await host.next_of(wire.Event, timeout=30)
            if isinstance(ended.event, wire.MatchEnded):
                break
        assert isinstance(ended.event, wire.MatchEnded)
    app = TulipsApp(Plan(name="Ada", url=server.url), reveal_delay=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        await until(pilot, lambda: joined.match in app.lobby.matches, what="the match listed")
        await pilot.pause()
        await _open_from_lobby(pilot, app, joined.match)
        await until(pilot, lambda: _loaded(app), timeout=20, what="the replay")
        replay = _viewer(app).replay
        assert replay is not None
        assert replay.total == ended.seq > 3 * 40
        await pilot.press("end")
        await pilot.pause()
        assert replay.state.scoring == ended.event.scoring
        await until(  # painted a moment after the step
            pilot,
            lambda: (
                "The match is over. Won by" in screen_text(app) and "Majority" in screen_text(app)
            ),  # the festival's numbers, from the record
            what="the final scoring on screen",
        )


async def test_a_match_just_played_replays_in_the_players_own_view(server: Running) -> None:
    """Play a quick match with keys on a real server, then v on the final scores:
    the server sends our seat's view, our own draws included, down to the same scoring."""
    app = TulipsApp(
        Plan(name="Ada", url=server.url, quick=QuickMatch(players=2, strength="easy")),
        reveal_delay=0,
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: app.follow.state is not None, what="the deal")
        await play_to_the_end(pilot, app, random.Random(11))
        await pilot.press("v")
        await until(pilot, lambda: _loaded(app), timeout=20, what="the replay")
        replay = _viewer(app).replay
        assert replay is not None and replay.record.seat == app.follow.seat == 0
        own = [e for e in replay.record.events if isinstance(e, wire.CardDrawn) and e.seat == 0]
        assert own and all(e.card is not None for e in own)  # R25: our own draws, seen
        others = [e for e in replay.record.events if isinstance(e, wire.CardDrawn) and e.seat == 1]
        assert others and all(e.card is None for e in others)  # and nobody else's
        await pilot.press("end")
        await pilot.pause()
        assert app.follow.state is not None
        assert replay.state.scoring == app.follow.state.scoring
        assert "Majority" in screen_text(app)  # the festival's numbers, from our own snapshot
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, FinalScreen), what="the scores")


async def test_a_window_too_small_for_the_viewer_says_so() -> None:
    """Below 80×24 the viewer, like the table, shows one plain sentence until it grows."""
    app, session, _ = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, session)
        await _open_from_lobby(pilot, app, fakes.REPLAYED)
        await until(pilot, lambda: _loaded(app), what="the replay")
        await pilot.resize_terminal(60, 16)
        await pilot.pause()
        assert "Make it at least 80×24" in screen_text(app).replace("\n", " ")
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert "Event 1 of 41" in screen_text(app)
