"""The load generator: many concurrent matches of SDK clients against a server.

Each match is ``players`` SDK sessions in one match (no server bots), each
answering its prompts with a random legal action after ``think`` seconds (0:
flat out). :func:`run_load` returns a :class:`~client.loadgen.report.LoadReport`:
completed matches, actions, the latency from an "act" sent to the server's
"ok", errors, the server's memory from /healthz and, given its process id, the
server's CPU seconds. ``tulips-loadtest run`` (:mod:`client.loadgen.cli`) is
its command line; :func:`spawned_server` and :func:`spawned_reference` start
the servers it measures.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import protocol as wire

from ..localserver import HOST, LocalServer, fetch_health, free_port
from ..sdk import ConnectError, ConnectionLost, RequestError, Session
from .report import LoadReport

__all__ = [
    "Spawned",
    "cpu_seconds",
    "raise_fd_limit",
    "run_load",
    "spawned_reference",
    "spawned_server",
    "wait_until_up",
]


class _Seat:
    """One SDK session playing one seat of a load match."""

    def __init__(
        self,
        session: Session,
        report: LoadReport,
        think: float,
        rng: random.Random,
        counts_changes: bool = False,
    ):
        self.session = session
        self.report = report
        self.think = think
        self.rng = rng
        #: the match's first seat counts its ``match_update``s: its changes
        self.counts_changes = counts_changes

    async def play_match(self, measuring: asyncio.Event) -> bool:
        """Answer prompts until the match ends; True if it ended normally."""
        async for message in self.session:
            if isinstance(message, wire.Prompt):
                if self.think:
                    await asyncio.sleep(self.think * self.rng.uniform(0.5, 1.5))
                action = self.rng.choice(message.actions)
                sent = time.perf_counter()
                try:
                    await self.session.answer(message, action)
                except RequestError as exc:
                    self.report.error(exc.code)
                    continue
                except (ConnectionError, TimeoutError) as exc:
                    self.report.error(type(exc).__name__)
                    return False
                if measuring.is_set():
                    self.report.latencies.append(time.perf_counter() - sent)
                    self.report.actions += 1
            elif isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                return True
            elif isinstance(message, wire.MatchUpdate):
                if self.counts_changes and measuring.is_set():
                    self.report.match_changes += 1
            elif isinstance(message, ConnectionLost):
                self.report.error("connection_lost")
                return False
        return False


async def _match_loop(
    urls: Sequence[str],
    players: int,
    think: float,
    report: LoadReport,
    index: int,
    ready: asyncio.Barrier,
    measuring: asyncio.Event,
    stop: asyncio.Event,
    ramp: float,
) -> None:
    rng = random.Random(index)
    sessions: list[Session] = []
    try:
        for seat in range(players):
            url = urls[(index + seat) % len(urls)]  # spread over the nodes
            session = Session(url, f"load{index}-{seat}", reconnect=False, request_timeout=30)
            await session.open()
            sessions.append(session)
        report.connections += players
        await ready.wait()
        seats = [_Seat(s, report, think, rng, n == 0) for n, s in enumerate(sessions)]
        joined = await sessions[0].create_match(name=f"load {index}", seats=players)
        for session in sessions[1:]:
            await session.join(joined.match)
        await asyncio.sleep(rng.uniform(0, ramp))  # tables do not all sit down at once
        while not stop.is_set():
            await sessions[0].start()
            results = await asyncio.gather(*(seat.play_match(measuring) for seat in seats))
            if not all(results):
                return
            if measuring.is_set() and not stop.is_set():
                report.matches += 1
            for session in sessions:  # the first opens the rematch, the others accept it
                await session.play_again()
    except (ConnectError, RequestError, ConnectionError, TimeoutError) as exc:
        report.error(type(exc).__name__)
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


async def _bot_table(url: str, index: int, stop: asyncio.Event, report: LoadReport) -> None:
    """A table of four hard server bots, watched, dealt again whenever it ends."""
    async with contextlib.AsyncExitStack() as stack:
        session = Session(url, f"watcher{index}", reconnect=False, request_timeout=60)
        await session.open()
        stack.push_async_callback(session.close)
        await session.create_match(
            name=f"bots {index}", seats=4, bots=[(seat, "hard") for seat in range(4)]
        )
        try:
            while not stop.is_set():
                await session.start()
                async for message in session:
                    if isinstance(message, wire.Event) and isinstance(
                        message.event, wire.MatchEnded
                    ):
                        break
                await session.play_again()
        except (RequestError, ConnectionError, TimeoutError) as exc:
            report.error(f"bot_table_{type(exc).__name__}")


async def _analysis_loop(
    url: str, index: int, measuring: asyncio.Event, stop: asyncio.Event, report: LoadReport
) -> None:
    """A player who plays quick matches against easy server bots and asks for
    each one's post-game analysis, over and over (``--analyses``): analyses
    computed beside the measured matches, to show they do not slow them down."""
    rng = random.Random(index)
    async with contextlib.AsyncExitStack() as stack:
        session = Session(url, f"learner{index}", reconnect=False, request_timeout=120)
        await session.open()
        stack.push_async_callback(session.close)
        joined = await session.create_match(
            name=f"learn {index}", seats=4, bots=[(seat, "easy") for seat in range(1, 4)]
        )
        try:
            while not stop.is_set():
                await session.start()
                async for message in session:
                    if isinstance(message, wire.Prompt):
                        await session.answer(message, rng.choice(message.actions))
                    elif isinstance(message, wire.Event) and isinstance(
                        message.event, wire.MatchEnded
                    ):
                        break
                asked = time.perf_counter()
                await session.analyse(joined.match)
                if measuring.is_set():
                    report.analyses += 1
                    report.analysis_seconds.append(time.perf_counter() - asked)
                joined = await session.play_again()
        except (RequestError, ConnectionError, TimeoutError) as exc:
            report.error(f"analysis_{type(exc).__name__}")


async def run_load(
    url: str | Sequence[str],
    matches: int,
    players: int,
    think: float,
    duration: float,
    ramp: float = 0.0,
    hard_bots: int = 0,
    server_pid: int | None = None,
    analyses: int = 0,
    on_measuring: Callable[[bool], object] | None = None,
) -> LoadReport:
    """Run the load and return what it measured.

    Matches start at random moments over the first ``ramp`` seconds (so they
    do not all open and end in lockstep); measuring begins after the ramp.
    ``hard_bots`` more tables of four hard server bots play beside them, to
    show that bots thinking do not slow the other matches down; ``analyses``
    more players each play quick matches against bots and ask for each one's
    post-game analysis, to show the same of analyses. ``on_measuring`` is
    told when measuring begins (True) and ends (False). With
    ``server_pid`` (a process on this machine) the report has the CPU time that
    process used while measuring.
    """
    report = LoadReport()
    urls = [url] if isinstance(url, str) else list(url)
    report.memory_before = await _memory_of(urls)
    ready = asyncio.Barrier(matches + 1)
    measuring, stop = asyncio.Event(), asyncio.Event()
    tasks = [
        asyncio.create_task(
            _match_loop(urls, players, think, report, i, ready, measuring, stop, ramp)
        )
        for i in range(matches)
    ]
    tasks += [
        asyncio.create_task(_bot_table(urls[i % len(urls)], i, stop, report))
        for i in range(hard_bots)
    ]
    report.analysers = analyses
    tasks += [
        asyncio.create_task(_analysis_loop(urls[i % len(urls)], i, measuring, stop, report))
        for i in range(analyses)
    ]
    try:
        async with asyncio.timeout(120):
            await ready.wait()
    except TimeoutError:
        report.error("connect_timeout")
    await asyncio.sleep(ramp + 2.0)
    load_before = os.getloadavg()[0]
    cpu_before = cpu_seconds(server_pid) if server_pid is not None else None
    measuring.set()
    if on_measuring is not None:
        on_measuring(True)
    started = time.perf_counter()
    await asyncio.sleep(duration / 2)
    report.memory_loaded = await _memory_of(urls)
    await asyncio.sleep(duration / 2)
    report.elapsed = time.perf_counter() - started
    measuring.clear()
    if on_measuring is not None:
        on_measuring(False)
    cpu_after = cpu_seconds(server_pid) if server_pid is not None else None
    if cpu_before is not None and cpu_after is not None:
        report.server_cpu = cpu_after - cpu_before
    report.load = (load_before, os.getloadavg()[0])
    stop.set()
    report.closing = True
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return report


async def _memory_of(urls: Sequence[str]) -> int | None:
    """The servers' memory, added up over the nodes (None if one does not say)."""
    memories = [_memory(await fetch_health(url)) for url in urls]
    return None if None in memories else sum(m for m in memories if m is not None)


