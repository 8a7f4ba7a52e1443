"""What the server tests share: a real server on an OS-picked port, a bare
protocol client that records every frame it receives, a model of the match
state folded from a client's snapshot and events, the privacy rules every
frame must keep (R24–R26), and an SDK client that plays random legal actions.

Everything talks to 127.0.0.1 only, and every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
import msgspec
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode

import protocol as wire
from client.sdk import Session
from engine import Ruleset
from server.app import TulipsServer
from server.config import ServerConfig
from server.lobby import Lobby
from server.match.core import MatchFactory, deal_match
from server.match.views import action_to_wire

HOST = "127.0.0.1"

#: event kind -> its private fields (PROTOCOL.md, the events table)
PRIVATE_EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "cards_dealt": ("cards",),
    "opening_chosen": ("bouquet", "secret"),
    "card_drawn": ("card",),
    "card_added_secret": ("card",),
}
#: a snapshot state's fields that are the receiver's own (empty for a spectator)
PRIVATE_STATE_FIELDS = ("hand", "opening", "drawn", "my_secret", "legal_actions")


# -- a server ---------------------------------------------------------------------------


def raw_frame(payload: bytes, opcode: int = Opcode.BINARY, *, masked: bool = True) -> bytes:
    """One WebSocket frame as a client writes it, to send on a raw socket: masked
    as RFC 6455 requires, with a fixed key (the same bytes on every run, so they
    can name a test), or not (a fault the server must close the connection on).
    websockets frames it; a test needs no frame generator of the load tools."""
    plain = Frame(Opcode(opcode), payload).serialize(mask=False)
    if not masked:
        return plain
    head = bytearray(plain[: len(plain) - len(payload)])
    head[1] |= 0x80  # the MASK bit; the key follows the length
    key = b"\x5a\xa5\x3c\xc3"
    return bytes(head) + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


@dataclass
class Running:
    """A started server and where to reach it."""

    server: TulipsServer
    url: str

    @property
    def lobby(self) -> Lobby:
        """The server's lobby (its rooms and players)."""
        return self.server.lobby


def counter_ids(prefix: str = "m") -> Callable[[], str]:
    """Deterministic match ids: ``m1``, ``m2``, …"""
    numbers = itertools.count(1)
    return lambda: f"{prefix}{next(numbers)}"


