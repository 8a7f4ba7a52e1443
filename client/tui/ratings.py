"""Ratings, profiles and match records in words: what the leaderboard, the
player card, the history and the final screen show of them.

The rating shown is the conservative one, the *ordinal* (μ − 3σ: the player
is at least this good, almost surely), with ``±σ`` beside it — the
uncertainty of the skill estimate, which shrinks as more matches are rated
(``27.4 ±2.1``). A rating change is the ordinal's (``+1.8, now 27.4``).
Dates are shown as ``YYYY-MM-DD`` in local time: the same in every language."""

from __future__ import annotations

import time

from rich.text import Text

import protocol as wire

from .i18n import t

__all__ = [
    "BOT_PREFIX",
    "change_text",
    "date_text",
    "delta_text",
    "rating_text",
    "record_players",
    "record_seat",
    "record_summary",
    "seat_player",
]

#: A bot strength's player id is this and its strength (``bot_hard``): PROTOCOL.md, profile.
BOT_PREFIX = "bot_"


def _number(value: float) -> str:
    """One decimal, with a true minus sign."""
    return f"{value:.1f}".replace("-", "−")


def rating_text(rating: wire.Rating | None) -> str:
    """``27.4 ±2.1`` (the ordinal and σ), or a dash before the first rated match."""
    if rating is None:
        return "–"
    return f"{_number(rating.ordinal)} ±{_number(rating.sigma)}"


def delta_text(change: wire.RatingChange) -> Text:
    """The ordinal's move, signed and coloured: ``+1.8`` green, ``−0.6`` red."""
    delta = change.after.ordinal - change.before.ordinal
    sign = "+" if delta >= 0 else ""
    style = "bold green" if delta > 0 else "bold red" if delta < 0 else ""
    return Text(sign + _number(delta), style=style)


def change_text(change: wire.RatingChange) -> Text:
    """``+1.8, now 27.4`` (the ordinal after the match)."""
    return Text.assemble(delta_text(change), t("rating.now", rating=_number(change.after.ordinal)))


def date_text(seconds: float) -> str:
    """A moment as a local date, ``2026-12-04``."""
    return time.strftime("%Y-%m-%d", time.localtime(seconds))


def record_seat(record: wire.MatchRecord) -> wire.FinalSeat | None:
    """The seat of the player whose history or card lists ``record``."""
    return next((s for s in record.seats if s.seat == record.seat), None)


def record_players(record: wire.MatchRecord) -> str:
    """The players of a finished match, best first: ``Ada 31, Bot 2 (bot) 27``."""
    seats = sorted(record.seats, key=lambda s: (s.rank, s.seat))
    return ", ".join(
        f"{s.name}{' ' + t('board.bot') if s.kind == 'bot' else ''} {s.points}" for s in seats
    )


def record_summary(record: wire.MatchRecord) -> wire.MatchSummary:
    """A finished match's summary from its record: what the replay viewer needs
    to name the seats."""
    seats = tuple(
        wire.SeatInfo(seat=s.seat, kind=s.kind, name=s.name, strength=s.strength)
        for s in record.seats
    )
    return wire.MatchSummary(
        match=record.match,
        name=record.name,
        status="finished",
        seats=seats,
        host=seats[0].name or "?",
        has_join_code=False,
        ruleset=record.ruleset,
        open_box=record.open_box,
        rated=record.rated,
    )


def seat_player(seat: wire.SeatInfo) -> str | None:
    """A bot seat's player id (its strength's); None for a person (a seat does
    not carry its player's id)."""
    if seat.kind == "bot" and seat.strength is not None:
        return BOT_PREFIX + seat.strength
    return None
