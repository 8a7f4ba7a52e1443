"""Real clusters for the tests: a private redis-server and server nodes run as
``python -m server`` subprocesses on 127.0.0.1, each with its own data
directory and the key file of the test's directory; every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from client.loadgen.redisproc import RedisProcess, redis_server_path
from client.localserver import free_port

ROOT = Path(__file__).resolve().parents[2]
#: seconds between heartbeats in the tests: a node is taken for dead after 0.75 s
HEARTBEAT = 0.25
START_TIMEOUT = 30.0

needs_redis = pytest.mark.skipif(
    redis_server_path() is None,
    reason="redis-server is not installed (.ci/run installs it: apt-get install redis-server)",
)

_T = TypeVar("_T")


def tulips_cluster(*args: str) -> subprocess.CompletedProcess[str]:
    """``tulips-cluster ARGS``, as an operator runs it."""
    return subprocess.run(
        [sys.executable, "-m", "server.cluster.admin", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )


def key_file(directory: Path) -> Path:
    """The cluster key file of the nodes whose data directories are in
    ``directory`` (made now, readable by its owner only, if there is none)."""
    path = directory / "cluster.key"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(os.urandom(32).hex() + "\n")
        path.chmod(0o600)
    return path


class NodeProcess:
    """One server node: ``python -m server --cluster …`` on its own port and data dir."""

    def __init__(self, redis_url: str, data_dir: Path, *extra: str) -> None:
        self.redis_url = redis_url
        self.data_dir = data_dir
        self.key_file = key_file(data_dir.parent)
        self.port = free_port()
        self.extra = extra
        self.process: subprocess.Popen[bytes] | None = None
        self.log = data_dir.with_suffix(".log")

    @property
    def url(self) -> str:
        """Where clients reach it."""
        return f"ws://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The command line that starts it."""
        return [
            sys.executable,
            "-m",
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
            "--cluster",
            self.redis_url,
            "--cluster-key-file",
            str(self.key_file),
            "--public-url",
            self.url,
            "--heartbeat",
            str(HEARTBEAT),
            "--bot-delay",
            "0",
            "--bot-think-ms",
            "5",
            "--log-level",
            "INFO",
            *self.extra,
        ]

    def start(self) -> None:
        """Start it; :meth:`wait_up` waits until it answers."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env
            )

    def health(self) -> dict[str, Any] | None:
        """Its ``/healthz``, or None if it does not answer."""
        return fetch_health(self.port)

    def wait_up(self) -> None:
        """Wait until it answers ``/healthz`` (failing with its log if it died)."""
        deadline = time.monotonic() + START_TIMEOUT
        while self.health() is None:
            assert self.process is not None
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"node on port {self.port} did not start:\n{self.tail()}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown, nothing flushed."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM and wait (kill after 15 s)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def tail(self) -> str:
        """The end of its log."""
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return ""


def fetch_health(port: int, *, tls: bool = False) -> dict[str, Any] | None:
    """``GET /healthz`` of the node on ``port``, or None; ``tls``: over https,
    the certificate unchecked (the tests check it where it matters)."""
    context = None
    if tls:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    url = f"{'https' if tls else 'http'}://127.0.0.1:{port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as answer:
            result: dict[str, Any] = json.load(answer)
            return result
    except (OSError, ValueError):
        return None


@contextmanager
def cluster(tmp: Path, nodes: int = 3) -> Iterator[tuple[RedisProcess, list[NodeProcess]]]:
    """A private Redis and ``nodes`` nodes that see each other, all stopped afterwards."""
    with RedisProcess() as redis:
        procs = [NodeProcess(redis.url, tmp / f"node{i + 1}") for i in range(nodes)]
        try:
            for node in procs:
                node.start()
            for node in procs:
                node.wait_up()
            wait_sync(lambda: all(len(_nodes(n)) == nodes for n in procs), "nodes see each other")
            yield redis, procs
        finally:
            for node in procs:
                node.stop()


def _nodes(node: NodeProcess) -> dict[str, str]:
    health = node.health() or {}
    result: dict[str, str] = health.get("cluster", {}).get("nodes", {})
    return result


def wait_sync(check: Callable[[], bool], what: str, timeout: float = START_TIMEOUT) -> None:
    """Poll ``check`` until true, for at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


async def eventually(
    check: Callable[[], Awaitable[_T | None]], what: str, timeout: float = 10.0
) -> _T:
    """Poll the async ``check`` until it returns something, for at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result is not None and result is not False:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.05)
