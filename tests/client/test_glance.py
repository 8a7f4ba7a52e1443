"""A table you can follow at a glance: one pilot test (or a few) per point of
the issue — the log that keeps its newest line in sight and scrolls with keys,
the marks of what changed, absent players, everyone's timers, the log filled
from the record, quitting, the final points, rematches, the lobby's statuses,
small windows and the first player. Scripted sessions, a frozen clock."""

from __future__ import annotations

from typing import Any

import msgspec
from textual.widgets import Select

import protocol as wire
from client.sdk import ConnectionLost, Reconnected
from client.tui.app import Plan, TulipsApp
from client.tui.screens.dialogs import (
    ConfirmQuitScreen,
    CreateMatchScreen,
    bot_count_options,
    first_seat_options,
)
from client.tui.screens.final import FinalScreen
from client.tui.screens.table import TableScreen
from client.tui.widgets.actions import prompt_text
from client.tui.widgets.log import EventLog

from . import fakes
from .driver import until
from .screens import URL, running, screen_text, settle

MATCH = fakes.MATCH


def _view(app: TulipsApp) -> Any:
    view = app.table_screen.view
    assert view is not None
    return view


def _notes(app: TulipsApp) -> list[str]:
    return [note.message for note in app._notifications]


def _log_text(app: TulipsApp) -> str:
    return "\n".join(line.plain for line in app.follow.log)


def _away_app(
    now: list[float], *, turn_timer: bool = True
) -> tuple[TulipsApp, fakes.ScriptedSession]:
    """Ada's app on the script in which Cy drops, its clock reading ``now[0]``
    (without Cy's turn timer unless ``turn_timer``)."""
    script = fakes.away() if turn_timer else fakes.away()[:-1]
    session = fakes.ScriptedSession(script)
    app = TulipsApp(
        Plan(name="Ada", url=URL), sessions=fakes.factory(session), clock=lambda: now[0]
    )
    return app, session


def _events(first_seq: int, count: int) -> list[wire.Event]:
    """``count`` alternating turns of Bots 3 and 4, each keeping a card."""
    events = []
    seq = first_seq
    for i in range(count):
        seat = 2 + i % 2
        events.append(wire.Event(match=MATCH, seq=seq, event=wire.TurnStarted(seat=seat, turn=19)))
        events.append(
            wire.Event(
                match=MATCH, seq=seq + 1, event=wire.CardKept(seat=seat, card="blue-3", points=i)
            )
        )
        seq += 2
    return events


# -- 1. the log ----------------------------------------------------------------------------


async def test_1_the_newest_log_line_is_always_on_screen() -> None:
    """80×24: after every event, the log's newest line is drawn at its bottom."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        for event in _events(98, 12):
            session.feed(event)
            await settle(pilot, session)
            log = app.table_screen.query_one(EventLog)
            rows, _ = log.rows()
            first, end = log.window()
            assert end == len(rows) and log.following
            # the newest line's last row is the log's bottom row on the screen
            region = log.content_region
            screen = screen_text(app).splitlines()
            bottom = screen[region.y + (end - first) - 1][region.x : region.right].rstrip()
            assert bottom == rows[-1].text.rstrip()
            assert app.follow.log[-1].plain.endswith(bottom.split()[-1])
            assert first == max(0, len(rows) - log.content_size.height)


async def test_1_the_log_scrolls_with_keys_and_says_what_is_below() -> None:
    """PgUp scrolls back and the border says how many lines are newer; new
    events do not move what is read; End follows the newest again."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        for event in _events(98, 10):  # more than two pages of the (tall) log
            session.feed(event)
        await settle(pilot, session)
        log = app.table_screen.query_one(EventLog)
        await pilot.press("pageup")
        await pilot.pause()
        assert not log.following
        newer = log.newer()
        assert newer > 0 and f"↓ {newer} newer — End to follow" in screen_text(app)
        shown = log.window()
        session.feed(*_events(118, 2))
        await settle(pilot, session)
        rows, _ = log.rows()
        first, end = log.window()
        # what the reader looks at stays put (its bottom row: the bouquets grew,
        # and a row of the players' table may have wrapped, so the log is shorter)
        assert end == shown[1] and first == end - log.content_size.height
        assert log.newer() == newer + 4
        await pilot.press("up", "up", "down")
        await pilot.pause()
        assert log.window()[0] == first - 1
        await pilot.press("end")
        await pilot.pause()
        assert log.following and log.window()[1] == len(rows)
        assert "newer — End" not in screen_text(app)
        await pilot.press("home")
        await pilot.pause()
        assert log.window()[0] == 0


