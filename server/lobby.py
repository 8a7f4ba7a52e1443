"""The lobby: players, rooms, and the requests that are not a room's own.

Each request handler returns a :class:`Reply` (or raises); :meth:`Lobby.dispatch`
is the one place that sends it, and :func:`~server.errors.error_for` the one
place that turns what a handler raised into a wire error.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import protocol as wire
from engine import DEFAULT_RULESET, EngineError, Ruleset, project_event
from engine.record import RecordError
from protocol import ErrorCode
from protocol.limits import MAX_MATCHES_LISTED, MAX_REPLAY_EVENTS

from . import persist, views
from .bots import Bot, Thinker
from .commitment import new_salt
from .config import ServerConfig
from .errors import error_for, refused
from .identity import Player, Players, hash_token
from .peer import Peer
from .ratelimit import Lockout
from .room import Announce, MatchFactory, Room, RoomServices, RoomStatus, SeatSlot, deal_match
from .settings import MatchSettings
from .storage import Storage, StorageError

__all__ = ["Lobby", "Reply"]

log = logging.getLogger(__name__)

#: With storage, players no longer needed in memory are evicted in batches: when
#: this many are waiting, or this many seconds after the first of them.
_EVICT_BATCH = 256
_EVICT_DELAY = 1.0
#: Stored players looked at per round when forgetting the unused.
_FORGET_PAGE = 2000


@dataclass(frozen=True, slots=True)
class Reply:
    """A request's answer and what follows it.

    ``answer`` goes to the requester first (None: a request without an id
    that needs no answer); ``then`` sends the request's consequences, after
    the answer and before anything else happens.
    """

    answer: wire.ServerMessage | None = None
    then: Announce | None = None


def _ok(request: wire.ClientMessage, then: Announce | None = None) -> Reply:
    """``ok`` for a request that carried an id (PROTOCOL.md: only those)."""
    return Reply(wire.Ok(id=request.id) if request.id is not None else None, then)


class Lobby:
    """Every player and room of one server."""

    def __init__(
        self,
        config: ServerConfig,
        rulesets: dict[str, Ruleset] | None = None,
        *,
        match_factory: MatchFactory = deal_match,
        new_id: Callable[[], str] | None = None,
        storage: Storage | None = None,
    ) -> None:
        """``match_factory`` and ``new_id`` let tests choose deals and match ids;
        without ``storage`` nothing outlives the process."""
        self.config = config
        self.storage = storage
        self.thinker = Thinker(config.bot_think_ms)
        self._make_id = new_id
        self.players = Players()
        #: with storage: players who may no longer be needed in memory, and when they go
        self._idle: set[Player] = set()
        self._evict_at: asyncio.TimerHandle | None = None
        #: held while a page of stored players is being forgotten (a hello waits
        #: for it rather than bring back a player about to be deleted)
        self._forgetting = asyncio.Lock()
        self.rooms: dict[str, Room] = {}
        #: the fingerprint of the certificate the server serves (None: plain ws://),
        #: told by the server before :meth:`open`; a cluster node vouches with it
        self.fingerprint: str | None = None
        self.rulesets = rulesets or {"standard": DEFAULT_RULESET}
        #: peers that asked for the match list; those in no room get every update
        self._browsers: set[Peer] = set()
        #: wrong join codes, by (address, match)
        self._code_tries = Lockout(config.join_code_tries, config.join_code_lockout)
        self.services = RoomServices(
            thinker=self.thinker,
            on_change=self.room_changed,
            on_abandoned=self._abandoned,
            match_factory=match_factory,
            grace_period=config.grace_period,
            bot_delay=config.bot_delay,
        )
        if storage is not None:
            self.services = dataclasses.replace(
                self.services, on_action=persist.store_action(storage)
            )

    async def open(self) -> None:
        """Open storage and rebuild every stored match (raises StorageError if unusable)."""
        if self.storage is None:
            return
        self.storage.open()
        finished = self.storage.matches(["finished"], limit=self.config.keep_finished)
        live = self.storage.matches(["open", "running"])
        for row in [*reversed(finished), *reversed(live)]:
            if row.status == "open" and not any(seat.get("player") for seat in row.seats):
                # nobody holds a seat in it: nobody is coming back to it
                self.storage.forget_open_match(row.id).add_done_callback(_log_failure)
                continue
            persist.load_named_players(row, self.storage, self.players)
            try:
                room = persist.restore_room(row, self.storage, self.players, self.services)
            except (StorageError, EngineError, RecordError, ValueError, KeyError) as exc:
                log.error(
                    "match %s cannot be rebuilt and is left out (left on disk): %s", row.id, exc
                )
                continue
            self.rooms[room.id] = room
        self.players.evict(list(self.players), self._named_by_rooms())  # of unrebuilt rows
        for room in list(self.rooms.values()):  # an open one may go at once
            room.resume()
        log.info(
            "storage %s: %d matches (%d running) restored, naming %d players",
            self.storage.path,
            len(self.rooms),
            self.running_count(),
            len(self.players),
        )

    def halt(self) -> None:
        """Shutting down: every room stops its timers and bots and takes no more actions."""
        for room in self.rooms.values():
            room.close()
        self.thinker.close()
        if self._evict_at is not None:
            self._evict_at.cancel()
            self._evict_at = None

    async def close(self, timeout: float | None = None) -> None:
        """Halt, then let storage finish the writes it holds (for at most
        ``timeout`` s, by default ``config.stop_timeout``) and close it."""
        self.halt()
        if self.storage is not None:
            await self.storage.aclose(self.config.stop_timeout if timeout is None else timeout)

    async def forget_players(self, before: float) -> int:
        """Forget the players not connected since ``before`` whom no match names
        (host or seat); how many were forgotten. With storage, that is on disk,
        a page at a time (those in memory are connected or named by a room);
        without, in memory."""
        if self.storage is None:
            gone = len(self.players.forget(before, self._named_by_rooms()))
        else:
            self._evict_idle()
            self.players.evict(list(self.players), self._named_by_rooms())
            gone = await self._forget_stored(self.storage, before)
        if gone:
            log.info("forgot %d players who have not connected for a long time", gone)
        return gone

    async def _forget_stored(self, storage: Storage, before: float) -> int:
        named = storage.named_players()
        gone, after = 0, ""
        while True:  # bounded: ``after`` grows with every page
            async with self._forgetting:
                page = storage.unused_players(before, after, _FORGET_PAGE)
                if not page:
                    return gone
                after = page[-1]
                unused = [i for i in page if i not in named and self.players.get(i) is None]
                if unused:
                    gone += await storage.forget_players(unused, before)

    def _named_by_rooms(self) -> set[str]:
        """The ids of the players a room in memory names (host or seat)."""
        named = {room.host.id for room in self.rooms.values()}
        for room in self.rooms.values():
            named.update(slot.player.id for slot in room.seats if slot.player is not None)
        return named

    def _may_evict(self, players: Iterable[Player]) -> None:
        """With storage, these players may no longer be needed in memory: each
        goes soon (in a batch) unless connected or named by a room by then."""
        if self.storage is None:
            return
        self._idle.update(players)
        if len(self._idle) >= _EVICT_BATCH:
            self._evict_idle()
        elif self._evict_at is None and self._idle:
            self._evict_at = asyncio.get_running_loop().call_later(_EVICT_DELAY, self._evict_idle)

    def _evict_idle(self) -> None:
        if self._evict_at is not None:
            self._evict_at.cancel()
            self._evict_at = None
        idle, self._idle = self._idle, set()
        if idle:
            self.players.evict(idle, self._named_by_rooms())

    def _room_gone(self, room: Room) -> None:
        """A room left memory: the lobby is told, and its players may no longer
        be needed there."""
        self.tell_browsers(views.match_removed_frame(room.id))
        self._may_evict([room.host, *(s.player for s in room.seats if s.player is not None)])

    def tell_browsers(self, frame: bytes) -> None:
        """Send ``frame`` to every lobby browser not in a match."""
        for peer in self._browsers:
            if peer.room is None:
                peer.send(frame)

    def _abandoned(self, room: Room) -> None:
        """An open match nobody is in any more goes away, and is not restored."""
        if self.rooms.get(room.id) is not room:
            return
        del self.rooms[room.id]
        room.close()
        if self.storage is not None:
            self.storage.forget_open_match(room.id).add_done_callback(_log_failure)
        self._room_gone(room)

    def running_count(self) -> int:
        """Matches being played now."""
        return sum(room.status is RoomStatus.RUNNING for room in self.rooms.values())

    def home_of(self, player: Player) -> Room | None:
        """The newest match in which ``player`` holds a seat they have not left:
        where a reconnecting player is put back."""
        homes = [room for room in self.rooms.values() if room.is_home_of(player)]
        return max(homes, key=lambda room: room.created, default=None)

    # -- connection life ----------------------------------------------------------------

    async def hello(self, peer: Peer, message: wire.Hello, version: int) -> wire.Welcome:
        """Who the peer is: a proved identity or a new one (stored before the welcome),
        welcomed in the negotiated ``version``."""
        token = message.token
        if token is not None:
            player = self.players.by_token(token)
            if player is None and self.storage is not None:
                player = await self._stored_player(self.storage, token)
            if player is None:
                raise refused(ErrorCode.BAD_TOKEN, "unknown resume token")
            renamed = player.name != message.name
            player.name = message.name
            for old in list(player.connections):  # the newer connection wins
                if isinstance(old, Peer) and old is not peer:
                    old.close(wire.CloseCode.REPLACED, "replaced by a newer connection")
        else:
            player, token = self.players.new(message.name)
            renamed = True
        peer.player = player  # connected from now: not evicted while its storing is awaited
        player.connections.add(peer)
        if renamed and self.storage is not None:
            try:
                await persist.store_player(
                    self.storage, self.players, player, new=message.token is None
                )
            except wire.ProtocolError:
                peer.player = None
                player.connections.discard(peer)
                raise
        elif self.storage is not None:
            self._touch(self.storage, player, time.time())
        log.info("%s (%s) connected with %s", player.name, player.id, message.client)
        return wire.Welcome(
            v=version,
            id=message.id,
            server=self.config.name,
            versions=wire.SUPPORTED_VERSIONS,
            player=player.id,
            token=token,
            name=player.name,
            limits=self.config.limits(peer.address),
        )

    async def _stored_player(self, storage: Storage, token: str) -> Player | None:
        """The player this token proves, brought back from disk into memory."""
        async with self._forgetting:  # not while the player may be being deleted
            pass
        player = self.players.by_token(token)  # another hello may have brought it back
        if player is not None:
            return player
        try:
            stored = storage.player_by_token(hash_token(token))
        except (StorageError, sqlite3.Error) as exc:
            log.error("a returning player cannot be read (storage_unavailable): %s", exc)
            raise refused(
                ErrorCode.STORAGE_UNAVAILABLE, "the server cannot read its players now; try again"
            ) from None
        if stored is None:
            return None
        player = Player(id=stored.id, name=stored.name, token_hash=stored.token_hash)
        self.players.add(player)
        return player

    def _touch(self, storage: Storage, player: Player, when: float) -> None:
        """Store when the player was last connected (without waiting)."""
        if storage.accepting:
            storage.touch_player_soon(player.id, when).add_done_callback(_log_touch_failure)

    def after_welcome(self, peer: Peer) -> None:
        """Put a returning player back in the seat they hold (PROTOCOL.md:
        ``joined``, then ``snapshot`` and ``prompt`` as for a join)."""
        player = peer.player
        assert player is not None
        room = self.home_of(player)
        if room is not None:
            seat = room.attach(player, peer)
            self._send(peer, self._joined(peer, room, seat, None))

    def disconnect(self, peer: Peer) -> None:
        """The peer's connection is gone."""
        self._browsers.discard(peer)
        player = peer.player
        if player is not None:
            player.connections.discard(peer)
        room = peer.room
        if room is not None:
            room.detach(peer)
            self._emptied(room)
        if player is not None and not player.connections:
            player.last_seen = time.time()
            if self.storage is not None:
                self._touch(self.storage, player, player.last_seen)
                self._may_evict([player])

    # -- requests -------------------------------------------------------------------------

    async def dispatch(self, peer: Peer, message: wire.ClientMessage) -> None:
        """Answer one request: its reply, or an error that says what was wrong."""
        try:
            reply = await self._handle(peer, message)
        except (wire.ProtocolError, EngineError) as exc:
            peer.send(wire.encode(error_for(exc, message.id)))
            return
        self._send(peer, reply)

    def _send(self, peer: Peer, reply: Reply) -> None:
        if reply.answer is not None:
            peer.send(wire.encode(reply.answer))
        if reply.then is not None:
            reply.then()

    async def _handle(self, peer: Peer, message: wire.ClientMessage) -> Reply:
        """The handler of each request type."""
        match message:
            case wire.ListMatches():
                return self.list_matches(peer, message)
            case wire.CreateMatch():
                return self.create_match(peer, message)
            case wire.Join():
                return self.join(peer, message)
            case wire.Watch():
                return self.watch(peer, message)
            case wire.Leave():
                return self.leave(peer, message)
            case wire.Start():
                return await self.start(peer, message)
            case wire.PlayAgain():
                return self.play_again(peer, message)
            case wire.Act():
                return await self.act(peer, message)
            case wire.Sync():
                return self.sync(peer, message)
            case wire.Replay():
                return self.replay(peer, message)
            case wire.Chat():
                return self.chat(peer, message)
            case wire.Hello():
                raise refused(ErrorCode.NOT_WELCOME, "this connection has already said hello")
        raise refused(ErrorCode.UNKNOWN_TYPE, f"{type(message).__name__} is not a request here")

    def _player(self, peer: Peer) -> Player:
        assert peer.player is not None, "requests come after hello"
        return peer.player

    def _room_of(self, peer: Peer) -> Room:
        if peer.room is None:
            raise refused(ErrorCode.NOT_IN_MATCH, "join or watch a match first")
        return peer.room

    def _check_code(self, peer: Peer, room: Room, code: str | None) -> None:
        """Raise unless ``code`` opens ``room``; an address that keeps guessing
        wrong is locked out of that match for a while."""
        key = (peer.address, room.id)
        wait = self._code_tries.locked(key)
        if wait > 0:
            raise refused(
                ErrorCode.LOCKED_OUT,
                f"too many wrong join codes for match {room.id}; try again in {math.ceil(wait)} s",
            )
        try:
            room.check_code(code)
        except wire.ProtocolError:
            self._code_tries.failed(key)
            raise

    def _find(self, match_id: str) -> Room:
        room = self.rooms.get(match_id)
        if room is None:
            raise refused(ErrorCode.NO_SUCH_MATCH, f"no match {match_id!r}")
        return room

    def _joined(
        self, peer: Peer, room: Room, seat: int | None, request_id: wire.RequestId | None
    ) -> Reply:
        """``joined``, then the room's summary, snapshot and (if it is the
        seat's turn) prompt."""

        def then() -> None:
            peer.send(views.match_update_frame(room))
            if room.match is not None:
                peer.send(views.snapshot_frame(room, seat))
                if seat is not None:
                    room.send_prompt(seat, to=peer)
                room.send_timers(peer)

        joined = wire.Joined(
            id=request_id, match=room.id, seat=seat, host=room.host is self._player(peer)
        )
        return Reply(joined, then)

    def _move(self, peer: Peer, room: Room) -> None:
        """A player is in one match at a time: going to ``room`` leaves the current one."""
        current = peer.room
        if current is not None and current is not room:
            current.leave(self._player(peer))
            self._emptied(current)

    def room_changed(self, room: Room) -> None:
        """Store the room's new state and tell its members and the lobby."""
        if self.storage is not None and room.status is not RoomStatus.PAUSED:
            self.storage.save_match_soon(persist.room_row(room)).add_done_callback(_log_failure)
        frame = views.match_update_frame(room)
        for peer in room.members:
            peer.send(frame)
        self.tell_browsers(frame)

    def list_matches(self, peer: Peer, message: wire.ListMatches) -> Reply:
        """Open, running and recently finished matches; until the peer enters a
        match, it also receives every ``match_update`` (the lobby stays live)."""
        self._browsers.add(peer)
        rooms = sorted(self.rooms.values(), key=lambda r: r.created, reverse=True)
        return Reply(
            wire.MatchList(
                id=message.id, matches=tuple(views.summary(r) for r in rooms[:MAX_MATCHES_LISTED])
            )
        )

    def create_match(self, peer: Peer, message: wire.CreateMatch) -> Reply:
        """A new match; the creator hosts it and takes the first seat no bot has."""
        player = self._player(peer)
        if sum(r.status is not RoomStatus.FINISHED for r in self.rooms.values()) >= (
            self.config.max_matches
        ):
            raise refused(ErrorCode.SERVER_FULL, "this server hosts its maximum of matches")
        hosted = [
            room
            for room in self.rooms.values()
            if room.host is player and room.status is RoomStatus.OPEN and room is not peer.room
        ]
        if len(hosted) >= self.config.max_open_matches_per_player:
            raise refused(
                ErrorCode.TOO_MANY_MATCHES,
                f"you already host {len(hosted)} matches that have not started; "
                "start one, or leave them, first",
            )
        ruleset_name = message.ruleset or "standard"
        ruleset = self.rulesets.get(ruleset_name)
        if ruleset is None:
            known = ", ".join(sorted(self.rulesets))
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE,
                f"unknown ruleset {ruleset_name!r}; this server has {known}",
                path="create_match.ruleset",
            )
        if message.first_seat is not None and not 0 <= message.first_seat < message.seats:
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE, "first_seat is not a seat", path="create_match.first_seat"
            )
        match_id = self._new_id()
        slots = [SeatSlot(seat) for seat in range(message.seats)]
        for i, bot in enumerate(message.bots):
            if not 0 <= bot.seat < message.seats or slots[bot.seat].is_bot:
                raise wire.ProtocolError(
                    ErrorCode.BAD_MESSAGE,
                    f"bot seat {bot.seat} is not a free seat",
                    path=f"create_match.bots[{i}].seat",
                )
            slots[bot.seat].is_bot = True
            slots[bot.seat].bot = Bot.for_seat(
                bot.strength, match_id, bot.seat, self.services.bot_secret
            )
        settings = MatchSettings(
            name=message.name,
            ruleset_name=ruleset_name,
            ruleset=ruleset,
            join_code=message.join_code,
            turn_timer=message.turn_timer,
            first_seat=message.first_seat,
            open_box=message.open_box,
        )
        room = self._new_room(match_id, settings, player, slots)
        self._move(peer, room)
        free = [s.seat for s in room.seats if s.kind == "empty"]
        seat: int | None = None
        if free:
            seat = room.join(player, peer, free[0], settings.join_code)
        else:
            room.watch(peer, settings.join_code)
            room.on_change()
        return self._joined(peer, room, seat, message.id)

    def _new_id(self) -> str:
        if self._make_id is not None:
            return self._make_id()
        while True:
            match_id = secrets.token_hex(4)
            if match_id not in self.rooms:
                return match_id

    def _new_room(
        self, match_id: str, settings: MatchSettings, host: Player, slots: list[SeatSlot]
    ) -> Room:
        room = Room(match_id, settings, host, slots, self.services)
        self.rooms[match_id] = room
        self._forget_old_rooms()
        return room

    def _emptied(self, room: Room) -> None:
        """Someone went out of ``room``: a finished match beyond ``keep_finished``
        that nobody is in any more leaves memory now, not at the next new match."""
        if room.status is RoomStatus.FINISHED and not room.members:
            self._forget_old_rooms()

    def _forget_old_rooms(self) -> None:
        """Keep in memory the newest ``keep_finished`` finished matches, and any
        older one that still has someone in it."""
        finished = [r for r in self.rooms.values() if r.status is RoomStatus.FINISHED]
        finished.sort(key=lambda r: r.created)
        for room in finished[: max(0, len(finished) - self.config.keep_finished)]:
            if not room.members:
                del self.rooms[room.id]
                self._room_gone(room)

    def join(self, peer: Peer, message: wire.Join) -> Reply:
        """Take a seat in an open match (or return to one's own seat)."""
        room = self._find(message.match)
        player = self._player(peer)
        if room.seat_of(player) is None:  # refused before leaving the current match
            if room.status is not RoomStatus.OPEN:
                raise refused(ErrorCode.MATCH_NOT_OPEN, f"match {room.id} has already started")
            self._check_code(peer, room, message.join_code)
        self._move(peer, room)
        seat = room.join(player, peer, message.seat, message.join_code)
        return self._joined(peer, room, seat, message.id)

    def watch(self, peer: Peer, message: wire.Watch) -> Reply:
        """Watch a match as a spectator: public information only (R24)."""
        room = self._find(message.match)
        self._check_code(peer, room, message.join_code)
        self._move(peer, room)
        room.watch(peer, message.join_code)
        return self._joined(peer, room, None, message.id)

    def leave(self, peer: Peer, message: wire.Leave) -> Reply:
        """Leave the match: an open seat is freed, a running one goes to a bot."""
        room = self._room_of(peer)
        room.leave(self._player(peer))
        self._emptied(room)
        return _ok(message)

    async def start(self, peer: Peer, message: wire.Start) -> Reply:
        """The host deals the match."""
        room = self._room_of(peer)
        player = self._player(peer)
        room.check_start(player)
        seed = secrets.randbits(63)
        salt = new_salt() if room.settings.open_box else None  # R27: for the commitment
        if self.storage is not None:  # the seed is on disk before anyone sees a card
            try:
                await self.storage.save_match(persist.room_row(room, seed=seed, salt=salt))
            except StorageError as exc:
                log.error("match %s cannot start (storage_unavailable): %s", room.id, exc)
                raise refused(
                    ErrorCode.STORAGE_UNAVAILABLE,
                    "the server cannot store the match now (its disk is full or unwritable);"
                    " try again later",
                ) from None
            room.check_start(player)  # nothing changed while we waited
        return _ok(message, then=lambda: room.begin(seed, salt))

    def play_again(self, peer: Peer, message: wire.PlayAgain) -> Reply:
        """A rematch: same seats, same bots. The first to ask opens it; the
        other players keep their seats in it and are asked (``rematch``), not
        moved: each joins with their own ``play_again``."""
        old = self._room_of(peer)
        player = self._player(peer)
        if old.status is not RoomStatus.FINISHED:
            raise refused(ErrorCode.MATCH_NOT_READY, "the match is not over yet")
        if old.seat_of(player) is None:
            raise refused(ErrorCode.NOT_IN_MATCH, "only the match's players can ask for a rematch")
        rematch = self.rooms.get(old.rematch_id) if old.rematch_id else None
        if rematch is None:
            rematch = self._open_rematch(old, player)
            offer = wire.encode(
                wire.RematchOffer(match=old.id, rematch=rematch.id, host=player.name)
            )
            for other, seat in old.members.items():
                if other is peer or other.player is None or seat is None:
                    continue
                if rematch.seat_of(other.player) is not None:  # their seat waits for them
                    other.send(offer)
        self._move(peer, rematch)
        seat = rematch.seat_of(player)
        if seat is not None:
            rematch.attach(player, peer)
        elif any(s.kind == "empty" for s in rematch.seats):
            seat = rematch.join(player, peer, None, rematch.settings.join_code)
        else:
            rematch.watch(peer, rematch.settings.join_code)
        rematch.on_change()
        return self._joined(peer, rematch, seat, message.id)

    def _open_rematch(self, old: Room, host: Player) -> Room:
        """A new room with ``old``'s settings and bots, its players' seats kept."""
        match_id = self._new_id()
        slots = []
        for slot in old.seats:
            new = SeatSlot(slot.seat, is_bot=slot.is_bot)
            if slot.is_bot and slot.bot is not None:
                new.bot = Bot.for_seat(
                    slot.bot.strength, match_id, slot.seat, self.services.bot_secret
                )
            elif slot.player is not None and not slot.left:
                new.player = slot.player
            slots.append(new)
        rematch = self._new_room(match_id, old.settings, host, slots)
        old.rematch_id = match_id
        return rematch

    async def act(self, peer: Peer, message: wire.Act) -> Reply:
        """A proposed action: checked by the engine, stored, applied, told to all."""
        room = self._room_of(peer)
        announce = await room.act(self._player(peer), views.action_from_wire(message.action))
        return _ok(message, then=announce)

    def sync(self, peer: Peer, message: wire.Sync) -> Reply:
        """A fresh snapshot (and prompt) on request."""
        room = self._room_of(peer)
        seat = room.members.get(peer)
        if room.match is None:
            raise refused(ErrorCode.MATCH_NOT_READY, "the match has not started")
        snapshot = views.snapshot(room, seat, message.id)

        def then() -> None:
            if seat is not None:
                room.send_prompt(seat, to=peer)
            room.send_timers(peer)

        return Reply(snapshot, then)

    def replay(self, peer: Peer, message: wire.Replay) -> Reply:
        """A match's events as the requester's seat saw them (a spectator's view
        if it holds none); an open-box match's seed, salt and actions too once
        it is finished (R27)."""
        room = self._find(message.match)
        seat = room.seat_of(self._player(peer))
        if seat is None:
            self._check_code(peer, room, message.join_code)
        start = message.from_seq - 1
        page = room.log[start : start + MAX_REPLAY_EVENTS]
        more = start + len(page) < len(room.log)
        published = room.status is RoomStatus.FINISHED and room.settings.open_box
        match = room.match if published else None
        history = match.history if match is not None else ()
        return Reply(
            wire.ReplayPage(
                id=message.id,
                match=room.id,
                status=views.status(room),
                ruleset=room.settings.ruleset_name,
                from_seq=message.from_seq,
                events=tuple(views.event_to_wire(project_event(e, seat)) for e in page),
                next_seq=message.from_seq + len(page) if more else None,
                by=views.played_by(room.played_by, message.from_seq, len(page)),
                points=views.points_to_wire(room.settings.ruleset, len(room.seats)),
                seat=seat,
                seed=match.seed if match is not None else None,
                salt=room.salt.hex() if match is not None and room.salt is not None else None,
                first_seat=room.settings.first_seat if match is not None else None,
                actions=tuple(
                    wire.SeatAction(seat=actor, action=views.action_to_wire(action))
                    for actor, action in history
                ),
            )
        )

    def chat(self, peer: Peer, message: wire.Chat) -> Reply:
        """A chat line to everyone in the match."""
        room = self._room_of(peer)
        frame = wire.encode(
            wire.ChatLine(
                match=room.id,
                seat=room.members.get(peer),
                name=self._player(peer).name,
                text=message.text,
            )
        )

        def then() -> None:
            for member in room.members:
                member.send(frame)

        return _ok(message, then)


def _log_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("could not store a match's state: %s", future.exception())


def _log_touch_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("could not store when a player was last seen: %s", future.exception())
