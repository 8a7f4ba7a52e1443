"""The answers to ``profile``, ``leaderboard`` and ``history``, and the
``ratings`` notice, built from a ledger (:mod:`.ledger`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import protocol as wire
from protocol.limits import MAX_RECENT_MATCHES

from .ledger import Change, Ledger, Record, Standing
from .model import STRENGTH_OF, Skill

__all__ = [
    "bot_name",
    "history_page",
    "leaderboard_page",
    "profile_card",
    "ratings_notice",
    "record_for",
]

#: the name of a removed player in the matches they played
REMOVED_NAME = "removed player"


def bot_name(strength: str) -> str:
    """How the leaderboard names the server's bots of one strength."""
    return f"Bots ({strength})"


def _change(change: Change) -> wire.RatingChange:
    return wire.RatingChange(
        seat=change.seat,
        player=change.ident,
        name=change.name,
        before=change.before.to_wire(),
        after=change.after.to_wire(),
    )


def ratings_notice(match_id: str, changes: list[Change]) -> wire.RatingsChanged:
    """The ``ratings`` notice of a match whose result was applied."""
    ordered = sorted(changes, key=lambda change: change.seat)
    return wire.RatingsChanged(match=match_id, changes=tuple(_change(c) for c in ordered))


def record_for(record: Record, ident: str, replayable: bool) -> wire.MatchRecord:
    """A finished match as ``ident``'s history lists it."""
    strength = STRENGTH_OF.get(ident)
    seats = []
    mine: int | None = None
    for seat in record.result.seats:
        is_bot = seat.bot is not None
        player = f"bot_{seat.bot}" if is_bot else seat.player
        if (strength is not None and seat.bot == strength) or (
            strength is None and seat.player == ident
        ):
            mine = seat.seat if mine is None else mine
        seats.append(
            wire.FinalSeat(
                seat=seat.seat,
                kind="bot" if is_bot else "human",
                name=seat.name if (is_bot or seat.player is not None) else REMOVED_NAME,
                player=player,
                strength=cast(Any, seat.bot),
                points=seat.points,
                rank=seat.place,
                counted=seat.seat in record.counted,
            )
        )
    change = record.changes.get(mine) if mine is not None else None
    return wire.MatchRecord(
        match=record.result.match,
        name=record.result.name,
        ruleset=record.result.ruleset,
        finished_at=record.result.finished,
        seats=tuple(seats),
        rated=bool(record.changes),
        open_box=record.result.open_box,
        seat=mine,
        rating=_change(change) if change is not None else None,
        replay=replayable,
    )


async def history_page(
    ledger: Ledger, ident: str, before: int | None, limit: int, replayable: Callable[[str], bool]
) -> wire.HistoryPage:
    """A page of ``ident``'s finished matches, latest first, with the cursor of the next."""
    records = await ledger.records(ident, before, limit + 1)
    more = len(records) > limit
    records = records[:limit]
    return wire.HistoryPage(
        matches=tuple(record_for(r, ident, replayable(r.result.match)) for r in records),
        next=records[-1].cursor if more and records else None,
    )


def _entry(standing: Standing, place: int) -> wire.LeaderboardEntry:
    strength = STRENGTH_OF.get(standing.ident)
    name = bot_name(strength) if strength is not None else (standing.name or REMOVED_NAME)
    return wire.LeaderboardEntry(
        rank=place,
        player=standing.ident,
        name=name,
        kind="bot" if strength is not None else "human",
        strength=cast(Any, strength),
        rating=standing.skill.to_wire(),
        matches=standing.matches,
        wins=standing.wins,
    )


async def leaderboard_page(
    ledger: Ledger, offset: int, limit: int, me: str
) -> wire.LeaderboardPage:
    """A page of the leaderboard, and the requester's own line."""
    standings, total = await ledger.board(offset, limit)
    entries = tuple(_entry(s, offset + i) for i, s in enumerate(standings, 1))
    you = next((entry for entry in entries if entry.player == me), None)
    if you is None:
        mine, place = await ledger.standing(me), await ledger.place(me)
        if mine is not None and place is not None:
            you = _entry(mine, place)
    return wire.LeaderboardPage(offset=offset, total=total, entries=entries, you=you)


async def profile_card(
    ledger: Ledger,
    ident: str,
    name: str,
    since: float | None,
    replayable: Callable[[str], bool],
) -> wire.ProfileCard:
    """``ident``'s card: totals, rating and place, and the latest matches."""
    strength = STRENGTH_OF.get(ident)
    totals = await ledger.totals(ident)
    standing = await ledger.standing(ident)
    recent = await ledger.records(ident, None, MAX_RECENT_MATCHES)
    rating: Skill | None = standing.skill if standing is not None else None
    return wire.ProfileCard(
        player=ident,
        name=bot_name(strength) if strength is not None else name,
        kind="bot" if strength is not None else "human",
        strength=cast(Any, strength),
        matches=totals.matches,
        wins=totals.wins,
        mean_points=None if totals.mean_points is None else round(totals.mean_points, 2),
        rated_matches=standing.matches if standing is not None else 0,
        rating=rating.to_wire() if rating is not None else None,
        rank=await ledger.place(ident) if standing is not None else None,
        since=since,
        recent=tuple(record_for(r, ident, replayable(r.result.match)) for r in recent),
    )
