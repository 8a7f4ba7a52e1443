"""What the storage and crash-recovery tests share.

* :class:`Servers`: real ``python -m server`` processes on 127.0.0.1, each on
  a port picked free beforehand, awaited until ``/healthz`` answers, and always
  killed at the end (the ``servers`` fixture).
* :func:`read_disk`: what a data directory holds, read with plain ``sqlite3``
  from a copy (so reading never changes the directory under test); and
  :func:`wait_until_people_must_act`, which reads a live one.
* :class:`Seen` and :func:`play`: an SDK client that answers each prompt with a
  random legal action and records everything it was told — every event by
  ``seq``, every action the server acknowledged, and the one it sent but never
  heard back about when the server died.
* :class:`Replayed` and :func:`check_client`: the engine's replay of a finished
  match (seed, first seat, every action), and the comparison of everything a
  client saw with it.
* :func:`in_process` and :class:`Recorder`: a server with storage in this
  process, and a session whose every message is kept.

Every wait is bounded, and everything talks to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from websockets.exceptions import ConnectionClosed

import protocol as wire
from client.localserver import free_port as free_port  # the storage tests take it from here
from client.sdk import ConnectionLost, RequestError, Session
from engine import DEFAULT_RULESET, Event, Match, observe, project_event
from engine.record import action_from_data, action_to_data
from server.app import TulipsServer
from server.config import ServerConfig
from server.lobby import Lobby
from server.match import views
from server.storage import _MIGRATIONS, APPLICATION_ID, FILE_NAME, Storage

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
#: a 4-seat match always takes this many actions (4 openings, then the deck runs out)
ACTIONS_IN_A_4_SEAT_MATCH = 60


# -- files ------------------------------------------------------------------------------------


def digest(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_at_version(data_dir: Path, version: int) -> sqlite3.Connection:
    """A new database file in ``data_dir`` as schema ``version`` made it (the
    migrations up to it, nothing after), opened for the test to fill; the
    caller commits and closes it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(data_dir / FILE_NAME)
    scripts = "\n".join(_MIGRATIONS[v] for v in range(1, version + 1))
    db.executescript(
        f"BEGIN;\n{scripts}\nPRAGMA application_id = {APPLICATION_ID};\n"
        f"PRAGMA user_version = {version};\nCOMMIT;"
    )
    return db


def tree(directory: Path) -> dict[str, str]:
    """Every entry under ``directory``: its relative path and its bytes' hash
    (``"<dir>"`` for a directory), to compare before and after."""
    found: dict[str, str] = {}
    for path in sorted(directory.rglob("*")):
        name = str(path.relative_to(directory))
        found[name] = "<dir>" if path.is_dir() else digest(path)
    return found


@dataclass
class Disk:
    """What a data directory holds (read from a copy with plain sqlite3)."""

    application_id: int
    user_version: int
    players: dict[str, tuple[str, str]]  #: id -> (name, token hash)
    matches: dict[str, dict[str, Any]]  #: id -> the row, by column name
    actions: dict[str, list[tuple[int, dict[str, Any]]]]  #: match -> [(seat, action data)]


def read_disk(data_dir: Path) -> Disk:
    """The data directory's database as it is now, read from a scratch copy of
    the file and its write-ahead log (as SQLite would recover them on open).
    For a stopped (or killed, or idle) server: a copy taken during a write
    could catch the files half-way through a checkpoint."""
    with tempfile.TemporaryDirectory(prefix="tulips-copy-") as scratch:
        copy = Path(scratch) / FILE_NAME
        shutil.copyfile(data_dir / FILE_NAME, copy)
        wal = data_dir / f"{FILE_NAME}-wal"
        if wal.exists():
            shutil.copyfile(wal, Path(scratch) / f"{FILE_NAME}-wal")
        connection = sqlite3.connect(copy)
        try:
            connection.row_factory = sqlite3.Row
            app_id = connection.execute("PRAGMA application_id").fetchone()[0]
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            players = {
                row["id"]: (row["name"], row["token_hash"])
                for row in connection.execute("SELECT * FROM players")
            }
            matches = {row["id"]: _flat(row) for row in connection.execute("SELECT * FROM matches")}
            actions: dict[str, list[tuple[int, dict[str, Any]]]] = {}
            for row in connection.execute("SELECT * FROM actions ORDER BY match_id, idx"):
                stored = actions.setdefault(row["match_id"], [])
                assert row["idx"] == len(stored), f"action {len(stored)} of {row['match_id']} gap"
                stored.append((row["seat"], json.loads(row["action"])))
        finally:
            connection.close()
    return Disk(app_id, version, players, matches, actions)


