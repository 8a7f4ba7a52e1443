"""A finished match, event by event: its record fetched page by page, and a
position in it that steps forwards and back.

:func:`fetch_record` asks the server's ``replay`` for every page, following
``next_seq``, before anything is shown. :class:`Replay` folds the record's
events once, from an empty table (:func:`opening_table`), with the same
:func:`~client.tui.fold.apply_event` the live table uses, and keeps every
state on the way, so a step in either direction is a look-up. The table is
drawn by the table screen's own view functions (:func:`table_view`).

Invariants:

- ``1 <= position <= len(events)``: the table shown is the one after event
  ``position``, as the record's ``seat`` saw it (None: as a spectator did).
  A record without events cannot be shown (:class:`Replay` refuses it).
- Nothing here decides a rule. Counts, rankings and points come in the
  events; the two things they do not say are taken from where the server
  said them, or left out: the deck before the first draw is that draw's
  ``deck_count`` plus one, and the festival cards' numbers (``points``) only
  when the caller knows them from a snapshot of the same match — without
  them the festival shows no legend.
- Playing moves one event per tick; it stops by itself at the last event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from rich.text import Text

import protocol as wire

from .fold import apply_event
from .i18n import rich, t
from .narrate import describe
from .viewmodel import TableView, seat_names, table_view

__all__ = [
    "MAX_PAGES",
    "SPEEDS",
    "Record",
    "Replay",
    "ReplayLoadError",
    "ReplayView",
    "caption",
    "fetch_record",
    "opening_table",
    "seat_count",
]

#: Most pages one record may take (a match has a few hundred events; a page holds 400).
MAX_PAGES = 1000
#: Playing speeds, in events a second.
SPEEDS: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
DEFAULT_SPEED = 2  # 4 events a second: a turn of five events in about a second
LOG_LINES = 400

#: Stands in for the festival cards' numbers when nobody said them; never shown.
NO_POINTS = wire.Points(
    giving_bonus=(0, 0, 0, 0),
    bouquet=(0, 0, 0, 0),
    majority=((0, 0, 0), (0, 0, 0), (0, 0, 0)),
    majority_places=0,
)


class ReplayLoadError(Exception):
    """The server's pages do not make one record (an event skipped or repeated)."""


@dataclass(frozen=True, slots=True)
class Record:
    """Every event of a match, in order, as ``seat`` saw them (None: a spectator)."""

    match: str
    status: wire.MatchStatus
    ruleset: str
    seat: int | None
    events: tuple[wire.GameEvent, ...]
    #: each event's ``by``, aligned with ``events``; () when none has one
    by: tuple[wire.PlayedBy | None, ...] = ()
    #: the festival cards' points, if the server said them
    points: wire.Points | None = None

    def by_at(self, index: int) -> wire.PlayedBy | None:
        """Who chose the event at ``index`` if its seat's player did not."""
        return self.by[index] if index < len(self.by) else None


def page_marks(page: wire.ReplayPage) -> tuple[wire.PlayedBy | None, ...]:
    """Each of the page's events' ``by``, aligned with them (the page sends none
    when no event has one, and an older server never does)."""
    if len(page.by) == len(page.events):
        return page.by
    return (None,) * len(page.events)


class ReplayPages(Protocol):
    """What :func:`fetch_record` needs of a session: its ``replay`` request."""

    async def replay(
        self, match: str, *, join_code: str | None = None, from_seq: int = 1
    ) -> wire.ReplayPage: ...


