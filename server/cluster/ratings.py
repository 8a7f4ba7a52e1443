"""A cluster's ratings: one shared fact in its Redis, the history per node.

The ratings, the leaderboard and the marks of applied matches live in the
cluster's store (:meth:`~.store.Store.apply_ratings`: one transaction per
result, so two nodes ending matches of one player at once lose no update, and
a match counts once whichever node applies it). Each node keeps the results of
its own matches in its SQLite file, for history and profiles
(:class:`~server.ratings.ledger.SqlLedger`): after a crash between the shared
ratings and the local record, the restart finds the mark and records the
changes it holds, without applying them again.
"""

from __future__ import annotations

import time

from ..match.results import MatchResult
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
from ..ratings.model import Skill, identity_of
from .entries import RatedChange, RatingEntry, RatingsApplied
from .store import Store

__all__ = ["ClusterLedger"]


def _standing(ident: str, entry: RatingEntry, name: str | None = None) -> Standing:
    return Standing(ident, Skill(entry.mu, entry.sigma), entry.matches, entry.wins, name)


def _changes(applied: RatingsApplied) -> list[Change]:
    return [
        Change(c.seat, c.ident, c.name, Skill(*c.before), Skill(*c.after)) for c in applied.changes
    ]


class ClusterLedger:
    """Shared ratings in the cluster's store; this node's results in its file."""

    def __init__(self, store: Store, local: SqlLedger) -> None:
        self.store = store
        self.local = local

    def applied(self, match_id: str) -> bool:
        """Whether this node recorded the match's result (the store may have
        applied its ratings already: :meth:`apply` finds that out)."""
        return self.local.applied(match_id)

    async def apply(self, result: MatchResult) -> list[Change] | None:
        """Apply the ratings in the store once, then record the result here."""
        if self.local.applied(result.match):
            return None
        idents = sorted({i for seat in result.seats if (i := identity_of(seat)) is not None})

        def compute(now: dict[str, RatingEntry]) -> tuple[RatingsApplied, dict[str, RatingEntry]]:
            changes, new = plan(
                result, lambda ident: _standing(ident, e) if (e := now.get(ident)) else None
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
            )
            entries = {
                ident: RatingEntry(s.skill.mu, s.skill.sigma, s.matches, s.wins)
                for ident, s in new.items()
            }
            return mark, entries

        mark, now_applied = await self.store.apply_ratings(result.match, idents, compute)
        changes = _changes(mark)
        await self.local.storage.write_sql(result_writes(result, changes, {}, time.time()))
        return changes if now_applied else None

    async def standing(self, ident: str) -> Standing | None:
        """The shared rating, with the name the cluster knows."""
        found = (await self.store.ratings([ident])).get(ident)
        if found is None:
            return None
        entries = await self.store.player_entries([ident])
        return _standing(ident, found, entries[ident].name if ident in entries else None)

    async def board(self, offset: int, limit: int) -> tuple[list[Standing], int]:
        """The shared leaderboard's page."""
        page, total = await self.store.board(offset, limit)
        entries = await self.store.player_entries([ident for ident, _ in page])
        return [
            _standing(ident, entry, entries[ident].name if ident in entries else None)
            for ident, entry in page
        ], total

    async def place(self, ident: str) -> int | None:
        """The place on the shared leaderboard."""
        return await self.store.board_place(ident)

    async def records(self, ident: str, before: int | None, limit: int) -> list[Record]:
        """This node's matches of the identity (each node keeps its own)."""
        return await self.local.records(ident, before, limit)

    async def totals(self, ident: str) -> Totals:
        """Over this node's matches."""
        return await self.local.totals(ident)


def _check(ledger: ClusterLedger) -> Ledger:
    return ledger  # the protocol is met
