"""A cluster's ratings and history: one shared fact in its Redis.

The ratings, the leaderboard, the mark of every applied match with its
record (seats, points, places, the changes), each identity's totals and its
history live in the cluster's store, written by
:meth:`~.store.Store.apply_result` in one transaction per result: two nodes
ending matches of one player at once lose no update, and a match counts once,
rated or not, whichever node applies it. ``profile`` and ``history`` read them
there, so every node answers the same, and agrees with the leaderboard.

Each node also records its own matches' results in its SQLite file
(:class:`~server.ratings.ledger.SqlLedger`), after the shared write: that
record says whether this node is done with a result. After a crash between
the two, the restart submits the result again, finds the mark, and records
the changes it holds here — nothing shared is written again.

A record keeps the node that ran its match, so a replay asked of another
node is sent there (:meth:`ClusterLedger.played_on`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable
from typing import TypeVar

from protocol import ErrorCode

from ..errors import refused
from ..match.results import MatchResult, SeatResult
from ..ratings.ledger import (
    Change,
    Ledger,
    Record,
    SqlLedger,
    Standing,
    Totals,
    plan,
    result_writes,
)
from ..ratings.model import STRENGTH_OF, Skill, identity_of
from .entries import (
    RatedChange,
    RatingEntry,
    RatingsApplied,
    ResultRecord,
    SeatRecord,
    TotalsEntry,
)
from .store import ResultWrite, Store, StoreUnavailable

__all__ = ["BOT_HISTORY_KEPT", "ClusterLedger", "record_of", "result_record"]

#: The matches a bot strength's history lists (its latest): every bot match of
#: the cluster is one of them, and only its profile's recent matches read them.
BOT_HISTORY_KEPT = 1000
#: Matches whose node this node remembers from the history it read (for replays).
_PLAYED_ON_KEPT = 4096

_T = TypeVar("_T")


def _standing(ident: str, entry: RatingEntry, name: str | None = None) -> Standing:
    return Standing(ident, Skill(entry.mu, entry.sigma), entry.matches, entry.wins, name)


def _changes(applied: RatingsApplied) -> list[Change]:
    return [
        Change(c.seat, c.ident, c.name, Skill(*c.before), Skill(*c.after)) for c in applied.changes
    ]


def result_record(result: MatchResult, node: str) -> ResultRecord:
    """A finished match as the cluster's history keeps it."""
    return ResultRecord(
        name=result.name,
        ruleset=result.ruleset,
        open_box=result.open_box,
        rated=result.rated,
        finished=result.finished,
        node=node,
        seats=tuple(
            SeatRecord(s.seat, s.player, s.name, s.bot, s.points, s.tulips, s.place)
            for s in result.seats
        ),
    )


def record_of(cursor: int, mark: RatingsApplied) -> Record:
    """A mark with its record, as history and profiles list it."""
    record = mark.record
    assert record is not None, "only marks with a record are listed"
    result = MatchResult(
        mark.match,
        record.name,
        record.ruleset,
        record.open_box,
        record.rated,
        record.finished,
        tuple(
            SeatResult(s.seat, s.player, s.name, s.bot, s.points, s.tulips, s.place)
            for s in record.seats
        ),
    )
    changes = {change.seat: change for change in _changes(mark)}
    return Record(cursor, result, frozenset(changes), changes, record.node)


def _totals_after(result: MatchResult, now: dict[str, TotalsEntry]) -> dict[str, TotalsEntry]:
    """Every identity's totals with the match's seats added (one per seat, as a
    profile counts them: wins are first places, shared ones too, R23)."""
    after = dict(now)
    touched: set[str] = set()
    for seat in result.seats:
        ident = identity_of(seat)
        if ident is None:
            continue
        was = after.get(ident, TotalsEntry())
        after[ident] = TotalsEntry(
            was.matches + 1, was.wins + int(seat.place == 1), was.points + seat.points
        )
        touched.add(ident)
    return {ident: after[ident] for ident in touched}


def _holds(record: Record, ident: str) -> bool:
    """Whether the identity held a seat in the record's match."""
    strength = STRENGTH_OF.get(ident)
    return any(
        (seat.bot == strength) if strength is not None else (seat.player == ident)
        for seat in record.result.seats
    )


async def _answered(call: Awaitable[_T]) -> _T:
    """A read of the store, or ``cluster_unavailable`` for the client."""
    try:
        return await call
    except StoreUnavailable:
        raise refused(
            ErrorCode.CLUSTER_UNAVAILABLE,
            "the cluster's ratings and history cannot be read now (its store is"
            " unreachable); try again later",
        ) from None


