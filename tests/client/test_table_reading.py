"""The table reads like the real one (issue "At the table"), at 80×24: the
bouquets as the cards they hold, a whole round of the log on screen at once,
the chat in a pane of its own, one countdown at a time for an absent player,
columns that stay put, and the panels' own colours under their text."""

from __future__ import annotations

import io
import re

import msgspec
import pytest
from rich.console import Console
from rich.segment import Segment

import protocol as wire
from client.tui import i18n
from client.tui.screens.help import _KEYS, _key_table
from client.tui.widgets.bouquets import PlayersPanel
from client.tui.widgets.log import ChatLog, EventLog

from . import fakes
from .fakes import MATCH
from .screens import running, screen_text, settle


def _event(seq: int, event: wire.GameEvent) -> wire.Event:
    return wire.Event(match=MATCH, seq=seq, event=event)


def _region_text(app: object, widget: EventLog | PlayersPanel) -> list[str]:
    """The screen's rows inside the widget's content region."""
    region = widget.content_region
    rows = screen_text(app).splitlines()  # type: ignore[arg-type]
    return [row[region.x : region.right] for row in rows[region.y : region.bottom]]


def _round() -> list[wire.Event]:
    """After mid_game: Ada finishes turn 18 (keep, draw, give), then Bots 3 and
    4 and Cy play turns 19–21 (a face-up add, a secret add, keeps and a give)."""
    seq = iter(range(98, 200))

    def ev(event: wire.GameEvent) -> wire.Event:
        return _event(next(seq), event)

    deck = iter(range(20, 0, -1))
    return [
        ev(wire.CardKept(seat=1, card="orange-4", points=1)),
        ev(wire.CardDrawn(seat=1, card="blue-3", deck_count=next(deck))),
        ev(wire.CardGiven(seat=1, to_seat=2, card="blue-3", points=5)),
        ev(wire.TurnStarted(seat=2, turn=19)),
        ev(wire.CardDrawn(seat=2, card=None, deck_count=next(deck))),
        ev(wire.CardKept(seat=2, card="pink-3", points=2)),
        ev(wire.CardDrawn(seat=2, card=None, deck_count=next(deck))),
        ev(
            wire.CardAddedFaceUp(
                seat=2, card="pink-4", ranking=("purple", "blue", "pink", "orange")
            )
        ),
        ev(wire.TurnStarted(seat=3, turn=20)),
        ev(wire.CardDrawn(seat=3, card=None, deck_count=next(deck))),
        ev(wire.CardAddedSecret(seat=3, card=None, secret_count=13)),
        ev(wire.CardDrawn(seat=3, card=None, deck_count=next(deck))),
        ev(wire.CardGiven(seat=3, to_seat=0, card="orange-2", points=3)),
        ev(wire.TurnStarted(seat=0, turn=21)),
        ev(wire.CardDrawn(seat=0, card=None, deck_count=next(deck))),
        ev(wire.CardKept(seat=0, card="purple-3", points=0)),
        ev(wire.CardDrawn(seat=0, card=None, deck_count=next(deck))),
        ev(wire.CardKept(seat=0, card="blue-2", points=0)),
    ]


async def test_every_bouquet_shows_its_cards_grouped_by_colour() -> None:
    """The snapshot's bouquets (PROTOCOL.md), each player's own line, Ada's
    included: colour by colour (purple, blue, pink, orange), highest first."""
    i18n.set_language("en")
    async with running(fakes.mid_game()[:3]) as (app, _pilot, _session):
        rows = _region_text(app, app.table_screen.query_one(PlayersPanel))
    expected = {
        "Cy": "◆44 ●433 ♥22",
        "Ada (you)": "♥3 ▲422",
        "Bot 3": "●2 ♥2",
        "Bot 4": "◆42 ●4 ♥2 ▲43",
    }
    for name, cards in expected.items():
        (row,) = [row for row in rows if f" {name} " in row]
        assert row.rstrip().endswith(" " + cards), rows


