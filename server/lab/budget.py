"""What an action costs the server, counted the same way every run: ``python -m server.lab.budget``.

A deterministic benchmark, as SQLite tracks its speed: a fixed script of
matches is played against a real server (:mod:`server.lab.budget_server`,
dealing from a fixed sequence of seeds) by plain WebSocket clients that pick
each action with a seeded generator and act one at a time, so every run sends
the server the same requests in the same order. It measures:

* **instructions** the server's process executes (valgrind's callgrind, on
  only while the script plays), per action of each match, per match set-up
  (hello, create, join, watch, list, start) and per match ending (a rematch,
  and everyone leaving the finished match), at 2, 4 and 6 seats, memory
  only, and at 4 seats with SQLite storage;
* **frames and bytes** every receiver gets per action (its seats, a
  spectator, a client browsing the lobby), counted by the clients, the
  bytes with their WebSocket frames' headers;
* **memory per connected player**: what the server's Python objects hold
  (:mod:`tracemalloc`) with :data:`MEMORY_MATCHES` four-seat matches under
  way, above the same server before they connected, per player; resident
  memory beside it, for information (the allocator makes it noisy).

Wall-clock time is measured nowhere here: the figures are counts.

``--record`` writes the figures to :data:`RECORD` (``budget.json`` beside
this file); without it the figures are compared with that record, each with
how far it moved. ``--check`` exits 1 when a figure is more than its
tolerance above the record — unless the record was made with another Python,
valgrind, msgspec or websockets (their code is most of an action's
instructions), which is said, and is no failure: record the new ones.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from .budget_server import RELEASE_AFTER

__all__ = ["RECORD", "Figures", "compare", "main", "measure"]

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("budget.json")
#: how far above its record a figure may be before ``--check`` fails
TOLERANCE = 0.05
#: the four-seat matches under way while memory is measured (4 players each)
MEMORY_MATCHES = 50
#: the scenarios of the instruction count: (name, seats, storage)
SCENARIOS = (("2 seats", 2, False), ("4 seats", 4, False), ("6 seats", 6, False))
STORED = ("4 seats, SQLite", 4, True)
_LISTENING = re.compile(r"port (\d+) \(ws://")
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


def _header(size: int) -> int:
    """The bytes of a server's WebSocket frame header for ``size`` bytes (RFC 6455 §5.2)."""
    return 2 if size < 126 else 4 if size < 65536 else 10


@dataclasses.dataclass
class Figures:
    """One run's figures, by name (lower is better for all of them)."""

    values: dict[str, float]
    environment: dict[str, str]


# -- one client of the script ------------------------------------------------------------


