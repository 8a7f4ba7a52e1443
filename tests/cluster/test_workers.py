"""``--workers N``: one command, N nodes sharing one port, each with its own
port, data directory and node id; SIGTERM stops them all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import protocol as wire
from client.redisproc import RedisProcess, free_port
from client.sdk import Session

from .helpers import HEARTBEAT, ROOT, fetch_health, needs_redis, wait_sync

pytestmark = needs_redis


def _free_run(count: int) -> int:
    """A port with the next ``count`` ports free too."""
    for _ in range(50):
        port = free_port()
        if port + count < 65536 and all(_free(port + i) for i in range(1, count + 1)):
            return port
    raise AssertionError("no run of free ports")


def _free(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def test_workers_share_one_port_and_see_each_other(tmp_path: Path) -> None:
    """Two workers: the shared port answers, each worker's own port names it in the
    cluster, each keeps its data in DATA_DIR/node-I; SIGTERM stops every process."""
    with RedisProcess() as redis:
        port = _free_run(2)
        command = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port)]
        command += ["--data-dir", str(tmp_path), "--cluster", redis.url, "--workers", "2"]
        command += ["--heartbeat", str(HEARTBEAT), "--log-level", "WARNING"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        parent = subprocess.Popen(command, cwd=ROOT, env=env)
        try:
            own = [port + 1, port + 2]
            wait_sync(
                lambda: all(
                    len((fetch_health(p) or {}).get("cluster", {}).get("nodes", {})) == 2
                    for p in own
                ),
                "both workers up and in the cluster",
            )
            urls = {fetch_health(p)["cluster"]["url"] for p in own}  # type: ignore[index]
            assert urls == {f"ws://127.0.0.1:{p}" for p in own}
            assert (tmp_path / "node-0").is_dir() and (tmp_path / "node-1").is_dir()
            session = Session(f"ws://127.0.0.1:{port}", "Shared")
            await session.open()
            joined = await session.create_match(name="on a worker", seats=2, bots=[(1, "easy")])
            assert isinstance(joined, wire.Joined)
            await session.close()
        finally:
            parent.send_signal(signal.SIGTERM)
            assert parent.wait(30) == 0
        wait_sync(lambda: all(fetch_health(p) is None for p in own), "workers stopped", 10)
