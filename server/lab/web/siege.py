"""The game port while someone lays siege to the web port: ``python -m server.lab.web.siege``.

Starts ``tulips-server --web`` (no storage) on free loopback ports, its log
going to a file, and opens ``--connections`` slowloris connections to the
web port from 127.0.0.1: each sends ``GET / HTTP/1.1``, ``Host: x`` and then
one more header line every ``--trickle`` seconds, never the blank line that
ends the head, and opens again ``--reopen`` seconds after the server closes
it. Meanwhile, every ``--every`` seconds, a newcomer connects to the *game*
port and says hello: the time to its welcome is one sample; a visitor from
127.0.0.2 fetches the web port's page beside it. Then it stops the server and
prints the newcomers' waits (median, max), what became of the slowloris
connections, the server's CPU and the size of its log (issue 29's targets:
a newcomer waits under a second, the log stays under 1 MB).

Flags after ``--`` go to the server (``-- --web-max-connections-per-address
100000`` lifts a cap), and ``--server-fd-limit N`` gives it only N file
descriptors. The attack runs in a process of its own, so that its work does
not slow the newcomers' side down. It raises its own ``RLIMIT_NOFILE`` as far
as the hard limit allows. Linux only (it reads ``/proc``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import multiprocessing
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

from websockets.asyncio.client import connect

import protocol as wire

__all__ = ["Attack", "Siege", "main", "newcomer", "visit"]

_LISTENING = re.compile(r"port (\d+) \((?:ws|wss)://")
_BROWSERS = re.compile(r"Browsers can play at https?://[^ ]+:(\d+)")
_HEAD = b"GET / HTTP/1.1\r\nHost: x\r\n"
_TICK = os.sysconf("SC_CLK_TCK")


async def newcomer(url: str, timeout: float = 10.0) -> float:
    """Seconds from connecting to ``url`` (a game port) to its ``welcome``;
    raises TimeoutError after ``timeout`` seconds."""
    started = time.monotonic()
    async with asyncio.timeout(timeout):
        async with connect(url, compression=None, open_timeout=None) as socket_:
            hello = wire.Hello(id=0, client="tulips-siege/0.1", name="Newcomer")
            await socket_.send(wire.encode(hello))
            while True:
                frame = await socket_.recv()
                message = wire.decode_server_message(frame)
                if isinstance(message, wire.Welcome):
                    return time.monotonic() - started
                if isinstance(message, wire.Error):
                    raise RuntimeError(f"the game port said {message.code}: {message.message}")


async def visit(port: int, source: str, timeout: float = 10.0) -> tuple[float, int]:
    """A visitor from ``source`` fetches ``/`` of the web port on 127.0.0.1:
    seconds to the whole answer, and its HTTP status."""
    started = time.monotonic()
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        try:
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = await reader.read()
        finally:
            writer.close()
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    return time.monotonic() - started, status


@dataclass
class Attack:
    """What became of the slowloris connections (counted by the attacker)."""

    opened: int = 0
    #: closed at once with an answer (429, 503): past a cap
    refused: int = 0
    #: closed by the server without an answer: the header timeout, or the
    #: descriptor reserve (TLS refusals say nothing either)
    unanswered: int = 0
    #: could not connect (the server's backlog was full, say)
    failed: int = 0

    async def slot(self, port: int, trickle: float, reopen: float, stop: asyncio.Event) -> None:
        """One slowloris connection, opened again whenever it is closed, until ``stop``."""
        while not stop.is_set():
            try:
                async with asyncio.timeout(5):
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except (OSError, TimeoutError):
                self.failed += 1
                await _pause(stop, reopen)
                continue
            self.opened += 1
            try:
                writer.write(_HEAD)
                answer = await self._trickle(reader, writer, trickle, stop)
            except OSError:
                answer = b""
            finally:
                writer.transport.abort()
            if stop.is_set():
                return
            if answer.startswith(b"HTTP/"):
                self.refused += 1
            else:
                self.unanswered += 1
            await _pause(stop, reopen)

    @staticmethod
    async def _trickle(
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        every: float,
        stop: asyncio.Event,
    ) -> bytes:
        """Send a header line every ``every`` s until the server closes: what it said."""
        line = 0
        while not stop.is_set():
            try:
                async with asyncio.timeout(every):
                    return await reader.read(256)  # b"" at EOF: closed without a word
            except TimeoutError:
                line += 1
                writer.write(b"X-%d: y\r\n" % line)
        return b""

    async def run(
        self, port: int, connections: int, duration: float, trickle: float, reopen: float
    ) -> None:
        """``connections`` slots for ``duration`` seconds."""
        stop = asyncio.Event()
        slots = [
            asyncio.create_task(self.slot(port, trickle, reopen, stop)) for _ in range(connections)
        ]
        await asyncio.sleep(duration)
        stop.set()
        await asyncio.wait(slots, timeout=0.5)  # what is still waiting for a read is moot
        for slot in slots:
            slot.cancel()


def _attack(port: int, connections: int, duration: float, trickle: float, reopen: float,
            results: Connection) -> None:  # fmt: skip
    """The attacker, in a process of its own: its work does not slow the
    newcomer down on this side, only on the server's."""
    _raise_own_limit(connections + 256)
    attack = Attack()
    asyncio.run(attack.run(port, connections, duration, trickle, reopen))
    results.send(dataclasses.asdict(attack))


