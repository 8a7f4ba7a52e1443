"""tulips-loadtest: many concurrent matches of SDK clients against a server.

Each match is --players SDK sessions in one match (no server bots), each
answering its prompts with a random legal action after --think seconds
(0: flat out). It reports completed matches/s, actions/s, the latency from an
"act" sent to the server's "ok", errors, the server's memory from /healthz
(before the clients connect and while all are connected) and, for a server it
started (or --server-pid), the server process's CPU seconds per 1,000 actions:
the figure a busy machine disturbs least. The load average is printed beside.

    tulips-loadtest ws://127.0.0.1:8765 --matches 50 --think 0 --duration 20
    tulips-loadtest --spawn-server --matches 500 --think 1 --duration 60
    tulips-loadtest ws://node1:8765 ws://node2:8765 --matches 500 --think 1
    tulips-loadtest ws://node1:8765 --all-nodes     # every node of node1's cluster
    tulips-loadtest --compare-workers 2 --matches 50 --think 0  # 1 process vs 2 workers
    tulips-loadtest --spawn-server --reference --storage off --matches 50 --think 0

--reference then runs the same load against a bare websockets + MessagePack
server with no game (python -m client.reference) and prints each figure as a
ratio to it: what the game costs over the physical limit of this stack here.

With several URLs (a cluster's nodes) the clients are spread over them: seat s
of match i connects to URL (i + s) mod N, so joins follow the cluster's
redirects to the match's node.

Two soaks start a server of their own and judge it (exit code 1 on a missed
target); each has flags of its own, which "tulips-loadtest --hostile 1 --help"
and "tulips-loadtest --crash-soak 1 --help" list:

    tulips-loadtest --hostile 1000000   # hostile frames beside normal matches
    tulips-loadtest --crash-soak 100    # SIGKILL and restart; no acknowledged action lost

Only loopback or LAN addresses you run yourself are fair targets.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import protocol as wire
from protocol.version import add_version_flag

from . import clusterload
from .localserver import fetch_health
from .sdk import ConnectError, ConnectionLost, RequestError, Session

__all__ = [
    "LoadReport",
    "against_reference",
    "cpu_seconds",
    "efficiency",
    "main",
    "run_load",
]


@dataclass
class LoadReport:
    """What one load run measured."""

    matches: int = 0
    actions: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    connections: int = 0
    memory_before: int | None = None
    memory_loaded: int | None = None
    #: CPU seconds (user + system) the server process used while measuring
    server_cpu: float | None = None
    #: the machine's 1-minute load average when measuring began and ended
    load: tuple[float, float] | None = None
    #: the run is over and its sessions are being closed
    closing: bool = False

    def error(self, kind: str) -> None:
        """Count one error of this kind (none once the run is tearing down: closing
        a match's sessions fails the requests still on their way)."""
        if self.closing:
            return
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1

    def percentile(self, q: float) -> float:
        """Latency percentile in milliseconds (0 when nothing was measured)."""
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] * 1000

    @property
    def rate(self) -> float:
        """Actions per second (wall clock)."""
        return self.actions / self.elapsed if self.elapsed else 0.0

    @property
    def cpu_per_1000(self) -> float | None:
        """Server CPU seconds per 1,000 actions: the figure a busy machine
        disturbs least (None without a server process to read)."""
        if self.server_cpu is None or not self.actions:
            return None
        return self.server_cpu / self.actions * 1000

    def lines(self) -> list[str]:
        """The report, a line per figure."""
        out = [
            f"elapsed           {self.elapsed:8.1f} s",
            f"connections       {self.connections:8d}",
            f"matches completed {self.matches:8d}   ({self.matches / self.elapsed:.2f}/s)",
            f"actions           {self.actions:8d}   ({self.actions / self.elapsed:,.0f}/s)",
            f"latency act->ok   p50 {self.percentile(50):.2f} ms   p99 {self.percentile(99):.2f} ms"
            f"   max {max(self.latencies, default=0) * 1000:.1f} ms",
            f"errors            {self.errors:8d}   {self.error_kinds or ''}",
        ]
        per_1000 = self.cpu_per_1000
        if per_1000 is not None:
            out.append(
                f"server CPU        {per_1000:8.3f} s per 1,000 actions"
                f"   ({1000 / per_1000:,.0f} actions per CPU-second)"
            )
        if self.load is not None:
            out.append(f"load average      {self.load[0]:8.2f} -> {self.load[1]:.2f}   (1 min)")
        if self.memory_before is not None and self.memory_loaded is not None:
            grown = self.memory_loaded - self.memory_before
            per = grown / self.connections if self.connections else 0
            out.append(
                f"server memory     {self.memory_before / 2**20:.1f} MiB idle,"
                f" {self.memory_loaded / 2**20:.1f} MiB loaded:"
                f" {per / 1024:.1f} KiB per connected player"
            )
        return out


