"""``server.storage.Storage`` on its own, no server: the schema it creates,
what it stores and reads back, group commit, and failed writes."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine import ruleset_from_mapping
from server.match.records import StoredSeat
from server.match.settings import MatchSettings
from server.storage import (
    APPLICATION_ID,
    FILE_NAME,
    SCHEMA_VERSION,
    MatchRow,
    PlayerRow,
    Storage,
    StorageError,
)

SETTINGS_FIELDS = {f.name for f in dataclasses.fields(MatchSettings)}
#: a house ruleset (R30), so that its every number must come back as stored
RULESET = {"name": "short", "reveal_size": 3, "removed": {"4": 30}}


def match_row(match_id: str = "m1", **changes: Any) -> MatchRow:
    """A stored match with every field set to something distinctive; ``changes``
    may name the row's fields and its settings' alike."""
    settings: dict[str, Any] = {
        "name": "Friday — tulips 🌷",
        "ruleset_name": "short",
        "ruleset": ruleset_from_mapping(RULESET),
        "join_code": "secret code",
        "turn_timer": 30.5,
        "first_seat": 1,
    }
    fields: dict[str, Any] = {
        "id": match_id,
        "host": "p1",
        "seats": (StoredSeat(player="p1"), StoredSeat(bot="hard")),
        "seed": None,
        "status": "open",
        "created": 1700000000.25,
        "finished": None,
    }
    for key, value in changes.items():
        (settings if key in SETTINGS_FIELDS else fields)[key] = value
    return MatchRow(settings=MatchSettings(**settings), **fields)


@contextlib.asynccontextmanager
async def opened(data_dir: Path, synchronous: str = "FULL") -> AsyncIterator[Storage]:
    """An open storage, closed afterwards; what is done with it must take under 20 s."""
    storage = Storage(data_dir, synchronous=synchronous)
    storage.open()
    try:
        async with asyncio.timeout(20):
            yield storage
    finally:
        storage.close()


def raw(data_dir: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection to the data directory's database."""
    return sqlite3.connect(data_dir / FILE_NAME)


async def test_a_new_database_is_marked_as_ours(tmp_path: Path) -> None:
    """A fresh data directory (created if missing) gets a WAL database with our
    application_id, the schema version, and the three tables."""
    data = tmp_path / "new" / "data"
    async with opened(data):
        pass
    with contextlib.closing(raw(data)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"players", "matches", "actions"} <= tables
    assert int.from_bytes(b"TULP", "big") == APPLICATION_ID