# -- 2. what changed ------------------------------------------------------------------------


async def test_2_what_changed_since_your_turn_is_marked_until_your_turn_ends() -> None:
    """The festival card others added, the bouquets that grew and the scores
    that moved since Ada's last turn are marked; once her turn ends, they clear."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        view = _view(app)
        blue = next(row for row in view.festival.rows if row.colour == "blue")
        assert blue.moved and blue.new == 1  # Bot 3 added ●4
        assert view.festival.secret_moved  # Bot 4 added a secret card
        players = {row.name: row for row in view.players}
        assert players["Cy"].score_delta == 3 and players["Cy"].gained[1]  # kept ●2, gave ♥3
        assert players["Bot 3"].score_delta == 5  # gave Ada ▲3
        assert players["Ada"].gained[3] and players["Ada"].score_delta == 0  # got ▲3
        # Ada plays both cards; Bot 3's turn starts: a fresh baseline, nothing marked
        session.feed(
            wire.Event(match=MATCH, seq=98, event=wire.CardKept(seat=1, card="orange-4", points=1)),
            wire.Event(
                match=MATCH, seq=99, event=wire.CardDrawn(seat=1, card="purple-3", deck_count=20)
            ),
            wire.Event(
                match=MATCH,
                seq=100,
                event=wire.CardAddedFaceUp(
                    seat=1, card="purple-3", ranking=("purple", "blue", "orange", "pink")
                ),
            ),
        )
        await settle(pilot, session)
        assert _view(app).players[1].score_delta == 1  # her own keep, during her turn
        session.feed(wire.Event(match=MATCH, seq=101, event=wire.TurnStarted(seat=2, turn=19)))
        await settle(pilot, session)
        view = _view(app)
        assert all(row.score_delta == 0 and not any(row.gained) for row in view.players)
        assert not any(row.moved or row.new for row in view.festival.rows)


async def test_2_a_spectator_sees_the_last_turn_marked() -> None:
    """Watching: what the current turn changed is marked, from its start."""
    script = [
        *fakes.spectator(),
        wire.Event(match=MATCH, seq=80, event=wire.CardKept(seat=1, card="pink-4", points=2)),
        wire.Event(match=MATCH, seq=81, event=wire.TurnStarted(seat=2, turn=15)),
        wire.Event(match=MATCH, seq=82, event=wire.CardDrawn(seat=2, card=None, deck_count=27)),
        wire.Event(
            match=MATCH, seq=83, event=wire.CardGiven(seat=2, to_seat=1, card="orange-3", points=5)
        ),
    ]
    async with running(script) as (app, _pilot, _session):
        players = _view(app).players
        assert players[2].score_delta == 5 and players[1].gained[3]
        assert players[1].score_delta == 0  # Ada's keep was the turn before


# -- 3. absent players -------------------------------------------------------------------------


async def test_3_an_absent_player_counts_down_then_a_bot_plays_for_them() -> None:
    """Cy drops: the countdown to the stand-in shows and runs; then 'a bot plays
    for Cy', the stand-in's moves marked in the log; then Cy is back."""
    now = [1000.0]
    app, session = _away_app(now, turn_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, session)
        text = screen_text(app)
        assert "Cy is away: a bot takes over in 24 s." in text
        # the log tells it once; the one live countdown is the players' note
        assert "Cy is away: a bot plays for them unless they come back" in _log_text(app)
        now[0] += 10
        await until(pilot, lambda: "a bot takes over in 14 s" in screen_text(app), timeout=3)
        session.feed(
            wire.MatchUpdate(match=fakes.summary(seats=fakes._seats_with(stand_in=True))),
            wire.Event(
                match=MATCH,
                seq=93,
                event=wire.CardKept(seat=0, card="blue-2", points=0),
                by="stand_in",
            ),
        )
        await settle(pilot, session)
        text = screen_text(app)
        assert "A bot plays for Cy for now." in text and "Cy (bot)" in text
        assert (
            " s left" not in text and "timer " not in text
        )  # a bot plays: Cy's timer means nothing now
        assert "bot for Cy  Cy kept ●2 (+0)." in text
        session.feed(wire.MatchUpdate(match=fakes.summary(seats=fakes._seats_with(connected=True))))
        await settle(pilot, session)
        assert "Cy is back." in screen_text(app)
        assert "bot takes over" not in screen_text(app)


async def test_3_a_timed_out_move_says_so_to_the_player() -> None:
    """Ada's timer ran out: the log says the server kept the card for her."""
    async with running(fakes.timed_out()) as (app, _pilot, _session):
        assert " time ran out  You kept ▲4 (+1)." in screen_text(app)