@dataclass
class Siege:
    """What the siege did, and what the newcomers saw meanwhile."""

    attack: Attack = field(default_factory=Attack)
    #: the most descriptors the server had open at a sample
    server_fds: int = 0
    waits: list[float] = field(default_factory=list)
    newcomers_lost: int = 0
    visits: list[float] = field(default_factory=list)
    visit_statuses: list[int] = field(default_factory=list)


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await stop.wait()


async def _ports(log: Path, process: asyncio.subprocess.Process) -> tuple[int, int]:
    """The game and web ports, from the server's log."""
    async with asyncio.timeout(30):
        while True:
            text = log.read_text(errors="replace")
            game, web = _LISTENING.search(text), _BROWSERS.search(text)
            if game and web:
                return int(game.group(1)), int(web.group(1))
            if process.returncode is not None:
                raise RuntimeError(f"tulips-server exited ({process.returncode}):\n{text}")
            await asyncio.sleep(0.1)


def _cpu(pid: int) -> float:
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _raise_own_limit(wanted: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        soft = min(hard, wanted)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return soft


async def siege(
    connections: int,
    duration: float,
    *,
    trickle: float,
    reopen: float,
    every: float,
    server_args: list[str],
    log_dir: Path,
    server_fd_limit: int | None = None,
) -> tuple[Siege, Path, float]:
    """Run the siege: what it did, the server's log file and the server's CPU share."""
    log = log_dir / "tulips-server.log"

    def limit() -> None:  # in the server's process, before it starts
        if server_fd_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (server_fd_limit, server_fd_limit))

    with log.open("wb") as sink:
        server = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", "0",
            "--no-storage", "--no-announce", "--web", "0", "--log-level", "INFO",
            *server_args, stdout=sink, stderr=sink, env={**os.environ, "LC_ALL": "C.UTF-8"},
            preexec_fn=limit,
        )  # fmt: skip
    result = Siege()
    try:
        game_port, web_port = await _ports(log, server)
        url = f"ws://127.0.0.1:{game_port}"
        await newcomer(url)  # the first hello warms the server up; not a sample
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe(duplex=False)
        attacker = context.Process(
            target=_attack, args=(web_port, connections, duration, trickle, reopen, theirs)
        )
        attacker.start()
        cpu_start, began = _cpu(server.pid), time.monotonic()
        while time.monotonic() - began < duration:
            await asyncio.sleep(every)
            try:
                result.waits.append(await newcomer(url))
            except (OSError, TimeoutError, RuntimeError):
                result.newcomers_lost += 1
            with contextlib.suppress(OSError):
                result.server_fds = max(
                    result.server_fds, len(os.listdir(f"/proc/{server.pid}/fd"))
                )
            with contextlib.suppress(OSError, TimeoutError, IndexError, ValueError):
                took, status = await visit(web_port, "127.0.0.2")
                result.visits.append(took)
                result.visit_statuses.append(status)
        cpu = (_cpu(server.pid) - cpu_start) / (time.monotonic() - began)
        if await asyncio.to_thread(ours.poll, 30):
            result.attack = Attack(**ours.recv())
        attacker.join(5)
        if attacker.is_alive():
            attacker.kill()
    finally:
        if server.returncode is None:
            server.terminate()
        async with asyncio.timeout(20):
            await server.wait()
    return result, log, cpu


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.1f} ms"


