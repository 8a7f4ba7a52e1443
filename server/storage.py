"""Durable storage: SQLite (standard library, WAL mode) in the data directory.

What is stored is what rebuilds everything else: players (with token
*hashes*), each match's settings, seed and seats, and the ordered actions.
A match's state is never stored; it is replayed through the engine.

Writes go through one writer thread that takes every pending write, commits
them in one transaction (group commit), and only then resolves the awaiting
coroutines — so ``await storage.append_action(...)`` returning means the action
is on disk, and the event loop never waits on the disk itself.

The file carries ``PRAGMA application_id`` and ``PRAGMA user_version`` (the
schema version). A file that is not ours, or is from a newer schema, is
refused at start with :class:`StorageError`, never touched.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "MatchRow",
    "PlayerRow",
    "Storage",
    "StorageError",
]

log = logging.getLogger(__name__)

#: "TULP": marks a SQLite file as ours.
APPLICATION_ID = 0x54554C50
SCHEMA_VERSION = 1
FILE_NAME = "tulips.sqlite3"

_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE players (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        created REAL NOT NULL
    );
    CREATE TABLE matches (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        host TEXT NOT NULL REFERENCES players(id),
        ruleset_name TEXT NOT NULL,
        ruleset TEXT NOT NULL,            -- the ruleset table as JSON (R30)
        seats TEXT NOT NULL,              -- JSON: per seat {player, bot}
        join_code TEXT,
        turn_timer REAL,
        first_seat INTEGER,               -- the host's pick, or NULL for chance (R12)
        seed INTEGER,                     -- set when the match starts
        status TEXT NOT NULL,
        created REAL NOT NULL,
        finished REAL
    );
    CREATE TABLE actions (
        match_id TEXT NOT NULL REFERENCES matches(id),
        idx INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        action TEXT NOT NULL,             -- JSON, as engine.record.action_to_data
        PRIMARY KEY (match_id, idx)
    ) WITHOUT ROWID;
    CREATE INDEX matches_by_status ON matches(status, created);
    """,
}


