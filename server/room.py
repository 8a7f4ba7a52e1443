"""One match and everyone in it: seats, spectators, bots, timers.

A :class:`Room` is the single owner of its engine :class:`~engine.Match`.
Every change goes through :meth:`Room.act` (or the bots, which call the same
path) under the room's lock, so actions apply one at a time, in order; rooms
share nothing, so matches never wait for each other.

Invariant: an accepted action is handed to :attr:`Room.on_action` (storage)
and awaited *before* it is applied to the match, so no member learns of it,
even through a snapshot, before it is on disk.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from engine import Action, Event, Match, Phase, Ruleset

from . import views
from .bots import Bot, Thinker
from .identity import Player
from .peer import Peer

__all__ = ["MatchFactory", "Room", "RoomError", "RoomStatus", "SeatSlot", "deal_match"]

log = logging.getLogger(__name__)


class RoomStatus(enum.Enum):
    """Where a match is in its life."""

    OPEN = "open"  #: waiting for players and the host's start
    RUNNING = "running"
    #: an action could not be stored: nothing more is played until a restart
    PAUSED = "paused"
    FINISHED = "finished"


class RoomError(Exception):
    """A lobby or match request the room refuses, with a protocol error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(eq=False, slots=True)
class SeatSlot:
    """One seat: empty, a bot's, or a person's (who may be away)."""

    seat: int
    player: Player | None = None
    #: the seat's own bot, or the stand-in that plays for an absent player
    bot: Bot | None = None
    is_bot: bool = False
    #: a person's seat that a bot plays for now (gone too long, or timed out)
    autopilot: bool = False
    grace: asyncio.TimerHandle | None = None

    @property
    def kind(self) -> str:
        """``"bot"``, ``"human"`` or ``"empty"``."""
        if self.is_bot:
            return "bot"
        return "human" if self.player is not None else "empty"

    @property
    def bot_plays(self) -> bool:
        """Whether a bot decides for this seat now."""
        return self.is_bot or self.autopilot


OnAction = Callable[["Room", int, Action], Awaitable[None]]
#: Deals a match: ``(players, seed, ruleset, first_seat) -> Match``.
MatchFactory = Callable[[int, int, Ruleset, "int | None"], Match]


def deal_match(players: int, seed: int, ruleset: Ruleset, first_seat: int | None) -> Match:
    """The normal way a room deals: shuffled from the seed (R4, R10–R12)."""
    return Match.new(players, seed, ruleset, first_seat)


async def _no_storage(room: Room, seat: int, action: Action) -> None:
    return None