async def test_3_a_timed_out_move_of_another_is_marked_for_everyone() -> None:
    """A spectator sees Cy's timed-out move marked too."""
    script = [
        *fakes.spectator(),
        wire.Event(
            match=MATCH,
            seq=80,
            event=wire.CardKept(seat=0, card="blue-2", points=0),
            by="timer",
        ),
    ]
    async with running(script) as (app, _pilot, _session):
        assert " time ran out  Cy kept ●2 (+0)." in screen_text(app)


# -- 4. every timer for everyone -----------------------------------------------------------------


async def test_4_everyone_sees_whose_timer_runs() -> None:
    """A turn_timer for Cy, who is away: Ada (waiting) sees it, counting down,
    once — in the note under the players' table, since it runs out before the
    stand-in's grace would (and not also beside "Waiting for Cy")."""
    now = [1000.0]
    app, session = _away_app(now)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, session)
        text = screen_text(app)
        assert "Cy is away: turn timer 20 s left." in text
        assert "Waiting for Cy…" in text and "Cy…  timer" not in text
        assert "Cy away" in text
        now[0] += 5
        await until(pilot, lambda: "turn timer 15 s left" in screen_text(app), timeout=3)
        # Cy's move ends the turn's first decision: no stale timer shows
        session.feed(
            wire.Event(match=MATCH, seq=93, event=wire.CardKept(seat=0, card="blue-2", points=0)),
            wire.Event(match=MATCH, seq=94, event=wire.TurnStarted(seat=2, turn=18)),
        )
        await settle(pilot, session)
        assert "s left" not in screen_text(app) and "timer " not in screen_text(app)


async def test_4_a_spectator_sees_the_timer() -> None:
    """Watching a timed match: the acting seat's seconds show."""
    script = [
        *fakes.spectator(),
        wire.TurnTimer(match=MATCH, seq=79, timers=(wire.SeatTimer(seat=1, seconds=42.0),)),
    ]
    async with running(script) as (app, _pilot, _session):
        assert "Waiting for Ada…  timer 42 s" in screen_text(app)


async def test_4_a_spectator_watches_again_after_a_lost_connection_and_old_timers_go() -> None:
    """Issue 30: a spectator is not put back by the server, so on Reconnected
    the app sends ``watch`` again; the snapshot that answers drops the timers
    from before (none runs unless a ``turn_timer`` follows it)."""
    script = [
        *fakes.spectator(),
        wire.TurnTimer(match=MATCH, seq=79, timers=(wire.SeatTimer(seat=1, seconds=42.0),)),
    ]
    async with running(script) as (app, pilot, session):
        assert "timer 42 s" in screen_text(app)
        session.feed(ConnectionLost("1006"), Reconnected())
        await until(pilot, lambda: session.requests[-1][0] == "watch", what="watch again")
        assert session.requests[-1] == ("watch", (MATCH,), {"join_code": None})
        session.feed(*fakes.spectator())
        await settle(pilot, session)
        assert "timer " not in screen_text(app) and not app.follow.signals.seconds()


# -- 5. coming back ----------------------------------------------------------------------------


def _page(match: str, from_seq: int, events: tuple[wire.GameEvent, ...]) -> wire.ReplayPage:
    return wire.ReplayPage(
        match=match, status="running", ruleset="standard", from_seq=from_seq, events=events
    )


async def test_5_a_client_that_comes_back_fills_its_log_from_the_record() -> None:
    """A snapshot at seq 79 with an empty log: the app reads the record and
    tells what happened, under a heading, before what comes next."""
    record = (
        wire.TurnStarted(seat=2, turn=14),
        wire.CardDrawn(seat=2, card=None, deck_count=30),
        wire.CardKept(seat=2, card="purple-4", points=0),
    )

    filler = tuple(wire.CardDrawn(seat=2, card=None, deck_count=60) for _ in range(76))

    def replay(match: str, join_code: str | None = None, from_seq: int = 1) -> object:
        assert match == MATCH
        if from_seq == 1:  # two pages: events 1–76 (told in no line), then 77–79
            return msgspec.structs.replace(_page(match, 1, filler), next_seq=77)
        return _page(match, from_seq, record)

    script = fakes.mid_game()[:3]
    async with running(script, replay=replay) as (app, pilot, session):
        await until(pilot, lambda: "Bot 3 kept ◆4 (+0)." in _log_text(app))
        assert ("replay", (MATCH,), {"join_code": None, "from_seq": 1}) in session.requests
        assert ("replay", (MATCH,), {"join_code": None, "from_seq": 77}) in session.requests
        log = [line.plain for line in app.follow.log]
        assert log[0].startswith("— earlier in this match")
        session.feed(*fakes.mid_game()[3:5])
        await settle(pilot, session)
        log = [line.plain for line in app.follow.log]
        assert log.index("Bot 3 kept ◆4 (+0).") < log.index("You kept ♥4 (+2).")
        assert "Bot 3 kept ◆4 (+0)." in screen_text(app)