async def fetch_record(
    session: ReplayPages,
    match: str,
    join_code: str | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> Record:
    """Every page of ``match``'s replay, joined; ``progress`` hears the number
    of events so far after each page. Raises what the session raises
    (:class:`client.sdk.RequestError` for a refusal), or
    :class:`ReplayLoadError` if the pages do not follow one another."""
    events: list[wire.GameEvent] = []
    by: list[wire.PlayedBy | None] = []
    from_seq = 1
    seat: int | None = None
    for number in range(MAX_PAGES):
        page = await session.replay(match, join_code=join_code, from_seq=from_seq)
        if page.match != match or page.from_seq != from_seq:
            raise ReplayLoadError(
                f"asked for {match!r} from event {from_seq}, "
                f"got {page.match!r} from event {page.from_seq}"
            )
        if number == 0:
            seat = page.seat  # the requester's own seat's view; None: a spectator's
        elif page.seat != seat:
            raise ReplayLoadError(f"the page from event {from_seq} is another seat's view")
        events.extend(page.events)
        by.extend(page_marks(page))
        if progress is not None:
            progress(len(events))
        if page.next_seq is None:
            marks = tuple(by) if any(by) else ()
            return Record(match, page.status, page.ruleset, seat, tuple(events), marks, page.points)
        if not page.events or page.next_seq != from_seq + len(page.events):
            raise ReplayLoadError(
                f"the page from event {from_seq} holds {len(page.events)} events "
                f"but says the next is {page.next_seq}"
            )
        from_seq = page.next_seq
    raise ReplayLoadError(f"more than {MAX_PAGES} pages")


# -- the table before the first event ------------------------------------------------------


def seat_count(events: Sequence[wire.GameEvent], summary: wire.MatchSummary | None) -> int:
    """How many seats the match has, from its summary or else its events."""
    if summary is not None:
        return len(summary.seats)
    count = 0
    for event in events:
        seat = getattr(event, "seat", None)
        if isinstance(seat, int):
            count = max(count, seat + 1)
        if isinstance(event, wire.OpeningRevealed):
            count = max(count, len(event.bouquets))
        elif isinstance(event, wire.MatchEnded):
            count = max(count, len(event.scoring.players))
    return count


def opening_table(
    events: Sequence[wire.GameEvent], seats: int, points: wire.Points | None
) -> wire.State:
    """The table before the first event: nothing dealt, everyone still to
    choose their opening (R11). The deck holds what the first draw left plus
    that card (0 if nobody drew); nothing says how many cards were removed
    unseen (R4), so ``removed_count`` is 0 — no screen shows it."""
    first_draw = next((e for e in events if isinstance(e, wire.CardDrawn)), None)
    return wire.State(
        phase="opening",
        turn=0,
        first_seat=0,
        to_act=tuple(range(seats)),
        festival=(),
        totals={colour: 0 for colour in wire.COLOURS},
        ranking=(),
        deck_count=first_draw.deck_count + 1 if first_draw is not None else 0,
        secret_count=0,
        removed_count=0,
        seats=tuple(
            wire.SeatState(seat=s, bouquet=(), keeping=0, giving=0, opening_done=False)
            for s in range(seats)
        ),
        points=points if points is not None else NO_POINTS,
    )


# -- the current event in words ---------------------------------------------------------------


def caption(
    event: wire.GameEvent,
    names: Mapping[int, str],
    me: int | None,
    by: wire.PlayedBy | None = None,
) -> Text:
    """What ``event`` was, in words — also the events the log leaves out
    (another seat's deal or draw, whose cards nobody else sees)."""
    said = describe(event, names, me, by)
    if said is not None:
        return said
    seat = getattr(event, "seat", None)
    if seat is None:
        return Text(t("replay.unknown"), style="dim")
    who = Text(
        t("who.you") if seat == me else names.get(seat, t("seat.numbered", n=seat + 1)),
        style="bold",
    )
    if isinstance(event, wire.CardDrawn):
        return rich("replay.drawn", who=who, count=event.deck_count)
    if isinstance(event, wire.CardsDealt):
        return rich("replay.dealt", who=who)
    return Text(t("replay.unknown"), style="dim")


# -- stepping ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayView:
    """The replay panel: where we are, what happened, and whether it plays."""

    position: int
    total: int
    turn: int
    turns: int
    phase: wire.Phase
    caption: Text
    playing: bool
    speed: float
    spectator: bool
    typing: str | None = None  # the turn number being typed after ``t``
    note: str | None = None  # a word about the last key (a turn that does not exist)


class Replay:
    """A record folded into every table it passed through, and a position in it."""

    def __init__(
        self,
        record: Record,
        summary: wire.MatchSummary | None = None,
        points: wire.Points | None = None,
    ) -> None:
        if not record.events:
            raise ValueError(f"match {record.match!r} has no events to replay")
        self.record = record
        self.summary = summary
        self.legend = points is not None
        events = record.events
        seats = seat_count(events, summary)
        self.names = seat_names(summary, seats)
        state = opening_table(events, seats, points)
        self.states: list[wire.State] = []
        self.lines: list[Text | None] = []
        for index, event in enumerate(events):
            state = apply_event(state, event, record.seat)
            self.states.append(state)
            self.lines.append(describe(event, self.names, record.seat, record.by_at(index)))
        #: positions (1-based) of each ``turn_started``, by turn number
        self.turn_at: dict[int, int] = {
            e.turn: i + 1 for i, e in enumerate(events) if isinstance(e, wire.TurnStarted)
        }
        self.turn_starts = sorted(self.turn_at.values())
        self.position = 1
        self.playing = False
        self.speed_index = DEFAULT_SPEED

    # -- where we are ------------------------------------------------------------------------

    @property
    def total(self) -> int:
        """How many events the match has."""
        return len(self.record.events)

    @property
    def state(self) -> wire.State:
        """The table after the current event."""
        return self.states[self.position - 1]

    @property
    def event(self) -> wire.GameEvent:
        """The current event."""
        return self.record.events[self.position - 1]

    @property
    def turns(self) -> int:
        """The last turn's number."""
        return max(self.turn_at, default=0)

    @property
    def speed(self) -> float:
        """Events a second while playing."""
        return SPEEDS[self.speed_index]

    # -- moving --------------------------------------------------------------------------------

    def go(self, position: int) -> bool:
        """Move to ``position`` (kept within the record); whether it moved."""
        position = max(1, min(self.total, position))
        moved = position != self.position
        self.position = position
        return moved

    def step(self, delta: int) -> bool:
        """``delta`` events forwards (or back, if negative)."""
        return self.go(self.position + delta)

    def next_turn(self) -> bool:
        """To the start of the next turn, or the end if none is left."""
        later = [p for p in self.turn_starts if p > self.position]
        return self.go(later[0] if later else self.total)

    def previous_turn(self) -> bool:
        """To the start of this turn, or of the one before if already there;
        from the first turn's start, to the first event."""
        earlier = [p for p in self.turn_starts if p < self.position]
        return self.go(earlier[-1] if earlier else 1)

    def go_to_turn(self, turn: int) -> bool:
        """To the start of turn ``turn``; False (and no move) if it has none."""
        position = self.turn_at.get(turn)
        if position is None:
            return False
        self.go(position)
        return True

    # -- playing ---------------------------------------------------------------------------------

    def toggle(self) -> None:
        """Play or pause; playing from the last event starts again from the first."""
        if not self.playing and self.position == self.total:
            self.position = 1
        self.playing = not self.playing

    def faster(self, steps: int = 1) -> None:
        """Change the speed by ``steps`` (negative: slower), within :data:`SPEEDS`."""
        self.speed_index = max(0, min(len(SPEEDS) - 1, self.speed_index + steps))

    def tick(self) -> bool:
        """One step of playing; pauses at the last event. Whether it moved."""
        if not self.playing:
            return False
        moved = self.step(1)
        if self.position == self.total:
            self.playing = False
        return moved

    # -- views -------------------------------------------------------------------------------------

    def table(self) -> TableView:
        """The table as it was, drawn by the table screen's view functions.
        Connections are today's, not the match's: nobody is shown away."""
        log = [line for line in self.lines[: self.position] if line is not None]
        view = table_view(self.state, self.summary, self.record.seat, log[-LOG_LINES:], online=True)
        festival = view.festival
        if festival is not None and not self.legend:
            festival = replace(festival, legend=False)
        players = tuple(replace(row, connected=True) for row in view.players)
        return replace(view, festival=festival, players=players)

    def view(self, typing: str | None = None, note: str | None = None) -> ReplayView:
        """The replay panel's view now."""
        state = self.state
        return ReplayView(
            position=self.position,
            total=self.total,
            turn=state.turn,
            turns=self.turns,
            phase=state.phase,
            caption=caption(
                self.event, self.names, self.record.seat, self.record.by_at(self.position - 1)
            ),
            playing=self.playing,
            speed=self.speed,
            spectator=self.record.seat is None,
            typing=typing,
            note=note,
        )
