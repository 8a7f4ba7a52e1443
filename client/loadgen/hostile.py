"""tulips-loadtest hostile N: a real server against N hostile frames.

It starts a server (python -m server) on 127.0.0.1, on a free port, with
storage on in a temporary directory; warms it up with one bot match; and
reads its resident memory (VmRSS) idle. Then, while --matches normal matches
of four SDK players play game after game beside them, it sends at least N
frames from the hostile frame pool (client/loadgen/hostile_frames.py) over many raw
connections at once: random bytes, cut and mutated messages, MessagePack
bombs, deep nesting, huge and mistyped fields, text frames, RFC 6455
violations. It reconnects whenever the server closes one. Some connections
send garbage before hello, some flood, some never say anything; a few
non-readers ask for replay pages and match lists with a 4 KiB receive
buffer and never read the answers.

When the frames are sent it lets the normal matches finish their game, waits
for the server to settle, and prints the server's crashes, the tracebacks in
its log, its memory idle, at its peak and after (with what it holds then,
and the objects Python holds, python_blocks in /healthz: a leak grows
them, memory the allocator keeps from the peak does not), how many normal
matches finished, whether a newcomer can still create a match, and frames sent per
second, each next to its target. The exit code is 1 if a target is missed.
Everything is bounded (--duration) and talks to 127.0.0.1 only.

    tulips-loadtest hostile 1000000
    tulips-loadtest hostile 20000 --matches 4 --duration 120
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import contextlib
import random
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from websockets import frames
from websockets.exceptions import ConnectionClosed

import protocol as wire

from ..localserver import HOST, LocalServer, fetch_health
from ..sdk import ConnectError, ConnectionLost, RequestError, Session
from .hostile_frames import KINDS, Frame, Pool, client_frame, hello_frame
from .report import target_lines
from .serverlog import LogScan, keep_log, scan_log

__all__ = ["HostileReport", "Options", "add_arguments", "run_command", "run_hostile"]

_MB = 1_000_000
#: memory the server may keep once the hostile clients are gone (the target)
MEMORY_SLACK = 10 * _MB


@dataclass
class Options:
    """What one hostile run does (the command line, or a test, fills it in)."""

    frames: int = 1_000_000
    duration: float = 1800.0  #: cap on the hostile phase, seconds
    connections: int = 48  #: hostile connections open at once
    nonreaders: int = 4  #: connections that never read, open at once
    matches: int = 12  #: normal matches of four SDK players
    think: float = 0.05  #: a normal player's mean pause before acting, seconds
    #: seconds between the last client leaving and "after": past the server's
    #: grace period (30 s), after which departed players' open matches go away
    settle: float = 35.0
    idle: float = 2.0  #: seconds between the warm-up match and "idle"
    finish_timeout: float = 120.0  #: seconds the normal matches get to finish
    seed: int = 1
    server_options: list[str] = field(default_factory=list)


@dataclass
class Normal:
    """The normal matches beside the hostile clients."""

    started: int = 0
    finished: int = 0
    actions: int = 0
    latencies: list[float] = field(default_factory=list)
    #: why a match did not finish, or a table could not deal a new one
    failures: collections.Counter[str] = field(default_factory=collections.Counter)

    def percentile(self, q: float) -> float:
        """Latency percentile of act→ok in milliseconds."""
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] * 1000


@dataclass
class HostileReport:
    """Everything one hostile run measured, and the verdict on its targets."""

    target_frames: int = 0
    frames: int = 0
    bytes: int = 0
    kinds: collections.Counter[str] = field(default_factory=collections.Counter)
    answers: int = 0
    connections: int = 0
    connect_failures: int = 0
    #: close codes the server sent hostile connections; "none" when it just dropped them
    closes: collections.Counter[str] = field(default_factory=collections.Counter)
    silent: int = 0  #: connections that never said a word
    silent_closed: int = 0  #: ... which the server closed within 20 s
    nonreaders: int = 0
    nonreaders_dropped: int = 0
    nonreader_longest: float = 0.0
    normal: Normal = field(default_factory=Normal)
    elapsed: float = 0.0
    memory_idle: int | None = None
    memory_peak: int | None = None
    memory_after: int | None = None
    #: the server's /healthz idle and after: what it holds (players, matches, connections)
    health_idle: dict[str, object] = field(default_factory=dict)
    health_after: dict[str, object] = field(default_factory=dict)
    #: a newcomer's create_match after the run: "ok", or the error it got
    newcomer: str = "not tried"
    crashed: int | None = None  #: the server's exit code, if it died during the run
    shutdown: int | None = None  #: its exit code when stopped at the end (0: clean)
    log: LogScan = field(default_factory=LogScan)
    log_path: str = ""

    @property
    def rate(self) -> float:
        """Hostile frames sent per second."""
        return self.frames / self.elapsed if self.elapsed else 0.0

    def targets(self) -> list[tuple[str, bool, str]]:
        """``(target, met, figure)`` for each target."""
        grown = (
            self.memory_after - self.memory_idle
            if self.memory_after is not None and self.memory_idle is not None
            else None
        )
        normal = self.normal
        return [
            ("server crashes: 0", self.crashed is None, _crash_text(self.crashed)),
            ("tracebacks in the server log: 0", self.log.tracebacks == 0, str(self.log.tracebacks)),
            (
                "memory after within 10 MB of idle",
                grown is not None and grown <= MEMORY_SLACK,
                "unknown" if grown is None else f"{grown / _MB:+.1f} MB",
            ),
            (
                "every normal match finished",
                normal.started > 0 and normal.finished == normal.started and not normal.failures,
                f"{normal.finished} of {normal.started}"
                + (f"; {sum(normal.failures.values())} failed" if normal.failures else ""),
            ),
            ("a newcomer can still create a match", self.newcomer == "ok", self.newcomer),
            (
                f"hostile frames sent: {self.target_frames:,}",
                self.frames >= self.target_frames,
                f"{self.frames:,}",
            ),
        ]

    @property
    def passed(self) -> bool:
        """Every target met."""
        return all(met for _, met, _ in self.targets())

    def lines(self) -> list[str]:
        """The report, a line per figure, then the targets."""

        def mb(value: int | None) -> str:
            return "?" if value is None else f"{value / _MB:.1f} MB"

        kinds = ", ".join(f"{k} {self.kinds[k]:,}" for k in (*KINDS, "nonreader") if self.kinds[k])
        closes = ", ".join(f"{code} x{n:,}" for code, n in self.closes.most_common())
        normal = self.normal
        out = [
            f"hostile frames      {self.frames:,} in {self.elapsed:.1f} s"
            f" ({self.rate:,.0f}/s, {self.bytes / _MB:,.1f} MB);"
            f" server answers read {self.answers:,}",
            f"  by kind           {kinds}",
            f"connections         {self.connections:,} hostile, {self.connect_failures:,} refused"
            f" or failed to open",
            f"  closed by server  {closes or 'none'}",
            f"  silent ones       {self.silent_closed} of {self.silent} closed by the server"
            " in 20 s (those cut short by the end of the run left out)",
            f"  non-readers       {self.nonreaders} opened, {self.nonreaders_dropped} dropped by"
            f" the server, longest lived {self.nonreader_longest:.1f} s",
            f"normal matches      {normal.finished} of {normal.started} finished,"
            f" {normal.actions:,} actions, act->ok p50 {normal.percentile(50):.1f} ms"
            f" p99 {normal.percentile(99):.1f} ms",
        ]
        if normal.failures:
            failures = ", ".join(f"{why} x{n}" for why, n in normal.failures.most_common())
            out.append(f"  failures          {failures}")
        peak_growth = (
            f" (+{(self.memory_peak - self.memory_idle) / _MB:.1f} MB)"
            if self.memory_peak is not None and self.memory_idle is not None
            else ""
        )
        out += [
            f"server memory       idle {mb(self.memory_idle)}, peak {mb(self.memory_peak)}"
            f"{peak_growth}, after {mb(self.memory_after)}",
            f"  holding           idle {_holding(self.health_idle)};"
            f" after {_holding(self.health_after)}",
            f"server              {_crash_text(self.crashed)} during the run;"
            f" stopped with exit code {self.shutdown}",
            f"server log          {self.log.tracebacks} tracebacks, {self.log.errors} ERROR and"
            f" {self.log.warnings:,} WARNING lines, {self.log.size / _MB:.1f} MB ({self.log_path})",
            *self.log.lines(),
        ]
        return out + target_lines(self.targets())


def _holding(health: dict[str, object]) -> str:
    if not health:
        return "?"
    held = [f"{health.get(k, '?')} {k}" for k in ("players", "matches", "connections")]
    blocks = health.get("python_blocks")
    if isinstance(blocks, int):  # what is live, apart from what the allocator keeps
        held.append(f"{blocks:,} Python blocks")
    return ", ".join(held)


def _close_name(code: int) -> str:
    """``4008 rate_limited``: the code with its name (ours, else RFC 6455's)."""
    for names in (wire.CloseCode, frames.CloseCode):
        with contextlib.suppress(ValueError):
            return f"{code} {names(code).name.lower()}"
    return str(code)


def _ignore(_: str) -> None:
    pass


def _crash_text(code: int | None) -> str:
    if code is None:
        return "no crash"
    return f"died with exit code {code}"


# -- raw connections ------------------------------------------------------------------------


class _Reader:
    """Server frames off a raw socket: counts answers and notes the close code."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.answers = 0
        self.close_code: int | None = None
        self.first: bytes | None = None  #: the first data frame (the welcome, after hello)
        self.progress = asyncio.Event()

    def feed(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        at = 0
        while len(buffer) - at >= 2:
            opcode, size, start = buffer[at] & 0x0F, buffer[at + 1] & 0x7F, at + 2
            if size == 126:
                if len(buffer) - at < 4:
                    break
                size, start = int.from_bytes(buffer[at + 2 : at + 4], "big"), at + 4
            elif size == 127:
                if len(buffer) - at < 10:
                    break
                size, start = int.from_bytes(buffer[at + 2 : at + 10], "big"), at + 10
            if len(buffer) < start + size:
                break
            if opcode in (1, 2):
                self.answers += 1
                if self.first is None:
                    self.first = bytes(buffer[start : start + size])
            elif opcode == 8:
                payload = buffer[start : start + size]
                self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
            at = start + size
        del buffer[:at]
        self.progress.set()


_KEY = base64.b64encode(b"tulips-hostile!!").decode()


class _Raw:
    """A WebSocket client on a bare socket, so that it can send anything."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.frames = _Reader()
        self.eof = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, port: int, receive_buffer: int | None = None) -> _Raw:
        """Connect and finish the opening handshake (raises OSError or TimeoutError)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if receive_buffer is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            sock.setblocking(False)
            await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, (HOST, port)), 10)
            reader, writer = await asyncio.open_connection(sock=sock)
        except BaseException:
            sock.close()
            raise
        raw = cls(reader, writer)
        writer.write(
            f"GET / HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {_KEY}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            writer.transport.abort()
            raise ConnectionError(f"no handshake: {exc}") from None
        except BaseException:
            writer.transport.abort()
            raise
        if not head.startswith(b"HTTP/1.1 101"):
            writer.transport.abort()
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode(errors="replace"))
        return raw

    def start_reading(self) -> None:
        """Read (and count) everything the server sends, until it hangs up."""
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(OSError):
            while data := await self.reader.read(65536):
                self.frames.feed(data)
        self.eof.set()
        self.frames.progress.set()

    @property
    def closed(self) -> bool:
        """The server closed (or dropped) the connection."""
        return self.frames.close_code is not None or self.eof.is_set()

    async def wait_closed(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the server to close; True if it did."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while not self.closed:
                    self.frames.progress.clear()
                    await self.frames.progress.wait()
        return self.closed

    async def close(self, politely: bool) -> None:
        """Hang up: with a close frame, or by resetting the connection."""
        if politely and not self.writer.is_closing():
            with contextlib.suppress(OSError):
                self.writer.write(client_frame((1000).to_bytes(2, "big"), 8)[0])
                self.writer.close()
        self.writer.transport.abort()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


# -- the run --------------------------------------------------------------------------------


class _Run:
    """One hostile run against one server: the state its tasks share."""

    def __init__(self, options: Options, server: LocalServer, report: HostileReport) -> None:
        self.options = options
        self.server = server
        self.report = report
        self.remaining = options.frames
        self.stop = asyncio.Event()
        self.pool: Pool | None = None
        self.replay_target = ""

    def take(self, wanted: int) -> int:
        """Claim up to ``wanted`` frames of the budget (0 once it is all claimed)."""
        granted = max(0, min(wanted, self.remaining))
        self.remaining -= granted
        return granted

    def sent(self, frames: int, kind: str, size: int) -> None:
        """Count frames sent; the run stops once the budget has been sent."""
        report = self.report
        report.frames += frames
        report.bytes += size
        report.kinds[kind] += frames
        if report.frames >= self.options.frames:
            self.stop.set()

    def count(self, frames: list[Frame]) -> None:
        """Count frames sent (a fragmented entry is several frames of the budget)."""
        for frame in frames:
            self.remaining -= frame.frames - 1
            self.sent(frame.frames, frame.kind, len(frame.data))

    # -- hostile connections ----------------------------------------------------------------

    async def hostile(self, worker: int) -> None:
        """Connection after connection, until the budget is spent or time is up."""
        rng = random.Random(self.options.seed * 1000 + worker)
        token: str | None = None
        serial = 0
        while not self.stop.is_set():
            serial += 1
            style = rng.choices(("mixed", "pre_hello", "flood", "silent"), (85, 8, 5, 2))[0]
            try:
                raw = await _Raw.open(self.server.port)
            except (OSError, TimeoutError, ConnectionError):
                self.report.connect_failures += 1
                await asyncio.sleep(0.2)
                continue
            self.report.connections += 1
            raw.start_reading()
            try:
                async with asyncio.timeout(60):
                    token = await self._one(raw, rng, style, f"h{worker}x{serial}", token)
            except (OSError, TimeoutError):
                pass
            finally:
                self.report.answers += raw.frames.answers
                if raw.frames.close_code is not None:
                    self.report.closes[_close_name(raw.frames.close_code)] += 1
                elif raw.eof.is_set():
                    self.report.closes["dropped"] += 1
                await raw.close(politely=rng.random() < 0.5)

    async def _one(
        self, raw: _Raw, rng: random.Random, style: str, name: str, token: str | None
    ) -> str | None:
        """One hostile connection; returns the resume token to use next time."""
        pool = self.pool
        assert pool is not None
        if style == "silent":  # the server's hello timeout must close it
            waiting = asyncio.ensure_future(raw.wait_closed(20))
            stopping = asyncio.ensure_future(self.stop.wait())
            await asyncio.wait((waiting, stopping), return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if waiting.done():
                self.report.silent += 1
                self.report.silent_closed += waiting.result()
            waiting.cancel()
            return token
        if style == "pre_hello":
            frames = [pool.draw(rng) for _ in range(self.take(rng.randint(1, 3)))]
            if not frames:
                return token
            raw.writer.write(b"".join(f.data for f in frames))
            self.count(frames)
            await raw.writer.drain()
            await raw.wait_closed(5)
            return token
        use = token if token is not None and rng.random() < 0.6 else None
        raw.writer.write(hello_frame(name, use, rng))
        await raw.writer.drain()
        await self._wait_answers(raw, 1, 10)
        token = self._token(raw, token)
        if style == "flood":
            await self._flood(raw, rng)
        else:
            await self._mixed(raw, rng, pool)
        return token

    def _token(self, raw: _Raw, token: str | None) -> str | None:
        if raw.frames.first is None:
            return token
        try:
            welcome = wire.decode_server_message(raw.frames.first)
        except wire.ProtocolError:
            return token
        return welcome.token if isinstance(welcome, wire.Welcome) else token

    async def _wait_answers(self, raw: _Raw, wanted: int, timeout: float) -> None:
        """Wait until ``wanted`` answers came, the server closed, or nothing came for a while."""
        frames = raw.frames
        while frames.answers < wanted and not raw.closed:
            frames.progress.clear()
            try:
                await asyncio.wait_for(frames.progress.wait(), timeout)
            except TimeoutError:
                return

    async def _mixed(self, raw: _Raw, rng: random.Random, pool: Pool) -> None:
        """Batches of hostile frames, never more than a window ahead of the answers."""
        cap = rng.randint(20, 400)
        owed = 1  # the welcome
        sent = 0
        while sent < cap and not raw.closed and not self.stop.is_set():
            wanted = self.take(rng.randint(1, 16))
            if not wanted:
                return
            batch: list[Frame] = []
            for _ in range(wanted):
                frame = pool.draw(rng)
                batch.append(frame)
                if frame.closes:
                    break
            self.remaining += wanted - len(batch)  # what a closing frame cut short
            raw.writer.write(b"".join(f.data for f in batch))
            self.count(batch)
            sent += len(batch)
            owed += sum(f.answers for f in batch)
            await raw.writer.drain()
            if batch[-1].closes:
                await raw.wait_closed(5)
                return
            await self._wait_answers(raw, owed - 48, 2.0)

    async def _flood(self, raw: _Raw, rng: random.Random) -> None:
        """Cheap valid requests as fast as the socket takes them: the rate limit's turn."""
        request = wire.encode(wire.ListMatches(id=1))
        ping = client_frame(b"hi", 9)[0]
        frame = client_frame(request, mask=rng.randbytes(4))[0]
        flood = Frame(frame, "valid")
        pinged = Frame(ping, "control", answers=0)
        for _ in range(6):
            if raw.closed or self.stop.is_set():
                return
            wanted = self.take(50)
            batch = [flood if rng.random() < 0.8 else pinged for _ in range(wanted)]
            raw.writer.write(b"".join(f.data for f in batch))
            self.count(batch)
            await raw.writer.drain()
            await asyncio.sleep(0)
        await raw.wait_closed(3)  # 300 frames at once: the rate limit closes the connection

    # -- connections that never read --------------------------------------------------------

    async def nonreader(self, worker: int) -> None:
        """Ask for replay pages and match lists at 40 frames a second, reading nothing."""
        rng = random.Random(self.options.seed * 7919 + worker)
        while not self.stop.is_set():
            try:
                raw = await _Raw.open(self.server.port, receive_buffer=4096)
            except (OSError, TimeoutError, ConnectionError):
                self.report.connect_failures += 1
                await asyncio.sleep(0.5)
                continue
            self.report.nonreaders += 1
            opened = time.monotonic()
            requests = [
                client_frame(wire.encode(wire.Replay(id=i, match=self.replay_target)))[0]
                for i in range(1, 5)
            ] + [client_frame(wire.encode(wire.ListMatches(id=9)))[0]]
            dropped = False
            try:
                raw.writer.write(hello_frame(f"n{worker}", None, rng))
                async with asyncio.timeout(90):
                    while not self.stop.is_set():
                        if raw.writer.transport.is_closing():
                            dropped = True
                            break
                        granted = self.take(2)
                        if not granted:
                            break
                        data = b"".join(rng.choices(requests, k=granted))
                        raw.writer.write(data)
                        self.sent(granted, "nonreader", len(data))
                        await raw.writer.drain()
                        await asyncio.sleep(0.05)
            except (OSError, ConnectionError):
                dropped = True
            except TimeoutError:
                pass
            lived = time.monotonic() - opened
            if dropped:
                self.report.nonreaders_dropped += 1
            self.report.nonreader_longest = max(self.report.nonreader_longest, lived)
            await raw.close(politely=False)

    # -- the normal matches -----------------------------------------------------------------

    async def table(self, index: int, dealing: asyncio.Event, ready: Callable[[str], None]) -> None:
        """Four SDK players dealing game after game while ``dealing`` is set; ``ready``
        hears the first match's id once all four sit (or "" if they never do)."""
        normal = self.report.normal
        rng = random.Random(self.options.seed * 31 + index)
        sessions = [
            Session(self.server.url, f"normal{index}-{seat}", reconnect=False, request_timeout=60)
            for seat in range(4)
        ]
        step = "seating"
        try:
            for session in sessions:
                await session.open()
            joined = await sessions[0].create_match(name=f"normal {index}", seats=4)
            for session in sessions[1:]:
                await session.join(joined.match)
            ready(joined.match)
            ready = _ignore
            while True:
                normal.started += 1
                step = "start"
                await sessions[0].start()
                step = "play"
                async with asyncio.timeout(300):
                    results = await asyncio.gather(*(self._seat(s, rng) for s in sessions))
                failed = [why for why in results if why is not None]
                if failed:
                    normal.failures[failed[0]] += 1
                    return
                normal.finished += 1
                if not dealing.is_set():
                    return
                step = "play_again"
                for session in sessions:  # the first opens the rematch, the others accept it
                    await session.play_again()
        except RequestError as exc:
            normal.failures[f"{step}: {exc}"[:120]] += 1
        except (ConnectError, ConnectionError, ConnectionClosed) as exc:
            normal.failures[f"{step}: {type(exc).__name__}: {str(exc)[:80]}"] += 1
        except TimeoutError:
            normal.failures[f"{step}: timeout"] += 1
        finally:
            ready("")
            async with asyncio.timeout(10):
                await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)

    async def _seat(self, session: Session, rng: random.Random) -> str | None:
        """Play one seat's prompts until the match ends; None, or why it did not."""
        normal = self.report.normal
        async for message in session:
            if isinstance(message, wire.Prompt):
                if self.options.think:
                    await asyncio.sleep(self.options.think * rng.uniform(0.2, 1.8))
                sent = time.perf_counter()
                try:
                    await session.answer(message, rng.choice(message.actions))
                except RequestError as exc:
                    return f"act refused: {exc.code}"
                except (ConnectionError, ConnectionClosed, TimeoutError) as exc:
                    return f"act failed: {type(exc).__name__} {exc}"[:100]
                normal.latencies.append(time.perf_counter() - sent)
                normal.actions += 1
            elif isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                return None
            elif isinstance(message, ConnectionLost):
                return f"connection lost: {message.reason}"[:100]
        return "session closed"

    # -- the server's memory ----------------------------------------------------------------

    async def sample_memory(self) -> None:
        """Keep the peak of the server's resident memory."""
        while True:
            memory = self.server.memory()
            if memory is not None:
                peak = max(memory)
                self.report.memory_peak = max(self.report.memory_peak or 0, peak)
            if self.server.exit_code() is not None:
                self.report.crashed = self.server.exit_code()
                self.stop.set()
                return
            await asyncio.sleep(0.25)


