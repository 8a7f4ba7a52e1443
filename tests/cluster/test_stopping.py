"""A cluster node stops on SIGTERM in time even when one of its players'
machines froze (SIGSTOP: the connection stays, the close is never answered):
within --stop-timeout, its database closed. (It used to wait for ever: on
Python 3.11 redis-py's commands can swallow a task's cancellation,
CPython gh-86296.) Real nodes, a private redis-server."""

from __future__ import annotations

import time
from pathlib import Path

from client.loadgen.redisproc import RedisProcess
from server.storage import FILE_NAME

from ..server.frozen import frozen_player
from .helpers import NodeProcess, needs_redis

STOP_TIMEOUT = 1.5

pytestmark = needs_redis


def _stop_timed(node: NodeProcess, limit: float) -> float:
    """SIGTERM the node; seconds until it exited (killed, and failed, past ``limit``)."""
    process = node.process
    assert process is not None
    started = time.monotonic()
    process.terminate()
    try:
        process.wait(limit)
    except Exception:
        process.kill()
        process.wait(10)
        raise AssertionError(f"still running {limit} s after SIGTERM:\n{node.tail()}") from None
    return time.monotonic() - started


async def test_a_node_with_a_frozen_player_stops_within_the_stop_timeout(tmp_path: Path) -> None:
    """SIGTERM to a node whose only player froze while hosting an open match:
    it exits cleanly within --stop-timeout (and a little), says a client did
    not answer, and closes its database."""
    with RedisProcess() as redis:
        node = NodeProcess(redis.url, tmp_path / "node1", "--stop-timeout", str(STOP_TIMEOUT))
        node.start()
        try:
            node.wait_up()
            async with frozen_player(node.url):
                took = _stop_timed(node, STOP_TIMEOUT + 10)
        finally:
            node.stop()
    assert took < STOP_TIMEOUT + 1.5, f"stopped in {took:.2f} s:\n{node.tail()}"
    log = node.tail()
    assert "did not answer the close" in log
    assert "did not finish the last writes" not in log
    wal = tmp_path / "node1" / f"{FILE_NAME}-wal"
    assert not wal.exists() or wal.stat().st_size == 0, "the database was not closed"