async def test_reopening_an_existing_database_changes_nothing(tmp_path: Path) -> None:
    """Opening our own database again migrates nothing and keeps every row."""
    async with opened(tmp_path) as storage:
        await storage.save_player(PlayerRow("p1", "Ana", "h1"), 1.0)
    async with opened(tmp_path) as storage:
        assert storage.players() == [PlayerRow("p1", "Ana", "h1")]
    with contextlib.closing(raw(tmp_path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_players_matches_and_actions_round_trip(tmp_path: Path, synchronous: str) -> None:
    """Everything written comes back equal, across a close and a reopen."""
    async with opened(tmp_path, synchronous) as storage:
        await storage.save_player(PlayerRow("p1", "Ana", "hash-1"), 10.0)
        await storage.save_player(PlayerRow("p2", "Bea", "hash-2"), 11.0)
        await storage.save_player(PlayerRow("p1", "Ana María", "hash-1"), 12.0)  # a new name
        await storage.save_match(match_row("m1"))
        await storage.save_match(match_row("m2", status="running", seed=2**63 - 1, created=5.0))
        actions: list[tuple[int, dict[str, Any]]] = [
            (0, {"kind": "opening", "secret": "pink-3"}),
            (1, {"kind": "opening", "secret": "blue-1"}),
            (1, {"kind": "give", "to_seat": 0}),
            (1, {"kind": "add_secret"}),
        ]
        for index, (seat, action) in enumerate(actions):
            await storage.append_action("m2", index, seat, action)
        # a match goes on: its row is written again with the new status
        await storage.save_match(
            match_row("m1", status="finished", seed=7, finished=99.5, host="p2")
        )
    async with opened(tmp_path) as storage:
        assert sorted(storage.players(), key=lambda p: p.id) == [
            PlayerRow("p1", "Ana María", "hash-1"),
            PlayerRow("p2", "Bea", "hash-2"),
        ]
        assert storage.matches(["running"]) == [
            match_row("m2", status="running", seed=2**63 - 1, created=5.0)
        ]
        assert storage.matches(["finished"]) == [
            match_row("m1", status="finished", seed=7, finished=99.5, host="p2")
        ]
        assert storage.matches(["open"]) == []
        both = storage.matches(["running", "finished"])
        assert [row.id for row in both] == ["m1", "m2"]  # newest first
        assert storage.matches(["running", "finished"], limit=1)[0].id == "m1"
        assert storage.actions("m2") == actions
        assert storage.actions("m1") == []
        assert storage.actions("no such match") == []


async def test_actions_come_back_in_index_order(tmp_path: Path) -> None:
    """Whatever order they were written in, actions are read by index; each
    match's actions are its own."""
    order = [5, 0, 3, 1, 4, 2]
    async with opened(tmp_path) as storage:
        for index in order:
            await storage.append_action("a", index, index % 4, {"kind": "keep", "n": index})
            await storage.append_action("b", index, 0, {"kind": "add_face_up"})
        assert [data["n"] for _, data in storage.actions("a")] == list(range(6))
        assert [seat for seat, _ in storage.actions("a")] == [i % 4 for i in range(6)]
        assert len(storage.actions("b")) == 6


async def test_a_missing_action_is_reported(tmp_path: Path) -> None:
    """A gap in a match's actions is an error, never a silently shorter match."""
    async with opened(tmp_path) as storage:
        for index in (0, 1, 3):
            await storage.append_action("m", index, 0, {"kind": "keep"})
        with pytest.raises(StorageError, match="action 2 is missing"):
            storage.actions("m")


async def test_group_commit_resolves_every_write_once_all_are_on_disk(tmp_path: Path) -> None:
    """Writes queued while the writer is busy are committed together, in one
    transaction, and every awaiting coroutine resumes only after that commit."""
    commits: list[int] = []
    busy = threading.Event()
    release = threading.Event()

    def after_commit(count: int) -> None:  # the writer thread, after each commit
        commits.append(count)
        if count == 1:
            busy.set()
            release.wait(10)

    async with opened(tmp_path) as storage:
        storage.after_commit = after_commit
        first = asyncio.ensure_future(storage.append_action("m", 0, 0, {"kind": "keep"}))
        async with asyncio.timeout(10):
            await asyncio.to_thread(busy.wait, 10)  # the writer is held after commit 1
        many = [
            asyncio.ensure_future(storage.append_action("m", index, index % 4, {"i": index}))
            for index in range(1, 301)
        ]
        await asyncio.sleep(0.05)
        assert not first.done(), "a write resolved before its commit was finished"
        assert not any(future.done() for future in many)
        release.set()
        async with asyncio.timeout(10):
            await asyncio.gather(first, *many)
        assert commits == [1, 2], f"300 queued writes took commits {commits}"
        stored = storage.actions("m")
        assert len(stored) == 301
        assert [data.get("i") for _, data in stored[1:]] == list(range(1, 301))


async def test_concurrent_writes_all_land(tmp_path: Path) -> None:
    """Many coroutines writing at once: every await resolves and every row is there."""
    async with opened(tmp_path) as storage:
        async with asyncio.timeout(20):
            await asyncio.gather(
                *(
                    storage.append_action(f"m{index % 7}", index // 7, 0, {"n": index})
                    for index in range(700)
                ),
                *(
                    storage.save_player(PlayerRow(f"p{i}", f"P{i}", f"h{i}"), 0.0)
                    for i in range(50)
                ),
            )
        for match in range(7):
            assert [data["n"] for _, data in storage.actions(f"m{match}")] == [
                index for index in range(700) if index % 7 == match
            ]
        assert len(storage.players()) == 50


async def test_a_failed_write_raises_and_later_writes_still_work(tmp_path: Path) -> None:
    """A duplicate (match, index) fails with StorageError in the coroutine that
    awaited it; the stored action is unchanged and the writer goes on."""
    async with opened(tmp_path) as storage:
        await storage.append_action("m", 0, 0, {"kind": "keep"})
        with pytest.raises(StorageError, match=r"cannot write to .*tulips\.sqlite3"):
            await storage.append_action("m", 0, 1, {"kind": "give", "to_seat": 0})
        await storage.append_action("m", 1, 2, {"kind": "add_secret"})
        await storage.save_player(PlayerRow("p1", "Ana", "h"), 0.0)
        assert storage.actions("m") == [(0, {"kind": "keep"}), (2, {"kind": "add_secret"})]
        assert storage.players() == [PlayerRow("p1", "Ana", "h")]
        # a second player with the same token hash: refused too
        with pytest.raises(StorageError):
            await storage.save_player(PlayerRow("p2", "Bea", "h"), 0.0)
        await storage.append_action("m", 2, 3, {"kind": "keep"})
        assert len(storage.actions("m")) == 3


async def test_a_write_fails_when_the_database_changes_underneath(tmp_path: Path) -> None:
    """Another program breaks the database under a running server (here: drops
    a table): the write fails with StorageError, and the rest still works."""
    async with opened(tmp_path) as storage:
        await storage.append_action("m", 0, 0, {"kind": "keep"})
        with contextlib.closing(raw(tmp_path)) as db:
            db.execute("DROP TABLE actions")
            db.commit()
        with pytest.raises(StorageError, match="no such table"):
            await storage.append_action("m", 1, 0, {"kind": "keep"})
        await storage.save_player(PlayerRow("p1", "Ana", "h"), 0.0)  # the writer lives on
        assert storage.players() == [PlayerRow("p1", "Ana", "h")]


async def test_a_failed_write_fails_only_itself_in_a_group(tmp_path: Path) -> None:
    """Writes committed in the same group as a failing one are not failed with
    it: each coroutine hears about its own write."""
    busy = threading.Event()
    release = threading.Event()

    def after_commit(count: int) -> None:
        if not busy.is_set():  # hold the writer after the next commit
            busy.set()
            release.wait(10)

    async with opened(tmp_path) as storage:
        await storage.append_action("a", 0, 0, {"kind": "keep"})
        storage.after_commit = after_commit
        holder = asyncio.ensure_future(storage.save_player(PlayerRow("p0", "Zoe", "h0"), 0.0))
        async with asyncio.timeout(10):
            await asyncio.to_thread(busy.wait, 10)
        good = asyncio.ensure_future(storage.append_action("b", 0, 0, {"kind": "keep"}))
        bad = asyncio.ensure_future(storage.append_action("a", 0, 1, {"kind": "keep"}))
        also_good = asyncio.ensure_future(storage.save_player(PlayerRow("p1", "Ana", "h1"), 0.0))
        await asyncio.sleep(0.05)
        release.set()
        async with asyncio.timeout(10):
            results = await asyncio.gather(holder, good, bad, also_good, return_exceptions=True)
        assert isinstance(results[2], StorageError)
        assert results[1] is None and results[3] is None, results
        assert storage.actions("b") == [(0, {"kind": "keep"})]


async def test_an_unexpected_writer_error_fails_every_write_queued_or_later(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An error in the writer thread that is not the database's (raised here
    inside its transaction) stops storing for good: the write being committed,
    those queued behind it and any asked for later all fail with StorageError
    — none hangs, none is stored — and the error is logged once."""
    inside = threading.Event()
    go_on = threading.Event()

    def bug(count: int) -> None:
        inside.set()
        go_on.wait(10)
        raise ValueError("injected")

    async with opened(tmp_path) as storage:
        storage.before_commit = bug
        try:
            first = asyncio.ensure_future(storage.append_action("m", 0, 0, {"kind": "keep"}))
            await asyncio.to_thread(inside.wait, 10)
            queued = [
                asyncio.ensure_future(storage.append_action("m", i, 0, {"kind": "keep"}))
                for i in range(1, 5)
            ]
            await asyncio.sleep(0)
        finally:
            go_on.set()
        results = await asyncio.gather(first, *queued, return_exceptions=True)
        assert all(isinstance(r, StorageError) for r in results), results
        with pytest.raises(StorageError, match=r"unexpected error .*injected"):
            await storage.save_player(PlayerRow("p", "P", "h"), 0.0)
        assert storage.failed is not None
        assert storage.actions("m") == []
        await storage.aclose(5)
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failures) == 1 and failures[0].exc_info is not None, failures


async def test_aclose_stores_what_is_queued_while_the_event_loop_runs(tmp_path: Path) -> None:
    """On a slow disk (each commit takes 0.2 s) ``aclose`` waits for every
    write already queued to be stored, and the event loop runs meanwhile."""
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async with opened(tmp_path) as storage:
        storage.before_commit = lambda count: time.sleep(0.2)
        writes = [
            asyncio.ensure_future(storage.append_action("m", i, 0, {"kind": "keep"}))
            for i in range(3)
        ]
        await asyncio.sleep(0)
        ticker = asyncio.create_task(tick())
        await storage.aclose(10)
        ticker.cancel()
        assert ticks > 0, "aclose blocked the event loop"
        assert await asyncio.gather(*writes) == [None] * 3
        with pytest.raises(StorageError, match="not open"):
            await storage.append_action("m", 3, 0, {"kind": "keep"})
    with contextlib.closing(raw(tmp_path)) as db:
        assert db.execute("SELECT count(*) FROM actions").fetchone()[0] == 3


async def test_aclose_gives_up_on_a_hung_disk_after_its_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The disk hangs in the middle of a commit: ``aclose`` returns after its
    timeout and says so; the write was never acknowledged, and when the disk
    comes back it is committed whole."""
    release = threading.Event()
    hanging = threading.Event()

    def hang(count: int) -> None:
        hanging.set()
        release.wait(10)

    storage = Storage(tmp_path)
    storage.open()
    storage.before_commit = hang
    try:
        async with asyncio.timeout(10):
            write = asyncio.ensure_future(storage.append_action("m", 0, 0, {"kind": "keep"}))
            await asyncio.to_thread(hanging.wait, 10)
            await storage.aclose(0.2)
            assert not write.done(), "a write was acknowledged before its commit"
            assert any("did not finish" in r.getMessage() for r in caplog.records)
            release.set()
            await write
    finally:
        release.set()
    with contextlib.closing(raw(tmp_path)) as db:
        assert db.execute("SELECT seat, action FROM actions").fetchall() == [(0, '{"kind":"keep"}')]


async def test_writing_needs_an_open_storage(tmp_path: Path) -> None:
    """Before open and after close, a write or a read is a StorageError."""
    storage = Storage(tmp_path)
    async with asyncio.timeout(10):
        with pytest.raises(StorageError, match="not open"):
            await storage.append_action("m", 0, 0, {"kind": "keep"})
        with pytest.raises(StorageError, match="not open"):
            storage.players()
        storage.open()
        storage.close()
        with pytest.raises(StorageError, match="not open"):
            await storage.save_player(PlayerRow("p", "P", "h"), 0.0)


def test_only_full_or_normal_sync() -> None:
    """The synchronous setting is FULL or NORMAL, nothing that could lose a commit."""
    with pytest.raises(ValueError):
        Storage(Path("unused"), synchronous="OFF")