async def _warm_up(url: str) -> str:
    """One all-bot match watched to its end: the replay the non-readers ask for."""
    async with asyncio.timeout(120):
        session = Session(url, "warmup", reconnect=False, request_timeout=30)
        await session.open()
        try:
            joined = await session.create_match(
                name="warm up", seats=4, bots=[(seat, "easy") for seat in range(4)]
            )
            await session.start()
            async for message in session:
                if isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                    break
            return joined.match
        finally:
            await session.close()


async def _newcomer(url: str) -> str:
    """Can someone who comes now still create a match? "ok", or what went wrong."""
    session = Session(url, "newcomer", reconnect=False, request_timeout=10)
    try:
        async with asyncio.timeout(20):
            await session.open()
            await session.create_match(name="after the storm", seats=2)
            await session.leave()
        return "ok"
    except RequestError as exc:
        return str(exc)[:80]
    except (ConnectError, ConnectionError, ConnectionClosed, TimeoutError) as exc:
        return f"{type(exc).__name__}: {exc}"[:80]
    finally:
        await session.close()


async def run_hostile(options: Options, log_path: Path, data_dir: Path) -> HostileReport:
    """The whole run against a server it starts on ``data_dir``; the report."""
    report = HostileReport(target_frames=options.frames, log_path=str(log_path))
    server = LocalServer(
        ["--sync", "full", *options.server_options],
        data_dir=data_dir,
        bot_delay=None,
        follow_parent=False,
        log_path=log_path,
    )
    server.spawn()
    run = _Run(options, server, report)
    tasks: list[asyncio.Task[None]] = []
    try:
        if not await server.wait_until_up():
            report.crashed = server.exit_code()
            return report
        run.replay_target = await _warm_up(server.url)
        await asyncio.sleep(options.idle)
        memory = server.memory()
        report.memory_idle = memory[0] if memory else None
        report.health_idle = await fetch_health(server.url) or {}
        sampler = asyncio.create_task(run.sample_memory())
        dealing = asyncio.Event()
        dealing.set()
        seated: list[str] = []
        tables = [
            asyncio.create_task(run.table(i, dealing, seated.append))
            for i in range(options.matches)
        ]
        async with asyncio.timeout(60):
            while len(seated) < options.matches:
                await asyncio.sleep(0.05)
        run.pool = Pool(random.Random(options.seed), [run.replay_target, *filter(None, seated)])
        started = time.monotonic()
        tasks = [asyncio.create_task(run.hostile(i)) for i in range(options.connections)]
        tasks += [asyncio.create_task(run.nonreader(i)) for i in range(options.nonreaders)]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(options.duration):
                await run.stop.wait()
        run.stop.set()
        report.elapsed = time.monotonic() - started
        _, late = await asyncio.wait(tasks, timeout=3)  # most stop at their next check
        for task in late:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        dealing.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(options.finish_timeout):
                await asyncio.gather(*tables, return_exceptions=True)
        for table in tables:
            if not table.done():
                report.normal.failures["did not finish in time"] += 1
                table.cancel()
        await asyncio.gather(*tables, return_exceptions=True)
        await asyncio.sleep(options.settle)
        memory = server.memory()
        report.memory_after = memory[0] if memory else None
        report.health_after = await fetch_health(server.url) or {}
        report.newcomer = await _newcomer(server.url)
        # a stop right after an HTTP request waits out websockets' close timeout (10 s)
        await asyncio.sleep(0.5)
        if memory is not None:
            report.memory_peak = max(report.memory_peak or 0, memory[1])
        sampler.cancel()
        if report.crashed is None:
            report.crashed = server.exit_code()
    finally:
        for task in tasks:
            task.cancel()
        report.shutdown = server.stop(15.0)
        report.log = scan_log(log_path)
    return report