# -- server processes -------------------------------------------------------------------------


def server_command(data_dir: Path, port: int, *flags: str, faults: Sequence[str] = ()) -> list[str]:
    """``python -m server`` on 127.0.0.1 with test-friendly settings; with
    ``faults`` (flags of :mod:`tests.storage.killable_server`), that runner instead."""
    program = ["-m", "tests.storage.killable_server", *faults] if faults else ["-m", "server"]
    return [
        sys.executable,
        *program,
        "--host",
        HOST,
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        "--grace-period",
        "120",  # nobody's seat goes to a bot while they reconnect
        "--bot-delay",
        "0",
        *flags,
    ]


def server_env() -> dict[str, str]:
    """The environment of a server process."""
    return dict(os.environ)


async def healthz(port: int) -> dict[str, Any] | None:
    """``GET /healthz``'s JSON, or None if nothing answers on the port yet."""
    try:
        reader, writer = await asyncio.open_connection(HOST, port)
    except OSError:
        return None
    try:
        writer.write(
            f"GET /healthz HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        response = await reader.read()
    except OSError:
        return None
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    head, _, body = response.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        return None
    answer: dict[str, Any] = json.loads(body)
    return answer


@dataclass
class ServerProcess:
    """One ``python -m server`` process, its output in a log file."""

    process: asyncio.subprocess.Process
    data_dir: Path
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        """Where its WebSocket clients connect."""
        return f"ws://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        """Whether the process has not exited yet."""
        return self.process.returncode is None

    def log(self) -> str:
        """Everything it wrote so far."""
        return self.log_path.read_text(errors="replace")

    async def wait_healthy(self, timeout: float = 20.0) -> dict[str, Any]:
        """Wait until ``/healthz`` answers; fail at once if the process exits."""
        async with asyncio.timeout(timeout):
            while True:
                if not self.running:
                    raise AssertionError(
                        f"the server exited with {self.process.returncode}:\n{self.log()}"
                    )
                status = await healthz(self.port)
                if status is not None:
                    return status
                await asyncio.sleep(0.02)

    async def wait_exit(self, timeout: float = 20.0) -> int:
        """Wait for the process to end; its return code."""
        async with asyncio.timeout(timeout):
            return await self.process.wait()

    async def kill(self) -> None:
        """SIGKILL: no clean-up, no last words."""
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGKILL)
        await self.wait_exit(10)

    async def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM: a clean shutdown, which must end within ``timeout``; its return code."""
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
        return await self.wait_exit(timeout)


class Servers:
    """Starts server processes and kills whichever still run at the end."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.started: list[ServerProcess] = []

    async def start(
        self,
        data_dir: Path,
        *flags: str,
        port: int | None = None,
        kill_after_commits: int | None = None,
        commit_delay: float | None = None,
        slow_from_commit: int = 1,
        kill_at_ratings: str | None = None,
    ) -> ServerProcess:
        """A server on ``data_dir``, on ``port`` (or one picked free now),
        awaited until ``/healthz`` answers. ``kill_after_commits`` and
        ``commit_delay`` (from commit ``slow_from_commit`` on) run it under
        :mod:`tests.storage.killable_server`, and so does ``kill_at_ratings``
        (``before`` or ``after`` a finished match's ratings are stored)."""
        faults: list[str] = []
        if kill_at_ratings is not None:
            faults += ["--kill-at-ratings", kill_at_ratings]
        if kill_after_commits is not None:
            faults += ["--kill-after-commits", str(kill_after_commits)]
        if commit_delay is not None:
            faults += ["--commit-delay", str(commit_delay)]
            faults += ["--slow-from-commit", str(slow_from_commit)]
        port = port if port is not None else free_port()
        log_path = self.logs / f"server-{len(self.started) + 1}.log"
        with log_path.open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                *server_command(data_dir, port, *flags, faults=faults),
                cwd=ROOT,
                env=server_env(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
            )
        server = ServerProcess(process, data_dir, port, log_path)
        self.started.append(server)
        await server.wait_healthy()
        return server

    async def aclose(self) -> None:
        """Kill every server still running."""
        for server in self.started:
            if server.running:
                with contextlib.suppress(ProcessLookupError):
                    server.process.kill()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(10):
                    await server.process.wait()


async def run_until_exit(
    command: Sequence[str], timeout: float = 30.0, env: Mapping[str, str] | None = None
) -> tuple[int, str, str]:
    """Run a command that should exit by itself: (return code, stdout, stderr).
    It is killed if it does not exit in time (and the test fails)."""
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=ROOT,
        env=dict(env) if env is not None else server_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(timeout):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


# -- an SDK client that plays and remembers ---------------------------------------------------


@dataclass(frozen=True)
class Sent:
    """An ``act`` a client sent: answered ``ok``, or never answered (the server died)."""

    prompt_seq: int  #: the ``seq`` of the prompt it answered
    action: wire.Action
    acked: bool
    connection: int  #: which of the client's connections sent it (1 for the first)


@dataclass
class Seen:
    """Everything one seated client was told, across its connections."""

    name: str
    seat: int
    player_id: str
    token: str
    #: every event received, by seq (as this seat's own view)
    events: dict[int, wire.GameEvent] = field(default_factory=dict)
    #: every act sent, in order
    sent: list[Sent] = field(default_factory=list)
    #: (connection, snapshot) for every snapshot received
    snapshots: list[tuple[int, wire.Snapshot]] = field(default_factory=list)
    #: (connection, first seq, last seq) the client followed on each connection
    spans: list[tuple[int, int, int]] = field(default_factory=list)
    scoring: wire.Scoring | None = None
    connections: int = 0

    @property
    def last_seq(self) -> int:
        """The last event this client knows of (from events or snapshots)."""
        seqs = [*self.events, *(s.seq for _, s in self.snapshots)]
        return max(seqs, default=0)

    @property
    def acked(self) -> list[Sent]:
        """The acts the server answered ``ok``."""
        return [s for s in self.sent if s.acked]


async def open_session(url: str, name: str, token: str | None = None) -> Session:
    """An SDK session that does not reconnect by itself (the tests do it)."""
    session = Session(url, name, token=token, reconnect=False, request_timeout=10.0)
    async with asyncio.timeout(15):
        await session.open()
    return session


async def play(
    session: Session,
    seen: Seen,
    rng: random.Random,
    *,
    think: float = 0.0,
    on_event: Callable[[int], None] | None = None,
) -> str:
    """Follow the match on this connection and answer each prompt with a random
    legal action, until the match is over (``"over"``) or the connection is
    gone or an act is refused with ``match_paused`` — the server is stopping —
    (``"lost"``). Checks as it goes that events come one by one, prompts
    follow the events, and a resumed seat that must act is prompted at once."""
    seen.connections += 1
    connection = seen.connections
    seq: int | None = None
    first: int | None = None
    answered: set[int] = set()

    def follow(new: int) -> None:
        nonlocal seq, first
        seq = new
        if first is None:
            first = new
        if seen.spans and seen.spans[-1][0] == connection:
            seen.spans[-1] = (connection, first, new)
        else:
            seen.spans.append((connection, first, new))

    prompt_due = False  # a resumed seat that must act is prompted right after its snapshot
    async for message in session:
        if isinstance(message, ConnectionLost):
            return "lost"
        if prompt_due:
            assert isinstance(message, wire.Prompt), (
                f"{seen.name} must act after resuming, but got {message} instead of a prompt"
            )
            prompt_due = False
        if isinstance(message, wire.Snapshot):
            assert message.seat == seen.seat, f"{seen.name} got a snapshot for {message.seat}"
            if seq is not None:
                assert message.seq >= seq, f"a snapshot at {message.seq} after event {seq}"
            seen.snapshots.append((connection, message))
            prompt_due = connection > 1 and seq is None and seen.seat in message.state.to_act
            follow(message.seq)
            if message.state.phase == "over":
                seen.scoring = message.state.scoring
                return "over"
        elif isinstance(message, wire.Event):
            assert seq is not None, "an event before any snapshot"
            assert message.seq == seq + 1, f"{seen.name}: event {message.seq} after {seq}"
            follow(message.seq)
            known = seen.events.setdefault(message.seq, message.event)
            assert known == message.event, f"event {message.seq} changed: {known} then {message}"
            if on_event is not None:
                on_event(message.seq)
            if isinstance(message.event, wire.MatchEnded):
                seen.scoring = message.event.scoring
                return "over"
        elif isinstance(message, wire.Prompt):
            assert message.seat == seen.seat
            assert message.seq == seq, f"{seen.name}: a prompt at {message.seq}, events at {seq}"
            if message.seq in answered:
                continue
            answered.add(message.seq)
            action = rng.choice(message.actions)
            if think:
                await asyncio.sleep(rng.uniform(0, think))
            try:
                await session.answer(message, action)
            except (ConnectionError, ConnectionClosed, TimeoutError, RequestError) as exc:
                # match_paused: refused while the server stops (PROTOCOL.md), or paused
                if isinstance(exc, RequestError) and exc.code != "match_paused":
                    raise
                seen.sent.append(Sent(message.seq, action, acked=False, connection=connection))
                return "lost"
            seen.sent.append(Sent(message.seq, action, acked=True, connection=connection))
    return "lost"


# -- the engine's replay of a match -----------------------------------------------------------


@dataclass
class Replayed:
    """A match rebuilt by the engine from its seed, first seat and actions."""

    players: int
    seed: int
    first_seat: int | None
    actions: list[tuple[int, Any]]  #: (seat, engine action)
    #: every event, complete; event ``seq`` is index + 1
    events: list[Event]
    #: for each action, how many events came before it
    before: list[int]
    match: Match

    @classmethod
    def of(
        cls,
        players: int,
        seed: int,
        first_seat: int | None,
        actions: Iterable[tuple[int, Mapping[str, Any]]],
    ) -> Replayed:
        """Deal with ``Match.new`` and apply every ``(seat, action data)``."""
        match = Match.new(players, seed, DEFAULT_RULESET, first_seat)
        events: list[Event] = list(match.setup_events)
        played: list[tuple[int, Any]] = []
        before: list[int] = []
        for seat, data in actions:
            action = action_from_data(data)
            before.append(len(events))
            events.extend(match.apply(seat, action))
            played.append((seat, action))
        return cls(players, seed, first_seat, played, events, before, match)

    def data(self) -> list[tuple[int, dict[str, Any]]]:
        """The actions as stored: ``(seat, action_to_data)``."""
        return [(seat, action_to_data(action)) for seat, action in self.actions]

    def wire_events(self, seat: int | None) -> list[wire.GameEvent]:
        """Every event as ``seat`` (None: a spectator) is sent it."""
        return [views.event_to_wire(project_event(event, seat)) for event in self.events]

    def actions_through(self, seq: int) -> int:
        """How many actions caused the first ``seq`` events."""
        return sum(1 for start in self.before if start < seq)

    def state_at(self, seq: int, seat: int | None) -> wire.State:
        """What a snapshot reflecting the first ``seq`` events shows ``seat``."""
        match = Match.new(self.players, self.seed, DEFAULT_RULESET, self.first_seat)
        length = len(match.setup_events)
        for seat_, action in self.actions:
            if length >= seq:
                break
            length += len(match.apply(seat_, action))
        assert length == seq, f"seq {seq} is not between two actions"
        return views.state_to_wire(observe(match, seat))


def differences(want: msgspec.Struct, got: msgspec.Struct) -> dict[str, tuple[Any, Any]]:
    """The fields where two wire values differ: name -> (wanted, got)."""
    wanted, gotten = msgspec.to_builtins(want), msgspec.to_builtins(got)
    return {
        key: (wanted.get(key), gotten.get(key))
        for key in sorted(set(wanted) | set(gotten))
        if wanted.get(key) != gotten.get(key)
    }


def wire_action_data(action: wire.Action) -> dict[str, Any]:
    """A wire action as stored data (the same spelling)."""
    data: dict[str, Any] = msgspec.to_builtins(action)
    return data


async def fetch_replay(session: Session, match_id: str) -> tuple[list[wire.ReplayPage], list[Any]]:
    """Every page of a match's ``replay``, following ``next_seq``: (pages, events)."""
    pages: list[wire.ReplayPage] = []
    events: list[Any] = []
    from_seq: int | None = 1
    async with asyncio.timeout(20):
        while from_seq is not None:
            page = await session.request(wire.Replay, match=match_id, from_seq=from_seq)
            assert isinstance(page, wire.ReplayPage), page
            assert page.from_seq == from_seq
            assert page.match == match_id
            pages.append(page)
            events.extend(page.events)
            assert page.next_seq is None or page.next_seq == from_seq + len(page.events), page
            assert page.next_seq is None or page.events, "an empty page that says more remain"
            from_seq = page.next_seq
    return pages, events


def replay_of(pages: Sequence[wire.ReplayPage], players: int) -> Replayed:
    """The engine's replay of a finished match from its ``replay`` pages."""
    last = pages[-1]
    assert last.status == "finished", last.status
    assert last.seed is not None, "a finished match's replay has no seed"
    for page in pages:
        assert (page.seed, page.first_seat, page.actions) == (
            last.seed,
            last.first_seat,
            last.actions,
        ), "the pages of one replay disagree"
    return Replayed.of(
        players,
        last.seed,
        last.first_seat,
        [(entry.seat, wire_action_data(entry.action)) for entry in last.actions],
    )


# -- checking what clients saw against the replay ------------------------------------------------


def check_client(replayed: Replayed, seen: Seen) -> list[int | None]:
    """Everything ``seen`` was told agrees with the replay of the whole match:

    * every event it received is the replay's event with that seq, as its seat sees it;
    * every snapshot is the replayed state after that many events;
    * every act answered ``ok`` is in the action list, in the seat's order and
      (for a turn's card) at the position of the prompt it answered; an act never
      answered (the server died) was either lost — then the client was prompted
      again for the same choice — or kept, at exactly its place;
    * the final scoring is the replay's.

    Returns, for each act the client sent, its index in the action list (None: lost).
    """
    assert replayed.match.is_over
    mine = replayed.wire_events(seen.seat)
    for seq, event in sorted(seen.events.items()):
        assert 1 <= seq <= len(mine), f"{seen.name} saw event {seq} of {len(mine)}"
        assert event == mine[seq - 1], (
            f"{seen.name} saw event {seq} as {event}, the replay has {mine[seq - 1]}"
        )
    for connection, snapshot in seen.snapshots:
        want = replayed.state_at(snapshot.seq, seen.seat)
        assert snapshot.state == want, (
            f"{seen.name}'s snapshot at seq {snapshot.seq} (connection {connection}) is not"
            f" the replayed state: {differences(want, snapshot.state)}"
        )
    # the seat's actions in the final list, in order
    history = [i for i, (seat, _) in enumerate(replayed.actions) if seat == seen.seat]
    positions: list[int | None] = []
    for number, sent in enumerate(seen.sent):
        wanted = action_from_data(wire_action_data(sent.action))
        later = seen.sent[number + 1] if number + 1 < len(seen.sent) else None
        if not sent.acked and later is not None and _same_decision(sent, later):
            positions.append(None)  # lost with the server; asked again for the same choice
            continue
        taken = sum(1 for p in positions if p is not None)
        what = "acknowledged" if sent.acked else "unanswered"
        assert taken < len(history), (
            f"{seen.name}'s {what} act {sent} is not in the final action list"
            f" (seat {seen.seat} has {len(history)} actions)"
        )
        index = history[taken]
        _, action = replayed.actions[index]
        assert action == wanted, (
            f"{seen.name}'s {what} act {sent} is not the seat's action {taken + 1}: {action}"
        )
        if not isinstance(sent.action, wire.Opening):  # a turn's card: right after its prompt
            assert replayed.before[index] == sent.prompt_seq, (
                f"{seen.name}'s act {sent} was applied after {replayed.before[index]} events"
            )
        positions.append(index)
    stayed = sum(1 for p in positions if p is not None)
    assert stayed == len(history), (
        f"seat {seen.seat} has {len(history)} actions; its client sent {stayed} that stayed"
    )
    assert seen.scoring is not None, f"{seen.name} never learnt the final scoring"
    final = replayed.match.scoring
    assert final is not None
    assert seen.scoring == views.scoring_to_wire(final)
    return positions


def _same_decision(first: Sent, then: Sent) -> bool:
    """Whether ``then`` answers the same prompt again: the opening choice (made
    once, whenever it is prompted), or the same card of a turn (the same seq)."""
    if isinstance(first.action, wire.Opening):
        return isinstance(then.action, wire.Opening)
    return then.prompt_seq == first.prompt_seq


def known_actions(
    replayed: Replayed, seens: Iterable[Seen], positions: Mapping[str, list[int | None]], upto: int
) -> int:
    """How many actions (from the first) some client knew were carried out by
    the end of its connection ``upto``: it saw their events, or got ``ok``."""
    known = 0
    for seen in seens:
        for connection, _, last in seen.spans:
            if connection <= upto:
                known = max(known, replayed.actions_through(last))
        for sent, index in zip(seen.sent, positions[seen.name], strict=True):
            if sent.acked and sent.connection <= upto:
                assert index is not None
                known = max(known, index + 1)
    return known


# -- an in-process server with storage ------------------------------------------------------------


@dataclass
class InProcess:
    """A server in this process, storing in a data directory."""

    server: TulipsServer
    storage: Storage
    url: str

    @property
    def lobby(self) -> Lobby:
        """Its lobby (rooms and players)."""
        return self.server.lobby


@contextlib.asynccontextmanager
async def in_process(data_dir: Path, **settings: Any) -> AsyncIterator[InProcess]:
    """A server on 127.0.0.1 (a port the OS picks) with storage in ``data_dir``;
    stopped (storage closed) on exit. ``settings`` override ServerConfig fields."""
    settings.setdefault("bot_delay", 0.0)
    settings.setdefault("grace_period", 120.0)
    config = ServerConfig(host=HOST, port=0, data_dir=data_dir, **settings)
    storage = Storage(data_dir, synchronous=config.sync)
    server = TulipsServer(config, lobby=Lobby(config, storage=storage))
    async with asyncio.timeout(10):
        await server.start()
    try:
        yield InProcess(server, storage, f"ws://{HOST}:{server.port}")
    finally:
        async with asyncio.timeout(10):
            await server.stop()


class Recorder:
    """Keeps every message a session receives, in order, so a test can look
    at everything that arrived after some point (requests still work)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.messages: list[Any] = []
        self._arrived = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            async for message in self.session:
                self.messages.append(message)
                self._arrived.set()
        finally:
            self._arrived.set()

    def mark(self) -> int:
        """The position of the next message to arrive."""
        return len(self.messages)

    def since(self, mark: int, kind: type[Any] = object) -> list[Any]:
        """The messages of ``kind`` that arrived after ``mark``."""
        return [m for m in self.messages[mark:] if isinstance(m, kind)]

    async def wait_for(
        self,
        kind: type[Any],
        where: Callable[[Any], bool] = lambda m: True,
        since: int = 0,
        timeout: float = 5.0,
    ) -> Any:
        """The first message of ``kind`` after ``since`` that ``where`` accepts."""
        async with asyncio.timeout(timeout):
            while True:
                for message in self.messages[since:]:
                    if isinstance(message, kind) and where(message):
                        return message
                if self._task.done():
                    raise AssertionError(f"the session ended; no {kind.__name__} came")
                self._arrived.clear()
                await self._arrived.wait()

    async def close(self) -> None:
        """Close the session and stop recording."""
        async with asyncio.timeout(10):
            await self.session.close()
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


# -- looking at a live data directory ------------------------------------------------------------


def live_match(
    data_dir: Path, match_id: str
) -> tuple[dict[str, Any] | None, list[tuple[int, Any]]]:
    """A match's stored row and actions, read (read-only, as SQLite allows next
    to a running server) from the live database."""
    uri = f"file:{data_dir / FILE_NAME}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as connection:
        connection.row_factory = sqlite3.Row
        row = connection.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        actions = [
            (seat, json.loads(action))
            for seat, action in connection.execute(
                "SELECT seat, action FROM actions WHERE match_id = ? ORDER BY idx", (match_id,)
            )
        ]
    return (_flat(row) if row is not None else None), actions


def _flat(row: sqlite3.Row) -> dict[str, Any]:
    """A stored match's columns, its settings (one JSON value) spread among them."""
    flat = dict(row)
    flat.update(json.loads(flat.pop("settings")))
    return flat


async def wait_until_people_must_act(
    data_dir: Path, match_id: str, people: Iterable[int], players: int, timeout: float = 10.0
) -> None:
    """Wait until the stored match waits for a person (or is over): its bots
    have nothing left to do, so nothing changes until a person acts."""
    seats = set(people)
    async with asyncio.timeout(timeout):
        while True:
            row, actions = live_match(data_dir, match_id)
            if row is not None and row["seed"] is not None:
                match = Replayed.of(players, row["seed"], row["first_seat"], actions).match
                if match.is_over or set(match.to_act) <= seats:
                    return
            await asyncio.sleep(0.01)


async def start_expecting_refusal(
    command: Sequence[str], timeout: float = 30.0
) -> tuple[int | None, str, str]:
    """Run a server that should refuse to start: (return code, stdout, stderr).
    If it says it is listening instead, it is killed at once and the return
    code is None (so a test fails fast rather than waiting for a timeout)."""
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=ROOT,
        env=server_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    err: list[bytes] = []
    try:
        async with asyncio.timeout(timeout):
            while line := await process.stderr.readline():
                err.append(line)
                if b"listening on" in line:
                    process.kill()
                    await process.wait()
                    return None, "", b"".join(err).decode(errors="replace")
            out = await process.stdout.read()
            code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return code, out.decode(errors="replace"), b"".join(err).decode(errors="replace")