@contextlib.asynccontextmanager
async def serve(
    *,
    match_factory: MatchFactory = deal_match,
    new_id: Callable[[], str] | None = None,
    rulesets: dict[str, Ruleset] | None = None,
    **settings: Any,
) -> AsyncIterator[Running]:
    """A server on 127.0.0.1 and a port the OS picks; stopped on exit.

    ``settings`` override :class:`ServerConfig` fields (bots act at once unless
    ``bot_delay`` says otherwise; hard bots think 5 ms).
    """
    settings.setdefault("bot_delay", 0.0)
    settings.setdefault("bot_think_ms", 5.0)  # hard bots search briefly in tests
    config = ServerConfig(host=HOST, port=0, **settings)
    lobby = Lobby(config, rulesets, match_factory=match_factory, new_id=new_id)
    server = TulipsServer(config, lobby=lobby)
    await server.start()
    try:
        yield Running(server, f"ws://{HOST}:{server.port}")
    finally:
        async with asyncio.timeout(10):
            await server.stop()


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    """A blocking HTTP GET: status, headers, body (run it in a thread)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


# -- a bare protocol client ---------------------------------------------------------------


class RawClient:
    """The protocol spoken by hand over ``websockets``: MessagePack maps out,
    every received frame kept as the exact bytes the server sent."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        #: every frame received, as sent
        self.frames: list[bytes] = []
        #: every message received, decoded with plain msgpack (a batch's one by one)
        self.messages: list[dict[str, Any]] = []
        self.welcome: dict[str, Any] | None = None
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._ids = itertools.count(1)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(cls, url: str, **options: Any) -> RawClient:
        """Connect without saying hello."""
        async with asyncio.timeout(5):
            ws = await ws_connect(url, compression=None, **options)
        return cls(ws)

    @classmethod
    async def open(
        cls, url: str, name: str, token: str | None = None, features: Sequence[str] = ()
    ) -> RawClient:
        """Connect and say hello (asking for ``features``); the welcome is checked and kept."""
        client = await cls.connect(url)
        fields: dict[str, Any] = {"client": "raw-test/1", "name": name}
        if features:
            fields["features"] = list(features)
        if token is not None:
            fields["token"] = token
        welcome = await client.request("hello", **fields)
        assert welcome["type"] == "welcome", welcome
        client.welcome = welcome
        return client

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                assert isinstance(frame, bytes), f"the server sent a text frame: {frame!r}"
                self.frames.append(frame)
                message = msgpack.unpackb(frame)
                # a batch (asked for with hello.features): its messages, in order
                for one in message["messages"] if message.get("type") == "batch" else [message]:
                    self.messages.append(one)
                    self._queue.put_nowait(one)
        except ConnectionClosed:
            pass
        finally:
            self._queue.put_nowait(None)

    async def send(self, type_: str, **fields: Any) -> int:
        """Send a request with a fresh id; return the id."""
        request_id = next(self._ids)
        await self.ws.send(msgpack.packb({"v": 1, "type": type_, "id": request_id, **fields}))
        return request_id

    async def send_raw(self, data: bytes | str) -> None:
        """Send one frame exactly as given (a str goes as a text frame)."""
        await self.ws.send(data)

    async def next(
        self, where: Callable[[dict[str, Any]], bool] = lambda m: True, timeout: float = 5.0
    ) -> dict[str, Any]:
        """The next received message ``where`` accepts (others are skipped)."""
        async with asyncio.timeout(timeout):
            while True:
                message = await self._queue.get()
                if message is None:
                    self._queue.put_nowait(None)
                    raise ConnectionError(f"closed: {self.ws.close_code} {self.ws.close_reason}")
                if where(message):
                    return message

    async def request(self, type_: str, timeout: float = 5.0, **fields: Any) -> dict[str, Any]:
        """Send a request and return its answer (the message repeating its id)."""
        request_id = await self.send(type_, **fields)
        return await self.next(lambda m: m.get("id") == request_id, timeout)

    async def closed(self, timeout: float = 5.0) -> int | None:
        """Wait for the server to close the connection; its close code."""
        async with asyncio.timeout(timeout):
            await asyncio.shield(self._reader)
        return self.ws.close_code

    def stop_reading(self) -> None:
        """Read nothing more: the socket fills up as a stalled client's would."""
        self._reader.cancel()

    async def close(self) -> None:
        """Close from our side."""
        async with asyncio.timeout(5):
            await self.ws.close()
            await asyncio.shield(self._reader)


def action_wire(action: Any) -> dict[str, Any]:
    """An engine action as the wire map ``act`` carries."""
    built: dict[str, Any] = msgspec.to_builtins(action_to_wire(action))
    return built


# -- what a client may know, folded from its snapshot and events ------------------------------


def plain(value: object) -> Any:
    """A wire struct as plain, mutable maps and lists (as a msgpack client reads it)."""
    return msgspec.msgpack.decode(msgspec.msgpack.encode(value))