@dataclass(eq=False)
class Room:
    """A match with its seats, spectators and settings."""

    id: str
    name: str
    host: Player
    ruleset: Ruleset
    ruleset_name: str
    seats: list[SeatSlot]
    join_code: str | None = None
    turn_timer: float | None = None
    first_seat: int | None = None
    grace_period: float = 30.0
    bot_delay: float = 0.0
    bot_strength: str = "medium"
    status: RoomStatus = RoomStatus.OPEN
    match: Match | None = None
    #: every event so far, complete; the event sequence number is its index + 1
    log: list[Event] = field(default_factory=list)
    members: dict[Peer, int | None] = field(default_factory=dict)
    on_action: OnAction = _no_storage
    match_factory: MatchFactory = deal_match
    thinker: Thinker = field(default_factory=Thinker)
    on_change: Callable[[Room], None] = lambda room: None
    created: float = field(default_factory=time.time)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _prompted: dict[int, object] = field(default_factory=dict)
    _deadlines: dict[int, asyncio.TimerHandle] = field(default_factory=dict)
    rematch_id: str | None = None
    _bot_task: asyncio.Task[None] | None = None
    _closed: bool = False  #: shutting down: no more actions, prompts, timers or bots

    # -- membership -----------------------------------------------------------------

    def seat_of(self, player: Player) -> int | None:
        """The seat ``player`` holds here, if any."""
        for slot in self.seats:
            if slot.player is player and not slot.is_bot:
                return slot.seat
        return None

    def join(self, player: Player, outbox: Peer, seat: int | None, code: str | None) -> int:
        """Seat ``player`` (in ``seat``, or the first free one) and return the seat."""
        held = self.seat_of(player)
        if held is not None:
            self.attach(player, outbox)
            return held
        if self.status is not RoomStatus.OPEN:
            raise RoomError("match_not_open", f"match {self.id} has already started")
        if self.join_code is not None and code != self.join_code:
            raise RoomError("bad_join_code", "this match needs the right join code")
        free = [s for s in self.seats if s.kind == "empty"]
        if seat is not None:
            if not 0 <= seat < len(self.seats):
                raise RoomError("seat_taken", f"seats go from 0 to {len(self.seats) - 1}")
            slot = self.seats[seat]
            if slot.kind != "empty":
                raise RoomError("seat_taken", f"seat {seat} is taken")
        elif free:
            slot = free[0]
        else:
            raise RoomError("seat_taken", "every seat is taken")
        slot.player = player
        player.match_id = self.id
        self.members[outbox] = slot.seat
        self.on_change(self)
        return slot.seat

    def watch(self, player: Player, outbox: Peer) -> None:
        """Add a spectator."""
        player.match_id = self.id
        self.members[outbox] = None

    def attach(self, player: Player, outbox: Peer) -> int | None:
        """A (re)connection of a member: the seat comes back to its player."""
        seat = self.seat_of(player)
        self.members[outbox] = seat
        if seat is not None:
            slot = self.seats[seat]
            if slot.grace is not None:
                slot.grace.cancel()
                slot.grace = None
            if slot.autopilot:
                slot.autopilot = False
                self._prompted.pop(seat, None)
        self.on_change(self)
        return seat

    def detach(self, outbox: Peer) -> None:
        """A member's connection went away; start the grace period if it was the last."""
        seat = self.members.pop(outbox, None)
        if seat is None or self.status is not RoomStatus.RUNNING:
            if seat is not None and self.status is RoomStatus.OPEN:
                self.on_change(self)
            return
        slot = self.seats[seat]
        if slot.player is not None and not any(s == seat for s in self.members.values()):
            loop = asyncio.get_running_loop()
            slot.grace = loop.call_later(self.grace_period, self._hand_to_bot, seat)
        self.on_change(self)

    def leave(self, player: Player, outbox: Peer) -> None:
        """``player`` leaves: an open seat is freed, a running one goes to a bot."""
        self.members.pop(outbox, None)
        for other in [o for o, s in self.members.items() if o.player is player]:
            del self.members[other]
        player.match_id = None
        seat = self.seat_of(player)
        if seat is not None:
            slot = self.seats[seat]
            if self.status is RoomStatus.OPEN:
                slot.player = None
            elif self.status is RoomStatus.RUNNING:
                self._hand_to_bot(seat)
        self.on_change(self)

    def connected(self, seat: int) -> bool:
        """Whether the seat's player has a connection in the room now."""
        return any(s == seat for s in self.members.values())

    # -- the match ------------------------------------------------------------------

    def start(self, player: Player, seed: int | None = None) -> None:
        """The host starts the match once every seat is taken."""
        self.check_start(player)
        self.begin(secrets.randbits(63) if seed is None else seed)

    def check_start(self, player: Player) -> None:
        """Raise unless ``player`` may start the match now."""
        if player is not self.host:
            raise RoomError("not_host", "only the host can start the match")
        if self.status is not RoomStatus.OPEN:
            raise RoomError("match_not_open", f"match {self.id} has already started")
        empty = [s.seat for s in self.seats if s.kind == "empty"]
        if empty:
            raise RoomError("match_not_ready", f"seat {empty[0]} is still empty")

    def begin(self, seed: int) -> None:
        """Deal the match (also used when a stored match is rebuilt)."""
        self.match = self.match_factory(len(self.seats), seed, self.ruleset, self.first_seat)
        self.status = RoomStatus.RUNNING
        self.log.extend(self.match.setup_events)
        for slot in self.seats:
            if slot.bot is None:
                slot.bot = Bot.for_seat(self.bot_strength, self.id, slot.seat)
            if slot.player is not None and not self.connected(slot.seat):
                slot.autopilot = False  # waits for its player, then the grace period
        for outbox, seat in self.members.items():
            outbox.send(views.snapshot_frame(self, seat))
        self.on_change(self)
        self._after_change()

    async def act(
        self, player: Player, action: Action, ack: Callable[[], None] | None = None
    ) -> None:
        """Apply ``player``'s proposal, or raise why not (the match is unchanged).

        ``ack`` is called once the action is accepted and stored, before
        anyone is sent the events it caused (PROTOCOL.md: ``ok`` comes first).
        """
        seat = self.seat_of(player)
        if seat is None:
            raise RoomError("not_in_match", "you hold no seat in this match")
        slot = self.seats[seat]
        if slot.autopilot:  # the player is back: stop playing for them
            slot.autopilot = False
        await self._apply(seat, action, ack)

    async def _apply(
        self, seat: int, action: Action, ack: Callable[[], None] | None = None
    ) -> None:
        async with self._lock:
            match = self.match
            if self.status is RoomStatus.PAUSED:
                raise RoomError("match_paused", "the server cannot store this match; it is paused")
            if self._closed:
                raise RoomError("match_paused", "the server is shutting down; come back later")
            if match is None or self.status is RoomStatus.OPEN:
                raise RoomError("match_not_ready", "the match has not started")
            refusal = match.refusal(seat, action)  # the very check apply makes
            if refusal is not None:
                raise refusal
            try:
                # On disk before the match changes: until it is stored, a
                # snapshot taken meanwhile (sync, watch, a reconnect) shows the
                # match without it, and nobody is told of it.
                await self.on_action(self, seat, action)
            except Exception:
                log.exception("match %s: could not store an action; pausing the match", self.id)
                self.status = RoomStatus.PAUSED
                self._cancel_timers()
                self.on_change(self)
                raise RoomError(
                    "match_paused", "the server could not store your action; the match is paused"
                ) from None
            events = match.apply(seat, action)  # cannot be refused now: it passed refusal()
            self._stop_timer(seat)
            if ack is not None:
                ack()
            self._publish(events)
        self._after_change()

    def restore(self, seed: int, actions: Iterable[tuple[int, Action]]) -> None:
        """Rebuild a stored match by replaying its actions (after a restart)."""
        self.match = self.match_factory(len(self.seats), seed, self.ruleset, self.first_seat)
        self.log = list(self.match.setup_events)
        for seat, action in actions:
            self.log.extend(self.match.apply(seat, action))
        self.status = RoomStatus.FINISHED if self.match.is_over else RoomStatus.RUNNING
        for slot in self.seats:
            if slot.bot is None:
                slot.bot = Bot.for_seat(self.bot_strength, self.id, slot.seat)

    def resume(self) -> None:
        """After a restart: absent players get their grace period, bots carry on."""
        if self.status is not RoomStatus.RUNNING:
            return
        loop = asyncio.get_running_loop()
        for slot in self.seats:
            if slot.player is not None and not slot.is_bot and not self.connected(slot.seat):
                slot.grace = loop.call_later(self.grace_period, self._hand_to_bot, slot.seat)
        self._after_change()

    def _publish(self, events: list[Event]) -> None:
        """Send each member its own view of ``events``."""
        start = len(self.log) + 1
        self.log.extend(events)
        frames = views.EventFrames(self.id, start, events)
        for peer, seat in self.members.items():
            for frame in frames.for_seat(seat):
                peer.send(frame)
        assert self.match is not None
        if self.match.is_over:
            self.status = RoomStatus.FINISHED
            self._cancel_timers()
            self.on_change(self)

    def _after_change(self) -> None:
        """Prompt the seats that must act now and let the bots move."""
        match = self.match
        if match is None or match.is_over or self._closed:
            return
        key = (match.phase, len(self.log) if match.phase is Phase.TURN else 0)
        for seat in match.to_act:
            slot = self.seats[seat]
            if slot.bot_plays or self._prompted.get(seat) == key:
                continue
            self._prompted[seat] = key
            self._start_timer(seat)
            frame = views.prompt_frame(self, seat, self.time_left(seat))
            for outbox, member_seat in self.members.items():
                if member_seat == seat:
                    outbox.send(frame)
        if any(self.seats[s].bot_plays for s in match.to_act):
            self._wake_bots()

    def _start_timer(self, seat: int) -> None:
        self._stop_timer(seat)
        if self.turn_timer is not None:
            loop = asyncio.get_running_loop()
            key = self._prompted.get(seat)
            self._deadlines[seat] = loop.call_later(self.turn_timer, self._timed_out, seat, key)

    def time_left(self, seat: int) -> float | None:
        """Seconds before the seat's turn timer runs out, if it has one running."""
        handle = self._deadlines.get(seat)
        if handle is None:
            return None
        return max(0.0, handle.when() - asyncio.get_running_loop().time())

    def _stop_timer(self, seat: int) -> None:
        handle = self._deadlines.pop(seat, None)
        if handle is not None:
            handle.cancel()

    def _timed_out(self, seat: int, key: object) -> None:
        """The turn timer ran out: a bot makes this one decision for the seat."""
        self._deadlines.pop(seat, None)
        match = self.match
        if (
            match is None
            or self.status is not RoomStatus.RUNNING
            or seat not in match.to_act
            or self._prompted.get(seat) != key
        ):
            return
        log.info("match %s: seat %d let its turn timer run out; a bot acts for it", self.id, seat)
        asyncio.get_running_loop().create_task(self._stand_in(seat))

    async def _stand_in(self, seat: int) -> None:
        match = self.match
        bot = self.seats[seat].bot
        if match is None or bot is None or seat not in match.to_act:
            return
        try:
            await self._apply(seat, await self.thinker.decide(bot, match, seat))
        except Exception:  # the player may have acted meanwhile; nothing to do then
            log.debug("match %s: stand-in for seat %d not needed", self.id, seat)

    def _cancel_timers(self) -> None:
        for handle in self._deadlines.values():
            handle.cancel()
        self._deadlines.clear()
        for slot in self.seats:
            if slot.grace is not None:
                slot.grace.cancel()
                slot.grace = None

    def _hand_to_bot(self, seat: int) -> None:
        """A bot plays for this seat until its player acts or comes back."""
        slot = self.seats[seat]
        slot.grace = None
        if self.status is not RoomStatus.RUNNING or slot.is_bot:
            return
        slot.autopilot = True
        log.info("match %s: a bot plays seat %d for now", self.id, seat)
        self.on_change(self)
        self._after_change()

    def _wake_bots(self) -> None:
        if self._bot_task is None or self._bot_task.done():
            self._bot_task = asyncio.get_running_loop().create_task(self._run_bots())

    async def _run_bots(self) -> None:
        """Let bots act, one decision at a time, yielding to other matches."""
        while True:
            await asyncio.sleep(self.bot_delay)
            match = self.match
            if match is None or match.is_over or self.status is not RoomStatus.RUNNING:
                return
            seat = next((s for s in match.to_act if self.seats[s].bot_plays), None)
            if seat is None:
                return
            bot = self.seats[seat].bot
            assert bot is not None
            try:
                await self._apply(seat, await self.thinker.decide(bot, match, seat))
            except Exception:  # a bot must never take the match down
                log.exception("match %s: bot at seat %d failed", self.id, seat)
                return

    # -- shutting down -------------------------------------------------------------------

    def close(self) -> None:
        """Stop timers and bots, and take no more actions (server shutdown)."""
        self._closed = True
        self._cancel_timers()
        if self._bot_task is not None:
            self._bot_task.cancel()
