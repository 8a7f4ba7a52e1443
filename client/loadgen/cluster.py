"""tulips-loadtest against a cluster: its node URLs, and ``--compare-workers N``,
which measures one server process and then ``--workers N`` of them (sharing a
private redis-server) under the same load, side by side.

A client only ever talks to nodes over WebSockets and HTTP (``/healthz``
names a cluster's nodes), so this imports nothing of the server.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .localserver import fetch_health
from .redisproc import RedisProcess, free_port

if TYPE_CHECKING:
    from .loadtest import LoadReport

__all__ = ["cluster_urls", "free_port_run", "side_by_side", "spawned_cluster"]


async def cluster_urls(urls: Sequence[str]) -> list[str]:
    """Every live node of the cluster the first URL belongs to (from its
    ``/healthz``), or the URLs as given when it is not a cluster node."""
    health = await fetch_health(urls[0])
    cluster: Any = (health or {}).get("cluster")
    nodes = cluster.get("nodes") if isinstance(cluster, dict) else None
    if not isinstance(nodes, dict) or not nodes:
        return list(urls)
    return sorted(str(url) for url in nodes.values())


def free_port_run(count: int) -> int:
    """A free port with the ``count`` ports after it free too (a worker's own)."""
    for _ in range(100):
        port = free_port()
        if port + count < 65536 and all(_free(port + i) for i in range(1, count + 1)):
            return port
    raise SystemExit("tulips-loadtest: found no run of free ports for the workers")


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def spawned_cluster(workers: int, storage: str) -> Iterator[list[str]]:
    """A private redis-server and ``python -m server --workers N`` on free loopback
    ports; yields the workers' own URLs and stops everything afterwards."""
    port = free_port_run(workers)
    with RedisProcess() as redis, tempfile.TemporaryDirectory(prefix="tulips-load-") as data:
        command = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port)]
        command += ["--log-level", "WARNING", "--rate-limit", "1000"]
        command += ["--cluster", redis.url, "--workers", str(workers)]
        command += ["--no-storage"] if storage == "off" else ["--data-dir", data, "--sync", storage]
        process = subprocess.Popen(command)
        urls = [f"ws://127.0.0.1:{port + 1 + i}" for i in range(workers)]
        try:
            _wait_for(urls, workers)
            yield urls
        finally:
            process.terminate()
            process.wait(30)


def _wait_for(urls: list[str], workers: int, timeout: float = 30.0) -> None:
    import asyncio

    async def ready() -> bool:
        for url in urls:
            health = await fetch_health(url)
            cluster: Any = (health or {}).get("cluster")
            if not isinstance(cluster, dict) or len(cluster.get("nodes", {})) != workers:
                return False
        return True

    deadline = time.monotonic() + timeout
    while not asyncio.run(ready()):
        if time.monotonic() > deadline:
            raise SystemExit("tulips-loadtest: the workers did not come up")
        time.sleep(0.2)


def side_by_side(one: LoadReport, many: LoadReport, workers: int) -> list[str]:
    """One process against ``workers`` of them: the figures that matter."""

    def rate(report: LoadReport) -> float:
        return report.actions / report.elapsed if report.elapsed else 0.0

    def matches(report: LoadReport) -> float:
        return report.matches / report.elapsed if report.elapsed else 0.0

    gain = rate(many) / rate(one) - 1 if rate(one) else 0.0
    return [
        f"-- side by side      one process   --workers {workers}",
        f"matches/s           {matches(one):11.2f}   {matches(many):11.2f}",
        f"actions/s           {rate(one):11,.0f}   {rate(many):11,.0f}",
        f"p99 act->ok (ms)    {one.percentile(99):11.2f}   {many.percentile(99):11.2f}",
        f"--workers {workers} changes throughput by {gain:+.0%}",
    ]