async def test_5_the_record_shows_who_played_for_whom() -> None:
    """A move the stand-in made and one the timer made are badged in the log
    filled from the record (`replay.by`), as they were live; the others not."""
    record = (
        wire.TurnStarted(seat=2, turn=14),
        wire.CardDrawn(seat=2, card=None, deck_count=30),
        wire.CardKept(seat=2, card="purple-4", points=0),
        wire.CardDrawn(seat=2, card=None, deck_count=29),
        wire.CardGiven(seat=2, to_seat=0, card="blue-2", points=2),
    )

    filler = tuple(wire.CardDrawn(seat=2, card=None, deck_count=60) for _ in range(74))

    def replay(match: str, join_code: str | None = None, from_seq: int = 1) -> object:
        if from_seq == 1:  # events 1–74, unmarked (the page sends no `by`), then 75–79
            return msgspec.structs.replace(_page(match, 1, filler), next_seq=75)
        marks = (None, None, "stand_in", None, "timer")
        return msgspec.structs.replace(_page(match, from_seq, record), by=marks)

    async with running(fakes.mid_game()[:3], replay=replay) as (app, pilot, _session):
        await until(pilot, lambda: "Bot 3 kept ◆4 (+0)." in _log_text(app))
        log = [line.plain for line in app.follow.log]
        kept = next(line for line in log if line.endswith("Bot 3 kept ◆4 (+0)."))
        assert "bot for Bot 3" in kept
        given = next(line for line in log if "gave" in line)
        assert "time ran out" in given and "bot for" not in given
        assert all(
            "bot for" not in line and "time ran out" not in line
            for line in log
            if line not in (kept, given)
        )


async def test_5_a_gap_is_filled_where_it_belongs() -> None:
    """A snapshot that skips events: the missing ones are told in their place."""
    skipped = (wire.TurnStarted(seat=3, turn=19), wire.CardKept(seat=3, card="pink-2", points=2))

    def replay(match: str, join_code: str | None = None, from_seq: int = 1) -> object:
        return _page(match, from_seq, skipped if from_seq == 98 else ())

    async with running(fakes.mid_game(), replay=replay) as (app, pilot, session):
        state = msgspec.structs.replace(
            examples_state(app), turn=19, active=3, to_act=(3,), legal_actions=()
        )
        session.feed(wire.Snapshot(match=MATCH, seq=99, seat=1, state=state))
        await until(pilot, lambda: "Bot 4 kept ♥2 (+2)." in _log_text(app))
        log = [line.plain for line in app.follow.log]
        assert log.index("You drew ▲4.") < log.index("Bot 4 kept ♥2 (+2).")
        assert ("replay", (MATCH,), {"join_code": None, "from_seq": 98}) in session.requests


def examples_state(app: TulipsApp) -> wire.State:
    """The state the app holds now."""
    assert app.follow.state is not None
    return app.follow.state


# -- 6. quitting ---------------------------------------------------------------------------------


