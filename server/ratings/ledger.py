"""Where ratings and applied results are kept: SQLite beside the matches
(:class:`SqlLedger`), or memory for a server without storage
(:class:`MemoryLedger`). A cluster keeps its ratings and history in Redis
(:mod:`server.cluster.ratings`), and each node its own matches' results here too.

A ledger is written by one owner only (:class:`~.book.RatingsBook`), one
result at a time: it reads the ratings a result changes, computes them
(:func:`plan`) and stores the result, its seats and the new ratings together —
one transaction — so a result is applied once or not at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..match.results import MatchResult, SeatResult
from ..storage import Storage
from .model import DEFAULT, STRENGTH_OF, Skill, counted_seats, identity_of, rate

__all__ = [
    "Change",
    "Ledger",
    "MemoryLedger",
    "Record",
    "SqlLedger",
    "Standing",
    "Totals",
    "plan",
]


@dataclass(frozen=True, slots=True)
class Standing:
    """One identity's rating, with the rated matches that counted and their wins."""

    ident: str
    skill: Skill
    matches: int = 0
    wins: int = 0
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """How one seat's rating moved with a rated match."""

    seat: int
    ident: str
    name: str
    before: Skill
    after: Skill


@dataclass(frozen=True, slots=True)
class Record:
    """A finished match as history and profiles list it: its result, which
    seats counted, their changes, and its place in the order results were
    applied; in a cluster, also the node that ran it (None: this server)."""

    cursor: int
    result: MatchResult
    counted: frozenset[int] = frozenset()
    changes: dict[int, Change] = field(default_factory=dict)
    node: str | None = None


@dataclass(frozen=True, slots=True)
class Totals:
    """An identity's finished matches, wins (shared ones too, R23) and mean points."""

    matches: int = 0
    wins: int = 0
    mean_points: float | None = None


def plan(
    result: MatchResult, standing: Callable[[str], Standing | None]
) -> tuple[list[Change], dict[str, Standing]]:
    """What applying ``result`` changes: each counting seat's change, and each
    identity's new standing. An unrated match, or one with fewer than two
    counting seats, changes nothing. Two seats of one bot strength are rated
    apart from the same rating; the strength takes the mean of their new ones."""
    seats = counted_seats(result) if result.rated else []
    if not seats:
        return [], {}
    idents = [identity_of(seat) or "" for seat in seats]
    old = {ident: standing(ident) or Standing(ident, DEFAULT) for ident in idents}
    after = rate([old[ident].skill for ident in idents], [seat.place for seat in seats])
    gathered: dict[str, list[tuple[SeatResult, Skill]]] = {}
    for seat, ident, skill in zip(seats, idents, after, strict=True):
        gathered.setdefault(ident, []).append((seat, skill))
    new: dict[str, Standing] = {}
    for ident, pairs in gathered.items():
        mu = sum(skill.mu for _, skill in pairs) / len(pairs)
        sigma = sum(skill.sigma for _, skill in pairs) / len(pairs)
        won = any(seat.place == 1 for seat, _ in pairs)
        was = old[ident]
        new[ident] = replace(
            was, skill=Skill(mu, sigma), matches=was.matches + 1, wins=was.wins + int(won)
        )
    changes = [
        Change(seat.seat, ident, seat.name, old[ident].skill, new[ident].skill)
        for seat, ident in zip(seats, idents, strict=True)
    ]
    return changes, new


class Ledger(Protocol):
    """What the ratings' owner and the profile answers need of where ratings are kept."""

    def applied(self, match_id: str) -> bool:
        """Whether this match's result was applied already."""
        ...

    async def apply(self, result: MatchResult) -> list[Change] | None:
        """Apply a result (rated or not: history lists both) once; its seats'
        changes, or None if it was applied before."""
        ...

    async def standing(self, ident: str) -> Standing | None:
        """An identity's rating, if it has one."""
        ...

    async def board(self, offset: int, limit: int) -> tuple[list[Standing], int]:
        """A page of the leaderboard, best ordinal first, and its whole length."""
        ...

    async def place(self, ident: str) -> int | None:
        """An identity's place on the leaderboard (1 first), if on it."""
        ...

    async def records(self, ident: str, before: int | None, limit: int) -> list[Record]:
        """An identity's finished matches, latest first, older than ``before``."""
        ...

    async def totals(self, ident: str) -> Totals:
        """An identity's finished matches, wins and mean points."""
        ...


def _seat_filter(ident: str) -> tuple[str, str]:
    """The column and value that find an identity's seats: a bot strength's, or a person's."""
    strength = STRENGTH_OF.get(ident)
    return ("bot", strength) if strength is not None else ("player", ident)