class _Client:
    """A plain WebSocket client: reads every frame (a ``batch`` as its messages),
    counts them, and keeps what the script waits for."""

    def __init__(self, ws: ClientConnection, name: str) -> None:
        self.ws = ws
        self.name = name
        self.frames = 0
        self.bytes = 0
        self.messages: list[dict[str, Any]] = []
        self.prompt: dict[str, Any] | None = None
        self.ended = False
        self._ids = iter(range(1, 1 << 30))
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._changed = asyncio.Event()
        self._marker: int | None = None
        self._before = self._after = (0, 0)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for frame in self.ws:
                assert isinstance(frame, bytes)
                message = _decode(frame)
                inner = message["messages"] if message.get("type") == "batch" else [message]
                marked = self._marker is not None and any(
                    m.get("id") == self._marker for m in inner
                )
                if marked:
                    self._before = (self.frames, self.bytes)
                self.frames += 1
                self.bytes += len(frame) + _header(len(frame))
                if marked:
                    self._after = (self.frames, self.bytes)
                for one in inner:
                    self._take(one)
                self._changed.set()

    def _take(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        kind = message.get("type")
        if kind == "prompt":
            self.prompt = message
        elif kind == "event" and message["event"].get("kind") == "match_ended":
            self.ended = True
        request = message.get("id")
        waiting = self._waiting.pop(request, None) if isinstance(request, int) else None
        if waiting is not None and not waiting.done():
            waiting.set_result(message)

    async def request(self, kind: str, *, marked: bool = False, **fields: Any) -> dict[str, Any]:
        """Send a request and wait for its answer (``ok``, ``error`` or its reply);
        ``marked``: note the counts before and with the frame that answers it."""
        request = next(self._ids)
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request] = answer
        self._marker = request if marked else None
        await self.ws.send(_encode({"v": 1, "type": kind, "id": request, **fields}))
        async with asyncio.timeout(120):
            reply = await answer
        self._marker = None
        if reply.get("type") == "error":
            raise RuntimeError(f"{self.name}: {kind} was refused: {reply}")
        return reply

    async def counted(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The frames and bytes received before the answer to a request sent now
        — everything the server had sent this client until then — and with it."""
        await self.request("list_matches", marked=True)
        return self._before, self._after

    async def wait_for(self, kind: str) -> dict[str, Any]:
        """The first message of ``kind`` this client got (waiting for it)."""
        async with asyncio.timeout(120):
            while True:
                for message in self.messages:
                    if message.get("type") == kind:
                        return message
                self._changed.clear()
                await self._changed.wait()

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


async def _connect(url: str, name: str, features: tuple[str, ...]) -> _Client:
    ws = await connect(url, compression=None, max_size=None, open_timeout=120, ping_interval=None)
    client = _Client(ws, name)
    hello: dict[str, Any] = {"client": "budget/1", "name": name}
    if features:
        hello["features"] = list(features)
    await client.request("hello", **hello)
    return client


@dataclasses.dataclass
class _Table:
    """One scripted match: its seats and, but for the memory's, a spectator
    and a lobby browser."""

    seats: list[_Client]
    audience: list[_Client]

    @property
    def everyone(self) -> list[_Client]:
        return [*self.seats, *self.audience]

    async def received(self, start: bool) -> tuple[int, int]:
        """The frames and bytes everyone received until now: at the ``start`` of
        a count, the answers to the asking included; at its end, not."""
        counts = [(await client.counted())[start] for client in self.everyone]
        return sum(frames for frames, _ in counts), sum(sent for _, sent in counts)


async def _set_up(
    url: str, seats: int, tag: str, features: tuple[str, ...], audience: bool = True
) -> _Table:
    """Everyone connected and in place, the match started."""
    players = [await _connect(url, f"{tag} {seat}", features) for seat in range(seats)]
    host = players[0]
    watchers = []
    if audience:
        browser = await _connect(url, f"{tag} lobby", features)
        await browser.request("list_matches")
        watchers.append(browser)
    joined = await host.request("create_match", name=f"budget {tag}", seats=seats)
    match = joined["match"]
    for player in players[1:]:
        await player.request("join", match=match)
    if audience:
        spectator = await _connect(url, f"{tag} watcher", features)
        await spectator.request("watch", match=match)
        watchers.append(spectator)
    await host.request("start")
    for client in [*players, *watchers[1:]]:
        await client.wait_for("snapshot")
    return _Table(players, watchers)


async def _close(clients: list[_Client], probe: _Client) -> None:
    """Hang up, and wait until the server has seen everyone go (asked by
    ``probe``): what a departure sends must not fall into the next count."""
    for client in clients:
        await client.close()
    async with asyncio.timeout(120):
        while True:
            listed = (await probe.request("list_matches"))["matches"]
            if not any(
                match.get("spectators") or any(seat.get("connected") for seat in match["seats"])
                for match in listed
            ):
                break
            await asyncio.sleep(0.02)
    await asyncio.sleep(RELEASE_AFTER + 1)  # the server gives memory back: not in the next count


async def _act(table: _Table, rng: random.Random) -> bool:
    """The lowest seat with a prompt acts, with an action ``rng`` picks, once
    the match is settled (a prompt is waiting); False once the match is over."""
    async with asyncio.timeout(120):
        while True:
            if table.seats[0].ended:
                return False
            ready = [p for p in table.seats if p.prompt is not None]
            if ready:
                break
            await asyncio.sleep(0.005)
    player = ready[0]
    prompt, player.prompt = player.prompt, None
    assert prompt is not None
    await player.request("act", action=rng.choice(prompt["actions"]), seq=prompt["seq"])
    return True


async def _end(table: _Table) -> None:
    """After the match: every seat asks to play again (the first opens the
    rematch, the others join it), then every seat leaves it and the spectator
    leaves the finished match (what a table does at the end of a game)."""
    for player in table.seats:
        assert (await player.request("play_again"))["type"] == "joined"
    for client in table.seats:
        assert (await client.request("leave"))["type"] == "ok"
    for watcher in table.audience[1:]:  # the spectator (the first is the lobby browser)
        assert (await watcher.request("leave"))["type"] == "ok"


async def _play(table: _Table, rng: random.Random) -> int:
    """Play the match to its end, one act at a time; how many acts it took."""
    acts = 0
    while await _act(table, rng):
        acts += 1
    return acts


# -- the server under measure --------------------------------------------------------------


class _Server:
    """``python -m server.lab.budget_server``, perhaps under callgrind."""

    def __init__(self, flags: list[str], callgrind: Path | None, traced: bool) -> None:
        command = [sys.executable, "-m", "server.lab.budget_server", *flags]
        if traced:
            command.append("--traced")
        if callgrind is not None:
            command = [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={callgrind}",
                f"--log-file={callgrind}.log",
                *command,
            ]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = self._wait_for_port()
        self.url = f"ws://127.0.0.1:{self.port}"

    def _wait_for_port(self) -> int:
        """The port from the server's listening line; its log is read on
        meanwhile (a full pipe would stop the server at its next line)."""
        stderr = self.process.stderr
        assert stderr is not None
        for line in stderr:
            found = _LISTENING.search(line)
            if found:
                threading.Thread(target=collections.deque, args=(stderr, 0), daemon=True).start()
                return int(found.group(1))
        raise RuntimeError(f"the server exited before it listened ({self.process.wait()})")

    def callgrind(self, *words: str) -> None:
        """Tell callgrind in the server's process (on, off, dump)."""
        done = subprocess.run(
            ["callgrind_control", *words, str(self.process.pid)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0 or "Error" in done.stdout:
            raise RuntimeError(f"callgrind_control {' '.join(words)}: {done.stdout}{done.stderr}")

    def memory(self) -> dict[str, int | None]:
        """The server's memory now (see :mod:`server.lab.budget_server`)."""
        assert self.process.stdout is not None
        self.process.send_signal(signal.SIGUSR1)
        line = self.process.stdout.readline()
        return json.loads(line)  # type: ignore[no-any-return]

    def stop(self) -> None:
        """End the server (what is measured is already dumped or printed)."""
        self.process.kill()
        self.process.wait()


def _totals(path: Path) -> int:
    """The instructions of one callgrind dump."""
    for line in path.read_text().splitlines():
        if line.startswith("totals:"):  # "summary:" is wrong after instrumentation was off
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def _dumps(base: Path) -> Iterator[Path]:
    """callgrind's dump files of ``base``, in the order they were made."""
    found = sorted(base.parent.glob(base.name + ".*"), key=lambda p: p.suffix)
    numbered = [p for p in found if p.suffix[1:].isdigit()]
    yield from sorted(numbered, key=lambda p: int(p.suffix[1:]))


async def _instructions(features: tuple[str, ...]) -> dict[str, float]:
    """Instructions, frames and bytes of every scenario: the memory-only ones
    in one server, the stored one in another."""
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="tulips-budget-") as folder:
        for scenarios in (SCENARIOS, (STORED,)):
            base = Path(folder) / f"callgrind.{len(figures)}"
            flags = ["--host", "127.0.0.1", "--port", "0", "--bot-delay", "0"]
            flags += ["--no-announce", "--log-level", "INFO"]  # INFO: the listening line
            if scenarios[0][2]:
                flags += ["--data-dir", str(Path(folder) / "data"), "--sync", "normal"]
            else:
                flags.append("--no-storage")
            server = _Server(flags, base, traced=False)
            try:
                # a match first, uncounted: what runs once per process (imports, caches)
                probe = await _connect(server.url, "probe", features)
                warm = await _set_up(server.url, 4, "warm", features)
                await _play(warm, random.Random(0))
                await _close(warm.everyone, probe)
                for name, seats, stored in scenarios:
                    figures.update(await _scenario(server, probe, name, seats, stored, features))
            finally:
                server.stop()
            dumps = list(_dumps(base))
            for (name, _, _), setup, play, end in zip(
                scenarios, dumps[::3], dumps[1::3], dumps[2::3], strict=True
            ):
                figures[f"instructions per match set-up, {name}"] = _totals(setup)
                figures[f"instructions per action, {name}"] = _totals(play) / figures.pop(name)
                figures[f"instructions per match ending, {name}"] = _totals(end)
    return figures


async def _scenario(
    server: _Server, probe: _Client, name: str, seats: int, stored: bool, features: tuple[str, ...]
) -> dict[str, float]:
    """Set up, play and end one match under callgrind (a dump after each:
    the ending is a rematch and everyone leaving); its acts (under ``name``,
    for the caller), frames and bytes per action."""
    server.callgrind("-i", "on")
    table = await _set_up(server.url, seats, name, features)
    server.callgrind("-d")
    server.callgrind("-i", "off")  # the counting's own requests are not counted
    frames0, bytes0 = await table.received(start=True)
    server.callgrind("-i", "on")
    acts = await _play(table, random.Random(seats))
    server.callgrind("-d")
    server.callgrind("-i", "off")
    frames, sent = await table.received(start=False)
    server.callgrind("-i", "on")
    await _end(table)
    server.callgrind("-d")
    server.callgrind("-i", "off")
    await _close(table.everyone, probe)
    figures: dict[str, float] = {name: acts}
    if not stored:
        figures[f"frames per action, {name}"] = (frames - frames0) / acts
        figures[f"bytes per action, {name}"] = (sent - bytes0) / acts
    return figures


async def _memory(features: tuple[str, ...], traced: bool) -> tuple[int, int]:
    """What :data:`MEMORY_MATCHES` four-seat matches under way hold in the
    server's memory, per connected player: Python's objects (``traced``) or
    the resident memory."""
    flags = ["--host", "127.0.0.1", "--port", "0", "--bot-delay", "0", "--no-storage"]
    flags += ["--no-announce", "--log-level", "INFO"]
    server = _Server(flags, None, traced=traced)
    try:
        rng = random.Random(1)
        probe = await _connect(server.url, "probe", features)
        warm = await _set_up(server.url, 4, "warm", features)
        await _play(warm, rng)
        await _close(warm.everyone, probe)
        idle = server.memory()
        tables = [
            await _set_up(server.url, 4, f"m{n}", features, audience=False)
            for n in range(MEMORY_MATCHES)
        ]
        for table in tables:  # a few actions each: a match under way
            for _ in range(6):
                await _act(table, rng)
        loaded = server.memory()
    finally:
        server.stop()
    key = "traced" if traced else "rss"
    before, after = idle[key], loaded[key]
    assert before is not None and after is not None
    return before, after


async def _memory_figures(features: tuple[str, ...]) -> dict[str, float]:
    players = 4 * MEMORY_MATCHES
    traced = await _memory(features, traced=True)
    resident = await _memory(features, traced=False)
    return {
        "Python memory per connected player (bytes)": (traced[1] - traced[0]) / players,
        "resident memory per connected player (bytes, not gated)": (resident[1] - resident[0])
        / players,
    }


def environment() -> dict[str, str]:
    """What the instruction counts depend on besides the project's own code."""
    found = {"python": platform.python_version(), "machine": platform.machine()}
    for package in ("msgspec", "websockets"):
        found[package] = metadata.version(package)
    valgrind = shutil.which("valgrind")
    if valgrind is not None:
        found["valgrind"] = subprocess.run(
            [valgrind, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    return found


def measure(features: tuple[str, ...] = ()) -> Figures:
    """Play the script and count (valgrind must be installed)."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("the budget counts instructions with valgrind: apt-get install valgrind")
    values = asyncio.run(_memory_figures(features))
    values.update(asyncio.run(_instructions(features)))
    return Figures(values, environment())


# -- the record ----------------------------------------------------------------------------


def _gated(name: str) -> bool:
    return "not gated" not in name


def compare(now: Figures, record: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Lines of a table of ``now`` against ``record``, and the regressions."""
    recorded: dict[str, float] = record.get("figures", {})
    tolerance = float(record.get("tolerance", TOLERANCE))
    lines = [f"{'figure':<58} {'recorded':>14} {'now':>14} {'change':>8}"]
    regressions = []
    for name, value in now.values.items():
        before = recorded.get(name)
        if before is None:
            lines.append(f"{name:<58} {'-':>14} {value:>14,.1f} {'new':>8}")
            continue
        change = (value - before) / before if before else 0.0
        mark = ""
        if _gated(name) and change > tolerance:
            mark = "  REGRESSION"
            regressions.append(f"{name}: {before:,.1f} -> {value:,.1f} ({change:+.1%})")
        elif _gated(name) and change < -tolerance:
            mark = "  better: --record it"
        lines.append(f"{name:<58} {before:>14,.1f} {value:>14,.1f} {change:>+8.1%}{mark}")
    return lines, regressions


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m server.lab.budget``."""
    parser = argparse.ArgumentParser(prog="python -m server.lab.budget", description=__doc__)
    parser.add_argument("--record", action="store_true", help=f"write the figures to {RECORD}")
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 if a figure is more than its tolerance ({TOLERANCE:.0%}) above the record",
    )
    parser.add_argument(
        "--features",
        default="batch",
        help="what the clients ask for in hello, comma-separated ('' for none; default: batch)",
    )
    args = parser.parse_args(argv)
    features = tuple(word for word in args.features.split(",") if word)
    now = measure(features)
    if args.record:
        RECORD.write_text(
            json.dumps(
                {
                    "tolerance": TOLERANCE,
                    "features": list(features),
                    "environment": now.environment,
                    "figures": {name: round(value, 3) for name, value in now.values.items()},
                },
                indent=2,
            )
            + "\n"
        )
        print(f"recorded in {RECORD.relative_to(ROOT)}")
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    lines, regressions = compare(now, record)
    print("\n".join(lines))
    if record.get("environment", now.environment) != now.environment:
        print(
            "the record was made with other versions "
            f"({record.get('environment')}; now {now.environment}): not comparable, no check"
        )
        return 0
    if regressions:
        print("over the budget:\n  " + "\n  ".join(regressions))
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