class ClusterLedger:
    """Shared ratings and history in the cluster's store; this node's results
    in its file too."""

    def __init__(self, store: Store, local: SqlLedger, node: str) -> None:
        """``node``: this node's id, which the records of its matches keep."""
        self.store = store
        self.local = local
        self.node = node
        self._played_on: OrderedDict[str, str] = OrderedDict()

    def applied(self, match_id: str) -> bool:
        """Whether this node recorded the match's result (the store may have
        applied it already: :meth:`apply` finds that out)."""
        return self.local.applied(match_id)

    async def apply(self, result: MatchResult) -> list[Change] | None:
        """Apply the result in the store once (ratings, record, totals,
        histories), then record it here."""
        if self.local.applied(result.match):
            return None
        idents = sorted({i for seat in result.seats if (i := identity_of(seat)) is not None})

        def compute(ratings: dict[str, RatingEntry], totals: dict[str, TotalsEntry]) -> ResultWrite:
            changes, new = plan(
                result, lambda ident: _standing(ident, e) if (e := ratings.get(ident)) else None
            )
            mark = RatingsApplied(
                match=result.match,
                changes=tuple(
                    RatedChange(
                        c.seat,
                        c.ident,
                        c.name,
                        (c.before.mu, c.before.sigma),
                        (c.after.mu, c.after.sigma),
                    )
                    for c in changes
                ),
                record=result_record(result, self.node),
            )
            entries = {
                ident: RatingEntry(s.skill.mu, s.skill.sigma, s.matches, s.wins)
                for ident, s in new.items()
            }
            return ResultWrite(mark, entries, _totals_after(result, totals))

        kept = {ident: BOT_HISTORY_KEPT for ident in idents if ident in STRENGTH_OF}
        mark, now_applied = await self.store.apply_result(result.match, idents, compute, kept)
        changes = _changes(mark)
        await self.local.storage.write_sql(result_writes(result, changes, {}, time.time()))
        return changes if now_applied else None

    async def standing(self, ident: str) -> Standing | None:
        """The shared rating, with the name the cluster knows."""
        found = (await _answered(self.store.ratings([ident]))).get(ident)
        if found is None:
            return None
        entries = await _answered(self.store.player_entries([ident]))
        return _standing(ident, found, entries[ident].name if ident in entries else None)

    async def board(self, offset: int, limit: int) -> tuple[list[Standing], int]:
        """The shared leaderboard's page."""
        page, total = await _answered(self.store.board(offset, limit))
        entries = await _answered(self.store.player_entries([ident for ident, _ in page]))
        return [
            _standing(ident, entry, entries[ident].name if ident in entries else None)
            for ident, entry in page
        ], total

    async def place(self, ident: str) -> int | None:
        """The place on the shared leaderboard."""
        return await _answered(self.store.board_place(ident))

    async def records(self, ident: str, before: int | None, limit: int) -> list[Record]:
        """The identity's matches on every node, from the shared history."""
        filed = await _answered(self.store.history(ident, before, limit))
        records = [record_of(cursor, mark) for cursor, mark in filed]
        records = [record for record in records if _holds(record, ident)]
        for record in records:
            self._note(record.result.match, record.node)
        return records

    async def totals(self, ident: str) -> Totals:
        """Over the identity's matches on every node."""
        sums = await _answered(self.store.totals(ident))
        if sums is None or sums.matches <= 0:
            return Totals()
        return Totals(sums.matches, sums.wins, sums.points / sums.matches)

    # -- where a finished match was played --------------------------------------------------

    def played_on(self, match_id: str) -> str | None:
        """The node that ran a finished match, if this node read its record lately."""
        return self._played_on.get(match_id)

    async def look_up(self, match_id: str) -> str | None:
        """The node that ran a finished match, as its record in the store says
        (None: no record, or the store cannot be asked now)."""
        known = self._played_on.get(match_id)
        if known is not None:
            return known
        try:
            mark = await self.store.result(match_id)
        except StoreUnavailable:
            return None
        if mark is None or mark.record is None:
            return None
        self._note(match_id, mark.record.node)
        return mark.record.node

    def _note(self, match_id: str, node: str | None) -> None:
        if node is None:
            return
        self._played_on[match_id] = node
        self._played_on.move_to_end(match_id)
        while len(self._played_on) > _PLAYED_ON_KEPT:
            self._played_on.popitem(last=False)


def _check(ledger: ClusterLedger) -> Ledger:
    return ledger  # the protocol is met
