"""One match and everyone in it: seats, spectators, bots, timers.

A :class:`Room` is the single owner of its engine :class:`~engine.Match`.
Every change goes through :meth:`Room.act` (or the bots, which call the same
path) under the room's lock, so actions apply one at a time, in order; rooms
share nothing, so matches never wait for each other.

Invariant: an accepted action is handed to ``services.on_action`` (storage)
and awaited *before* it is applied to the match, so no member learns of it,
even through a snapshot, before it is on disk.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import Action, Event, Match, Phase, Ruleset
from protocol import ErrorCode, PlayedBy

from . import views
from .bots import Bot, Thinker
from .errors import refused
from .identity import Player
from .peer import Peer
from .settings import MatchSettings

__all__ = [
    "Announce",
    "MatchFactory",
    "Room",
    "RoomServices",
    "RoomStatus",
    "SeatSlot",
    "deal_match",
]

log = logging.getLogger(__name__)


class RoomStatus(enum.Enum):
    """Where a match is in its life."""

    OPEN = "open"  #: waiting for players and the host's start
    RUNNING = "running"
    #: an action could not be stored: nothing more is played until a restart
    PAUSED = "paused"
    FINISHED = "finished"


@dataclass(eq=False, slots=True)
class SeatSlot:
    """One seat: empty, a bot's, or a person's (who may be away)."""

    seat: int
    player: Player | None = None
    #: the seat's own bot, or the stand-in that plays for an absent player (made
    #: when first needed, dropped when the match ends)
    bot: Bot | None = None
    is_bot: bool = False
    #: a person's seat that a bot plays for now (gone too long, or timed out)
    autopilot: bool = False
    #: the player left the match (it is no longer where they are put back)
    left: bool = False
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


#: Stores an accepted action: ``(room, seat, action, by)``; ``by`` is ``event.by``
#: (who chose it, if not the seat's own player).
OnAction = Callable[["Room", int, Action, PlayedBy | None], Awaitable[None]]
#: Deals a match: ``(players, seed, ruleset, first_seat) -> Match``.
MatchFactory = Callable[[int, int, Ruleset, "int | None"], Match]
#: Sends what an accepted action or a dealt match caused; see :meth:`Room.act`.
Announce = Callable[[], None]


def deal_match(players: int, seed: int, ruleset: Ruleset, first_seat: int | None) -> Match:
    """The normal way a room deals: shuffled from the seed (R4, R10–R12)."""
    return Match.new(players, seed, ruleset, first_seat)


async def _no_storage(room: Room, seat: int, action: Action, by: PlayedBy | None) -> None:
    return None


def _unobserved(room: Room) -> None:
    return None


@dataclass(frozen=True, slots=True)
class RoomServices:
    """What the server lends every room: storage, dealing, bots and timings."""

    thinker: Thinker
    #: stores an accepted action; awaited before the action is applied
    on_action: OnAction = _no_storage
    #: told after every change others should see (seats, status)
    on_change: Callable[[Room], None] = _unobserved
    #: told when an open match has nobody in it any more: it should go away
    on_abandoned: Callable[[Room], None] = _unobserved
    match_factory: MatchFactory = deal_match
    #: seconds a seat's player may be gone before a bot plays for them
    grace_period: float = 30.0
    #: seconds a bot waits before it acts
    bot_delay: float = 0.0
    #: the strength of the bot that stands in for an absent or timed-out player
    stand_in_strength: str = "medium"
    #: keys every bot's generator to the server (Bot.for_seat): made at start, never sent
    bot_secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    #: the cluster node that runs the room (its summary names it); None: no cluster
    node: str | None = None


class Room:
    """A match with its seats, its members (players and spectators connected
    to it now) and its host's settings.

    The room is the one owner of who is in it: :meth:`enter` and :meth:`exit`
    are the only writers of :attr:`members`, and they keep each peer's
    ``room`` pointing here while it is a member.
    """

    def __init__(
        self,
        id: str,
        settings: MatchSettings,
        host: Player,
        seats: list[SeatSlot],
        services: RoomServices,
        *,
        created: float | None = None,
    ) -> None:
        self.id = id
        self.settings = settings
        self.host = host
        self.seats = seats
        self.services = services
        self.created = time.time() if created is None else created
        self.status = RoomStatus.OPEN
        self.match: Match | None = None
        #: an open-box match's commitment salt, drawn with the seed (R27)
        self.salt: bytes | None = None
        #: every event so far, complete; the event sequence number is its index + 1
        self.log: list[Event] = []
        #: who chose the action whose first event has this sequence number, where
        #: the seat's own player did not (``event.by``; replays show it too)
        self.played_by: dict[int, PlayedBy] = {}
        #: connected peers and the seat each holds (None: a spectator)
        self.members: dict[Peer, int | None] = {}
        #: the rematch of this match, once someone asked for one
        self.rematch_id: str | None = None
        self._lock = asyncio.Lock()
        self._prompted: dict[int, object] = {}
        self._deadlines: dict[int, asyncio.TimerHandle] = {}
        self._bot_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._abandon: asyncio.TimerHandle | None = None
        self._closed = False  #: shutting down: no more actions, prompts, timers or bots

    def __repr__(self) -> str:
        return f"<Room {self.id} {self.status.value}>"

    # -- membership -----------------------------------------------------------------

    def seat_of(self, player: Player) -> int | None:
        """The seat ``player`` holds here, if any."""
        for slot in self.seats:
            if slot.player is player and not slot.is_bot:
                return slot.seat
        return None

    def is_home_of(self, player: Player) -> bool:
        """Whether ``player`` holds a seat here and has not left it: where a
        reconnecting player is put back."""
        seat = self.seat_of(player)
        return seat is not None and not self.seats[seat].left

    def enter(self, peer: Peer, seat: int | None) -> None:
        """Make ``peer`` a member, in ``seat`` or as a spectator."""
        if peer.room is not None and peer.room is not self:
            peer.room.exit(peer)
        self.members[peer] = seat
        peer.room = self
        if self._abandon is not None:
            self._abandon.cancel()
            self._abandon = None

    def exit(self, peer: Peer) -> int | None:
        """``peer`` is no longer a member; returns the seat it held here."""
        seat = self.members.pop(peer, None)
        if peer.room is self:
            peer.room = None
        return seat

    def join(self, player: Player, peer: Peer, seat: int | None, code: str | None) -> int:
        """Seat ``player`` (in ``seat``, or the first free one) and return the seat."""
        held = self.seat_of(player)
        if held is not None:  # a player takes back their own seat, in any match
            self.seats[held].left = False
            return self.attach(player, peer)
        if self.status is not RoomStatus.OPEN:
            raise refused(ErrorCode.MATCH_NOT_OPEN, f"match {self.id} has already started")
        self.check_code(code)
        free = [s for s in self.seats if s.kind == "empty"]
        if seat is not None:
            if not 0 <= seat < len(self.seats):
                raise refused(ErrorCode.SEAT_TAKEN, f"seats go from 0 to {len(self.seats) - 1}")
            slot = self.seats[seat]
            if slot.kind != "empty":
                raise refused(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
        elif free:
            slot = free[0]
        else:
            raise refused(ErrorCode.SEAT_TAKEN, "every seat is taken")
        slot.player = player
        self.enter(peer, slot.seat)
        self.on_change()
        return slot.seat

    def check_code(self, code: str | None) -> None:
        """Raise unless ``code`` is this match's join code (or it has none)."""
        if self.settings.join_code is not None and code != self.settings.join_code:
            raise refused(ErrorCode.BAD_JOIN_CODE, "this match needs the right join code")

    def watch(self, peer: Peer, code: str | None) -> None:
        """Add a spectator."""
        self.check_code(code)
        self.enter(peer, None)

    def attach(self, player: Player, peer: Peer) -> int:
        """A (re)connection of a seat's player: the seat comes back to them."""
        seat = self.seat_of(player)
        assert seat is not None
        self.enter(peer, seat)
        slot = self.seats[seat]
        if slot.grace is not None:
            slot.grace.cancel()
            slot.grace = None
        if slot.autopilot:
            slot.autopilot = False
            self._prompted.pop(seat, None)
        self.on_change()
        return seat

    def detach(self, peer: Peer) -> None:
        """A member's connection went away; start the grace period if it was the last."""
        seat = self.exit(peer)
        if seat is None:
            self._check_abandoned()
            return
        if self.status is RoomStatus.RUNNING and not self.connected(seat):
            slot = self.seats[seat]
            loop = asyncio.get_running_loop()
            slot.grace = loop.call_later(self.services.grace_period, self._hand_to_bot, seat)
        self.on_change()
        self._check_abandoned()

    def leave(self, player: Player) -> None:
        """``player`` leaves: an open seat is freed, a running one goes to a bot,
        and a finished one is no longer where the player is put back."""
        for peer in [p for p in self.members if p.player is player]:
            self.exit(peer)
        seat = self.seat_of(player)
        if seat is not None:
            slot = self.seats[seat]
            if self.status is RoomStatus.OPEN:
                slot.player = None
                if player is self.host:
                    self._pass_host()
            else:
                slot.left = True
                if self.status is RoomStatus.RUNNING:
                    self._hand_to_bot(seat)
        self.on_change()
        self._check_abandoned()

    def _pass_host(self) -> None:
        """The host left an open match: the person in the lowest seat hosts it
        now, so that someone can still start it, and is told so."""
        heir = next((slot for slot in self.seats if slot.player is not None), None)
        if heir is None:
            return  # nobody seated: the match goes (_check_abandoned)
        assert heir.player is not None
        self.host = heir.player
        frame = views.new_host_frame(self, heir.seat)
        for peer, seat in self.members.items():
            if seat == heir.seat:
                peer.send(frame)

    def _check_abandoned(self) -> None:
        """An open match with nobody in it goes away: at once if no person holds
        a seat, else once the grace period has passed without one coming back."""
        if self.status is not RoomStatus.OPEN or self.members:
            return
        if not any(slot.kind == "human" for slot in self.seats):
            self.services.on_abandoned(self)
        elif self._abandon is None:
            loop = asyncio.get_running_loop()
            self._abandon = loop.call_later(self.services.grace_period, self._abandoned)

    def _abandoned(self) -> None:
        self._abandon = None
        if self.status is RoomStatus.OPEN and not self.members:
            log.info("match %s: open, and nobody came back to it; it goes", self.id)
            self.services.on_abandoned(self)

    def connected(self, seat: int) -> bool:
        """Whether the seat's player has a connection in the room now."""
        return any(s == seat for s in self.members.values())

    def on_change(self) -> None:
        """Tell the lobby (and storage) that something others see has changed."""
        self.services.on_change(self)

    # -- the match ------------------------------------------------------------------

    def check_start(self, player: Player) -> None:
        """Raise unless ``player`` may start the match now."""
        if player is not self.host:
            raise refused(ErrorCode.NOT_HOST, "only the host can start the match")
        if self.status is not RoomStatus.OPEN:
            raise refused(ErrorCode.MATCH_NOT_OPEN, f"match {self.id} has already started")
        empty = [s.seat for s in self.seats if s.kind == "empty"]
        if empty:
            raise refused(ErrorCode.MATCH_NOT_READY, f"seat {empty[0]} is still empty")

    def begin(self, seed: int, salt: bytes | None = None) -> None:
        """Deal the match and send every member its snapshot."""
        self._deal(seed, salt)
        for peer, seat in self.members.items():
            peer.send(views.snapshot_frame(self, seat))
        self._start_grace_periods()
        self.on_change()  # after the grace periods: the summary says when bots take over
        self._after_change()

    def _deal(self, seed: int, salt: bytes | None) -> Match:
        settings = self.settings
        self.salt = salt
        match = self.services.match_factory(
            len(self.seats), seed, settings.ruleset, settings.first_seat
        )
        self.match = match
        self.status = RoomStatus.RUNNING
        self.log = list(match.setup_events)
        self.played_by = {}
        return match

    def _bot(self, seat: int) -> Bot:
        """The bot that decides for ``seat``: its own, or the stand-in that plays
        for its absent player (made the first time it is needed)."""
        slot = self.seats[seat]
        if slot.bot is None:
            slot.bot = Bot.for_seat(
                self.services.stand_in_strength, self.id, seat, self.services.bot_secret
            )
        return slot.bot

    def _drop_stand_ins(self) -> None:
        """A finished match needs no stand-in any more (each holds a generator)."""
        for slot in self.seats:
            if not slot.is_bot:
                slot.bot = None

    async def act(self, player: Player, action: Action) -> Announce:
        """Store and apply ``player``'s proposal, or raise why not (the match is
        unchanged).

        Returns what announces the action to every member: the caller first
        answers the request (PROTOCOL.md: ``ok`` comes before the events it
        caused), then calls it, without awaiting anything in between.
        """
        seat = self.seat_of(player)
        if seat is None:
            raise refused(ErrorCode.NOT_IN_MATCH, "you hold no seat in this match")
        slot = self.seats[seat]
        if slot.autopilot:  # the player is back: stop playing for them
            slot.autopilot = False
            self.on_change()
        return await self._apply(seat, action)

    async def _apply(self, seat: int, action: Action, by: PlayedBy | None = None) -> Announce:
        """Store and apply ``seat``'s action; ``by`` says who chose it when the
        seat's own player did not (PROTOCOL.md: ``event.by``)."""
        async with self._lock:
            match = self.match
            if self.status is RoomStatus.PAUSED:
                raise refused(
                    ErrorCode.MATCH_PAUSED, "the server cannot store this match; it is paused"
                )
            if self._closed:
                raise refused(
                    ErrorCode.MATCH_PAUSED, "the server is shutting down; come back later"
                )
            if match is None or self.status is RoomStatus.OPEN:
                raise refused(ErrorCode.MATCH_NOT_READY, "the match has not started")
            refusal = match.refusal(seat, action)  # the very check apply makes
            if refusal is not None:
                raise refusal
            try:
                # On disk before the match changes: until it is stored, a
                # snapshot taken meanwhile (sync, watch, a reconnect) shows the
                # match without it, and nobody is told of it.
                await self.services.on_action(self, seat, action, by)
            except Exception:
                log.exception("match %s: could not store an action; pausing the match", self.id)
                self.status = RoomStatus.PAUSED
                self._cancel_timers()
                self.on_change()
                raise refused(
                    ErrorCode.MATCH_PAUSED,
                    "the server could not store your action; the match is paused",
                ) from None
            events = match.apply(seat, action)  # cannot be refused now: it passed refusal()
            self._stop_timer(seat)
            first_seq = len(self.log) + 1
            self.log.extend(events)
            if by is not None:
                self.played_by[first_seq] = by
            if match.is_over:
                self.status = RoomStatus.FINISHED
                self._cancel_timers()
                self._drop_stand_ins()

        def announce() -> None:
            self._publish(first_seq, events, by)
            self._after_change()

        return announce

    def restore(
        self,
        seed: int,
        actions: Iterable[tuple[int, Action]],
        salt: bytes | None = None,
        played_by: Mapping[int, PlayedBy] | None = None,
    ) -> None:
        """Rebuild a stored match by replaying its actions (after a restart);
        ``played_by`` is who chose which of them (by index) as in :meth:`_apply`."""
        match = self._deal(seed, salt)
        marks = played_by or {}
        for index, (seat, action) in enumerate(actions):
            by = marks.get(index)
            if by is not None:
                self.played_by[len(self.log) + 1] = by
            self.log.extend(match.apply(seat, action))
        if match.is_over:
            self.status = RoomStatus.FINISHED

    def resume(self) -> None:
        """After a restart: absent players get their grace period, bots carry on,
        and an open match goes if none of its players comes back in time."""
        if self.status is RoomStatus.OPEN:
            self._check_abandoned()
        if self.status is not RoomStatus.RUNNING:
            return
        self._start_grace_periods()
        self._after_change()

    def _start_grace_periods(self) -> None:
        """Every seat whose player is not here gets the grace period (a player
        who left gets a bot at once)."""
        loop = asyncio.get_running_loop()
        for slot in self.seats:
            if slot.kind != "human" or self.connected(slot.seat) or slot.grace is not None:
                continue
            if slot.left:
                slot.autopilot = True
            else:
                slot.grace = loop.call_later(
                    self.services.grace_period, self._hand_to_bot, slot.seat
                )

    def _publish(self, first_seq: int, events: list[Event], by: PlayedBy | None = None) -> None:
        """Send each member its own view of ``events``."""
        frames = views.EventFrames(self.id, first_seq, events, by)
        for peer, seat in self.members.items():
            peer.send_all(frames.for_seat(seat))
        if self.status is RoomStatus.FINISHED:
            self.on_change()

    def _after_change(self) -> None:
        """Prompt the seats that must act now and let the bots move."""
        match = self.match
        if match is None or match.is_over or self._closed:
            return
        key = (match.phase, len(self.log) if match.phase is Phase.TURN else 0)
        timed = False
        for seat in match.to_act:
            slot = self.seats[seat]
            if slot.bot_plays or self._prompted.get(seat) == key:
                continue
            self._prompted[seat] = key
            timed = self._start_timer(seat) or timed
            self.send_prompt(seat)
        if timed:
            self._tell_timers()
        if any(self.seats[s].bot_plays for s in match.to_act):
            self._wake_bots()

    def send_prompt(self, seat: int, to: Peer | None = None) -> None:
        """Prompt ``seat`` (at one peer, or every connection of its player) if it
        must act now and no bot plays for it."""
        match = self.match
        if match is None or seat not in match.to_act or self.seats[seat].bot_plays:
            return
        frame = views.prompt_frame(self, seat, self.time_left(seat))
        for peer, member_seat in self.members.items():
            if member_seat == seat and (to is None or peer is to):
                peer.send(frame)

    def _tell_timers(self) -> None:
        """Everyone sees every running timer (PROTOCOL.md: ``turn_timer``)."""
        frame = views.timers_frame(self)
        for peer in self.members:
            peer.send(frame)

    def send_timers(self, peer: Peer) -> None:
        """Tell one member (after its snapshot) every turn timer running now."""
        if self._deadlines:
            peer.send(views.timers_frame(self))

    def _start_timer(self, seat: int) -> bool:
        """Start the seat's turn timer, if the match has one; whether it did."""
        self._stop_timer(seat)
        timer = self.settings.turn_timer
        if timer is None:
            return False
        loop = asyncio.get_running_loop()
        key = self._prompted.get(seat)
        self._deadlines[seat] = loop.call_later(timer, self._timed_out, seat, key)
        return True

    def timers(self) -> dict[int, float]:
        """Seconds left on every running turn timer, by seat."""
        now = asyncio.get_running_loop().time()
        return {seat: max(0.0, h.when() - now) for seat, h in sorted(self._deadlines.items())}

    def grace_left(self, seat: int) -> float | None:
        """Seconds before a bot plays for the seat's absent player, while they wait."""
        handle = self.seats[seat].grace
        if handle is None or self.status is not RoomStatus.RUNNING:
            return None
        return max(0.0, handle.when() - asyncio.get_running_loop().time())

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
        self._spawn(self._stand_in(seat))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a task the room keeps (and cancels when it closes)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _stand_in(self, seat: int) -> None:
        match = self.match
        if match is None or match.is_over or seat not in match.to_act:
            return
        try:
            decision = await self.services.thinker.decide(self._bot(seat), match, seat)
            announce = await self._apply(seat, decision, by="timer")
        except Exception:  # the player may have acted meanwhile; nothing to do then
            log.debug("match %s: stand-in for seat %d not needed", self.id, seat)
            return
        announce()

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
        timed = seat in self._deadlines
        self._stop_timer(seat)  # the stand-in does not wait for it
        self.on_change()
        if timed:
            self._tell_timers()
        self._after_change()

    def _wake_bots(self) -> None:
        if self._bot_task is None or self._bot_task.done():
            self._bot_task = asyncio.get_running_loop().create_task(self._run_bots())

    async def _run_bots(self) -> None:
        """Let bots act, one decision at a time, yielding to other matches."""
        while True:
            await asyncio.sleep(self.services.bot_delay)
            match = self.match
            if match is None or match.is_over or self.status is not RoomStatus.RUNNING:
                return
            seat = next((s for s in match.to_act if self.seats[s].bot_plays), None)
            if seat is None:
                return
            slot = self.seats[seat]
            try:
                decision = await self.services.thinker.decide(self._bot(seat), match, seat)
                announce = await self._apply(seat, decision, None if slot.is_bot else "stand_in")
            except Exception:  # a bot must never take the match down
                log.exception("match %s: bot at seat %d failed", self.id, seat)
                return
            announce()

    # -- shutting down -------------------------------------------------------------------

    def close(self) -> None:
        """Stop timers, bots and stand-ins, and take no more actions (server shutdown)."""
        self._closed = True
        self._cancel_timers()
        if self._abandon is not None:
            self._abandon.cancel()
            self._abandon = None
        if self._bot_task is not None:
            self._bot_task.cancel()
        for task in self._tasks:
            task.cancel()