class _Seat:
    """One SDK session playing one seat of a load match."""

    def __init__(self, session: Session, report: LoadReport, think: float, rng: random.Random):
        self.session = session
        self.report = report
        self.think = think
        self.rng = rng

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
        seats = [_Seat(s, report, think, rng) for s in sessions]
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


async def run_load(
    url: str | Sequence[str],
    matches: int,
    players: int,
    think: float,
    duration: float,
    ramp: float = 0.0,
    hard_bots: int = 0,
    server_pid: int | None = None,
) -> LoadReport:
    """Run the load and return what it measured.

    Matches start at random moments over the first ``ramp`` seconds (so they
    do not all open and end in lockstep); measuring begins after the ramp.
    ``hard_bots`` more tables of four hard server bots play beside them, to
    show that bots thinking do not slow the other matches down. With
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
    try:
        async with asyncio.timeout(120):
            await ready.wait()
    except TimeoutError:
        report.error("connect_timeout")
    await asyncio.sleep(ramp + 2.0)
    load_before = os.getloadavg()[0]
    cpu_before = cpu_seconds(server_pid) if server_pid is not None else None
    measuring.set()
    started = time.perf_counter()
    await asyncio.sleep(duration / 2)
    report.memory_loaded = await _memory_of(urls)
    await asyncio.sleep(duration / 2)
    report.elapsed = time.perf_counter() - started
    measuring.clear()
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
def _spawned(command: list[str], port: int) -> Iterator[Spawned]:
    process = subprocess.Popen(command)
    try:
        yield Spawned(f"ws://127.0.0.1:{port}", process.pid)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _spawned_server(storage: str, loop: str = "asyncio") -> Iterator[Spawned]:
    """A local ``python -m server`` on a free port, stopped afterwards.

    ``storage`` is ``"off"`` (memory only) or a ``--sync`` mode, with a fresh
    temporary data directory; ``loop`` its event loop.
    """
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="tulips-load-") as data_dir:
        command = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port)]
        command += ["--log-level", "WARNING", "--rate-limit", "1000"]
        if loop != "asyncio":
            command += ["--loop", loop]
        if storage == "off":
            command += ["--no-storage"]
        else:
            command += ["--data-dir", data_dir, "--sync", storage]
        with _spawned(command, port) as spawned:
            yield spawned


@contextlib.contextmanager
def _spawned_reference(loop: str = "asyncio") -> Iterator[Spawned]:
    """The reference server (:mod:`client.reference`) on a free port."""
    port = _free_port()
    command = [sys.executable, "-m", "client.reference", "--port", str(port), "--loop", loop]
    with _spawned(command, port) as spawned:
        yield spawned


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _wait_until_up(url: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while await fetch_health(url) is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"tulips-loadtest: no server answered at {url}")
        await asyncio.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``tulips-loadtest`` (``--hostile`` and ``--crash-soak`` are soaks of
    their own, with their own flags: see ``--hostile 1 --help``)."""
    args_seen = sys.argv[1:] if argv is None else argv
    if any(a == "--hostile" or a.startswith("--hostile=") for a in args_seen):
        from . import hostile

        return hostile.main(args_seen)
    if any(a == "--crash-soak" or a.startswith("--crash-soak=") for a in args_seen):
        from . import crashsoak

        return crashsoak.main(args_seen)
    parser = argparse.ArgumentParser(
        prog="tulips-loadtest",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_version_flag(parser)
    parser.add_argument(
        "urls",
        nargs="*",
        metavar="url",
        help="ws://HOST:PORT of a running server; several: the clients are spread over them",
    )
    parser.add_argument(
        "--all-nodes",
        action="store_true",
        help="spread the clients over every node of the first URL's cluster",
    )
    parser.add_argument(
        "--compare-workers",
        type=int,
        metavar="N",
        help="start one server process, then a cluster of N workers on a private"
        " redis-server, and measure both under the same load, side by side",
    )
    parser.add_argument(
        "--hard-bots",
        type=int,
        default=0,
        help="tables of four hard server bots playing beside the measured matches",
    )
    parser.add_argument(
        "--storage",
        choices=["off", "full", "normal"],
        default="full",
        help="with --spawn-server: memory only, or SQLite with this --sync",
    )
    parser.add_argument(
        "--compare-storage",
        action="store_true",
        help="with --spawn-server: run with storage off, then on (sync full), side by side",
    )
    parser.add_argument(
        "--spawn-server",
        action="store_true",
        help="start a local server on a free port for the run",
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="then run the same load against a bare websockets + MessagePack server"
        " (python -m client.reference) and print the figures side by side, as ratios",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="with --spawn-server: run everything this many times, back to back, and print"
        " the median efficiency (steadier on a busy machine)",
    )
    parser.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="the event loop of the servers this run starts (uvloop: the optional extra)",
    )
    parser.add_argument(
        "--server-pid",
        type=int,
        help="with a URL: the server's process id on this machine, for its CPU figures",
    )
    parser.add_argument("--matches", type=int, default=50, help="concurrent matches")
    parser.add_argument("--players", type=int, default=4, choices=range(2, 7))
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds a seat waits after its prompt (0: flat out)",
    )
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured")
    parser.add_argument(
        "--ramp", type=float, help="seconds over which matches start (default: 10 x --think)"
    )
    args = parser.parse_args(argv)
    spawning = args.spawn_server or args.compare_workers is not None
    if bool(args.urls) == spawning:
        parser.error("give server URLs, or --spawn-server or --compare-workers (not both)")
    if args.matches < 1 or args.duration <= 0 or args.think < 0:
        parser.error("--matches must be at least 1, --duration positive, --think not negative")
    if args.rounds < 1 or (args.rounds > 1 and not args.spawn_server):
        parser.error("--rounds must be at least 1, and goes with --spawn-server")
    if args.server_pid is not None and len(args.urls) != 1:
        parser.error("--server-pid goes with one URL (a spawned server's pid is known)")
    _raise_fd_limit()
    gc.freeze()  # as the server does: keep collector pauses out of the latencies
    gc.set_threshold(50_000, 20, 100)

    def go(url: str | list[str], pid: int | None = None) -> LoadReport:
        async def run() -> LoadReport:
            urls = [url] if isinstance(url, str) else url
            for each in urls:
                await _wait_until_up(each)
            if args.all_nodes:
                urls = await clusterload.cluster_urls(urls)
            ramp = args.ramp if args.ramp is not None else 10 * args.think
            return await run_load(
                urls,
                args.matches,
                args.players,
                args.think,
                args.duration,
                ramp,
                args.hard_bots,
                server_pid=pid,
            )

        return asyncio.run(run())

    print(f"{args.matches} matches x {args.players} players, think {args.think} s")
    if args.compare_workers is not None:
        return _compare_workers(args.compare_workers, args.storage, go)
    if not args.spawn_server:
        report = go(args.urls, args.server_pid)
        print("\n".join(report.lines()))
        reports = {"server": report}
        if args.reference:
            reports["reference"] = _reference_run(args.loop, go)
            print("\n".join(against_reference(reports)))
        return 0 if all(r.errors == 0 for r in reports.values()) else 1
    errors = 0
    efficiencies: dict[str, list[float]] = {}
    for round_ in range(args.rounds):
        if args.rounds > 1:
            print(f"== round {round_ + 1} of {args.rounds}")
        reports = {}
        modes = ["off", "full"] if args.compare_storage else [args.storage]
        for mode in modes:
            with _spawned_server(mode, args.loop) as spawned:
                reports[f"storage {mode}"] = report = go(spawned.url, spawned.pid)
            print(f"-- storage {mode}")
            print("\n".join(report.lines()))
        if args.compare_storage:
            print("\n".join(_side_by_side(reports["storage off"], reports["storage full"])))
        if args.reference:
            reports["reference"] = _reference_run(args.loop, go)
            print("\n".join(against_reference(reports)))
            for name, value in efficiency(reports).items():
                efficiencies.setdefault(name, []).append(value)
        errors += sum(r.errors for r in reports.values())
    if args.rounds > 1 and efficiencies:
        print(f"-- median of {args.rounds} rounds")
        for name, values in efficiencies.items():
            shown = ", ".join(f"{v:.2f}" for v in values)
            print(f"{name:14s} efficiency {statistics.median(values):.2f}x   ({shown})")
    return 0 if errors == 0 else 1


