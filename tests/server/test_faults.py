"""Faults a server left running on a LAN meets, each injected for real and
each ending in its documented state (PROTOCOL.md, "When the server's disk
fails" and "When the server stops"):

* the storage writer thread meets an unexpected error: the matches waiting on
  it pause, every later write fails at once, the error is logged once;
* the disk refuses writes (full): a new player's ``hello`` gets
  ``storage_unavailable`` and close 1013, ``start`` gets ``storage_unavailable``
  and the match stays open, a returning player is welcomed;
* the hard bots' worker processes are killed: a medium bot steps in, the match
  goes on, and the workers are started afresh later;
* the disk hangs while the server stops: ``stop()`` ends within its bound with
  the event loop running, and every acknowledged action is on disk.

Real servers on 127.0.0.1, real SQLite files, real worker processes; every
wait bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import random
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

import protocol as wire
from client.sdk import RequestError, Session
from engine.record import action_to_data
from server.match.info import Status
from server.storage import FILE_NAME
from tests.storage.helpers import (
    InProcess,
    Replayed,
    Seen,
    in_process,
    open_session,
    play,
    read_disk,
    wire_action_data,
)

from .helpers import RawClient, play_randomly, serve

FULL = "database or disk is full"


# -- helpers --------------------------------------------------------------------------------------


async def two_seated(running: InProcess) -> tuple[Session, Session, str, wire.Prompt]:
    """Ana hosts a 2-seat match, Bea joins, both make their opening choice;
    returns their sessions, the match, and Ana's prompt for turn 1's card."""
    ana = await open_session(running.url, "Ana")
    bea = await open_session(running.url, "Bea")
    async with asyncio.timeout(10):
        joined = await ana.create_match(name="faults", seats=2, first_seat=0)
        await bea.join(joined.match)
        await ana.start()
        for player in (ana, bea):
            opening = await player.next_of(wire.Prompt)
            await player.answer(opening, opening.actions[0])
        while True:
            prompt = await ana.next_of(wire.Prompt)
            if not isinstance(prompt.actions[0], wire.Opening):
                return ana, bea, joined.match, prompt


async def refused_hello(url: str, name: str) -> tuple[dict[str, Any], int | None]:
    """A hello without a token: the answer and the close code it was closed with."""
    client = await RawClient.connect(url)
    answer = await client.request("hello", client="faults-test/1", name=name)
    return answer, await client.closed()


def fill_the_disk(data_dir: Path) -> None:
    """From now on every write of a player, a match or an action fails in the
    database itself, with SQLite's own words for a full disk."""
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        for table in ("players", "matches", "actions"):
            for event in ("INSERT", "UPDATE"):
                db.execute(
                    f"CREATE TRIGGER full_{table}_{event.lower()} BEFORE {event} ON {table}"
                    f" BEGIN SELECT RAISE(FAIL, '{FULL}'); END"
                )
        db.commit()


def free_the_disk(data_dir: Path) -> None:
    """Undo :func:`fill_the_disk`."""
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        names = [
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'")
        ]
        for name in names:
            db.execute(f"DROP TRIGGER {name}")
        db.commit()


def records(caplog: pytest.LogCaptureFixture, level: int, text: str) -> list[logging.LogRecord]:
    """The captured log records at ``level`` whose message contains ``text``."""
    return [r for r in caplog.records if r.levelno == level and text in r.getMessage()]


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """Captured records that carry a traceback."""
    return [r for r in caplog.records if r.exc_info]


# -- the storage writer thread --------------------------------------------------------------------


