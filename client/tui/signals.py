"""What the table is told besides the match itself, and what it means now.

:class:`TableSignals` keeps, on the client's own clock:

- every seat's running turn timer (``turn_timer`` notices; the seat's own
  prompt's ``deadline`` too), so everyone sees everyone's timer;
- each absent player's countdown to the stand-in (``SeatInfo.bot_in``, the
  seconds left when the summary was sent) and whether a bot stands in;
- the rematch someone offered (``rematch``).

It also says, in words for the log, how presence changed between two
summaries ("Cy is away", "a bot plays for Cy", "Cy is back"). It decides
nothing about the game.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from rich.text import Text

import protocol as wire

from .i18n import rich

__all__ = ["TableSignals", "presence_lines"]


class TableSignals:
    """Timers, countdowns and the rematch offer of the match being followed."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.clear()

    def clear(self) -> None:
        """Forget everything (another match)."""
        #: seat -> when its turn timer runs out (client clock)
        self.timers: dict[int, float] = {}
        #: seat -> when a bot takes over for its absent player (client clock)
        self.bot_at: dict[int, float] = {}
        self.rematch: wire.RematchOffer | None = None

    def turn_timer(self, notice: wire.TurnTimer) -> None:
        """Every timer running now (the notice lists them all)."""
        now = self._clock()
        self.timers = {timer.seat: now + timer.seconds for timer in notice.timers}

    def own_deadline(self, seat: int, seconds: float | None) -> None:
        """The seat's own prompt said how long it has (or that it has no timer)."""
        if seconds is None:
            self.timers.pop(seat, None)
        else:
            self.timers[seat] = self._clock() + seconds

    def keep_timers_of(self, seats: tuple[int, ...]) -> None:
        """Only seats that must still act have a timer."""
        self.timers = {seat: at for seat, at in self.timers.items() if seat in seats}

    def summary(self, summary: wire.MatchSummary) -> None:
        """The countdowns the summary gives, from now."""
        now = self._clock()
        self.bot_at = {
            info.seat: now + info.bot_in for info in summary.seats if info.bot_in is not None
        }

    def _left(self, at: float) -> int:
        return max(0, round(at - self._clock()))

    def seconds(self) -> dict[int, int]:
        """Whole seconds left on each seat's turn timer."""
        return {seat: self._left(at) for seat, at in self.timers.items()}

    def bot_in(self) -> dict[int, int]:
        """Whole seconds until a bot plays for each absent player."""
        return {seat: self._left(at) for seat, at in self.bot_at.items()}

    @property
    def ticking(self) -> bool:
        """Whether anything on screen counts down."""
        return bool(self.timers or self.bot_at)


def presence_lines(
    old: wire.MatchSummary | None, new: wire.MatchSummary, names: Mapping[int, str], me: int | None
) -> list[Text]:
    """How the people at the table came and went between two summaries, in words."""
    if old is None or old.match != new.match:
        return []
    watching = _spectator_lines(old, new)
    if new.status == "open" and old.status == "open":
        return _seating_lines(old, new, me) + watching
    if new.status != "running":
        return watching
    before = {info.seat: info for info in old.seats}
    lines = []
    for info in new.seats:
        was = before.get(info.seat)
        if info.kind != "human" or was is None or was.kind != "human" or info.seat == me:
            continue
        who = Text(names.get(info.seat, "?"), style="bold")
        if info.stand_in and not was.stand_in:
            lines.append(rich("log.stand_in", style="italic", who=who))
        elif not info.connected and was.connected and not info.stand_in:
            if info.bot_in is not None:
                seconds = round(info.bot_in)
                lines.append(rich("log.away", style="italic", who=who, seconds=seconds))
            else:
                lines.append(rich("log.away_plain", style="italic", who=who))
        elif info.connected and not was.connected:
            lines.append(rich("log.back", style="italic", who=who))
    return lines + watching


def _spectator_lines(old: wire.MatchSummary, new: wire.MatchSummary) -> list[Text]:
    """How many watch now, if that changed."""
    count = new.spectators
    if count == old.spectators:
        return []
    return [rich("log.spectators", style="italic dim", number=count, count=count)]


def _seating_lines(old: wire.MatchSummary, new: wire.MatchSummary, me: int | None) -> list[Text]:
    """In the waiting room: who took a seat, and who left one."""
    lines = []
    for was, now in zip(old.seats, new.seats, strict=False):
        if now.seat == me or was.kind == now.kind == "empty":
            continue
        if was.kind == "empty" and now.kind == "human":
            who = Text(now.name or "?", style="bold")
            lines.append(rich("log.took_seat", style="italic", who=who, n=now.seat + 1))
        elif was.kind == "human" and now.kind == "empty":
            who = Text(was.name or "?", style="bold")
            lines.append(rich("log.left_seat", style="italic", who=who))
    return lines