def _compare_workers(workers: int, storage: str, go: Callable[..., LoadReport]) -> int:
    """One server process, then ``workers`` of them in a cluster, under the same load."""
    with _spawned_server(storage) as spawned:
        one = go(spawned.url, spawned.pid)
    print("-- one process")
    print("\n".join(one.lines()))
    with clusterload.spawned_cluster(workers, storage) as urls:
        many = go(urls)
    print(f"-- --workers {workers} (clients spread over {', '.join(urls)})")
    print("\n".join(many.lines()))
    print("\n".join(clusterload.side_by_side(one, many, workers)))
    return 0 if one.errors == many.errors == 0 else 1


def _reference_run(loop: str, go: Callable[..., LoadReport]) -> LoadReport:
    """The same load against the reference server; its report, printed."""
    with _spawned_reference(loop) as spawned:
        reference = go(spawned.url, spawned.pid)
    print("-- reference (python -m client.reference: websockets + MessagePack, no game)")
    print("\n".join(reference.lines()))
    return reference


def efficiency(reports: dict[str, LoadReport]) -> dict[str, float]:
    """Each run's actions per server CPU-second as a share of the reference's
    (1.0: as cheap as the bare stack), where both were measured."""
    ref_cpu = reports["reference"].cpu_per_1000
    out = {}
    for name, report in reports.items():
        cpu = report.cpu_per_1000
        if name != "reference" and cpu and ref_cpu:
            out[name] = ref_cpu / cpu
    return out