async def test_6_q_asks_before_leaving_a_running_match() -> None:
    """Mid-match q asks; n stays at the table; q then y quits."""
    async with running(fakes.mid_game()) as (app, pilot, _session):
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuitScreen)
        assert "a bot plays your seat" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, TableScreen) and app.is_running
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_6_q_quits_at_once_when_no_match_runs() -> None:
    """In the lobby, and after the end, q quits without a question."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, _):
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running)
    async with running(fakes.ending()) as (app, pilot, _):
        assert isinstance(app.screen, FinalScreen)
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running)


# -- 7. after the match ---------------------------------------------------------------------------


async def test_7_the_table_shows_final_points_and_which_secret_cards_came_out() -> None:
    """Back at the table after the end: totals with majorities (63, not 43), and
    of Ada's secret cards those like a revealed one ticked."""
    script = fakes.ending()
    snapshot = script[2]
    assert isinstance(snapshot, wire.Snapshot)
    state = msgspec.structs.replace(snapshot.state, my_secret=("pink-4", "blue-2", "purple-3"))
    script[2] = msgspec.structs.replace(snapshot, state=state)
    async with running(script) as (app, pilot, _session):
        await pilot.press("t")
        await pilot.pause()
        players = {row.name: row for row in _view(app).players}
        assert players["Ada"].score == 63 and players["Bot 3"].score == 60
        assert all(row.score_delta == 0 for row in players.values())
        festival = _view(app).festival
        assert festival.mine_revealed == (True, True, False)
        text = screen_text(app)
        assert "Your secret cards: ♥4✓ ●2✓ ◆3" in text
        assert " 63 " in text


# -- 8. rematches ----------------------------------------------------------------------------------


async def test_8_another_players_rematch_is_offered_not_forced() -> None:
    """Bea opens the rematch: Ada stays on her scores, told she may join; r joins."""
    async with running(fakes.ending()) as (app, pilot, session):
        session.feed(wire.RematchOffer(match=MATCH, rematch="m9", host="Bea"))
        await settle(pilot, session)
        assert isinstance(app.screen, FinalScreen)
        assert "Bea wants a rematch — press r to join." in screen_text(app)
        assert ("play_again", (), {}) not in session.requests
        await pilot.press("r")
        await pilot.pause()
        assert ("play_again", (), {}) in session.requests


async def test_8_a_spectator_is_not_offered_a_rematch() -> None:
    """Watching to the end: no Play again, and a does nothing."""
    script = fakes.ending()
    script[0] = wire.Joined(match=MATCH, seat=None, host=False)
    snapshot = script[2]
    assert isinstance(snapshot, wire.Snapshot)
    state = msgspec.structs.replace(snapshot.state, my_secret=())
    script[2] = msgspec.structs.replace(snapshot, seat=None, state=state)
    async with running(script) as (app, pilot, session):
        assert isinstance(app.screen, FinalScreen)
        assert "Play again" not in screen_text(app) and "play again" not in screen_text(app)
        await pilot.press("a")
        await pilot.pause()
        assert ("play_again", (), {}) not in session.requests


async def test_8_a_guest_in_the_waiting_room_is_told_who_starts() -> None:
    """Not the host: 'waiting for Bea, the host'; who has not come yet is named."""
    seats = (
        wire.SeatInfo(seat=0, kind="human", name="Bea", connected=True),
        wire.SeatInfo(seat=1, kind="human", name="Ada", connected=True),
        wire.SeatInfo(seat=2, kind="human", name="Cy", connected=False),
    )
    script = [
        wire.Joined(match=MATCH, seat=1, host=False),
        wire.MatchUpdate(match=fakes.summary("open", seats=seats, host="Bea")),
    ]
    async with running(script) as (app, pilot, session):
        text = screen_text(app)
        assert "Not here yet: Cy." in text
        said = prompt_text(_view(app).actions).plain
        assert "Waiting for players; then Bea, the host, starts the match." in said
        await pilot.press("s")
        assert ("start", (), {}) not in session.requests
        here = (*seats[:2], msgspec.structs.replace(seats[2], connected=True))
        session.feed(wire.MatchUpdate(match=fakes.summary("open", seats=here, host="Bea")))
        await settle(pilot, session)
        said = prompt_text(_view(app).actions).plain
        assert "Everyone is here: waiting for Bea, the host, to start." in said
        assert "Not here yet" not in said


# -- 9. the lobby ---------------------------------------------------------------------------------


async def test_9_the_lobby_shows_full_running_and_finished_matches() -> None:
    """An open match with every seat taken says full; joining it says so."""
    full = fakes.summary(
        "open",
        seats=(
            wire.SeatInfo(seat=0, kind="human", name="Bea", connected=True),
            wire.SeatInfo(seat=1, kind="human", name="Cy", connected=True),
        ),
        name="Full house",
        match="m0",
        host="Bea",
    )
    refusal = wire.Error(id=3, code="seat_taken", message="every seat is taken")
    matches = [full, *fakes.lobby_matches()]
    async with running([], matches=matches, join=lambda *a, **k: refusal) as (app, pilot, _):
        text = screen_text(app)
        row = next(line for line in text.splitlines() if "Full house" in line)
        assert "full" in row and "open" not in row
        assert "running" in text and "finished" in text
        await pilot.press("enter")
        await until(pilot, lambda: "That match is full: press w to watch it." in _notes(app))