@pytest.mark.parametrize("lang", ["en", "de", "es"])
async def test_a_whole_round_of_four_players_is_on_screen_at_once(lang: str) -> None:
    """80×24, four players: from "Turn 18: your turn" to Cy's last keep of
    turn 21 — every line of the round is on screen, none scrolled away, in
    every language (German's and Spanish's longer lines included)."""
    i18n.set_language(lang)
    async with running(fakes.mid_game()) as (app, pilot, session):
        session.feed(*_round())
        await settle(pilot, session)
        log = app.table_screen.query_one("#moves", EventLog)
        shown = " ".join(" ".join(_region_text(app, log)).split())
        lines = [line.plain for line in app.follow.log]
    start = lines.index(i18n.t("log.turn.you", turn=18))
    the_round = lines[start:]
    assert len(the_round) == 5 + 3 + 3 + 3  # Ada's two draws show; the others' do not
    if lang == "en":
        assert the_round[-1] == "Cy kept ●2 (+0)."
    for line in the_round:
        assert " ".join(line.split()) in shown, (line, shown)


async def test_chat_has_its_own_pane_and_stays_there_after_forty_moves() -> None:
    """A chat line goes to the chat pane, not the moves; the moves' title
    counts it as unread; forty moves later it is still in the chat pane."""
    i18n.set_language("en")
    async with running(fakes.mid_game()) as (app, pilot, session):
        session.feed(wire.ChatLine(match=MATCH, seat=0, name="Cy", text="nice give!"))
        await settle(pilot, session)
        screen = app.table_screen
        moves = screen.query_one("#moves", EventLog)
        assert all("nice give!" not in line.plain for line in moves.lines)
        assert "nice give!" not in screen_text(app)
        assert "1 new in chat (m)" in screen_text(app)
        events = []
        for i in range(20):  # 40 moves: Bots 3 and 4 keep, turn after turn
            seat = 2 + i % 2
            events += [
                _event(98 + 3 * i, wire.TurnStarted(seat=seat, turn=19 + i)),
                _event(99 + 3 * i, wire.CardKept(seat=seat, card="blue-3", points=0)),
                _event(100 + 3 * i, wire.CardKept(seat=seat, card="pink-2", points=0)),
            ]
        session.feed(*events)
        await settle(pilot, session)
        await pilot.press("m")
        await pilot.pause()
        chat = screen.query_one("#chat", ChatLog)
        assert chat.display and not moves.display
        assert "Cy: nice give!" in screen_text(app)
        assert "new in chat" not in screen_text(app)  # seen now
        await pilot.press("m")
        await pilot.pause()
        assert moves.display and "Cy: nice give!" not in screen_text(app)


def _seconds(text: str) -> list[str]:
    return re.findall(r"\b\d+ s\b", text)


async def test_one_countdown_when_a_player_drops_while_their_turn_timer_runs() -> None:
    """Cy drops with 24 s of grace and 20 s on their turn timer: the timer
    runs out first, so it is the one countdown shown, and it says so."""
    i18n.set_language("en")
    async with running(fakes.away()) as (app, _pilot, _session):
        text = screen_text(app)
    assert _seconds(text) == ["20 s"], text
    assert "Cy is away: turn timer 20 s left." in text


async def test_one_countdown_when_the_grace_ends_first() -> None:
    """The same drop with only 10 s of grace: the stand-in comes first, so
    that countdown shows, and the turn timer's does not."""
    i18n.set_language("en")
    script = fakes.away()
    script[-2] = wire.MatchUpdate(
        match=fakes.summary(seats=fakes._seats_with(connected=False, bot_in=10.0))
    )
    async with running(script) as (app, _pilot, _session):
        text = screen_text(app)
    assert _seconds(text) == ["10 s"], text
    assert "Cy is away: a bot takes over in 10 s." in text