def raise_fd_limit() -> None:
    """Let this process open as many files (connections) as the system allows it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def wait_until_up(url: str, timeout: float = 15.0) -> None:
    """Return once the server at ``url`` answers ``/healthz``; exit if it never does."""
    deadline = time.monotonic() + timeout
    while await fetch_health(url) is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"tulips-loadtest: no server answered at {url}")
        await asyncio.sleep(0.1)


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system, every thread) that process ``pid`` has used,
    from ``/proc/PID/stat``; None where that cannot be read (not Linux, gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _memory(health: dict[str, object] | None) -> int | None:
    value = health.get("memory_bytes") if health else None
    return value if isinstance(value, int) else None


@dataclass(frozen=True)
class Spawned:
    """A server process this run started: where it listens and its process id."""

    url: str
    pid: int


@contextlib.contextmanager
def spawned_server(storage: str, loop: str = "asyncio") -> Iterator[Spawned]:
    """A local ``python -m server`` on a free port (:class:`LocalServer`), stopped afterwards.

    ``storage`` is ``"off"`` (memory only) or a ``--sync`` mode, with a fresh
    temporary data directory; ``loop`` its event loop.
    """
    with tempfile.TemporaryDirectory(prefix="tulips-load-") as data_dir:
        options = ["--rate-limit", "1000"]
        if loop != "asyncio":
            options += ["--loop", loop]
        if storage != "off":
            options += ["--sync", storage]
        server = LocalServer(
            options,
            data_dir=None if storage == "off" else Path(data_dir),
            bot_delay=None,
            follow_parent=False,
            inherit_output=True,
        )
        server.spawn()
        assert server.pid is not None
        try:
            yield Spawned(server.url, server.pid)
        finally:
            server.stop(10.0)


@contextlib.contextmanager
def spawned_reference(loop: str = "asyncio") -> Iterator[Spawned]:
    """The reference server (:mod:`client.loadgen.reference`, not a game server)
    on a free port, stopped afterwards."""
    port = free_port()
    command = [sys.executable, "-m", "client.loadgen.reference", "--port", str(port)]
    process = subprocess.Popen([*command, "--loop", loop])
    try:
        yield Spawned(f"ws://{HOST}:{port}", process.pid)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
