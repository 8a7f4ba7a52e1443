"""Running out of descriptors is one logged condition that recovers
(server/fdguard.py, server/logcalm.py).

Issue 29: with the descriptors gone, "asyncio's accept loop logs one
traceback per retry: 453,328 tracebacks, 507 MB of log in four minutes".
Build: "Running out of descriptors anywhere is a logged condition that
recovers, not a traceback stream."
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
import resource
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from server import fdguard
from server.fdguard import AcceptWatch
from server.lab.web.siege import newcomer
from server.logcalm import Episodes

# -- the state owners, with a fake clock ---------------------------------------------------


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_episode_starts_with_its_first_event_and_ends_after_a_quiet_time() -> None:
    """Events of one key make one episode; it ends ``quiet`` s after its last one."""
    episodes: Episodes[str] = Episodes(quiet=2.0)
    assert episodes.hit("a", 0.0) is True
    assert all(episodes.hit("a", t / 10) is False for t in range(1, 30))
    assert episodes.hit("b", 1.0) is True
    (b,) = episodes.settle(4.0)  # b quiet for 3 s; a, whose last event was at 2.9, not yet
    assert b.key == "b" and b.events == 1
    (a,) = episodes.settle(4.9)
    assert a.key == "a" and a.events == 30 and a.duration == pytest.approx(2.9)
    assert not episodes
    assert episodes.hit("a", 5.0) is True  # a new episode


def test_a_run_of_failed_accepts_is_one_warning_and_its_end_one_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """1,000 failed accepts: one WARNING; no end while no descriptor can be
    opened or while failures keep coming; then one INFO with the count."""
    caplog.set_level(logging.INFO, logger="server.fdguard")
    clock, free = Clock(), [False]
    watch = AcceptWatch(quiet=2.5, clock=clock, probe=lambda: free[0], limit=lambda: 256)
    error = OSError(errno.EMFILE, os.strerror(errno.EMFILE))
    for _ in range(1000):
        clock.now += 0.001
        watch.failed("127.0.0.1:8765", error)
    clock.now += 10
    assert watch.check() == []  # still out of descriptors
    free[0] = True
    watch.failed("127.0.0.1:8765", error)
    clock.now += 1
    assert watch.check() == []  # failed a second ago
    clock.now += 2
    (run,) = watch.check()
    assert run.events == 1001
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert len(messages) == 2
    assert messages[0][0] == "WARNING" and "Too many open files" in messages[0][1]
    assert "may open 256 descriptors" in messages[0][1]
    assert messages[1][0] == "INFO" and "127.0.0.1:8765 again" in messages[1][1]


async def test_the_installed_handler_keeps_other_reports_for_the_one_before(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Out-of-descriptor reports go to the watch (one line for 500); any other
    report goes to the handler that was installed before."""
    caplog.set_level(logging.INFO)
    loop = asyncio.get_running_loop()
    before = loop.get_exception_handler()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    try:
        fdguard.install(loop)
        error = OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        with socket.socket() as listening:
            listening.bind(("127.0.0.1", 0))
            for _ in range(500):
                loop.call_exception_handler(
                    {"message": "socket.accept() out of system resource",
                     "exception": error, "socket": listening}
                )  # fmt: skip
            port = listening.getsockname()[1]
        loop.call_exception_handler({"message": "something else", "exception": ValueError()})
    finally:
        loop.set_exception_handler(before)
    lines = [r.getMessage() for r in caplog.records if r.name == "server.fdguard"]
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0]
    assert [c["message"] for c in seen] == ["something else"]


class _Exhausted:
    """A listening socket whose every accept fails: the process is out of descriptors."""

    def accept(self) -> tuple[socket.socket, Any]:
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))

    def fileno(self) -> int:
        return 1_000_000  # registered nowhere

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", 8765)


def _reports_per_turn(loop: asyncio.AbstractEventLoop) -> tuple[int, int]:
    """One turn of ``loop``'s accept loop on an exhausted socket: how many
    reports it made and how many retries it scheduled."""
    reports: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reports.append(context))
    try:
        loop._accept_connection(lambda: asyncio.Protocol(), _Exhausted(), backlog=100)  # type: ignore[attr-defined]
        return len(reports), len(loop._scheduled)  # type: ignore[attr-defined]
    finally:
        loop.close()


def test_the_accept_loop_stops_at_the_first_resource_error() -> None:
    """cpython#151615: asyncio's accept loop goes on after EMFILE, up to
    ``backlog`` times a turn, each time reporting and scheduling a retry (so
    the retries multiply); :class:`CalmSelectorLoop` stops at the first."""
    assert _reports_per_turn(fdguard.new_event_loop()) == (1, 1)
    stock = _reports_per_turn(asyncio.SelectorEventLoop())
    assert stock[0] >= 1  # 100 on the Pythons with the bug


# -- the real server, with few descriptors --------------------------------------------------

LIMIT = 128


def _low_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


async def _port(log: Path, pattern: str) -> int:
    async with asyncio.timeout(30):
        while not (found := re.search(pattern, log.read_text(errors="replace"))):
            await asyncio.sleep(0.1)
    return int(found.group(1))


async def _line(log: Path, text: str, timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while text not in log.read_text(errors="replace"):
            await asyncio.sleep(0.1)


async def test_a_server_out_of_descriptors_logs_it_once_and_recovers(tmp_path: Path) -> None:
    """tulips-server --web with 128 descriptors; 200 connections to the game
    port use them up. The log says so once, with no traceback, while asyncio
    retries (a handful of failed accepts, not hundreds a second); once the
    connections close it says it accepts again, and a newcomer is welcomed."""
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        server = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", "0",
            "--no-storage", "--no-announce", "--web", "0", "--log-level", "INFO",
            stdout=sink, stderr=sink, preexec_fn=_low_limit,
        )  # fmt: skip
    writers: list[asyncio.StreamWriter] = []
    try:
        port = await _port(log, r"port (\d+) \(ws://")
        await _port(log, r"Browsers can play at http://[^ ]+:(\d+)")

        async def connect() -> None:
            try:
                async with asyncio.timeout(3):
                    writers.append((await asyncio.open_connection("127.0.0.1", port))[1])
            except (OSError, TimeoutError):
                pass  # the server's backlog is full: fine, it is out of descriptors anyway

        await asyncio.gather(*(connect() for _ in range(200)))
        await _line(log, "cannot accept connections on", timeout=5)
        await asyncio.sleep(3.0)  # three of asyncio's retries, each failing
        text = log.read_text(errors="replace")
        assert text.count("cannot accept connections on") == 1
        assert "Traceback" not in text and "out of system resource" not in text

        for writer in writers:
            writer.transport.abort()
        writers.clear()
        started = time.monotonic()
        await _line(log, "accepting connections on", timeout=10)
        assert time.monotonic() - started < 6
        assert await newcomer(f"ws://127.0.0.1:{port}") < 2.0
        text = log.read_text(errors="replace")
        (failed,) = re.findall(r"out of descriptors \((\d+) accepts failed\)", text)
        assert 1 <= int(failed) <= 20  # about one a second: cpython#151615 is worked around
        assert text.count("cannot accept connections on") == 1
        assert "Traceback" not in text
        assert len(text) < 20_000
    finally:
        for writer in writers:
            writer.transport.abort()
        if server.returncode is None:
            server.terminate()
        async with asyncio.timeout(20):
            await server.wait()