def report(result: Siege, log: Path, cpu: float, args: argparse.Namespace) -> str:
    """The lines ``main`` prints."""
    text = log.read_text(errors="replace")
    attack = result.attack
    lines = [
        f"slowloris: {args.connections} connections to the web port from 127.0.0.1 for"
        f" {args.duration:.0f} s, a header line every {args.trickle:g} s, each opened again"
        f" {args.reopen:g} s after it is closed",
        f"  opened {attack.opened:,} times: {attack.refused:,} refused at once (past a cap),"
        f" {attack.unanswered:,} closed without an answer (a timeout, the descriptor reserve),"
        f" {attack.failed:,} could not connect; the server had at most"
        f" {result.server_fds:,} descriptors open",
    ]
    if result.waits:
        lines.append(
            f"newcomer on the game port, hello to welcome: {len(result.waits)} samples,"
            f" median {_ms(statistics.median(result.waits))}, max {_ms(max(result.waits))}"
            f" ({result.newcomers_lost} failed)"
        )
    else:
        lines.append(f"newcomer on the game port: every one of {result.newcomers_lost} failed")
    if result.visits:
        lines.append(
            f"a visitor from 127.0.0.2, GET / on the web port: median"
            f" {_ms(statistics.median(result.visits))}, max {_ms(max(result.visits))},"
            f" statuses {sorted(set(result.visit_statuses))}"
        )
    lines.append(
        f"tulips-server: {100 * cpu:.0f} % CPU during the siege; its log"
        f" {log.stat().st_size / 1024:.1f} KiB, {text.count(chr(10))} lines,"
        f" {text.count('Traceback')} tracebacks; load average"
        f" {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m server.lab.web.siege [--connections N] [--duration S] ...``."""
    parser = argparse.ArgumentParser(
        prog="python -m server.lab.web.siege",
        description="How long a newcomer waits on the game port while slowloris"
        " connections besiege the web port: starts tulips-server --web on free local ports"
        " (its log in a file), opens the connections from 127.0.0.1, samples a newcomer's"
        " hello to welcome, then prints the waits and the size of the server's log."
        " Linux only.",
    )
    parser.add_argument("--connections", type=int, default=2000, help="slowloris connections")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of siege")
    parser.add_argument(
        "--trickle", type=float, default=2.0, help="seconds between two header lines"
    )
    parser.add_argument(
        "--reopen", type=float, default=0.5, help="seconds before a closed connection reopens"
    )
    parser.add_argument("--every", type=float, default=1.0, help="seconds between newcomers")
    parser.add_argument(
        "--server-fd-limit",
        type=int,
        default=None,
        metavar="N",
        help="run the server with at most N file descriptors (soft and hard limit)",
    )
    parser.add_argument(
        "--keep-log", type=Path, default=None, metavar="DIR", help="leave the server's log in DIR"
    )
    parser.add_argument(
        "server_args",
        nargs="*",
        metavar="-- FLAG",
        help="more tulips-server flags, after --",
    )
    args = parser.parse_args(argv)
    if args.connections < 1 or args.duration <= 0 or args.every <= 0 or args.trickle <= 0:
        parser.error("--connections, --duration, --every and --trickle must be more than 0")
    limit = _raise_own_limit(args.connections + 256)
    if limit < args.connections + 64:
        parser.error(f"this process may open only {limit} descriptors; use fewer --connections")
    with tempfile.TemporaryDirectory(prefix="tulips-siege-") as scratch:
        directory = args.keep_log or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        result, log, cpu = asyncio.run(
            siege(
                args.connections,
                args.duration,
                trickle=args.trickle,
                reopen=args.reopen,
                every=args.every,
                server_args=args.server_args,
                log_dir=directory,
                server_fd_limit=args.server_fd_limit,
            )
        )
        print(report(result, log, cpu, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