class Tracker:
    """One receiver's model of a match: its first snapshot, then each event
    applied in ``seq`` order. A later snapshot must agree with the model."""

    def __init__(self, seat: int | None) -> None:
        self.seat = seat
        self.match: str | None = None
        self.seq: int | None = None
        self.state: dict[str, Any] | None = None
        #: the seq of every event received, in order
        self.event_seqs: list[int] = []
        self.snapshots = 0
        #: snapshots that skipped events the receiver never got (after a reconnect)
        self.gaps = 0
        self.scoring: wire.Scoring | None = None
        #: the seqs of the prompts already answered (a sync repeats the prompt)
        self.acted: set[int] = set()

    @property
    def over(self) -> bool:
        """Whether ``match_ended`` has been received."""
        return self.scoring is not None

    def feed(self, message: object) -> None:
        """Take one message the receiver got (anything but snapshots and events is ignored)."""
        if isinstance(message, wire.Snapshot):
            self._snapshot(message)
        elif isinstance(message, wire.Event):
            self._event(message)
        elif isinstance(message, wire.Prompt):
            assert message.seat == self.seat, f"seat {self.seat} got a prompt for {message.seat}"
            assert message.match == self.match
            assert message.seq == self.seq, f"a prompt at seq {message.seq}, model at {self.seq}"

    def _snapshot(self, snapshot: wire.Snapshot) -> None:
        assert snapshot.seat == self.seat, f"seat {self.seat} got a snapshot for {snapshot.seat}"
        if self.match is None:
            self.match = snapshot.match
        assert snapshot.match == self.match
        if self.state is not None:
            assert self.seq is not None
            assert snapshot.seq >= self.seq, f"snapshot at seq {snapshot.seq}, model at {self.seq}"
            if snapshot.seq == self.seq:
                self.assert_agrees(snapshot)
            else:
                self.gaps += 1
        self.state = plain(snapshot.state)
        self.seq = snapshot.seq
        self.snapshots += 1

    def model(self, legal_actions: Iterable[wire.Action] = ()) -> wire.State:
        """The model as a wire ``State`` (``legal_actions`` supplied by the caller)."""
        assert self.state is not None
        state = dict(self.state)
        state["legal_actions"] = [msgspec.to_builtins(a) for a in legal_actions]
        return msgspec.convert(state, wire.State)

    def assert_agrees(self, snapshot: wire.Snapshot) -> None:
        """The snapshot is the model: every field but the legal actions, which
        the events do not carry (they must be empty once the match is over)."""
        assert snapshot.seq == self.seq
        if snapshot.state.phase == "over":
            assert snapshot.state.legal_actions == ()
        model = self.model(snapshot.state.legal_actions)
        if model != snapshot.state:
            got = msgspec.to_builtins(snapshot.state)
            want = msgspec.to_builtins(model)
            diff = {
                k: (want.get(k), got.get(k))
                for k in set(got) | set(want)
                if got.get(k) != want.get(k)
            }
            raise AssertionError(f"snapshot and events disagree (model, snapshot): {diff}")

    def _event(self, message: wire.Event) -> None:
        assert self.state is not None and self.seq is not None, "an event before any snapshot"
        assert message.match == self.match
        assert message.seq == self.seq + 1, f"event seq {message.seq} after {self.seq}"
        self.seq = message.seq
        self.event_seqs.append(message.seq)
        event: dict[str, Any] = plain(message.event)
        self._apply(event)
        if isinstance(message.event, wire.MatchEnded):
            self.scoring = message.event.scoring

    def _apply(self, ev: dict[str, Any]) -> None:
        s = self.state
        assert s is not None
        me = self.seat
        kind = ev["kind"]
        seats = s["seats"]
        for key in ("hand", "opening", "my_secret", "revealed"):
            s.setdefault(key, [])
        if kind == "opening_chosen":
            seats[ev["seat"]]["opening_done"] = True
            s["to_act"] = [x for x in s["to_act"] if x != ev["seat"]]
            if ev["seat"] == me:
                s["opening"] = [ev["bouquet"], ev["secret"]]
                s["hand"] = []
        elif kind == "opening_revealed":
            for seat, card in enumerate(ev["bouquets"]):
                seats[seat]["bouquet"].append(card)
            s["secret_count"] = ev["secret_count"]
            if me is not None:  # the opening card goes face down now (R11)
                s["my_secret"].append(s["opening"][1])
            s["phase"] = "turn"
        elif kind == "turn_started":
            s["turn"] = ev["turn"]
            s["active"] = ev["seat"]
            s["used"] = None
            s["to_act"] = [ev["seat"]]
        elif kind == "card_drawn":
            s["deck_count"] = ev["deck_count"]
            if ev["seat"] == me:
                s["drawn"] = ev["card"]
        elif kind in ("card_kept", "card_given", "card_added_face_up", "card_added_secret"):
            seat = ev["seat"]
            if kind == "card_kept":
                seats[seat]["bouquet"].append(ev["card"])
                seats[seat]["keeping"] += ev["points"]
                used = "keep"
            elif kind == "card_given":
                seats[ev["to_seat"]]["bouquet"].append(ev["card"])
                seats[seat]["giving"] += ev["points"]
                used = "give"
            elif kind == "card_added_face_up":
                self._to_festival(ev["card"], ev["ranking"])
                used = "add"
            else:
                s["secret_count"] = ev["secret_count"]
                if seat == me:
                    s["my_secret"].append(ev["card"])
                used = "add"
            if s.get("used") is None:
                s["used"] = used
            if seat == me:
                s["drawn"] = None
        elif kind == "secret_revealed":
            self._to_festival(ev["card"], ev["ranking"])
            s["revealed"].append(ev["card"])
            s["secret_count"] -= 1
        elif kind == "match_ended":
            s.update(phase="over", scoring=ev["scoring"], active=None, used=None, drawn=None)
            s["to_act"] = []
        else:
            raise AssertionError(f"an event of an unexpected kind: {ev}")

    def _to_festival(self, card: str, ranking: list[str]) -> None:
        s = self.state
        assert s is not None
        s["festival"].append(card)
        colour, value = wire.card_parts(card)
        s["totals"][colour] += value
        s["ranking"] = ranking