class SqlLedger:
    """Ratings and results in the server's SQLite file, beside the matches."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def applied(self, match_id: str) -> bool:
        """Whether ``results`` holds the match."""
        rows = self.storage.query("SELECT 1 FROM results WHERE match_id = ?", (match_id,))
        return bool(rows)

    async def apply(self, result: MatchResult) -> list[Change] | None:
        """The result, its seats and the new ratings in one job (one transaction)."""
        if self.applied(result.match):
            return None
        changes, new = plan(result, self._standing)
        await self.storage.write_sql(result_writes(result, changes, new, time.time()))
        return changes

    async def standing(self, ident: str) -> Standing | None:
        """The stored rating, with the player's name now."""
        return self._standing(ident)

    def _standing(self, ident: str) -> Standing | None:
        rows = self.storage.query(
            "SELECT r.player, r.mu, r.sigma, r.matches, r.wins, p.name FROM ratings r"
            " LEFT JOIN players p ON p.id = r.player WHERE r.player = ?",
            (ident,),
        )
        return _standing(rows[0]) if rows else None

    async def board(self, offset: int, limit: int) -> tuple[list[Standing], int]:
        """By ordinal, then by id (a steady order for equal ratings)."""
        rows = self.storage.query(
            "SELECT r.player, r.mu, r.sigma, r.matches, r.wins, p.name FROM ratings r"
            " LEFT JOIN players p ON p.id = r.player"
            " ORDER BY r.mu - 3 * r.sigma DESC, r.player LIMIT ? OFFSET ?",
            (limit, offset),
        )
        total = self.storage.query("SELECT count(*) FROM ratings")[0][0]
        return [_standing(row) for row in rows], int(total)

    async def place(self, ident: str) -> int | None:
        """One more than the identities ranked above it."""
        mine = self._standing(ident)
        if mine is None:
            return None
        ordinal = mine.skill.ordinal
        above = self.storage.query(
            "SELECT count(*) FROM ratings WHERE mu - 3 * sigma > ?"
            " OR (mu - 3 * sigma = ? AND player < ?)",
            (ordinal, ordinal, ident),
        )[0][0]
        return int(above) + 1

    async def records(self, ident: str, before: int | None, limit: int) -> list[Record]:
        """From ``results`` and ``result_seats``, by the order they were applied."""
        column, value = _seat_filter(ident)
        rows = self.storage.query(
            "SELECT DISTINCT r.rowid, r.match_id, r.name, r.ruleset, r.open_box, r.rated,"
            f" r.finished FROM results r JOIN result_seats s ON s.match_id = r.match_id"
            f" WHERE s.{column} = ? AND r.rowid < ? ORDER BY r.rowid DESC LIMIT ?",
            (value, before if before is not None else 2**62, limit),
        )
        records = []
        for cursor, match_id, name, ruleset, open_box, rated, finished in rows:
            seats = self.storage.query(
                "SELECT seat, player, name, bot, points, tulips, place, counted, mu_before,"
                " sigma_before, mu_after, sigma_after FROM result_seats WHERE match_id = ?"
                " ORDER BY seat",
                (match_id,),
            )
            records.append(
                _record(cursor, match_id, name, ruleset, open_box, rated, finished, seats)
            )
        return records

    async def totals(self, ident: str) -> Totals:
        """Counted over every seat the identity held in a finished match."""
        column, value = _seat_filter(ident)
        count, wins, mean = self.storage.query(
            "SELECT count(*), coalesce(sum(place = 1), 0), avg(points) FROM result_seats"
            f" WHERE {column} = ?",
            (value,),
        )[0]
        return Totals(int(count), int(wins), None if mean is None else float(mean))