def add_arguments(parser: argparse.ArgumentParser, *, legacy: bool = False) -> None:
    """The flags of ``tulips-loadtest hostile N`` (``legacy``: of its deprecated
    alias ``tulips-loadtest --hostile N``)."""
    defaults = Options()
    size_help = "hostile frames to send (the soak's size); 1000000 for the real figure"
    if legacy:
        parser.add_argument(
            "--hostile", dest="frames", type=int, required=True, metavar="N", help=size_help
        )
    else:
        parser.add_argument("frames", type=int, metavar="N", help=size_help)
    parser.add_argument(
        "--duration",
        type=float,
        default=defaults.duration,
        help="seconds the hostile phase may take at most (default %(default)s)",
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=defaults.connections,
        help="hostile connections at once (default %(default)s)",
    )
    parser.add_argument(
        "--nonreaders",
        type=int,
        default=defaults.nonreaders,
        help="connections that never read, at once (default %(default)s)",
    )
    parser.add_argument(
        "--matches",
        type=int,
        default=defaults.matches,
        help="normal matches of four SDK players beside them (default %(default)s)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=defaults.think,
        help="a normal player's mean pause before acting, s (default %(default)s)",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=defaults.settle,
        help="seconds to wait before measuring memory 'after' (default %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed, help="for the frame pool")
    parser.add_argument(
        "--keep-log", type=Path, help="copy the server's log here (it is in a temp dir)"
    )


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``tulips-loadtest hostile N``: run, print the report, exit 1 on a missed target."""
    if args.frames < 1 or args.duration <= 0 or args.matches < 1:
        parser.error("N (frames) and --matches must be at least 1, --duration positive")
    if args.connections < 1 or args.nonreaders < 0 or args.think < 0 or args.settle < 0:
        parser.error("--connections at least 1; --nonreaders, --think, --settle not negative")
    options = Options(
        frames=args.frames,
        duration=args.duration,
        connections=args.connections,
        nonreaders=args.nonreaders,
        matches=args.matches,
        think=args.think,
        settle=args.settle,
        seed=args.seed,
    )
    print(
        f"hostile soak: {options.frames:,} frames, {options.connections} hostile connections"
        f" and {options.nonreaders} non-readers at once, {options.matches} normal matches"
        f" x 4 players beside them; cap {options.duration:.0f} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="tulips-hostile-") as temp:
        log_path = Path(temp) / "server.log"
        data_dir = Path(temp) / "data"
        data_dir.mkdir()
        report = asyncio.run(run_hostile(options, log_path, data_dir))
        report.log_path = keep_log(log_path, args.keep_log)
    print("\n".join(report.lines()))
    return 0 if report.passed else 1
