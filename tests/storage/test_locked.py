"""Issue 29, "a storage lock held by someone else": another process (a real
``sqlite3`` connection in a subprocess) holds ``BEGIN EXCLUSIVE`` on the
database while a match plays over real sockets. The match pauses as it does
for a failed write — everyone sees ``paused``, nothing is played, the server
goes on answering — then resumes by itself once the lock is gone, and every
action is stored exactly once. A shutdown while the lock is still held says
so, and leaves what was stored as it was.

The server runs in this process, so while it does the files are read through
its own connection only: copying them (``read_disk``) would open and close
them here, and a close drops every POSIX lock this process holds on the file
— SQLite's own included — so that the other process, closing last, would
checkpoint and delete the write-ahead log under the server's feet."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sqlite3
from pathlib import Path

import pytest

import protocol as wire
from client.sdk import RequestError
from server.match.info import Status
from server.storage import FILE_NAME

from .helpers import in_process, read_disk
from .lock_holder import holding
from .test_pause import Table, same_view, seat_two


async def expect_paused(seated: Table, marks: dict[str, int]) -> None:
    """Both players are told the match is ``paused``; the match is unchanged."""
    for name, player in (("ana", seated.ana), ("bea", seated.bea)):
        await player.wait_for(
            wire.MatchUpdate, lambda m: m.match.status == "paused", since=marks[name], timeout=8
        )
        assert not player.since(marks[name], wire.Event), f"{name} was told of an event"
    room = seated.running.lobby.matches[seated.match].core
    assert room.status is Status.PAUSED
    assert room.match is not None and len(room.match.history) == 2


async def test_a_lock_held_elsewhere_pauses_the_match_and_it_resumes_by_itself(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 29: Ana acts while another process holds the lock. After the
    lock wait, everyone sees ``paused``; meanwhile syncs are answered with the
    match as it was, and another act is refused with ``match_paused``. Once the
    lock is released the match resumes by itself: Ana hears ``ok``, both see
    ``running`` and the event, play goes on, and the disk holds each action
    exactly once. Storage and the match each log one WARNING when the writes
    began waiting (storage naming the lock's holder) and one INFO when they
    went through."""
    caplog.set_level(logging.INFO, logger="server")
    data = tmp_path / "data"
    async with in_process(data) as running:
        seated = await seat_two(running)
        try:
            before = await seated.views()
            marks = {"ana": seated.ana.mark(), "bea": seated.bea.mark()}
            async with holding(data / FILE_NAME) as holder:
                acting = asyncio.ensure_future(
                    seated.ana.session.answer(seated.prompt, seated.prompt.actions[0])
                )
                await expect_paused(seated, marks)
                assert not acting.done(), "Ana was answered before her action was stored"
                async with asyncio.timeout(5):  # the server goes on answering
                    during = await seated.bea.session.sync()
                    with pytest.raises(RequestError) as refused:
                        await seated.bea.session.act(seated.prompt.actions[0], seq=None)
                assert refused.value.code == "match_paused"
                assert same_view(during, before["bea"])
                assert len(running.storage.actions(seated.match)) == 2
                await holder.release()
            async with asyncio.timeout(8):
                await acting  # ok: stored, and carried out
            for name, player in (("ana", seated.ana), ("bea", seated.bea)):
                await player.wait_for(
                    wire.MatchUpdate, lambda m: m.match.status == "running", since=marks[name]
                )
                event = await player.wait_for(wire.Event, since=marks[name])
                assert event.seq == before[name].seq + 1, f"{name} missed the held action"
            room = running.lobby.matches[seated.match].core
            assert room.status is Status.RUNNING and len(room.match.history) == 3  # type: ignore[union-attr]
            nxt = await seated.ana.wait_for(wire.Prompt, since=marks["ana"])  # and play goes on
            async with asyncio.timeout(5):
                await seated.ana.session.answer(nxt, nxt.actions[0])
            stored = running.storage.actions(seated.match)
            assert len(stored) == 4
            assert stored[2][0] == seated.prompt.seat  # Ana's held action, stored once
        finally:
            await seated.ana.close()
            await seated.bea.close()
    phrases = ("locked by another", "lock is free", "waits for the database", "waited for the")
    lines = [r for r in caplog.records if any(p in r.getMessage() for p in phrases)]
    said = {(r.name, r.levelno): r.getMessage() for r in lines}
    assert len(lines) == len(said) == 4, [r.getMessage() for r in lines]  # each said once
    storage, match = "server.storage.database", "server.match.core"
    assert f"locked by another process (pid {holder.pid})" in said[storage, logging.WARNING]
    assert "the lock is free again" in said[storage, logging.INFO]
    assert seated.match in said[match, logging.WARNING]
    assert "resumes" in said[match, logging.INFO]
    with contextlib.closing(sqlite3.connect(data / FILE_NAME)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute(
            "SELECT idx, count(*) FROM actions WHERE match_id = ? GROUP BY idx", (seated.match,)
        ).fetchall()
    assert rows == [(index, 1) for index in range(4)]


async def test_stopping_while_the_lock_is_held_says_so_and_loses_nothing_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 29: the server stops while another process still holds the lock
    and an action waits for it. The log says the database is locked by that
    process and how many writes were not stored — not only that the disk was
    slow — the stop ends in time, and the file holds every action stored
    before, undamaged."""
    caplog.set_level(logging.INFO, logger="server")
    data = tmp_path / "data"
    async with in_process(data, stop_timeout=1.0) as running:
        seated = await seat_two(running)
        try:
            marks = {"ana": seated.ana.mark(), "bea": seated.bea.mark()}
            async with holding(data / FILE_NAME, max_seconds=30) as holder:
                acting = asyncio.ensure_future(
                    seated.ana.session.answer(seated.prompt, seated.prompt.actions[0])
                )
                await expect_paused(seated, marks)
                loop = asyncio.get_running_loop()
                started = loop.time()
                await running.server.stop()
                assert loop.time() - started < 6
        finally:
            acting.cancel()
            await seated.ana.close()
            await seated.bea.close()
    said = [r.getMessage() for r in caplog.records if "not stored" in r.getMessage()]
    # the held action, and perhaps when each of the two players was last seen: the
    # stop closes their connections while the storage still waits for the lock
    assert any(
        f"locked by another process (pid {holder.pid})" in line
        and re.search(r"\b[123] write\(s\) not stored", line)
        for line in said
    ), said
    assert not [r for r in caplog.records if "did not finish the last writes" in r.getMessage()]
    with contextlib.closing(sqlite3.connect(data / FILE_NAME)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert len(read_disk(data).actions[seated.match]) == 2