async def test_a_match_whose_node_is_not_answering_shows_as_unavailable() -> None:
    """In a cluster, a match whose node is down is listed (not gone) as unavailable."""
    away = fakes.summary("running", name="Node three", match="m9", node="n3", available=False)
    async with running([], matches=[away, *fakes.lobby_matches()]) as (app, _pilot, _):
        row = next(line for line in screen_text(app).splitlines() if "Node three" in line)
        assert "unavailable" in row and "running" not in row


async def test_9_joining_a_running_match_says_it_started() -> None:
    """Enter on a running match the player has no seat in: 'already started — w to watch'."""
    refusal = wire.Error(id=3, code="match_not_open", message="started")
    async with running([], matches=fakes.lobby_matches(), join=lambda *a, **k: refusal) as (
        app,
        pilot,
        _,
    ):
        await pilot.press("down", "enter")
        await until(
            pilot, lambda: "That match has already started: press w to watch it." in _notes(app)
        )


# -- 10. small windows ------------------------------------------------------------------------


async def test_10_a_small_window_says_how_big_it_must_be_until_it_grows() -> None:
    """60×16 and 40×12: one plain sentence; at 80×24 the table is back; 39
    columns are too few, and from 40 to 79 the table is stacked (a phone's)."""
    async with running(fakes.mid_game(), size=(60, 16)) as (app, pilot, _session):
        text = screen_text(app)
        assert "This window is 60×16. Make it at least 80×24" in text.replace("\n", " ")
        assert "Festival" not in text and "Keep it" not in text
        await pilot.resize_terminal(40, 12)
        await pilot.pause()
        assert "40×12" in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        text = screen_text(app)
        assert "Make it at least" not in text and "Keep it" in text and "Festival" in text
        await pilot.press("question_mark")  # other screens follow the size too
        await pilot.press("question_mark")
        await pilot.resize_terminal(39, 24)
        await pilot.pause()
        assert "Make it at least 40×24 to see the table (or 80×24" in " ".join(
            screen_text(app).split()
        )
        await pilot.resize_terminal(79, 24)  # from 40 columns: the narrow layout (a phone)
        await pilot.pause()
        text = screen_text(app)
        assert "Make it at least" not in text and "Keep it" in text and "Log" in text


async def test_the_bots_always_leave_the_host_a_seat() -> None:
    """Issue 30, "a match you do not sit in": 3 seats with the default 3 bots
    made a bot-only match. The form offers at most seats - 1 bots and lowers
    the count when the seats go down; the match created has the host's seat."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, CreateMatchScreen)
        bots = app.screen.query_one("#bots", Select)
        assert bots.value == 3
        app.screen.query_one("#seats", Select).value = 3
        await pilot.pause()
        assert bots.value == 2
        offered = [value for _, value in bot_count_options(3)]
        assert offered == [0, 1, 2]
        app.screen.query_one("#seats", Select).value = 2
        await pilot.pause()
        assert bots.value == 1
        app.screen.query_one("#seats", Select).value = 6  # more seats: the count stays
        await pilot.pause()
        assert bots.value == 1
        app.screen.query_one("#seats", Select).value = 3
        await pilot.pause()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any(kind == "create_match" for kind, _, _ in session.requests))
    (kwargs,) = [kw for kind, _, kw in session.requests if kind == "create_match"]
    assert kwargs["seats"] == 3 and [seat for seat, _ in kwargs["bots"]] == [2]


# -- 11. the first player ---------------------------------------------------------------------


async def test_11_the_host_picks_the_first_player() -> None:
    """The form offers chance or any seat; the pick goes into create_match."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, CreateMatchScreen)
        assert "First player" in screen_text(app) and "by chance" in screen_text(app)
        first = app.screen.query_one("#first", Select)
        labels = [label for label, _ in first_seat_options(4, 3)]
        assert labels == ["by chance", "Seat 1 (you)", "Bot 2", "Bot 3", "Bot 4"]
        first.value = 2
        app.screen.query_one("#seats", Select).value = 3  # fewer seats: the pick stays
        await pilot.pause()
        assert first.value == 2
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any(kind == "create_match" for kind, _, _ in session.requests))
    (kwargs,) = [kw for kind, _, kw in session.requests if kind == "create_match"]
    assert kwargs["first_seat"] == 2 and kwargs["seats"] == 3
