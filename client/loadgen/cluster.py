"""``tulips-loadtest`` against a cluster: its node URLs (``run --all-nodes``), and
``tulips-loadtest cluster --workers N``, which measures one server process and
then ``--workers N`` of them (sharing a private redis-server) under the same
load, side by side.

A client only ever talks to nodes over WebSockets and HTTP (``/healthz``
names a cluster's nodes), so this imports nothing of the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..localserver import LocalServer, fetch_health
from .redisproc import RedisProcess

__all__ = ["cluster_urls", "spawned_cluster"]


async def cluster_urls(urls: Sequence[str]) -> list[str]:
    """Every live node of the cluster the first URL belongs to (from its
    ``/healthz``), or the URLs as given when it is not a cluster node."""
    health = await fetch_health(urls[0])
    cluster: Any = (health or {}).get("cluster")
    nodes = cluster.get("nodes") if isinstance(cluster, dict) else None
    if not isinstance(nodes, dict) or not nodes:
        return list(urls)
    return sorted(str(url) for url in nodes.values())


@contextlib.contextmanager
def spawned_cluster(workers: int, storage: str) -> Iterator[list[str]]:
    """A private redis-server and ``python -m server --workers N`` on free loopback
    ports (:class:`LocalServer`); yields the workers' own URLs and stops
    everything afterwards."""
    with RedisProcess() as redis, tempfile.TemporaryDirectory(prefix="tulips-load-") as data:
        options = ["--rate-limit", "1000", "--cluster", redis.url, "--workers", str(workers)]
        if storage != "off":
            options += ["--sync", storage]
        server = LocalServer(
            options,
            data_dir=None if storage == "off" else Path(data),
            bot_delay=None,
            follow_parent=False,
            workers=workers,
            inherit_output=True,
        )
        server.spawn()
        urls = [f"ws://{server.host}:{server.port + 1 + i}" for i in range(workers)]
        try:
            _wait_for(urls, workers)
            yield urls
        finally:
            server.stop(30.0)


def _wait_for(urls: list[str], workers: int, timeout: float = 30.0) -> None:
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