def assert_consecutive(tracker: Tracker) -> None:
    """The receiver saw every event after its first snapshot, numbered one by one
    (each event was also checked to follow the one before as it arrived)."""
    seqs = tracker.event_seqs
    assert seqs, "no events at all"
    assert tracker.gaps == 0
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs


# -- who may see what (R24–R26) ------------------------------------------------------------


def check_private(message: dict[str, Any], viewer: int | None) -> None:
    """``message`` (as sent to ``viewer``, a seat or None for a spectator) shows
    no card or choice private to anyone else."""
    kind = message["type"]
    if kind == "event":
        event = message["event"]
        for name in PRIVATE_EVENT_FIELDS.get(event["kind"], ()):
            assert name in event, f"{event['kind']} without its {name} field"
            if viewer is None or event["seat"] != viewer:
                assert event[name] is None, f"seat {viewer} was shown {event}"
    elif kind == "snapshot":
        assert message["seat"] == viewer, message
        state = message["state"]
        if viewer is None:
            for name in PRIVATE_STATE_FIELDS:
                assert not state.get(name), f"a spectator's snapshot has {name}: {state[name]}"
        else:
            if state.get("drawn") is not None:
                assert state.get("active") == viewer, f"seat {viewer} sees another's draw"
            if state.get("hand"):
                assert state["phase"] == "opening"
    elif kind == "replay":  # each event of a page as the viewer's seat saw it
        assert message["seat"] == viewer, message
        for event in message["events"]:
            check_private({"type": "event", "event": event}, viewer)
    elif kind in ("prompt", "hint"):  # a seat's prompt, and its hint (issue 32): its own
        assert viewer is not None and message["seat"] == viewer, message
    else:
        assert kind in (
            "welcome", "ok", "error", "joined", "match_update", "match_list", "chat",
            "turn_timer", "rematch", "removed", "analysis", "analysis_progress",
            "ratings", "profile", "leaderboard", "history", "link_code",
        )  # fmt: skip


def strings_in(value: object) -> Iterable[str]:
    """Every string anywhere in a decoded message, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


def check_frame(frame: bytes, viewer: int | None) -> None:
    """One raw frame: exactly a protocol message (no key the schema does not
    know, so nothing can hide beside it) that keeps everyone's secrets."""
    decoded = wire.decode_server_message(frame)
    assert not isinstance(decoded, wire.Unknown), decoded
    assert wire.encode(decoded) == frame, f"extra or reordered keys in {msgpack.unpackb(frame)}"
    message = msgpack.unpackb(frame)
    for one in message["messages"] if message["type"] == "batch" else [message]:
        check_private(one, viewer)


def check_message(message: object, viewer: int | None) -> None:
    """A message the SDK decoded keeps everyone's secrets."""
    if isinstance(message, wire.Message):
        check_private(plain(message), viewer)


# -- an SDK player ----------------------------------------------------------------------------


async def play_randomly(
    session: Session,
    seat: int | None,
    rng: random.Random,
    *,
    timeout: float = 20.0,
    tracker: Tracker | None = None,
    seen: list[object] | None = None,
) -> Tracker:
    """Follow the match from the session's messages, answer each fresh prompt
    with a random legal action, and return the model once the match is over."""
    tracker = tracker or Tracker(seat)
    acted = tracker.acted
    async with asyncio.timeout(timeout):
        async for message in session:
            if seen is not None:
                seen.append(message)
            tracker.feed(message)
            if (
                isinstance(message, wire.Prompt)
                and message.seq == tracker.seq
                and message.seq not in acted
                and not tracker.over
            ):
                acted.add(message.seq)
                await session.answer(message, rng.choice(message.actions))
            if tracker.over:
                return tracker
    raise AssertionError("the session ended before the match did")


async def finish_and_check(session: Session, tracker: Tracker) -> wire.Snapshot:
    """After the end: a fresh snapshot agrees with every event the client saw."""
    snapshot = await session.sync()
    assert snapshot.state.phase == "over"
    tracker.assert_agrees(snapshot)
    assert_consecutive(tracker)
    return snapshot


def bots_for(seats: int, humans: Iterable[int]) -> list[tuple[int, str]]:
    """Bots on every seat but ``humans``, strengths easy, medium, hard in turn."""
    strengths = itertools.cycle(("easy", "medium", "hard"))
    taken = set(humans)
    return [(seat, next(strengths)) for seat in range(seats) if seat not in taken]