class StorageError(Exception):
    """The data directory cannot be used, or a write failed."""


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A stored player."""

    id: str
    name: str
    token_hash: str


@dataclass(frozen=True, slots=True)
class MatchRow:
    """A stored match: settings, seats, seed and status (actions apart)."""

    id: str
    name: str
    host: str
    ruleset_name: str
    ruleset: dict[str, Any]
    seats: list[dict[str, Any]]
    join_code: str | None
    turn_timer: float | None
    first_seat: int | None
    seed: int | None
    status: str
    created: float
    finished: float | None = None


_Write = tuple[str, Sequence[Any]]
_Job = tuple[list[_Write], "asyncio.Future[None]", asyncio.AbstractEventLoop]


class Storage:
    """One data directory's database, with its writer thread."""

    def __init__(self, data_dir: Path, *, synchronous: str = "FULL") -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError("synchronous is FULL (survives power loss) or NORMAL (crashes)")
        self.path = Path(data_dir) / FILE_NAME
        self.synchronous = synchronous
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._read: sqlite3.Connection | None = None
        self.failed: StorageError | None = None
        #: called (in the writer thread) just before futures resolve; a test hook
        self.after_commit: Callable[[int], None] | None = None

    # -- opening ------------------------------------------------------------------------

    def open(self) -> None:
        """Create or check the database; raise :class:`StorageError` if unusable."""
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the data directory {directory}: {exc}") from None
        existed = self.path.exists()
        if existed and not self.path.is_file():
            raise StorageError(f"{self.path} exists and is not a file; refusing to use it")
        connection: sqlite3.Connection | None = None
        try:
            connection = self._connect()
            self._check_and_migrate(connection, existed)
            # Can we write? A read-only file opens without complaint and fails
            # only at the first write, so write (the same value) and roll back.
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(f"PRAGMA user_version = {int(version)}")
            connection.execute("ROLLBACK")
        except (sqlite3.DatabaseError, StorageError) as exc:
            if connection is not None:
                connection.close()
            if isinstance(exc, StorageError):
                raise
            if isinstance(exc, sqlite3.OperationalError):  # locked, read-only, disk full, …
                raise StorageError(f"cannot use {self.path}: {exc}") from None
            raise StorageError(  # not a database at all, or a damaged one
                f"{self.path} is not a Gift of Tulips database ({exc}); refusing to touch it."
                " Move it away or choose another --data-dir."
            ) from None
        self._read = connection
        self._thread = threading.Thread(target=self._writer, name="tulips-storage", daemon=True)
        self._thread.start()

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA busy_timeout = 5000")
        return connection

    def _check_and_migrate(self, connection: sqlite3.Connection, existed: bool) -> None:
        app_id = connection.execute("PRAGMA application_id").fetchone()[0]
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id != APPLICATION_ID and (tables or app_id):
            raise StorageError(
                f"{self.path} is a SQLite database of another program (application_id"
                f" {app_id:#x}); refusing to touch it. Choose another --data-dir."
            )
        if version > SCHEMA_VERSION:
            raise StorageError(
                f"{self.path} was written by a newer version of this server (schema"
                f" {version}, this one knows up to {SCHEMA_VERSION}); upgrade the server."
            )
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StorageError(f"{self.path}: cannot switch to WAL mode (got {mode})")
        connection.execute(f"PRAGMA synchronous = {self.synchronous}")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            script = (
                f"BEGIN IMMEDIATE;\n{_MIGRATIONS[target]}\n"
                f"PRAGMA application_id = {APPLICATION_ID};\n"
                f"PRAGMA user_version = {target};\nCOMMIT;"
            )
            try:
                connection.executescript(script)  # all of a migration, or none of it
            except sqlite3.DatabaseError:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
            log.info("data %s: schema migrated to version %d", self.path, target)
        if not existed:
            log.info("created %s", self.path)

    def close(self) -> None:
        """Finish pending writes and close."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(10)
            self._thread = None
        if self._read is not None:
            self._read.close()
            self._read = None

    # -- the writer thread -------------------------------------------------------------

    def _writer(self) -> None:
        connection = self._connect()
        connection.execute(f"PRAGMA synchronous = {self.synchronous}")
        commits = 0
        while True:
            job = self._jobs.get()
            if job is None:
                break
            batch = [job]
            while True:  # group commit: take everything already waiting
                try:
                    more = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._jobs.put(None)
                    break
                batch.append(more)
            errors = self._commit(connection, batch)
            commits += 1
            if self.after_commit is not None and not all(errors):
                self.after_commit(commits)
            by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[None], Any]]] = {}
            for (_, future, loop), error in zip(batch, errors, strict=True):
                by_loop.setdefault(loop, []).append((future, error))
            for loop, settled in by_loop.items():  # one wake-up per loop, not per write
                loop.call_soon_threadsafe(_settle, settled)
        connection.close()

    def _submit(self, writes: list[_Write]) -> asyncio.Future[None]:
        if self._thread is None:
            raise StorageError("storage is not open")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._jobs.put((writes, future, loop))
        return future

    def _commit(self, connection: sqlite3.Connection, batch: list[_Job]) -> list[Any]:
        """One transaction for the batch, a savepoint per job: a job that fails
        fails alone. Returns each job's error (None if it is stored)."""
        errors: list[Any] = [None] * len(batch)
        try:
            connection.execute("BEGIN")
            for i, (writes, _, _) in enumerate(batch):
                connection.execute("SAVEPOINT job")
                try:
                    for sql, params in writes:
                        connection.execute(sql, params)
                except sqlite3.Error as exc:
                    connection.execute("ROLLBACK TO job")
                    errors[i] = StorageError(f"cannot write to {self.path}: {exc}")
                connection.execute("RELEASE job")
            connection.execute("COMMIT")
        except sqlite3.Error as exc:  # the commit itself failed: nothing is stored
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            failed = StorageError(f"cannot write to {self.path}: {exc}")
            errors = [failed] * len(batch)
        return errors

    async def _write(self, writes: list[_Write]) -> None:
        await self._submit(writes)

    # -- writes -------------------------------------------------------------------------

    async def save_player(self, player: PlayerRow, created: float) -> None:
        """Store a player (or their new name)."""
        await self._write(
            [
                (
                    "INSERT INTO players (id, name, token_hash, created) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT(id) DO UPDATE SET name = excluded.name",
                    (player.id, player.name, player.token_hash, created),
                )
            ]
        )

    async def save_match(self, row: MatchRow) -> None:
        """Store a match's settings, seats, seed and status."""
        await self.save_match_soon(row)

    def save_match_soon(self, row: MatchRow) -> asyncio.Future[None]:
        """Queue the match's row without waiting; later writes commit after it."""
        return self._submit(
            [
                (
                    "INSERT INTO matches (id, name, host, ruleset_name, ruleset, seats, join_code,"
                    " turn_timer, first_seat, seed, status, created, finished)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT(id) DO UPDATE SET seats = excluded.seats, seed = excluded.seed,"
                    " status = excluded.status, finished = excluded.finished, host = excluded.host",
                    (
                        row.id,
                        row.name,
                        row.host,
                        row.ruleset_name,
                        json.dumps(row.ruleset),
                        json.dumps(row.seats),
                        row.join_code,
                        row.turn_timer,
                        row.first_seat,
                        row.seed,
                        row.status,
                        row.created,
                        row.finished,
                    ),
                )
            ]
        )

    async def append_action(
        self, match_id: str, index: int, seat: int, action: dict[str, Any]
    ) -> None:
        """Store one accepted action; returns once it is on disk."""
        await self._write(
            [
                (
                    "INSERT INTO actions (match_id, idx, seat, action) VALUES (?, ?, ?, ?)",
                    (match_id, index, seat, json.dumps(action, separators=(",", ":"))),
                )
            ]
        )

    async def forget_players(self, ids: Sequence[str]) -> None:
        """Delete these players, except any a stored match names (host or seat)."""
        await self._write(
            [
                (
                    "DELETE FROM players WHERE id = ? AND NOT EXISTS (SELECT 1 FROM matches"
                    " WHERE host = ? OR instr(seats, ?) > 0)",
                    (player_id, player_id, json.dumps(player_id)),
                )
                for player_id in ids
            ]
        )

    def forget_open_match(self, match_id: str) -> asyncio.Future[None]:
        """Delete a match that never started (it has no actions), after the writes
        queued before it; a match that has started is left alone."""
        return self._submit(
            [("DELETE FROM matches WHERE id = ? AND status = 'open' AND seed IS NULL", (match_id,))]
        )

    # -- reads (at start-up, and for replays) ------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        if self._read is None:
            raise StorageError("storage is not open")
        return self._read

    def players(self) -> list[PlayerRow]:
        """Every stored player."""
        rows = self._reader().execute("SELECT id, name, token_hash FROM players").fetchall()
        return [PlayerRow(*row) for row in rows]

    def matches(self, statuses: Sequence[str], limit: int = 1000) -> list[MatchRow]:
        """Stored matches with one of these statuses, newest first."""
        marks = ",".join("?" * len(statuses))
        rows = (
            self._reader()
            .execute(
                "SELECT id, name, host, ruleset_name, ruleset, seats, join_code, turn_timer,"
                " first_seat, seed, status, created, finished FROM matches"
                f" WHERE status IN ({marks}) ORDER BY created DESC LIMIT ?",
                (*statuses, limit),
            )
            .fetchall()
        )
        result = []
        for row in rows:
            values = list(row)
            try:
                values[4] = json.loads(values[4])
                values[5] = json.loads(values[5])
            except (TypeError, ValueError) as exc:
                log.error(
                    "match %s: its stored row is damaged (%s); left out, left on disk",
                    values[0],
                    exc,
                )
                continue
            result.append(MatchRow(*values))
        return result

    def actions(self, match_id: str) -> list[tuple[int, dict[str, Any]]]:
        """A match's stored actions, in order, as ``(seat, action data)``."""
        rows = (
            self._reader()
            .execute(
                "SELECT idx, seat, action FROM actions WHERE match_id = ? ORDER BY idx", (match_id,)
            )
            .fetchall()
        )
        for expected, (index, _, _) in enumerate(rows):
            if index != expected:
                raise StorageError(f"match {match_id}: action {expected} is missing")
        return [(seat, json.loads(action)) for _, seat, action in rows]


def _settle(settled: list[tuple[asyncio.Future[None], BaseException | None]]) -> None:
    for future, error in settled:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
