"""The lobby: players, rooms, and the one table that maps each request type
to what the server does about it.

Every handler answers its request (repeating its id) or raises; exactly one
function, :func:`error_for`, turns what it raised into a wire error.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import protocol as wire
from engine import (
    DEFAULT_RULESET,
    EngineError,
    IllegalAction,
    NotYourTurn,
    Ruleset,
    project_event,
)
from engine.record import RecordError
from protocol.limits import MAX_MATCHES_LISTED, MAX_REPLAY_EVENTS

from . import persist, views
from .bots import Bot, Thinker
from .config import ServerConfig
from .identity import Player, Players
from .peer import Peer
from .room import MatchFactory, Room, RoomError, RoomStatus, SeatSlot, deal_match
from .storage import Storage, StorageError

__all__ = ["Lobby", "error_for"]

log = logging.getLogger(__name__)

Handler = Callable[["Lobby", Peer, Any], Awaitable[wire.ServerMessage | None]]


def error_for(exc: Exception, request_id: int | str | None) -> wire.ServerMessage:
    """The wire error for anything a request handler raised."""
    if isinstance(exc, wire.ProtocolError):
        return wire.error_message_for(exc, request_id)
    if isinstance(exc, RoomError):
        return wire.Error(code=exc.code, message=exc.message, id=request_id)
    if isinstance(exc, NotYourTurn):
        return wire.Error(code=wire.ErrorCode.NOT_YOUR_TURN, message=str(exc), id=request_id)
    if isinstance(exc, IllegalAction):
        return wire.Error(code=wire.ErrorCode.ILLEGAL_ACTION, message=str(exc), id=request_id)
    if isinstance(exc, StorageError):
        message = "the server cannot store this now (its disk is full or unwritable); try later"
        return wire.Error(code=wire.ErrorCode.STORAGE_UNAVAILABLE, message=message, id=request_id)
    return wire.Error(code=wire.ErrorCode.INTERNAL_ERROR, message="internal error", id=request_id)


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
        self.match_factory = match_factory
        self._make_id = new_id
        self.players = Players()
        self.rooms: dict[str, Room] = {}
        self.rulesets = rulesets or {"standard": DEFAULT_RULESET}
        #: peers browsing the lobby: they asked for the list and are in no match
        self._lobby_peers: set[Peer] = set()

    async def open(self) -> None:
        """Open storage and rebuild every stored match (raises StorageError if unusable)."""
        if self.storage is None:
            return
        self.storage.open()
        for stored in self.storage.players():
            self.players.add(Player(id=stored.id, name=stored.name, token_hash=stored.token_hash))
        finished = self.storage.matches(["finished"], limit=self.config.keep_finished)
        live = self.storage.matches(["open", "running"])
        for row in [*reversed(finished), *reversed(live)]:
            try:
                room = persist.restore_room(row, self.storage, self.players, **self._room_options())
            except (StorageError, EngineError, RecordError, ValueError, KeyError) as exc:
                log.error(
                    "match %s cannot be rebuilt and is left out (left on disk): %s", row.id, exc
                )
                continue
            self.rooms[room.id] = room
        for room in self.rooms.values():
            room.resume()
        log.info(
            "storage %s: %d players, %d matches (%d running) restored",
            self.storage.path,
            len(self.players),
            len(self.rooms),
            self.running_count(),
        )

    def halt(self) -> None:
        """Shutting down: every room stops its timers and bots and takes no more actions."""
        for room in self.rooms.values():
            room.close()
        self.thinker.close()

    async def close(self, timeout: float | None = None) -> None:
        """Halt, then let storage finish the writes it holds (for at most
        ``timeout`` s, by default ``config.stop_timeout``) and close it."""
        self.halt()
        if self.storage is not None:
            await self.storage.aclose(self.config.stop_timeout if timeout is None else timeout)

    def running_count(self) -> int:
        """Matches being played now."""
        return sum(room.status is RoomStatus.RUNNING for room in self.rooms.values())

    # -- connection life ----------------------------------------------------------------

    async def hello(self, peer: Peer, message: wire.Hello) -> wire.ServerMessage:
        """Who the peer is: a proved identity or a new one (stored before the welcome)."""
        token = message.token
        if token is not None:
            player = self.players.by_token(token)
            if player is None:
                raise wire.ProtocolError(wire.ErrorCode.BAD_TOKEN, "unknown resume token")
            renamed = player.name != message.name
            player.name = message.name
            for old in list(player.connections):  # the newer connection wins
                if isinstance(old, Peer) and old is not peer:
                    old.close(wire.CloseCode.REPLACED, "replaced by a newer connection")
        else:
            player, token = self.players.new(message.name)
            renamed = True
        if renamed and self.storage is not None:
            await persist.store_player(
                self.storage, self.players, player, new=message.token is None
            )
        peer.player = player
        player.connections.add(peer)
        log.info("%s (%s) connected with %s", player.name, player.id, message.client)
        return wire.Welcome(
            id=message.id,
            server=self.config.name,
            versions=wire.SUPPORTED_VERSIONS,
            player=player.id,
            token=token,
            name=player.name,
        )

    def after_welcome(self, peer: Peer) -> None:
        """Put a returning player back where they were."""
        player = peer.player
        assert player is not None
        room = self.rooms.get(player.match_id) if player.match_id else None
        if room is None:
            return
        peer.room = room
        seat = room.attach(player, peer)
        self._send_joined(peer, room, seat, None)

    def disconnect(self, peer: Peer) -> None:
        """The peer's connection is gone."""
        self._lobby_peers.discard(peer)
        if peer.player is not None:
            peer.player.connections.discard(peer)
        if peer.room is not None:
            peer.room.detach(peer)
            peer.room = None

    # -- requests -------------------------------------------------------------------------

    async def dispatch(self, peer: Peer, message: wire.ClientMessage) -> None:
        """Answer one request: its reply, or an error that says what was wrong."""
        handler = _HANDLERS.get(type(message))
        request_id = getattr(message, "id", None)
        try:
            if isinstance(message, wire.Hello):
                raise wire.ProtocolError(
                    wire.ErrorCode.NOT_WELCOME, "this connection has already said hello"
                )
            if handler is None:
                raise wire.ProtocolError(
                    wire.ErrorCode.UNKNOWN_TYPE, f"{type(message).__name__} is not a request here"
                )
            answer = await handler(self, peer, message)
        except (wire.ProtocolError, RoomError, IllegalAction, StorageError) as exc:
            if isinstance(exc, StorageError):
                log.error("%s refused (storage_unavailable): %s", type(message).__name__, exc)
            peer.send(wire.encode(error_for(exc, request_id)))
            return
        if answer is not None:
            peer.send(wire.encode(answer))

    def _room_of(self, peer: Peer) -> Room:
        if peer.room is None:
            raise RoomError(wire.ErrorCode.NOT_IN_MATCH, "join or watch a match first")
        return peer.room

    def _find(self, match_id: str) -> Room:
        room = self.rooms.get(match_id)
        if room is None:
            raise RoomError(wire.ErrorCode.NO_SUCH_MATCH, f"no match {match_id!r}")
        return room

    def _send_joined(self, peer: Peer, room: Room, seat: int | None, request_id: Any) -> None:
        assert peer.player is not None
        peer.send(
            wire.encode(
                wire.Joined(id=request_id, match=room.id, seat=seat, host=room.host is peer.player)
            )
        )
        peer.send(views.match_update_frame(room))
        if room.match is not None:
            peer.send(views.snapshot_frame(room, seat))
            if seat is not None and seat in room.match.to_act and not room.seats[seat].bot_plays:
                peer.send(views.prompt_frame(room, seat, room.time_left(seat)))

    def _enter(self, peer: Peer, room: Room) -> None:
        if peer.room is not None and peer.room is not room:
            assert peer.player is not None
            peer.room.leave(peer.player, peer)
        self._lobby_peers.discard(peer)
        peer.room = room

    def room_changed(self, room: Room) -> None:
        """Store the room's new state and tell its members and the lobby."""
        if self.storage is not None and room.status is not RoomStatus.PAUSED:
            self.storage.save_match_soon(persist.room_row(room)).add_done_callback(_log_failure)
        frame = views.match_update_frame(room)
        for peer in list(room.members) + list(self._lobby_peers):
            peer.send(frame)

    async def list_matches(self, peer: Peer, message: wire.ListMatches) -> wire.ServerMessage:
        """Open, running and recently finished matches; until the peer enters a
        match, it also receives every ``match_update`` (the lobby stays live)."""
        if peer.room is None:
            self._lobby_peers.add(peer)
        rooms = sorted(self.rooms.values(), key=lambda r: r.created, reverse=True)
        return wire.MatchList(
            id=message.id, matches=tuple(views.summary(r) for r in rooms[:MAX_MATCHES_LISTED])
        )

    async def create_match(
        self, peer: Peer, message: wire.CreateMatch
    ) -> wire.ServerMessage | None:
        """A new match; the creator hosts it and takes the first seat no bot has."""
        player = peer.player
        assert player is not None
        if sum(r.status is not RoomStatus.FINISHED for r in self.rooms.values()) >= (
            self.config.max_matches
        ):
            raise RoomError(wire.ErrorCode.SERVER_FULL, "this server hosts its maximum of matches")
        ruleset_name = message.ruleset or "standard"
        ruleset = self.rulesets.get(ruleset_name)
        if ruleset is None:
            known = ", ".join(sorted(self.rulesets))
            raise wire.ProtocolError(
                wire.ErrorCode.BAD_MESSAGE,
                f"unknown ruleset {ruleset_name!r}; this server has {known}",
                path="create_match.ruleset",
            )
        if message.first_seat is not None and not 0 <= message.first_seat < message.seats:
            raise wire.ProtocolError(
                wire.ErrorCode.BAD_MESSAGE,
                "first_seat is not a seat",
                path="create_match.first_seat",
            )
        match_id = self._new_id()
        slots = [SeatSlot(seat) for seat in range(message.seats)]
        for i, bot in enumerate(message.bots):
            if not 0 <= bot.seat < message.seats or slots[bot.seat].is_bot:
                raise wire.ProtocolError(
                    wire.ErrorCode.BAD_MESSAGE,
                    f"bot seat {bot.seat} is not a free seat",
                    path=f"create_match.bots[{i}].seat",
                )
            slots[bot.seat].is_bot = True
            slots[bot.seat].bot = Bot.for_seat(bot.strength, match_id, bot.seat)
        room = self._new_room(
            match_id,
            message.name,
            player,
            ruleset,
            ruleset_name,
            slots,
            message.join_code,
            message.turn_timer,
            message.first_seat,
        )
        return self._seat_creator(peer, room, message.id)

    def _room_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "grace_period": self.config.grace_period,
            "bot_delay": self.config.bot_delay,
            "on_change": self.room_changed,
            "match_factory": self.match_factory,
            "thinker": self.thinker,
        }
        if self.storage is not None:
            options["on_action"] = persist.store_action(self.storage)
        return options

    def _new_id(self) -> str:
        if self._make_id is not None:
            return self._make_id()
        while True:
            match_id = secrets.token_hex(4)
            if match_id not in self.rooms:
                return match_id

    def _new_room(
        self,
        match_id: str,
        name: str,
        host: Player,
        ruleset: Ruleset,
        ruleset_name: str,
        slots: list[SeatSlot],
        join_code: str | None,
        turn_timer: float | None,
        first_seat: int | None,
    ) -> Room:
        room = Room(
            id=match_id,
            name=name,
            host=host,
            ruleset=ruleset,
            ruleset_name=ruleset_name,
            seats=slots,
            join_code=join_code,
            turn_timer=turn_timer,
            first_seat=first_seat,
            **self._room_options(),
        )
        self.rooms[match_id] = room
        self._forget_old_rooms()
        return room

    def _seat_creator(self, peer: Peer, room: Room, request_id: Any) -> wire.ServerMessage | None:
        player = peer.player
        assert player is not None
        self._enter(peer, room)
        free = [s.seat for s in room.seats if s.kind == "empty"]
        if free:
            seat: int | None = room.join(player, peer, free[0], room.join_code)
        else:
            room.watch(player, peer)
            seat = None
        self._send_joined(peer, room, seat, request_id)
        self.room_changed(room)
        return None

    def _forget_old_rooms(self) -> None:
        finished = [r for r in self.rooms.values() if r.status is RoomStatus.FINISHED]
        finished.sort(key=lambda r: r.created)
        for room in finished[: max(0, len(finished) - self.config.keep_finished)]:
            if not room.members:
                del self.rooms[room.id]

    async def join(self, peer: Peer, message: wire.Join) -> wire.ServerMessage | None:
        """Take a seat in an open match (or return to one's own seat)."""
        room = self._find(message.match)
        player = peer.player
        assert player is not None
        seat = room.join(player, peer, message.seat, message.join_code)
        self._enter(peer, room)
        room.members[peer] = seat
        self._send_joined(peer, room, seat, message.id)
        return None

    async def watch(self, peer: Peer, message: wire.Watch) -> wire.ServerMessage | None:
        """Watch a match as a spectator: public information only (R24)."""
        room = self._find(message.match)
        assert peer.player is not None
        if room.join_code is not None and message.join_code != room.join_code:
            raise RoomError(wire.ErrorCode.BAD_JOIN_CODE, "this match needs the right join code")
        self._enter(peer, room)
        room.watch(peer.player, peer)
        self._send_joined(peer, room, None, message.id)
        return None

    async def leave(self, peer: Peer, message: wire.Leave) -> wire.ServerMessage | None:
        """Leave the match: an open seat is freed, a running one goes to a bot."""
        room = self._room_of(peer)
        assert peer.player is not None
        room.leave(peer.player, peer)
        peer.room = None
        _ok(peer, message)
        return None

    async def start(self, peer: Peer, message: wire.Start) -> wire.ServerMessage | None:
        """The host deals the match."""
        room = self._room_of(peer)
        assert peer.player is not None
        room.check_start(peer.player)
        seed = secrets.randbits(63)
        if self.storage is not None:  # the seed is on disk before anyone sees a card
            await self.storage.save_match(persist.room_row(room, seed=seed))
            room.check_start(peer.player)  # nothing changed while we waited
        _ok(peer, message)  # the answer before its consequences
        room.begin(seed)
        return None

    async def play_again(self, peer: Peer, message: wire.PlayAgain) -> wire.ServerMessage | None:
        """A rematch: same seats, same bots, everyone still here seated again."""
        old = self._room_of(peer)
        player = peer.player
        assert player is not None
        if old.status is not RoomStatus.FINISHED:
            raise RoomError(wire.ErrorCode.MATCH_NOT_READY, "the match is not over yet")
        rematch = self.rooms.get(old.rematch_id) if old.rematch_id else None
        if rematch is None:
            match_id = self._new_id()
            slots = []
            for slot in old.seats:
                new = SeatSlot(slot.seat, is_bot=slot.is_bot)
                if slot.is_bot and slot.bot is not None:
                    new.bot = Bot.for_seat(slot.bot.strength, match_id, slot.seat)
                elif slot.player is not None and old.seat_of(slot.player) is not None:
                    new.player = slot.player
                slots.append(new)
            rematch = self._new_room(
                match_id,
                old.name,
                player,
                old.ruleset,
                old.ruleset_name,
                slots,
                old.join_code,
                old.turn_timer,
                old.first_seat,
            )
            old.rematch_id = match_id
            for other, seat in list(old.members.items()):
                if other is not peer and other.player is not None and seat is not None:
                    self._enter(other, rematch)
                    rematch.members[other] = rematch.seat_of(other.player)
                    other.player.match_id = rematch.id
                    self._send_joined(other, rematch, rematch.members[other], None)
        self._enter(peer, rematch)
        seat = rematch.seat_of(player)
        if seat is None and any(s.kind == "empty" for s in rematch.seats):
            seat = rematch.join(player, peer, None, rematch.join_code)
        rematch.members[peer] = seat
        player.match_id = rematch.id
        self._send_joined(peer, rematch, seat, message.id)
        self.room_changed(rematch)
        return None

    async def act(self, peer: Peer, message: wire.Act) -> wire.ServerMessage | None:
        """A proposed action: checked by the engine, applied, and told to all."""
        room = self._room_of(peer)
        assert peer.player is not None
        await room.act(
            peer.player, views.action_from_wire(message.action), lambda: _ok(peer, message)
        )
        return None

    async def sync(self, peer: Peer, message: wire.Sync) -> wire.ServerMessage | None:
        """A fresh snapshot (and prompt) on request."""
        room = self._room_of(peer)
        seat = room.members.get(peer)
        if room.match is None:
            raise RoomError(wire.ErrorCode.MATCH_NOT_READY, "the match has not started")
        peer.send(views.snapshot_frame(room, seat, message.id))
        if seat is not None and seat in room.match.to_act and not room.seats[seat].bot_plays:
            peer.send(views.prompt_frame(room, seat, room.time_left(seat)))
        return None

    async def replay(self, peer: Peer, message: wire.Replay) -> wire.ServerMessage:
        """A match's public events; its seed and actions too once it is finished."""
        room = self._find(message.match)
        if room.join_code is not None and message.join_code != room.join_code:
            raise RoomError(wire.ErrorCode.BAD_JOIN_CODE, "this match needs the right join code")
        start = message.from_seq - 1
        page = room.log[start : start + MAX_REPLAY_EVENTS]
        more = start + len(page) < len(room.log)
        finished = room.status is RoomStatus.FINISHED and room.match is not None
        history = room.match.history if finished and room.match is not None else ()
        return wire.ReplayPage(
            id=message.id,
            match=room.id,
            status=views.status(room),
            ruleset=room.ruleset_name,
            from_seq=message.from_seq,
            events=tuple(views.event_to_wire(project_event(e, None)) for e in page),
            next_seq=message.from_seq + len(page) if more else None,
            seed=room.match.seed if finished and room.match is not None else None,
            first_seat=room.first_seat if finished else None,
            actions=tuple(
                wire.SeatAction(seat=seat, action=views.action_to_wire(action))
                for seat, action in history
            ),
        )

    async def chat(self, peer: Peer, message: wire.Chat) -> wire.ServerMessage | None:
        """A chat line to everyone in the match."""
        room = self._room_of(peer)
        assert peer.player is not None
        frame = wire.encode(
            wire.ChatLine(
                match=room.id, seat=room.members.get(peer), name=peer.player.name, text=message.text
            )
        )
        _ok(peer, message)
        for member in room.members:
            member.send(frame)
        return None


def _ok(peer: Peer, request: wire.ClientMessage) -> None:
    """Answer ``ok`` to a request that carried an id (PROTOCOL.md: only those)."""
    if request.id is not None:
        peer.send(wire.encode(wire.Ok(id=request.id)))


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("could not store a match's state: %s", future.exception())


_HANDLERS: dict[type, Handler] = {
    wire.ListMatches: Lobby.list_matches,
    wire.CreateMatch: Lobby.create_match,
    wire.Join: Lobby.join,
    wire.Watch: Lobby.watch,
    wire.Leave: Lobby.leave,
    wire.Start: Lobby.start,
    wire.PlayAgain: Lobby.play_again,
    wire.Act: Lobby.act,
    wire.Sync: Lobby.sync,
    wire.Replay: Lobby.replay,
    wire.Chat: Lobby.chat,
}