async def test_an_unexpected_writer_error_pauses_the_match_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An error that is not the database's (raised here inside the writer's
    transaction) stops storing for good: Ana's action gets ``match_paused``
    instead of hanging, the match is paused, later writes fail at once (a new
    player, a start), the error is logged once, and the server stops."""
    caplog.set_level(logging.INFO)
    data = tmp_path / "data"
    async with in_process(data) as running:
        ana, bea, match, prompt = await two_seated(running)
        cem = await open_session(running.url, "Cem")
        open_match = (await cem.create_match(name="not yet", seats=2, bots=[(1, "easy")])).match
        stored = len(read_disk(data).actions[match])

        def bug(count: int) -> None:  # the writer thread, inside the transaction
            raise RuntimeError("injected: a bug in the writer")

        running.storage.before_commit = bug
        with pytest.raises(RequestError) as paused:
            async with asyncio.timeout(5):
                await ana.answer(prompt, prompt.actions[0])
        assert paused.value.code == "match_paused"
        assert running.lobby.matches[match].core.status is Status.PAUSED
        assert running.storage.failed is not None

        with pytest.raises(RequestError) as refused:
            async with asyncio.timeout(5):
                await cem.start()
        assert refused.value.code == "storage_unavailable"
        assert running.lobby.matches[open_match].core.status is Status.OPEN
        answer, code = await refused_hello(running.url, "Dan")
        assert (answer["type"], answer["code"]) == ("error", "storage_unavailable")
        assert code == wire.CloseCode.TRY_AGAIN_LATER

        critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
        assert len(critical) == 1, critical
        assert critical[0].exc_info is not None
        assert "injected: a bug in the writer" in critical[0].getMessage()
        for session in (ana, bea, cem):
            await session.close()
    assert len(read_disk(data).actions[match]) == stored


# -- a full disk ----------------------------------------------------------------------------------


async def test_a_full_disk_turns_new_players_away_cleanly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The database refuses every write: a new player's hello gets
    ``storage_unavailable`` and close 1013 (and is not kept), ``start`` gets
    ``storage_unavailable`` with the match still open, a returning player is
    welcomed, no traceback is logged; once the disk has room, all works again."""
    caplog.set_level(logging.INFO)
    data = tmp_path / "data"
    async with in_process(data) as running:
        ana = await open_session(running.url, "Ana")
        joined = await ana.create_match(name="full", seats=2, bots=[(1, "easy")])
        token = ana.token
        players = len(running.lobby.players)
        fill_the_disk(data)

        answer, code = await refused_hello(running.url, "Bea")
        assert (answer["type"], answer["code"]) == ("error", "storage_unavailable")
        assert code == wire.CloseCode.TRY_AGAIN_LATER
        assert len(running.lobby.players) == players, "a refused player was kept"
        assert len(records(caplog, logging.ERROR, "new player is refused")) == 1

        with pytest.raises(RequestError) as refused:
            async with asyncio.timeout(5):
                await ana.start()
        assert refused.value.code == "storage_unavailable"
        assert running.lobby.matches[joined.match].core.status is Status.OPEN
        await ana.close()

        back = await open_session(running.url, "Ana again", token=token)
        assert back.player_id == ana.player_id
        assert records(caplog, logging.WARNING, "new name is not stored")
        assert not tracebacks(caplog), tracebacks(caplog)

        free_the_disk(data)
        async with asyncio.timeout(5):
            await back.start()
        carla = await open_session(running.url, "Carla")
        assert carla.token is not None
        await back.close()
        await carla.close()
    stored = read_disk(data)
    assert stored.matches[joined.match]["seed"] is not None
    assert {name for name, _ in stored.players.values()} == {"Ana", "Carla"}


# -- the hard bots' worker processes --------------------------------------------------------------


def child_pids() -> set[int]:
    """This process's live multiprocessing children."""
    return {child.pid for child in multiprocessing.active_children() if child.pid is not None}


async def kill_pool_workers(older: set[int], timeout: float = 15.0) -> set[int]:
    """Wait until the hard bots' pool has a worker process (a child not in
    ``older``), then SIGKILL every such worker; their pids."""
    async with asyncio.timeout(timeout):
        while not (workers := child_pids() - older):
            await asyncio.sleep(0.01)
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    return workers


async def bots_only(url: str, strengths: tuple[str, str]) -> tuple[Session, asyncio.Task[Any]]:
    """A started 2-seat match of two bots, followed to its end by its host (a spectator)."""
    host = await open_session(url, "Host")
    await host.create_match(name="bots", seats=2, bots=list(enumerate(strengths)))
    await host.start()
    return host, asyncio.create_task(play_randomly(host, None, random.Random(1), timeout=30))