def result_writes(
    result: MatchResult, changes: Sequence[Change], new: dict[str, Standing], now: float
) -> list[tuple[str, Sequence[Any]]]:
    """The statements that store a result, its seats and the ratings it changed:
    one job, so all of them or none (the result's row first: a result stored
    before fails the job on its key, and nothing is applied twice)."""
    by_seat = {change.seat: change for change in changes}
    writes: list[tuple[str, Sequence[Any]]] = [
        (
            "INSERT INTO results (match_id, name, ruleset, open_box, rated, finished, applied)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                result.match,
                result.name,
                result.ruleset,
                int(result.open_box),
                int(result.rated),
                result.finished,
                now,
            ),
        )
    ]
    for seat in result.seats:
        change = by_seat.get(seat.seat)
        writes.append(
            (
                "INSERT INTO result_seats (match_id, seat, player, name, bot, points, tulips,"
                " place, counted, mu_before, sigma_before, mu_after, sigma_after)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    result.match,
                    seat.seat,
                    seat.player,
                    seat.name,
                    seat.bot,
                    seat.points,
                    seat.tulips,
                    seat.place,
                    int(change is not None),
                    change.before.mu if change else None,
                    change.before.sigma if change else None,
                    change.after.mu if change else None,
                    change.after.sigma if change else None,
                ),
            )
        )
    for ident, standing in new.items():
        writes.append(
            (
                "INSERT INTO ratings (player, mu, sigma, matches, wins, updated)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(player) DO UPDATE SET mu = excluded.mu,"
                " sigma = excluded.sigma, matches = excluded.matches, wins = excluded.wins,"
                " updated = excluded.updated",
                (
                    ident,
                    standing.skill.mu,
                    standing.skill.sigma,
                    standing.matches,
                    standing.wins,
                    now,
                ),
            )
        )
    return writes


def _standing(row: Sequence[Any]) -> Standing:
    ident, mu, sigma, matches, wins, name = row
    return Standing(str(ident), Skill(float(mu), float(sigma)), int(matches), int(wins), name)


def _record(
    cursor: int,
    match_id: str,
    name: str,
    ruleset: str,
    open_box: int,
    rated: int,
    finished: float,
    seats: Iterable[Sequence[Any]],
) -> Record:
    results, counted, changes = [], set(), {}
    for seat, player, seat_name, bot, points, tulips, place, count, mb, sb, ma, sa in seats:
        results.append(SeatResult(seat, player, seat_name, bot, points, tulips, place))
        if count:
            counted.add(seat)
            ident = f"bot_{bot}" if bot is not None else (player or "")
            changes[seat] = Change(seat, ident, seat_name, Skill(mb, sb), Skill(ma, sa))
    result = MatchResult(
        match_id, name, ruleset, bool(open_box), bool(rated), float(finished), tuple(results)
    )
    return Record(int(cursor), result, frozenset(counted), changes)


class MemoryLedger:
    """Ratings and results in memory, for a server without storage (gone at exit)."""

    def __init__(self, name_of: Callable[[str], str | None] = lambda ident: None) -> None:
        self._standings: dict[str, Standing] = {}
        self._records: list[Record] = []
        self._applied: set[str] = set()
        self._name_of = name_of

    def applied(self, match_id: str) -> bool:
        """Whether the match was applied since the server started."""
        return match_id in self._applied

    async def apply(self, result: MatchResult) -> list[Change] | None:
        """As :class:`SqlLedger`, in dictionaries."""
        if result.match in self._applied:
            return None
        changes, new = plan(result, self._standings.get)
        self._applied.add(result.match)
        self._standings.update(new)
        counted = frozenset(change.seat for change in changes)
        record = Record(len(self._records) + 1, result, counted, {c.seat: c for c in changes})
        self._records.append(record)
        return changes

    async def standing(self, ident: str) -> Standing | None:
        """The rating, with the name now."""
        found = self._standings.get(ident)
        return None if found is None else replace(found, name=self._name_of(ident))

    def _ordered(self) -> list[Standing]:
        return sorted(self._standings.values(), key=lambda s: (-s.skill.ordinal, s.ident))

    async def board(self, offset: int, limit: int) -> tuple[list[Standing], int]:
        """By ordinal, then by id."""
        ordered = self._ordered()
        page = ordered[offset : offset + limit]
        return [replace(s, name=self._name_of(s.ident)) for s in page], len(ordered)

    async def place(self, ident: str) -> int | None:
        """Its index in the order, from 1."""
        for index, standing in enumerate(self._ordered(), 1):
            if standing.ident == ident:
                return index
        return None

    def _seats_of(self, ident: str, record: Record) -> list[SeatResult]:
        column, value = _seat_filter(ident)
        return [seat for seat in record.result.seats if getattr(seat, column) == value]

    async def records(self, ident: str, before: int | None, limit: int) -> list[Record]:
        """Latest first."""
        found = []
        for record in reversed(self._records):
            if before is not None and record.cursor >= before:
                continue
            if self._seats_of(ident, record):
                found.append(record)
                if len(found) >= limit:
                    break
        return found

    async def totals(self, ident: str) -> Totals:
        """Over every record."""
        seats = [seat for record in self._records for seat in self._seats_of(ident, record)]
        if not seats:
            return Totals()
        wins = sum(seat.place == 1 for seat in seats)
        return Totals(len(seats), wins, sum(seat.points for seat in seats) / len(seats))
