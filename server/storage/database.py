"""Durable storage: SQLite (standard library, WAL mode) in the data directory.

What is stored is what rebuilds everything else: players (with token
*hashes*), each match's settings (one JSON value, as
:meth:`~server.match.settings.MatchSettings.to_data` gives it), seed and
seats, and the ordered actions. A match's state is never stored; it is
replayed through the engine. What to store is the match's to say
(:mod:`server.match.records`); :meth:`Storage.write` turns it into SQL.

Writes go through one writer thread that takes every pending write, commits
them in one transaction (group commit), and only then resolves the awaiting
coroutines — so ``await storage.append_action(...)`` returning means the action
is on disk, and the event loop never waits on the disk itself.

Every write ends: stored, or failed with :class:`StorageError`. A write the
database refuses fails alone. An unexpected error in the writer thread (a bug,
anything but ``sqlite3.Error``) stops storing for good: it is logged once,
:attr:`Storage.failed` says why, and every write queued then or later fails
with it — so the rooms waiting on them pause instead of hanging. Closing
(:meth:`Storage.aclose`) lets the writer finish what is queued, for at most a
given time, without blocking the event loop; writes asked for after that fail.

Another process holding the database's lock (a backup, ``sqlite3`` at a
prompt) is no fault: a batch that finds the lock held after ``lock_timeout``
seconds is rolled back whole and tried again, after 0.1 s doubling to 2 s
(:class:`~.lockwait.LockWait`), with every write queued since behind it, until
it goes through — one WARNING when the writes begin waiting, one INFO when
they are stored. Each waiting write is told once (its ``on_locked``), so that a
match can pause meanwhile. If the server stops while the lock is still held,
the writes still waiting are failed, said so in one line naming the lock's
holder; nothing stored before is touched. A failure that is a full disk says
so, with the free space (:mod:`.diskinfo`).

Reading tolerates damage row by row: a stored player or match that cannot be
read (not UTF-8, a value of the wrong type, JSON that does not parse) is left
out with one log line naming it, and left on disk.

The file carries ``PRAGMA application_id`` and ``PRAGMA user_version`` (the
schema version). A file that is not ours, or is from a newer schema, is
refused at start with :class:`StorageError`, never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StorageError, StorageLocked
from ..match.records import AppendAction, ForgetOpenMatch, MatchRow, SaveMatch, StoredSeat, Write
from ..match.settings import MatchSettings, SettingsError
from ..names import name_key
from .diskinfo import describe, is_locked
from .lockwait import LockWait

__all__ = [
    "APPLICATION_ID",
    "LOCK_NAME",
    "SCHEMA_VERSION",
    "MatchRow",
    "PlayerRow",
    "Storage",
    "StorageError",
]

log = logging.getLogger(__name__)

#: "TULP": marks a SQLite file as ours.
APPLICATION_ID = 0x54554C50
SCHEMA_VERSION = 7
FILE_NAME = "tulips.sqlite3"
#: the file a server holds a lock on while it uses the data directory, so that
#: ``tulips-server ratings`` and ``players`` refuse to change it under it
LOCK_NAME = "tulips.sqlite3.server-lock"
#: KiB of page cache per SQLite connection (SQLite's default is 2,000)
PAGE_CACHE_KIB = 512
#: seconds opening the database waits for another process's lock
OPEN_LOCK_TIMEOUT = 5.0

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
    # R27: the host's open-box choice, and the salt of its seed commitment
    # (set with the seed, for open-box matches only). Older matches are closed.
    2: """
    ALTER TABLE matches ADD COLUMN open_box INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE matches ADD COLUMN salt BLOB;
    """,
    # When each player was last connected (NULL: use created), so that players
    # kept on disk only are forgotten after ``--forget-players-after`` too.
    3: """
    ALTER TABLE players ADD COLUMN last_seen REAL;
    """,
    # Who chose an action a person's seat did not ("stand_in" or "timer"; NULL:
    # the seat's own player), so that a replay shows it as the table saw it.
    4: """
    ALTER TABLE actions ADD COLUMN played_by TEXT;
    """,
    # A match's settings in one column, as the server holds them: one JSON value
    # (MatchSettings.to_data), not seven columns. A row whose old columns cannot
    # make settings keeps them as stored, under "damaged", and is read as damaged.
    5: """
    CREATE TABLE matches_new (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL REFERENCES players(id),
        settings TEXT NOT NULL,           -- JSON: MatchSettings.to_data()
        seats TEXT NOT NULL,              -- JSON: per seat {player, bot, left}
        seed INTEGER,                     -- set when the match starts
        salt BLOB,                        -- open box (R27): set with the seed
        status TEXT NOT NULL,
        created REAL NOT NULL,
        finished REAL
    );
    INSERT INTO matches_new (id, host, settings, seats, seed, salt, status, created, finished)
    SELECT id, host,
        CASE WHEN typeof(name) = 'text' AND typeof(ruleset_name) = 'text'
            AND typeof(ruleset) = 'text' AND json_valid(ruleset)
            AND typeof(join_code) IN ('null', 'text')
            AND typeof(turn_timer) IN ('null', 'real', 'integer')
            AND typeof(first_seat) IN ('null', 'integer')
        THEN json_object('name', name, 'ruleset_name', ruleset_name, 'ruleset', json(ruleset),
            'join_code', join_code, 'turn_timer', turn_timer, 'first_seat', first_seat,
            'open_box', json(CASE WHEN open_box THEN 'true' ELSE 'false' END))
        ELSE json_object('damaged', 'its settings did not read in schema 4')
        END,
        seats, seed, salt, status, created, finished
    FROM matches;
    DROP TABLE matches;
    ALTER TABLE matches_new RENAME TO matches;
    CREATE INDEX matches_by_status ON matches(status, created);
    """,
    # Profiles and ratings (issue 31). A player's name is unique in any case
    # (``name_key``: its casefold, filled in at open for older rows; older
    # duplicates keep their names). More devices of one player each have a
    # token (``player_tokens``). ``results`` has one row per finished match
    # whose result was applied — its ratings changed in the same transaction,
    # so a result is applied once — and ``result_seats`` its seats, with each
    # counting seat's rating before and after.
    6: """
    ALTER TABLE players ADD COLUMN name_key TEXT;
    CREATE INDEX players_by_name_key ON players(name_key);
    CREATE TABLE player_tokens (
        token_hash TEXT PRIMARY KEY,
        player TEXT NOT NULL,
        created REAL NOT NULL
    );
    CREATE INDEX player_tokens_by_player ON player_tokens(player);
    CREATE TABLE ratings (
        player TEXT PRIMARY KEY,          -- a player id, or bot_easy, bot_medium, bot_hard
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        matches INTEGER NOT NULL,         -- rated matches that counted
        wins INTEGER NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX ratings_by_ordinal ON ratings(mu - 3 * sigma);
    CREATE TABLE results (
        match_id TEXT PRIMARY KEY,        -- its rowid orders results as they were applied
        name TEXT NOT NULL,
        ruleset TEXT NOT NULL,
        open_box INTEGER NOT NULL,
        rated INTEGER NOT NULL,
        finished REAL NOT NULL,
        applied REAL NOT NULL
    );
    CREATE TABLE result_seats (
        match_id TEXT NOT NULL,
        seat INTEGER NOT NULL,
        player TEXT,                      -- a person's id; NULL: a bot, or a removed player
        name TEXT NOT NULL,
        bot TEXT,
        points INTEGER NOT NULL,
        tulips INTEGER NOT NULL,
        place INTEGER NOT NULL,
        counted INTEGER NOT NULL,
        mu_before REAL, sigma_before REAL, mu_after REAL, sigma_after REAL,
        PRIMARY KEY (match_id, seat)
    ) WITHOUT ROWID;
    CREATE INDEX result_seats_by_player ON result_seats(player);
    CREATE INDEX result_seats_by_bot ON result_seats(bot);
    """,
    # 7: post-game analyses, one per match and seat, computed once (issue 32)
    7: """
    CREATE TABLE analyses (
        match_id TEXT NOT NULL,
        seat INTEGER NOT NULL,
        deals INTEGER NOT NULL,           -- deals sampled per decision
        seed INTEGER NOT NULL,            -- the analysis's seed (from the match id)
        analysis TEXT NOT NULL,           -- engine.analysis.SeatAnalysis.to_data(), JSON
        moments TEXT NOT NULL,            -- per decision: [seq of its prompt, card drawn], JSON
        created REAL NOT NULL,
        PRIMARY KEY (match_id, seat)
    ) WITHOUT ROWID;
    """,
}


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A stored player."""

    id: str
    name: str
    token_hash: str


_Write = tuple[str, Sequence[Any]]


@dataclass(slots=True)
class _Job:
    """A job's writes, and the future (of its loop) that gets how many rows
    they changed; ``on_locked`` is told there, once, if they wait for a lock."""

    writes: list[_Write]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    on_locked: Callable[[StorageLocked], None] | None = None
    told: bool = field(default=False)


class _Locked(Exception):
    """The batch found the database locked by another process; nothing of it is stored."""


class _GaveUp(Exception):
    """Closing ran out of time while the batch waited for the lock."""


class Storage:
    """One data directory's database, with its writer thread."""

    def __init__(
        self,
        data_dir: Path,
        *,
        synchronous: str = "FULL",
        lock_timeout: float = 1.0,
        lock_wait: LockWait | None = None,
    ) -> None:
        """``lock_timeout``: seconds a write waits for another process's lock
        before the writes are told they wait (and tried again, per ``lock_wait``)."""
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError("synchronous is FULL (survives power loss) or NORMAL (crashes)")
        if not 0 <= lock_timeout <= 60:
            raise ValueError("lock_timeout is 0 to 60 seconds")
        self.path = Path(data_dir) / FILE_NAME
        self.synchronous = synchronous
        self.lock_timeout = lock_timeout
        self._lock_wait = lock_wait if lock_wait is not None else LockWait()
        #: set when closing has run out of time: writes waiting for the lock give up
        self._give_up = threading.Event()
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        #: why the writes wait now, if another process holds the lock (writer thread's)
        self.locked: str | None = None
        self._thread: threading.Thread | None = None
        self._read: sqlite3.Connection | None = None
        self._lock_file: Any = None
        #: guards ``_accepting`` and ``failed`` against the queue: a write is either
        #: queued before the writer's last look at the queue, or refused
        self._gate = threading.Lock()
        self._accepting = False
        #: why nothing can be stored any more (the writer thread met an unexpected error)
        self.failed: StorageError | None = None
        #: Test hooks, called in the writer thread with the commit's number (from 1):
        #: ``before_commit`` inside each transaction just before its COMMIT (a slow
        #: disk sleeps here; an error raised here is an unexpected writer error),
        #: ``after_commit`` once it is committed, before any awaiting write resumes.
        self.before_commit: Callable[[int], None] | None = None
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
            connection = self._connect(OPEN_LOCK_TIMEOUT)
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
                reason = describe(self.path, exc)
                if reason.startswith("cannot write to "):
                    reason = f"cannot use {self.path}: {exc}"
                raise StorageError(reason) from None
            raise StorageError(  # not a database at all, or a damaged one
                f"{self.path} is not a Gift of Tulips database ({exc}); refusing to touch it."
                " Move it away or choose another --data-dir."
            ) from None
        self._read = connection
        self._hold_server_lock()
        self._accepting = True
        self._thread = threading.Thread(target=self._writer, name="tulips-storage", daemon=True)
        self._thread.start()

    def _hold_server_lock(self) -> None:
        """Hold a POSIX lock on :data:`LOCK_NAME` until closed: the operator's
        tools see that a server uses this data directory. Not holding it (an
        odd file system) is only logged."""
        try:
            self._lock_file = open(self.path.parent / LOCK_NAME, "a+b")  # noqa: SIM115
            fcntl.lockf(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            log.warning("cannot lock %s (%s): the operator's tools will not see it", self.path, exc)

    def _release_server_lock(self) -> None:
        if self._lock_file is not None:
            with contextlib.suppress(OSError):
                self._lock_file.close()  # closing releases the lock
            self._lock_file = None

    def _connect(self, lock_timeout: float) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {round(lock_timeout * 1000)}")
        # Appends touch a few pages at the end of each table and index: 512 KiB
        # of page cache serves them as well as SQLite's default 2 MiB, which a
        # long-running server would otherwise fill and keep, per connection.
        connection.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
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
        _fill_name_keys(connection)
        # one line for the whole set-up, however many migrations it took
        if not existed:
            log.info("created %s (schema version %d)", self.path, SCHEMA_VERSION)
        elif version < SCHEMA_VERSION:
            log.info(
                "data %s: schema migrated from version %d to %d", self.path, version, SCHEMA_VERSION
            )

    def close(self, timeout: float = 10.0) -> None:
        """Finish pending writes (waiting at most ``timeout`` s) and close.
        Blocks its caller: the server uses :meth:`aclose`."""
        thread = self._stop_accepting()
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive() and self.locked is not None:
                self._give_up.set()
                thread.join(self.lock_timeout + 1.0)
            self._joined(thread)
        self._close_reader()

    async def aclose(self, timeout: float = 10.0) -> None:
        """Refuse new writes, let the writer finish those already queued (for at
        most ``timeout`` s, while the event loop runs on), and close.

        Writes still unfinished then were never acknowledged to anyone; SQLite
        commits each transaction whole or not at all, whichever the process
        exit finds. Writes still waiting then for another process's lock are
        failed (the try under way ends within ``lock_timeout`` s)."""
        thread = self._stop_accepting()
        if thread is not None:
            await asyncio.to_thread(thread.join, timeout)
            if thread.is_alive() and self.locked is not None:
                self._give_up.set()
                await asyncio.to_thread(thread.join, self.lock_timeout + 1.0)
            self._joined(thread)
        self._close_reader()

    def _stop_accepting(self) -> threading.Thread | None:
        thread, self._thread = self._thread, None
        if thread is not None:
            with self._gate:
                self._accepting = False
                self._jobs.put(None)  # after every write queued so far
        return thread

    def _joined(self, thread: threading.Thread) -> None:
        if thread.is_alive():
            log.error(
                "storage %s: the disk did not finish the last writes in time; they were"
                " never acknowledged, and SQLite keeps each whole or not at all",
                self.path,
            )

    def _close_reader(self) -> None:
        if self._read is not None:
            self._read.close()
            self._read = None
        self._release_server_lock()

    # -- the writer thread -------------------------------------------------------------

    def _writer(self) -> None:
        """Commit batches until closed; an unexpected error stops storing for good."""
        connection: sqlite3.Connection | None = None
        batch: list[_Job] = []
        commits = 0
        try:
            connection = self._connect(self.lock_timeout)
            connection.execute(f"PRAGMA synchronous = {self.synchronous}")
            while True:
                batch = self._next_batch()
                if not batch:
                    break
                commits += 1
                try:
                    errors, changes = self._commit_through_lock(connection, batch, commits)
                except _GaveUp as exc:
                    self._give_up_waiting(str(exc), batch)
                    batch = []
                    break
                if self.after_commit is not None and not all(errors):
                    self.after_commit(commits)
                _settle_all(batch, errors, changes)
                batch = []
        except Exception as exc:  # a bug or a hook, not the database refusing a write
            self._break(exc, batch, connection)
        finally:
            if connection is not None:
                with contextlib.suppress(sqlite3.Error):
                    connection.close()

    def _next_batch(self) -> list[_Job]:
        """The next write and every one already waiting (group commit); empty once closed."""
        job = self._jobs.get()
        if job is None:
            return []
        batch = [job]
        self._take_waiting(batch)
        return batch

    def _take_waiting(self, batch: list[_Job]) -> None:
        """Put every job queued now at the end of ``batch`` (not the close, which stays queued)."""
        while True:
            try:
                more = self._jobs.get_nowait()
            except queue.Empty:
                break
            if more is None:
                self._jobs.put(None)
                break
            batch.append(more)

    def _commit_through_lock(
        self, connection: sqlite3.Connection, batch: list[_Job], number: int
    ) -> tuple[list[Any], list[int]]:
        """:meth:`_commit` the batch, tried again while another process holds
        the lock — with every job queued meanwhile behind it, so that writes
        keep their order — until it goes through, or closing gives up (_GaveUp)."""
        wait = self._lock_wait
        while True:
            try:
                result = self._commit(connection, batch, number)
            except _Locked as exc:
                delay, began = wait.locked(time.monotonic())
                self.locked = str(exc)
                if began:
                    log.warning(
                        "storage: %s; %d write(s) wait for it, tried again every %.1f s at"
                        " most (the matches waiting on them pause meanwhile)",
                        exc,
                        len(batch),
                        wait.longest,
                    )
                _tell_locked(batch, exc)
                if self._give_up.wait(delay):
                    raise _GaveUp(str(exc)) from None
                self._take_waiting(batch)
                continue
            waited = wait.through(time.monotonic())
            if waited is not None:
                self.locked = None
                log.info(
                    "storage %s: the lock is free again; %d write(s) that waited %.1f s for it"
                    " are stored",
                    self.path,
                    len(batch),
                    waited,
                )
            return result

    def _give_up_waiting(self, reason: str, batch: list[_Job]) -> None:
        """Closing ran out of time while ``batch`` waited for the lock: fail it
        and whatever is still queued, and say so once."""
        with self._gate:
            self._accepting = False
        self._take_waiting(batch)
        log.error(
            "storage: stopping while %s; %d write(s) not stored (none was acknowledged;"
            " everything stored before is intact)",
            reason,
            len(batch),
        )
        failed = StorageError(f"not stored: {reason} (the server stopped first)")
        _settle_all(batch, [failed] * len(batch), [0] * len(batch))

    def _break(
        self, exc: Exception, batch: list[_Job], connection: sqlite3.Connection | None
    ) -> None:
        """The writer cannot go on: say so once, and fail every write it holds or will get."""
        with self._gate:
            self._accepting = False
            self.failed = StorageError(
                f"storage {self.path} stopped after an unexpected error ({exc!r});"
                " nothing more is stored until the server is restarted"
            )
        log.critical("%s", self.failed, exc_info=exc)
        if connection is not None and connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        while True:  # every write queued before the gate closed
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                batch.append(job)
        _settle_all(batch, [StorageError(str(self.failed)) for _ in batch], [0] * len(batch))

    @property
    def accepting(self) -> bool:
        """Whether writes are taken now (open, not closing, not failed)."""
        return self._accepting

    def _submit(
        self, writes: list[_Write], on_locked: Callable[[StorageLocked], None] | None = None
    ) -> asyncio.Future[Any]:
        """Queue one job; its future gets how many rows the job changed, or
        fails at once if storage cannot take it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._gate:
            if self._accepting:
                self._jobs.put(_Job(writes, future, loop, on_locked))
                return future
            reason = str(self.failed) if self.failed is not None else "storage is not open"
        future.set_exception(StorageError(reason))
        return future

    def _commit(
        self, connection: sqlite3.Connection, batch: list[_Job], number: int
    ) -> tuple[list[Any], list[int]]:
        """One transaction for the batch, a savepoint per job: a job that fails
        fails alone. Returns each job's error (None if it is stored) and how
        many rows each changed. Raises :class:`_Locked`, nothing stored, if
        another process holds the lock."""
        errors: list[Any] = [None] * len(batch)
        changes = [0] * len(batch)
        try:
            connection.execute("BEGIN")
            for i, job in enumerate(batch):
                connection.execute("SAVEPOINT job")
                before = connection.total_changes
                try:
                    for sql, params in job.writes:
                        connection.execute(sql, params)
                    changes[i] = connection.total_changes - before
                except sqlite3.Error as exc:
                    if is_locked(exc):  # not this job's fault: the whole batch waits
                        raise
                    connection.execute("ROLLBACK TO job")
                    errors[i] = StorageError(describe(self.path, exc))
                connection.execute("RELEASE job")
            if self.before_commit is not None:
                self.before_commit(number)
            connection.execute("COMMIT")
        except sqlite3.Error as exc:  # the commit itself failed: nothing is stored
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if is_locked(exc):
                raise _Locked(describe(self.path, exc)) from None
            failed = StorageError(describe(self.path, exc))
            errors = [failed] * len(batch)
        return errors, changes

    async def _write(self, writes: list[_Write]) -> None:
        await self._submit(writes)

    # -- writes -------------------------------------------------------------------------

    async def save_player(self, player: PlayerRow, created: float) -> None:
        """Store a player (or their new name) seen at ``created``."""
        await self._write(
            [
                (
                    "INSERT INTO players (id, name, token_hash, created, last_seen, name_key)"
                    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name,"
                    " last_seen = excluded.last_seen, name_key = excluded.name_key",
                    (
                        player.id,
                        player.name,
                        player.token_hash,
                        created,
                        created,
                        name_key(player.name),
                    ),
                )
            ]
        )

    def touch_player_soon(self, player_id: str, when: float) -> asyncio.Future[Any]:
        """Queue ``when`` as the time the player was last connected, without waiting."""
        return self._submit([("UPDATE players SET last_seen = ? WHERE id = ?", (when, player_id))])

    def write(
        self, writes: Sequence[Write], on_locked: Callable[[StorageLocked], None] | None = None
    ) -> asyncio.Future[Any]:
        """Queue a match's writes as one job, behind every write queued before;
        the future is done once they are all on disk (or failed together).
        While another process holds the lock they wait for it, and
        ``on_locked`` is called (in this loop, once) with why."""
        return self._submit([_sql(write) for write in writes], on_locked)

    async def save_match(self, row: MatchRow) -> None:
        """Store a match's settings, seats, seed and status."""
        await self.write([SaveMatch(row)])

    def save_match_soon(self, row: MatchRow) -> asyncio.Future[Any]:
        """Queue the match's row without waiting; later writes commit after it."""
        return self.write([SaveMatch(row)])

    async def append_action(
        self,
        match_id: str,
        index: int,
        seat: int,
        action: dict[str, Any],
        played_by: str | None = None,
    ) -> None:
        """Store one accepted action, and who chose it if the seat's own player
        did not (``event.by``); returns once it is on disk."""
        await self.write([AppendAction(match_id, index, seat, action, played_by)])

    async def forget_players(self, ids: Sequence[str], before: float) -> int:
        """Delete these players if they were still last connected before ``before``
        (the caller has left out every player a match names); how many went."""
        writes: list[_Write] = []
        for player_id in ids:
            writes.append(
                (
                    "DELETE FROM player_tokens WHERE player = ? AND player IN (SELECT id FROM"
                    " players WHERE id = ? AND coalesce(last_seen, created) < ?)",
                    (player_id, player_id, before),
                )
            )
            writes.append(
                (
                    "DELETE FROM players WHERE id = ? AND coalesce(last_seen, created) < ?",
                    (player_id, before),
                )
            )
        await self._submit(writes)
        rows = self.query(
            f"SELECT count(*) FROM players WHERE id IN ({','.join('?' * len(ids))})", list(ids)
        )
        return len(ids) - int(rows[0][0])

    def forget_open_match(self, match_id: str) -> asyncio.Future[None]:
        """Delete a match that never started (it has no actions), after the writes
        queued before it; a match that has started is left alone."""
        return self.write([ForgetOpenMatch(match_id)])

    def write_sql(self, writes: Sequence[tuple[str, Sequence[Any]]]) -> asyncio.Future[Any]:
        """Queue statements as one job (one transaction's savepoint, behind every
        write queued before): all of them are stored, or none. The future gets
        how many rows they changed, or fails with :class:`StorageError`."""
        return self._submit(list(writes))

    # -- reads (at start-up, and for replays) ------------------------------------------

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of a read (profiles, ratings, history); text that is not
        UTF-8 reads with replacement characters rather than spoil the query."""
        reader = self._reader()
        reader.text_factory = _lenient_text
        try:
            return reader.execute(sql, params).fetchall()
        finally:
            reader.text_factory = str

    def _reader(self) -> sqlite3.Connection:
        if self._read is None:
            raise StorageError("storage is not open")
        return self._read

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The query's rows with text as raw bytes, so that a value that is not
        UTF-8 spoils its own row only, not the whole query."""
        reader = self._reader()
        reader.text_factory = bytes
        try:
            return reader.execute(sql, params).fetchall()
        finally:
            reader.text_factory = str

    def players(self) -> list[PlayerRow]:
        """Every stored player (a damaged row is left out, with a log line)."""
        rows = (_player_row(row) for row in self._rows("SELECT id, name, token_hash FROM players"))
        return [row for row in rows if row is not None]

    def player(self, player_id: str) -> PlayerRow | None:
        """The stored player with this id, if any (a damaged row: None, with a log line)."""
        found = self._rows("SELECT id, name, token_hash FROM players WHERE id = ?", (player_id,))
        return _player_row(found[0]) if found else None

    def player_by_token(self, token_hash: str) -> PlayerRow | None:
        """The stored player with this token hash, if any (a damaged row: None,
        with a log line)."""
        found = self._rows(
            "SELECT id, name, token_hash FROM players WHERE token_hash = ?"
            " UNION ALL SELECT p.id, p.name, p.token_hash FROM player_tokens t"
            " JOIN players p ON p.id = t.player WHERE t.token_hash = ?",
            (token_hash, token_hash),
        )
        return _player_row(found[0]) if found else None

    def other_tokens(self, player_id: str) -> list[str]:
        """The token hashes of a player's other devices (linked with a code)."""
        rows = self.query("SELECT token_hash FROM player_tokens WHERE player = ?", (player_id,))
        return [str(token) for (token,) in rows]

    def player_named(self, key: str) -> str | None:
        """The id of the stored player whose name has this key (:func:`name_key`), if any."""
        rows = self.query("SELECT id FROM players WHERE name_key = ? LIMIT 1", (key,))
        return str(rows[0][0]) if rows else None

    async def add_token(self, player_id: str, token_hash: str, created: float) -> None:
        """Store one more device's token of a player."""
        await self.write_sql(
            [
                (
                    "INSERT OR IGNORE INTO player_tokens (token_hash, player, created)"
                    " VALUES (?, ?, ?)",
                    (token_hash, player_id, created),
                )
            ]
        )

    def unused_players(self, before: float, after_id: str, limit: int) -> list[str]:
        """Up to ``limit`` ids, in order, after ``after_id``, of the stored players
        last connected (or, never since, created) before ``before``."""
        rows = self._rows(
            "SELECT id FROM players WHERE id > ? AND coalesce(last_seen, created) < ?"
            " AND id NOT IN (SELECT player FROM ratings)"
            " AND id NOT IN (SELECT player FROM result_seats WHERE player IS NOT NULL)"
            " ORDER BY id LIMIT ?",
            (after_id, before, limit),
        )
        ids = (_decoded(player_id) for (player_id,) in rows)
        return [player_id for player_id in ids if player_id is not None]

    def named_players(self) -> set[str]:
        """The id of every player a stored match names, as host or in a seat.
        A match whose seats do not read names every quoted string in them: a
        damaged row keeps more players, never fewer."""
        named: set[str] = set()
        for host, seats in self._rows("SELECT host, seats FROM matches"):
            named.add(_decoded(host) or "")
            try:
                entries = _json(seats, list, "seats")
                named.update(
                    entry["player"]
                    for entry in entries
                    if isinstance(entry, dict) and isinstance(entry.get("player"), str)
                )
                if all(isinstance(entry, dict) for entry in entries):
                    continue
            except _Damaged:
                pass
            named.update(_QUOTED.findall(_decoded(seats) or ""))
        return named

    def matches(self, statuses: Sequence[str], limit: int = 1000) -> list[MatchRow]:
        """Stored matches with one of these statuses, newest first (a damaged
        row is left out, with a log line)."""
        marks = ",".join("?" * len(statuses))
        rows = self._rows(
            "SELECT id, host, settings, seats, seed, salt, status, created, finished FROM matches"
            f" WHERE status IN ({marks}) ORDER BY created DESC LIMIT ?",
            (*statuses, limit),
        )
        result = []
        for row in rows:
            try:
                result.append(_match_row(row))
            except _Damaged as exc:
                log.error(
                    "match %s: its stored row is damaged (%s); left out, left on disk",
                    _shown(row[0]),
                    exc,
                )
        return result

    def match(self, match_id: str) -> MatchRow | None:
        """The stored match with this id, if any (one look-up by its key);
        raises :class:`StorageError` naming it if its row is damaged."""
        rows = self._rows(
            "SELECT id, host, settings, seats, seed, salt, status, created, finished FROM matches"
            " WHERE id = ?",
            (match_id,),
        )
        if not rows:
            return None
        try:
            return _match_row(rows[0])
        except _Damaged as exc:
            raise StorageError(f"match {match_id}: its stored row is damaged ({exc})") from None

    def status_of(self, match_id: str) -> str | None:
        """The stored status of the match with this id (``finished``, …), if it is stored."""
        rows = self.query("SELECT status FROM matches WHERE id = ?", (match_id,))
        return str(rows[0][0]) if rows else None

    def actions(self, match_id: str) -> list[tuple[int, dict[str, Any]]]:
        """A match's stored actions, in order, as ``(seat, action data)``; raises
        :class:`StorageError` naming the match if one is missing or damaged."""
        rows = self._rows(
            "SELECT idx, seat, action FROM actions WHERE match_id = ? ORDER BY idx", (match_id,)
        )
        actions = []
        for expected, (index, seat, action) in enumerate(rows):
            if index != expected:
                raise StorageError(f"match {match_id}: action {expected} is missing")
            try:
                data = _json(action, dict, "the action")
                actions.append((_whole(seat, "seat"), data))
            except _Damaged as exc:
                raise StorageError(f"match {match_id}: action {index} is damaged ({exc})") from None
        return actions

    def played_by(self, match_id: str) -> dict[int, str]:
        """Who chose each of a match's stored actions that its seat's own player
        did not, by action index (what was stored; the caller checks it)."""
        rows = self._rows(
            "SELECT idx, played_by FROM actions WHERE match_id = ? AND played_by IS NOT NULL",
            (match_id,),
        )
        return {
            index: by.decode("utf-8", "replace")
            for index, by in rows
            if isinstance(index, int) and isinstance(by, bytes)
        }


def _fill_name_keys(connection: sqlite3.Connection) -> None:
    """Give every player stored before names were unique its name's key."""
    rows = connection.execute("SELECT id, name FROM players WHERE name_key IS NULL").fetchall()
    if not rows:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany(
            "UPDATE players SET name_key = ? WHERE id = ?",
            [(name_key(name) if isinstance(name, str) else "", pid) for pid, name in rows],
        )
        connection.execute("COMMIT")
    except sqlite3.Error:
        connection.execute("ROLLBACK")
        raise


def _lenient_text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


#: a JSON string (what a damaged seats value is searched for)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _decoded(value: object) -> str | None:
    """Stored text as a str; None if it is not UTF-8 text (a damaged value)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


class _Damaged(Exception):
    """A stored value that is not what its column holds."""


def _shown(value: object) -> str:
    """A stored id as a log line can show it, even if it is not UTF-8."""
    if isinstance(value, bytes):  # its bad bytes as \xNN escapes
        return f"'{value.decode('utf-8', 'backslashreplace')}'"
    return repr(value)


def _text(value: object, what: str, *, null: bool = False) -> Any:
    if value is None and null:
        return None
    if not isinstance(value, bytes):
        raise _Damaged(f"{what} is stored as {type(value).__name__}, not text")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Damaged(f"{what} is not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _json(value: object, kind: type, what: str) -> Any:
    try:
        data = json.loads(_text(value, what))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise _Damaged(f"{what} is not JSON ({exc})") from None
    if not isinstance(data, kind):
        raise _Damaged(f"{what} is stored as JSON {type(data).__name__}")
    return data


def _whole(value: object, what: str, *, null: bool = False) -> Any:
    if value is None and null:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Damaged(f"{what} is stored as {type(value).__name__}, not a whole number")
    return value


def _blob(value: object, what: str, *, null: bool = False) -> Any:
    if value is None and null:
        return None
    if not isinstance(value, bytes):
        raise _Damaged(f"{what} is stored as {type(value).__name__}, not bytes")
    return value


def _number(value: object, what: str, *, null: bool = False) -> Any:
    if value is None and null:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _Damaged(f"{what} is stored as {type(value).__name__}, not a number")
    return float(value)


def _player_row(row: tuple[Any, ...]) -> PlayerRow | None:
    """A ``players`` row read back, or None (with a log line) if it is damaged."""
    try:
        return PlayerRow(*map(_text, row, ("id", "name", "token_hash")))
    except _Damaged as exc:
        log.error(
            "player %s: its stored row is damaged (%s); left out, left on disk",
            _shown(row[0]),
            exc,
        )
        return None


def _match_row(row: tuple[Any, ...]) -> MatchRow:
    """A ``matches`` row read back, every column checked for its type."""
    (match_id, host, settings, seats, seed, salt, status, created, finished) = row
    try:
        stored = [StoredSeat.from_data(seat) for seat in _json(seats, list, "seats")]
    except (ValueError, AttributeError) as exc:
        raise _Damaged(f"seats: {exc}") from None
    try:
        read = MatchSettings.from_data(_json(settings, dict, "settings"))
    except _Damaged:
        raise
    except (SettingsError, ValueError) as exc:  # the ruleset's own errors are ValueErrors
        raise _Damaged(f"settings: {exc}") from None
    return MatchRow(
        id=_text(match_id, "id"),
        host=_text(host, "host"),
        settings=read,
        seats=tuple(stored),
        seed=_whole(seed, "seed", null=True),
        status=_text(status, "status"),
        created=_number(created, "created"),
        finished=_number(finished, "finished", null=True),
        salt=_blob(salt, "salt", null=True),
    )


def _sql(write: Write) -> _Write:
    """The statement that stores one of a match's writes."""
    if isinstance(write, AppendAction):
        return (
            "INSERT INTO actions (match_id, idx, seat, action, played_by) VALUES (?, ?, ?, ?, ?)",
            (
                write.match_id,
                write.index,
                write.seat,
                json.dumps(write.action, separators=(",", ":")),
                write.by,
            ),
        )
    if isinstance(write, SaveMatch):
        row = write.row
        return (
            "INSERT INTO matches (id, host, settings, seats, seed, salt, status, created, finished)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
            " host = excluded.host, seats = excluded.seats, seed = excluded.seed,"
            " salt = excluded.salt, status = excluded.status, finished = excluded.finished",
            (
                row.id,
                row.host,
                json.dumps(row.settings.to_data(), separators=(",", ":")),
                json.dumps([seat.to_data() for seat in row.seats], separators=(",", ":")),
                row.seed,
                row.salt,
                row.status,
                row.created,
                row.finished,
            ),
        )
    assert isinstance(write, ForgetOpenMatch)
    return (
        "DELETE FROM matches WHERE id = ? AND status = 'open' AND seed IS NULL",
        (write.match_id,),
    )


def _settle_all(
    batch: list[_Job], errors: Sequence[BaseException | None], changes: Sequence[int]
) -> None:
    """Resolve each job's future in its own loop: one wake-up per loop, not per write."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_Settled]] = {}
    for job, error, changed in zip(batch, errors, changes, strict=True):
        by_loop.setdefault(job.loop, []).append((job.future, error, changed))
    for loop, settled in by_loop.items():
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
            loop.call_soon_threadsafe(_settle, settled)


_Settled = tuple["asyncio.Future[Any]", BaseException | None, int]


def _tell_locked(batch: list[_Job], reason: _Locked) -> None:
    """Tell each job of ``batch`` not told yet, in its own loop, that it waits for the lock."""
    for job in batch:
        if job.told or job.on_locked is None:
            continue
        job.told = True
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
            job.loop.call_soon_threadsafe(job.on_locked, StorageLocked(str(reason)))


def _settle(settled: list[_Settled]) -> None:
    for future, error, changed in settled:
        if future.done():
            continue
        if error is None:
            future.set_result(changed)
        else:
            future.set_exception(error)