def against_reference(reports: dict[str, LoadReport]) -> list[str]:
    """Each run's figures as ratios to the reference's (``reports["reference"]``),
    measured under the same load.

    ``efficiency`` is actions per server CPU-second as a share of the
    reference's (1.0: as cheap as the bare stack); ``throughput`` actions/s as
    a share of the reference's; ``p99`` the p99 latency in multiples of the
    reference's.
    """
    reference = reports["reference"]
    out = ["-- against the reference (same load, same machine, run just after)"]
    ref_cpu = reference.cpu_per_1000
    shares = efficiency(reports)
    for name, report in reports.items():
        if name == "reference":
            continue
        cpu = report.cpu_per_1000
        share = f"{shares[name]:.2f}x" if name in shares else "n/a"
        throughput = report.rate / reference.rate if reference.rate else 0.0
        ref_p99 = reference.percentile(99)
        p99 = f"{report.percentile(99) / ref_p99:.1f}x" if ref_p99 else "n/a"
        cpu_text = f"{cpu:.3f}" if cpu is not None else "n/a"
        out.append(
            f"{name:14s} server CPU {cpu_text} s/1000 actions vs {ref_cpu or 0:.3f}:"
            f" efficiency {share}   throughput {throughput:.2f}x   p99 {p99}"
        )
    return out


def _side_by_side(off: LoadReport, on: LoadReport) -> list[str]:
    def rate(report: LoadReport) -> float:
        return report.actions / report.elapsed

    cost = 1 - rate(on) / rate(off) if rate(off) else 0.0
    out = [
        "-- side by side      storage off   storage on (sync full)",
        f"matches/s           {off.matches / off.elapsed:11.2f}   {on.matches / on.elapsed:11.2f}",
        f"actions/s           {rate(off):11,.0f}   {rate(on):11,.0f}",
        f"p99 act->ok (ms)    {off.percentile(99):11.2f}   {on.percentile(99):11.2f}",
        f"storage costs {cost:.0%} of throughput",
    ]
    off_cpu, on_cpu = off.cpu_per_1000, on.cpu_per_1000
    if off_cpu and on_cpu:
        out.append(
            f"server CPU per 1,000 actions {off_cpu:.3f} s -> {on_cpu:.3f} s:"
            f" storage costs {1 - off_cpu / on_cpu:.0%} of the server's CPU"
        )
    return out


if __name__ == "__main__":
    raise SystemExit(main())
