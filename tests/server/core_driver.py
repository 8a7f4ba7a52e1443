"""A match core driven as its actor drives it, with no asyncio at all: a fake
clock, a fake disk that can be slow or fail, timers fired by advancing the
clock, bots that answer when the test says so, and connections that keep
every frame they are sent (decoded, and checked against R24–R26 as they arrive).

The driver also keeps the facts a test checks the core against, found
independently of the core's own bookkeeping: what is on disk, in what order
things were stored and told, and which decision each applied action named.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgpack
import msgspec

import protocol as wire
from engine import DEFAULT_RULESET, Action, Match
from engine.bots.policies import medium_policy, random_policy
from engine.record import action_from_data
from server.errors import StorageError
from server.match import commands as c
from server.match.bots import Bot
from server.match.core import CoreConfig, MatchCore
from server.match.outputs import (
    AskBot,
    CancelTimer,
    Changed,
    Entered,
    Exited,
    Gone,
    Output,
    Rematch,
    Reply,
    Send,
    SetTimer,
    Store,
)
from server.match.records import AppendAction, MatchRow, SaveMatch, Write
from server.match.seats import Seat
from server.match.settings import MatchSettings
from server.match.views import action_from_wire

from .helpers import check_frame

MATCH = "m1"
SEED = 20261202


def person(name: str) -> c.Person:
    """A player as the core knows them: an id (their name, lowercased) and a name."""
    return c.Person(name.lower(), name)


def new_core(
    seats: int = 3,
    bots: Iterable[tuple[int, str]] = (),
    *,
    host: str = "Ada",
    turn_timer: float | None = None,
    grace_period: float = 30.0,
    bot_delay: float = 0.0,
    first_seat: int | None = 0,
    durable: bool = True,
) -> MatchCore:
    """A new open match hosted by ``host``, with bots in some seats (stored
    unless ``durable`` is False: a server without storage)."""
    config = CoreConfig(
        bot_secret=b"k" * 32, grace_period=grace_period, bot_delay=bot_delay, durable=durable
    )
    slots = [Seat(index) for index in range(seats)]
    for index, strength in bots:
        slots[index].is_bot = True
        slots[index].bot = Bot.for_seat(strength, MATCH, index, config.bot_secret)
    settings = MatchSettings(
        name="table",
        ruleset_name="standard",
        ruleset=DEFAULT_RULESET,
        turn_timer=turn_timer,
        first_seat=first_seat,
    )
    return MatchCore(MATCH, settings, person(host), slots, config, created=1000.0)


@dataclass
class Sent:
    """One output as it was carried out, with what was on disk then."""

    output: Output
    stored_actions: int


@dataclass
class Applied:
    """One action the match took: whose, at which log length, naming which
    decision (the ``seq`` of the prompt an act named, or the decision a bot
    was asked), and who chose it."""

    seat: int
    at: int
    named: int | None
    by: str | None


@dataclass
class Conn:
    """A connection: every message it received, decoded, and its seat while in."""

    number: int
    who: c.Person
    messages: list[dict[str, Any]] = field(default_factory=list)
    viewer: int | None = None
    inside: bool = False

    def prompts(self) -> list[dict[str, Any]]:
        """The prompts it received, in order."""
        return [m for m in self.messages if m["type"] == "prompt"]

    def last(self, kind: str) -> dict[str, Any]:
        """The last message of this type it received."""
        return next(m for m in reversed(self.messages) if m["type"] == kind)


class Driver:
    """Carries out one core's outputs as the actor does, synchronously."""

    def __init__(self, core: MatchCore) -> None:
        self.core = core
        self.now = 0.0
        self.conns: dict[int, Conn] = {}
        self._numbers = itertools.count(1)
        self._request_ids = itertools.count(1)
        #: every output carried out, in order
        self.sent: list[Sent] = []
        #: timers set and not cancelled: name -> when
        self.timers: dict[str, float] = {}
        #: bots asked and not yet answered
        self.asks: list[AskBot] = []
        #: what is on disk, in order of storing
        self.disk: list[Write] = []
        #: writes queued without waiting: on disk only once a later store is
        #: (storage commits in order), or at :meth:`flush`
        self.queued: list[Write] = []
        #: the next waiting stores fail (this many)
        self.failing = 0
        #: the next waiting store takes this long (the clock runs on meanwhile)
        self.slow = 0.0
        self.gone = False
        #: every action the match took, in order, with the decision it named
        self.applied: list[Applied] = []
        self._acts: set[int] = set()  #: the request ids of acts not yet answered
        self._command: c.Command | None = None
        #: the match replayed from what is on disk (to check nothing is told first)
        self._replayed: Match | None = None
        self._replayed_events = 0

    # -- connections --------------------------------------------------------------------

    def connect(self, name: str) -> Conn:
        """A new connection of ``name``."""
        conn = Conn(next(self._numbers), person(name))
        self.conns[conn.number] = conn
        return conn

    def request_id(self) -> int:
        """A fresh request id."""
        return next(self._request_ids)

    # -- commands -------------------------------------------------------------------------

    def do(self, command: c.Command) -> list[Output]:
        """Hand the core one command and carry out all it causes (a waiting
        store included, as the actor does); every output, in order."""
        if isinstance(command, c.Act) and isinstance(command.request, int):
            self._acts.add(command.request)
        self._command = command
        before = len(self.sent)
        outputs = self.core.handle(command, self.now, 1_700_000_000.0 + self.now)
        while outputs:
            last = outputs[-1]
            for output in outputs:
                self._carry_out(output)
            if isinstance(last, Store) and last.wait:
                outputs = self.core.handle(self._store(last.writes), self.now, self.now)
            else:
                outputs = []
        return [sent.output for sent in self.sent[before:]]

    def act(self, conn: Conn, action: Any, seq: int | None) -> list[Output]:
        """``conn`` proposes ``action`` (a wire action) for the prompt of ``seq``."""
        engine_action = _engine_action(action)
        return self.do(c.Act(conn.number, conn.who, engine_action, seq, self.request_id()))

    def advance(self, seconds: float) -> None:
        """The clock moves on; every timer that comes due fires, in order."""
        until = self.now + seconds
        while True:
            due = sorted((at, name) for name, at in self.timers.items() if at <= until)
            if not due:
                break
            at, name = due[0]
            self.now = max(self.now, at)
            del self.timers[name]
            self.do(c.Tick(name))
        self.now = until

    def answer_bot(self, index: int = 0) -> list[Output]:
        """The ``index``-th bot asked answers now (a stale answer included)."""
        ask = self.asks.pop(index)
        policy = medium_policy if ask.bot.strength == "medium" else random_policy
        action = policy(ask.observation, ask.bot.rng)
        return self.do(c.BotDecided(ask.seat, ask.decision, action))

    def answer_bots(self, rounds: int = 500) -> None:
        """Let the bots answer, each in turn, until none is asked (bounded)."""
        for _ in range(rounds):
            if not self.asks:
                return
            self.answer_bot(0)
        raise AssertionError("the bots never stopped being asked")

    # -- carrying out --------------------------------------------------------------------

    def _store(self, writes: tuple[Write, ...]) -> c.Stored:
        self.flush()
        if self.slow:
            self.now += self.slow
            self.slow = 0.0
        if self.failing:
            self.failing -= 1
            return c.Stored(StorageError("injected: the disk is full"))
        for write in writes:
            self._write(write)
        return c.Stored()

    def _write(self, write: Write) -> None:
        self.disk.append(write)
        if isinstance(write, SaveMatch) and write.row.seed is not None and self._replayed is None:
            self._replayed = Match.new(
                len(write.row.seats), write.row.seed, DEFAULT_RULESET, write.row.settings.first_seat
            )
            self._replayed_events = len(self._replayed.setup_events)
        if isinstance(write, AppendAction):
            assert self._replayed is not None, "an action stored before the seed"
            assert write.index == len(self._replayed.history), "actions stored out of order"
            command = self._command
            named = (
                command.seq
                if isinstance(command, c.Act)
                else command.decision
                if isinstance(command, c.BotDecided)
                else None
            )
            if write.by == "stand_in":  # a player who is back plays their own seat
                here = [
                    n.number for n in self.conns.values() if n.inside and n.viewer == write.seat
                ]
                assert not here, f"seat {write.seat} played by a stand-in while connected"
            self.applied.append(Applied(write.seat, self._replayed_events, named, write.by))
            events = self._replayed.apply(write.seat, action_from_data(write.action))
            self._replayed_events += len(events)

    def _carry_out(self, output: Output) -> None:
        self.sent.append(Sent(output, len(self.stored_actions())))
        match output:
            case Store(writes, wait):
                if not wait:
                    self.queued.extend(writes)
            case Reply(conn, message):
                self._reply(conn, message)
            case Send(to, frames):
                for number in to:
                    for frame in frames:
                        self._receive(number, frame)
            case SetTimer(name, at):
                self.timers[name] = at
            case CancelTimer(name):
                self.timers.pop(name, None)
            case AskBot():
                self.asks.append(output)
            case Entered(conn):
                self.conns[conn].inside = True
            case Exited(conn):
                self.conns[conn].inside = False
            case Changed() | Rematch():
                pass
            case Gone():
                self.gone = True

    def _reply(self, number: int, message: wire.ServerMessage) -> None:
        durable = self.core.config.durable  # without storage there is no disk to check
        if isinstance(message, wire.Joined):
            self.conns[number].viewer = message.seat
            if message.seat is not None and durable:
                row = self.stored_row()
                assert row is not None, "joined before the match was stored"
                seat = row.seats[message.seat]
                assert seat.player == self.conns[number].who.id, "joined before the seat was stored"
        if isinstance(message, wire.Ok) and message.id in self._acts and durable:
            assert self.core.match is not None  # every action applied is on disk, this one too
            assert len(self.stored_actions()) == len(self.core.match.history)
        if isinstance(message, wire.Ok | wire.Error) and isinstance(message.id, int):
            self._acts.discard(message.id)
        self._receive(number, wire.encode(message))

    def _receive(self, number: int, frame: bytes) -> None:
        conn = self.conns[number]
        message = msgpack.unpackb(frame)
        if message["type"] == "joined":
            conn.viewer = message["seat"]
        check_frame(frame, conn.viewer)  # R24–R26, and nothing beside the schema
        if message["type"] == "event" and self.core.config.durable:
            assert message["seq"] <= self._replayed_events, "an event told before it was stored"
        conn.messages.append(message)

    def flush(self) -> None:
        """The writes queued without waiting reach the disk."""
        queued, self.queued = self.queued, []
        for write in queued:
            self._write(write)

    def preload(self, writes: Iterable[Write]) -> None:
        """What another driver stored is on this one's disk (a restart)."""
        for write in writes:
            self._write(write)

    # -- what a test reads ----------------------------------------------------------------

    def stored_actions(self) -> list[AppendAction]:
        """The actions on disk, in order."""
        return [w for w in self.disk if isinstance(w, AppendAction)]

    def stored_row(self) -> MatchRow | None:
        """The match's row as last stored."""
        rows = [w.row for w in self.disk if isinstance(w, SaveMatch)]
        return rows[-1] if rows else None

    def replies(self, conn: Conn) -> list[dict[str, Any]]:
        """The answers (ok, error, joined, snapshot with an id) ``conn`` received."""
        return [m for m in conn.messages if m.get("id") is not None]

    def outputs_of(self, kind: type[Any]) -> list[Any]:
        """Every output of this type carried out so far."""
        return [sent.output for sent in self.sent if isinstance(sent.output, kind)]