async def test_the_players_columns_keep_their_places_from_turn_to_turn() -> None:
    """Two states (Cy's turn 17, then Ada's turn 18 with bouquets grown and a
    timer running): the bouquets start in the same column on every row."""
    i18n.set_language("en")

    def starts(rows: list[str]) -> set[int]:
        """Where each row's bouquet starts: the first card mark after the points."""
        found = set()
        for row in rows:
            # the points, then a card mark (the last such: a dot may follow the seat's number)
            points = list(re.finditer(r" \d+ (?=[◆●♥▲–])", row))
            if points:
                found.add(points[-1].end())
        return found

    async with running(fakes.away()[:-2]) as (app, pilot, session):
        panel = app.table_screen.query_one(PlayersPanel)
        before = starts(_region_text(app, panel))
        session.feed(*fakes.mid_game()[16:])
        session.feed(
            wire.TurnTimer(match=MATCH, seq=97, timers=(wire.SeatTimer(seat=1, seconds=42.0),))
        )
        await settle(pilot, session)
        after = starts(_region_text(app, panel))
    assert len(before) == 1 and before == after, (before, after)


async def test_log_lines_are_drawn_on_the_panels_background() -> None:
    """Every segment of a log row carries the panel's background colour, not
    the terminal's default (no ragged black boxes in a browser)."""
    i18n.set_language("en")
    async with running(fakes.mid_game()) as (app, _pilot, _session):
        log = app.table_screen.query_one("#moves", EventLog)
        background = log.rich_style.bgcolor
        assert background is not None
        segments = [
            segment
            for y in range(log.content_size.height)
            for segment in log.render_line(y)
            if segment.text
        ]
    assert segments
    assert all(s.style is not None and s.style.bgcolor == background for s in segments)


def test_the_help_keys_are_key_caps_not_a_grey_column() -> None:
    """In the help's key table, only each key's own cap is reversed: the
    column's padding after a short key is not."""
    i18n.set_language("en")
    console = Console(width=80, file=io.StringIO(), color_system="truecolor")
    lines = console.render_lines(_key_table(_KEYS), pad=False)
    for (key, _), line in zip(_KEYS, lines, strict=True):
        reversed_cells = sum(
            Segment.get_line_length([s]) for s in line if s.style is not None and s.style.reverse
        )
        assert reversed_cells == len(f" {i18n.t(key)} "), (key, line)


@pytest.mark.parametrize("lang", ["en", "de", "es"])
async def test_the_players_panel_says_how_many_watch_all_match_long(lang: str) -> None:
    """Two spectators come during play: the players' panel title counts them
    (not only the waiting room and a log line); when they leave, it stops."""
    i18n.set_language(lang)
    async with running(fakes.mid_game()) as (app, pilot, session):
        panel = app.table_screen.query_one(PlayersPanel)
        assert panel.border_title == i18n.t("players.title")
        session.feed(wire.MatchUpdate(match=fakes.summary(spectators=2)))
        await settle(pilot, session)
        watching = i18n.tn("actions.spectators", 2, count=2)
        assert panel.border_title == f"{i18n.t('players.title')} · {watching}"
        assert watching in screen_text(app).splitlines()[panel.region.y]
        session.feed(wire.MatchUpdate(match=fakes.summary(spectators=0)))
        await settle(pilot, session)
        assert panel.border_title == i18n.t("players.title")


async def test_a_late_match_bouquet_keeps_to_one_row() -> None:
    """Sixteen cards in one bouquet (fifteen, and a blue 2 given during the
    script), 80×24: closed up (``◆4432●…``) rather than wrapped, so the
    players' panel keeps one row a player and the log its rows."""
    i18n.set_language("en")
    script = fakes.mid_game()
    snapshot = next(m for m in script if isinstance(m, wire.Snapshot))
    big = (*["purple-4", "purple-4", "purple-3", "purple-2"], *["blue-4"] * 4)
    big = (*big, *["pink-3"] * 4, *["orange-2"] * 3)
    seats = tuple(
        msgspec.structs.replace(p, bouquet=big) if p.seat == 0 else p for p in snapshot.state.seats
    )
    state = msgspec.structs.replace(snapshot.state, seats=seats)
    big_snapshot = msgspec.structs.replace(snapshot, state=state)
    script = [big_snapshot if m is snapshot else m for m in script]
    async with running(script) as (app, _pilot, _session):
        panel = app.table_screen.query_one(PlayersPanel)
        rows = _region_text(app, panel)
    (cy,) = [row for row in rows if " Cy " in row]
    assert cy.rstrip().endswith("◆4432●44442♥3333▲222"), rows
    assert len(rows) == 4, rows  # one row a player: none wrapped