async def test_when_the_bot_workers_die_a_medium_bot_steps_in(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A hard bot's worker process is killed while it searches (for seconds):
    a medium bot decides that move and the next ones, and the match ends;
    the break is logged once, and no bot failure is."""
    caplog.set_level(logging.INFO)
    async with serve(bot_think_ms=3000.0) as running:
        thinker = running.lobby.thinker
        thinker.retry_after = 3600.0  # no new workers during this test
        older = child_pids()
        host, following = await bots_only(running.url, ("hard", "easy"))
        try:
            await kill_pool_workers(older)
            tracker = await following
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await host.close()
        assert tracker.over
        assert thinker.stand_ins >= 1
    assert len(records(caplog, logging.ERROR, "worker processes died")) == 1
    assert not records(caplog, logging.ERROR, "failed")


async def test_the_bot_workers_are_started_afresh_after_they_died(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Workers killed in the middle of a match: the match ends, and the hard
    bot's later decisions run in new worker processes."""
    caplog.set_level(logging.INFO)
    async with serve(bot_think_ms=5.0, bot_delay=0.02) as running:
        thinker = running.lobby.thinker
        thinker.retry_after = 0.0
        older = child_pids()
        host, following = await bots_only(running.url, ("hard", "easy"))
        try:
            killed = await kill_pool_workers(older)
            tracker = await following
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await host.close()
        assert tracker.over
        assert child_pids() - killed - older, "no new worker process was started"
    assert len(records(caplog, logging.ERROR, "worker processes died")) == 1


# -- stopping while the disk hangs ----------------------------------------------------------------


def storage_threads() -> list[threading.Thread]:
    """The storage writer threads alive in this process."""
    return [t for t in threading.enumerate() if t.name == "tulips-storage"]


async def test_stop_with_a_hung_disk_ends_in_time_and_loses_nothing_acknowledged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The disk stops answering in the middle of two matches: ``stop()`` still
    ends, within ``stop_timeout``, with the event loop running all along, and
    says which writes it gave up on. After a restart on the same data, every
    action a client had ``ok`` for, and every event it was shown, is there."""
    caplog.set_level(logging.INFO)
    data = tmp_path / "data"
    hung = threading.Event()
    unhang = threading.Event()

    def hang(count: int) -> None:  # the writer thread, inside a transaction
        if count >= 30:
            hung.set()
            unhang.wait(30)

    async with in_process(data, stop_timeout=1.0) as running:
        ana = await open_session(running.url, "Ana")
        bea = await open_session(running.url, "Bea")
        joined = await ana.create_match(name="hung", seats=2)
        match = joined.match
        await bea.join(match)
        seens = [
            Seen("Ana", 0, ana.player_id or "", ana.token or ""),
            Seen("Bea", 1, bea.player_id or "", bea.token or ""),
        ]
        host, following = await bots_only(running.url, ("medium", "easy"))
        running.storage.before_commit = hang
        await ana.start()
        players = [
            asyncio.create_task(play(session, seen, random.Random(number)))
            for number, (session, seen) in enumerate(zip((ana, bea), seens, strict=True))
        ]
        try:
            await asyncio.to_thread(hung.wait, 20)
            assert hung.is_set(), "the matches never made 30 commits"
            ticks = 0

            async def tick() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticker = asyncio.create_task(tick())
            async with asyncio.timeout(10):
                await running.server.stop()
            ticker.cancel()
            assert ticks >= 10, f"the event loop ran {ticks} times while stopping"
            assert records(caplog, logging.ERROR, "did not finish the last writes")
            async with asyncio.timeout(10):
                assert set(await asyncio.gather(*players)) <= {"lost", "over"}
        finally:
            unhang.set()
            for task in [following, *players]:
                task.cancel()
            await asyncio.gather(following, *players, return_exceptions=True)
            for session in (ana, bea, host):
                await session.close()
        for thread in storage_threads():
            await asyncio.to_thread(thread.join, 10)

    async with in_process(data) as again:
        room = again.lobby.matches[match].core
        assert room.match is not None
        history = [(seat, action_to_data(action)) for seat, action in room.match.history]
    disk = read_disk(data)
    assert disk.actions[match] == history
    row = disk.matches[match]
    replayed = Replayed.of(2, row["seed"], row["first_seat"], history)
    for seen in seens:
        assert seen.acked, f"{seen.name} had no action acknowledged"
        mine = [data for seat, data in history if seat == seen.seat]
        acked = [wire_action_data(sent.action) for sent in seen.acked]
        assert mine[: len(acked)] == acked, f"{seen.name}: an acknowledged action is lost"
        events = replayed.wire_events(seen.seat)
        for seq, event in seen.events.items():
            assert seq <= len(events), f"{seen.name} was shown event {seq}, not stored"
            assert events[seq - 1] == event