def _engine_action(action: Any) -> Action:
    """An action as a test has it (engine, wire, or a decoded wire map) for the engine."""
    if isinstance(action, Action):
        return action
    if isinstance(action, dict):
        action = msgspec.convert(action, wire.Action)
    return action_from_wire(action)


def seated(
    players: Iterable[str] = ("Ada", "Bea"),
    bots: Iterable[tuple[int, str]] = ((2, "easy"),),
    **options: Any,
) -> tuple[Driver, list[Conn]]:
    """A started match: the first player hosts (seat 0), the others join in
    order, bots hold the seats named; every player has one connection."""
    names = list(players)
    bots = list(bots)
    core = new_core(len(names) + len(bots), bots, host=names[0], **options)
    driver = Driver(core)
    conns = [driver.connect(name) for name in names]
    driver.do(c.Open(conns[0].number, conns[0].who, 0, driver.request_id()))
    for conn in conns[1:]:
        driver.do(c.Join(conn.number, conn.who, None, None, driver.request_id()))
    driver.do(c.Start(conns[0].number, conns[0].who, SEED, None, driver.request_id()))
    return driver, conns


def fresh_prompt(conn: Conn) -> dict[str, Any]:
    """The last prompt ``conn`` received."""
    return conn.prompts()[-1]
