"""SIGTERM stops a server in time, whatever its clients do: within a second
when nothing waits for the disk, and within ``--stop-timeout`` when a
player's machine froze (SIGSTOP: it never answers the close) — the disk's
writes finished and the database closed all the same, and the log naming
what was waited for. Real ``python -m server`` processes, real sockets."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from client.sdk import connect
from server.storage import FILE_NAME

from ..server.frozen import frozen_player
from .helpers import Servers, read_disk

STOP_TIMEOUT = 1.5


def _closed_cleanly(data: Path) -> bool:
    """SQLite removes the write-ahead log when its last connection closes."""
    wal = data / f"{FILE_NAME}-wal"
    return not wal.exists() or wal.stat().st_size == 0


@pytest.mark.alone
async def test_sigterm_stops_within_a_second_when_every_client_answers(
    servers: Servers, tmp_path: Path
) -> None:
    """Two players in a running match, both answering: SIGTERM ends the server
    in under a second, and its database is closed."""
    data = tmp_path / "data"
    server = await servers.start(data, "--stop-timeout", "5")
    async with (
        connect(server.url, name="Ana", reconnect=False) as ana,
        connect(server.url, name="Bea", reconnect=False) as bea,
    ):
        joined = await ana.create_match(seats=3, bots=[(2, "easy")])
        await bea.join(joined.match)
        await ana.start()
        started = time.monotonic()
        assert await server.stop(timeout=10) == 0
        took = time.monotonic() - started
    assert took < 1.0, f"stopped in {took:.2f} s"
    assert _closed_cleanly(data)
    assert "did not answer the close" not in server.log()


async def test_a_frozen_player_does_not_keep_the_server_or_spend_the_disks_time(
    servers: Servers, tmp_path: Path
) -> None:
    """A player's process is frozen while it holds an open match: SIGTERM ends
    the server within --stop-timeout (plus start-up slack), the disk had all
    the time it needed — the match is on disk, the database closed — and the
    log says a client did not answer, not that the disk was late."""
    data = tmp_path / "data"
    server = await servers.start(data, "--stop-timeout", str(STOP_TIMEOUT))
    async with frozen_player(server.url):
        started = time.monotonic()
        assert await server.stop(timeout=STOP_TIMEOUT + 10) == 0
        took = time.monotonic() - started
    assert took < STOP_TIMEOUT + 1.0, f"stopped in {took:.2f} s"
    log = server.log()
    assert "did not answer the close" in log
    assert "did not finish the last writes" not in log
    assert _closed_cleanly(data)
    (match,) = read_disk(data).matches.values()
    assert match["status"] == "open"
