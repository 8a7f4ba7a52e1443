"""Issue 29, "a storage lock held by someone else", in storage alone.

:class:`LockWait` with a fake clock: how long the writer waits between tries
(0.1 s doubling to 2 s), and that a wait is begun, and ended, once. Then the
writer against a real lock (a ``sqlite3`` subprocess holding ``BEGIN
EXCLUSIVE``): a locked write is not failed but kept, with the writes queued
after it behind it, each told once; all are stored once the lock goes; and a
close while it is still held fails them in one log line, nothing stored lost."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from pathlib import Path

import pytest

from server.errors import StorageError, StorageLocked
from server.storage import FILE_NAME, PlayerRow, Storage
from server.storage.lockwait import LockWait

from .lock_holder import holding

# -- the wait, with a fake clock --------------------------------------------------------


def test_each_try_waits_twice_as_long_up_to_two_seconds() -> None:
    """Issue 29: 0.1 s, doubling, never more than 2 s; only the first try begins the wait."""
    wait = LockWait()
    tries = [wait.locked(100.0 + n) for n in range(8)]
    assert [delay for delay, _ in tries] == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]
    assert [began for _, began in tries] == [True] + [False] * 7
    assert wait.waiting and wait.since == 100.0


def test_going_through_ends_the_wait_and_says_how_long_it_lasted() -> None:
    """Issue 29: the INFO's number: seconds since the first locked try; then a
    new wait begins afresh (0.1 s again), and going through unlocked says nothing."""
    wait = LockWait()
    assert wait.through(5.0) is None
    wait.locked(10.0)
    wait.locked(10.1)
    assert wait.through(12.5) == pytest.approx(2.5)
    assert not wait.waiting
    assert wait.locked(20.0) == (0.1, True)


def test_a_wait_that_makes_no_sense_is_refused() -> None:
    """Bad numbers are a clear error, not a writer that spins or never tries."""
    with pytest.raises(ValueError):
        LockWait(first=0)
    with pytest.raises(ValueError):
        LockWait(first=3, longest=2)
    with pytest.raises(ValueError):
        Storage(Path("x"), lock_timeout=-1)


# -- the writer against a real lock -----------------------------------------------------


def player(n: int) -> PlayerRow:
    """A player row to store."""
    return PlayerRow(f"p{n}", f"Player {n}", f"hash-{n}")


def stored_players(data: Path) -> list[str]:
    """The players on disk (read once the storage is closed)."""
    with contextlib.closing(sqlite3.connect(data / FILE_NAME)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return [row[0] for row in db.execute("SELECT id FROM players ORDER BY id")]


async def test_locked_writes_wait_behind_each_other_and_go_through_once_it_is_gone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 29: a write that finds the lock held is told so once (its
    ``on_locked``) and not failed; one queued after it waits behind it, told
    too; once the lock is released both are stored, in order, exactly once —
    with one WARNING and one INFO however many tries it took."""
    caplog.set_level(logging.INFO, logger="server")
    data = tmp_path / "data"
    storage = Storage(data, lock_timeout=0.05)
    storage.open()
    try:
        await storage.save_player(player(0), 1.0)
        told: list[tuple[str, StorageLocked]] = []
        async with holding(data / FILE_NAME) as holder:
            loop = asyncio.get_running_loop()
            first = storage._submit(
                [
                    (
                        "INSERT INTO players (id, name, token_hash, created, last_seen)"
                        " VALUES ('p1', 'A', 'h1', 1, 1)",
                        (),
                    )
                ],
                lambda why: told.append(("first", why)),
            )
            async with asyncio.timeout(5):
                while not told:
                    await asyncio.sleep(0.01)
            second = storage._submit(
                [
                    (
                        "INSERT INTO players (id, name, token_hash, created, last_seen)"
                        " VALUES ('p2', 'B', 'h2', 1, 1)",
                        (),
                    )
                ],
                lambda why: told.append(("second", why)),
            )
            async with asyncio.timeout(5):
                while len(told) < 2:
                    await asyncio.sleep(0.01)
            async with asyncio.timeout(5):  # a few more tries
                while storage._lock_wait.tries < 3:
                    await asyncio.sleep(0.05)
            assert not first.done() and not second.done()
            assert storage.locked is not None and f"pid {holder.pid}" in storage.locked
            assert f"(pid {holder.pid})" in str(told[0][1])
            released = loop.time()
            await holder.release()
        async with asyncio.timeout(5):
            assert await first == 1 and await second == 1
        assert loop.time() - released < 2.5  # the next try, at most 2 s later
        assert [name for name, _ in told] == ["first", "second"]  # each told once
        assert storage.locked is None
        phrases = ("locked by another", "lock is free")
        levels = [r.levelno for r in caplog.records if any(p in r.getMessage() for p in phrases)]
        assert levels == [logging.WARNING, logging.INFO], [r.getMessage() for r in caplog.records]
    finally:
        await storage.aclose()
    assert stored_players(data) == ["p0", "p1", "p2"]


async def test_closing_while_the_lock_is_held_fails_the_waiting_writes_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 29: the close's time runs out while the lock is still held: the
    waiting writes fail (not stored, never acknowledged), the log says the
    database is locked by that process and how many were not stored, the
    close ends within the lock wait, and what was stored before is intact."""
    data = tmp_path / "data"
    storage = Storage(data, lock_timeout=0.2)
    storage.open()
    await storage.save_player(player(0), 1.0)
    async with holding(data / FILE_NAME) as holder:
        waiting = [asyncio.ensure_future(storage.save_player(player(n), 1.0)) for n in (1, 2)]
        async with asyncio.timeout(5):
            while storage.locked is None:
                await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await storage.aclose(timeout=0.3)
        assert loop.time() - started < 0.3 + 0.2 + 1.0
        for write in waiting:
            with pytest.raises(StorageError, match=r"not stored: the database .* is locked"):
                await write
        said = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert len(said) == 1, said
        assert f"locked by another process (pid {holder.pid})" in said[0]
        assert "2 write(s) not stored" in said[0]
    assert stored_players(data) == ["p0"]
