"""Rooms to stored rows and back: what the lobby writes, and how it rebuilds
every stored match after a restart."""

from __future__ import annotations

import logging
import time
from typing import cast, get_args

import protocol as wire
from engine import Action, ruleset_from_mapping
from engine.record import action_from_data, action_to_data

from . import views
from .bots import STRENGTHS, Bot
from .commitment import SALT_BYTES
from .identity import Player, Players
from .room import OnAction, Room, RoomServices, RoomStatus, SeatSlot
from .settings import MatchSettings
from .storage import MatchRow, PlayerRow, Storage, StorageError

#: the values a stored ``played_by`` may have
_PLAYED_BY = frozenset(get_args(wire.PlayedBy))

__all__ = [
    "load_named_players",
    "player_row",
    "restore_room",
    "room_row",
    "store_action",
    "store_player",
]

log = logging.getLogger(__name__)


def player_row(player: Player) -> PlayerRow:
    """The stored form of a player."""
    return PlayerRow(player.id, player.name, player.token_hash)


async def store_player(storage: Storage, players: Players, player: Player, *, new: bool) -> None:
    """Store a new player, or a returning one's new name, before the welcome.

    If the disk cannot take it, a new player is forgotten and refused with
    ``storage_unavailable`` — no token is handed out for an identity that a
    restart would not know — while a returning player (already stored) keeps
    the new name in memory only.
    """
    try:
        await storage.save_player(player_row(player), time.time())
    except StorageError as exc:
        if not new:
            log.warning("player %s: their new name is not stored: %s", player.id, exc)
            return
        players.remove(player)
        log.error("a new player is refused (storage_unavailable): %s", exc)
        raise wire.ProtocolError(
            wire.ErrorCode.STORAGE_UNAVAILABLE,
            "the server cannot store a new player now (its disk is full or unwritable);"
            " try again later",
        ) from None


def load_named_players(row: MatchRow, storage: Storage, players: Players) -> None:
    """Bring the stored players ``row`` names (host and seats) into memory, each
    once: a room must hold the one object there is for each player."""
    named = [row.host, *(seat.get("player") for seat in row.seats)]
    for player_id in named:
        if isinstance(player_id, str) and players.get(player_id) is None:
            stored = storage.player(player_id)
            if stored is not None:
                players.add(Player(id=stored.id, name=stored.name, token_hash=stored.token_hash))


def room_row(room: Room, seed: int | None = None, salt: bytes | None = None) -> MatchRow:
    """The stored form of a room (its actions are stored one by one); ``seed``
    and ``salt`` are the ones about to be dealt, stored before the deal."""
    seats = [
        {
            "player": slot.player.id if slot.player is not None and not slot.is_bot else None,
            "bot": slot.bot.strength if slot.is_bot and slot.bot is not None else None,
            "left": slot.left,
        }
        for slot in room.seats
    ]
    status = room.status.value if room.status is not RoomStatus.PAUSED else "running"
    settings = room.settings
    return MatchRow(
        id=room.id,
        name=settings.name,
        host=room.host.id,
        ruleset_name=settings.ruleset_name,
        ruleset=settings.ruleset.to_mapping(),
        seats=seats,
        join_code=settings.join_code,
        turn_timer=settings.turn_timer,
        first_seat=settings.first_seat,
        seed=seed if seed is not None else (room.match.seed if room.match else None),
        status=status if seed is None else "running",
        created=room.created,
        finished=time.time() if room.status is RoomStatus.FINISHED else None,
        open_box=settings.open_box,
        salt=salt if seed is not None else room.salt,
    )


def store_action(storage: Storage) -> OnAction:
    """A room's ``on_action`` hook that appends the action to ``storage``."""

    async def on_action(room: Room, seat: int, action: Action, by: wire.PlayedBy | None) -> None:
        assert room.match is not None
        index = len(room.match.history)  # called before the action is applied
        await storage.append_action(room.id, index, seat, action_to_data(action), by)

    return on_action


def restore_room(row: MatchRow, storage: Storage, players: Players, services: RoomServices) -> Room:
    """Rebuild a stored room, its match replayed through the engine.

    Raises :class:`StorageError` — and nothing else, whatever the row holds —
    if the row does not rebuild: seats that are not ``{player, bot, left}``
    maps, a seat count the ruleset cannot deal, a player or host that is not
    stored, a ruleset the engine refuses, a running match without its seed,
    actions that are damaged or do not replay, or names no client would accept.
    """
    try:
        return _rebuild(row, storage, players, services)
    except StorageError:
        raise
    except Exception as exc:  # whatever a damaged row provokes in the engine or the views
        raise StorageError(f"{type(exc).__name__}: {exc}") from exc


def _rebuild(row: MatchRow, storage: Storage, players: Players, services: RoomServices) -> Room:
    host = players.get(row.host)
    if host is None:
        raise StorageError(f"its host {row.host} is not stored")
    settings = MatchSettings(
        name=row.name,
        ruleset_name=row.ruleset_name,
        ruleset=ruleset_from_mapping(row.ruleset),
        join_code=row.join_code,
        turn_timer=row.turn_timer,
        first_seat=row.first_seat,
        open_box=row.open_box,
    )
    settings.ruleset.check_players(len(row.seats))
    if row.first_seat is not None and not 0 <= row.first_seat < len(row.seats):
        raise StorageError(f"first seat {row.first_seat} is not a seat")
    if row.status != "open" and row.seed is None:
        raise StorageError(f"{row.status} but no seed is stored")
    slots = [
        _slot(row.id, seat, entry, players, services.bot_secret)
        for seat, entry in enumerate(row.seats)
    ]
    dealt = row.seed is not None and row.status != "open"
    if row.open_box and dealt and (row.salt is None or len(row.salt) != SALT_BYTES):
        raise StorageError(f"an open-box match without its {SALT_BYTES}-byte salt")
    room = Room(row.id, settings, host, slots, services, created=row.created)
    if dealt:
        assert row.seed is not None
        actions = [(seat, action_from_data(data)) for seat, data in storage.actions(row.id)]
        played_by = {
            index: cast(wire.PlayedBy, by)
            for index, by in storage.played_by(row.id).items()
            if by in _PLAYED_BY  # a damaged mark is only a mark: the match still restores
        }
        room.restore(row.seed, actions, row.salt if row.open_box else None, played_by)
    wire.decode_server_message(views.match_update_frame(room))  # as every client reads it
    return room


def _slot(
    match_id: str, seat: int, entry: dict[str, object], players: Players, secret: bytes
) -> SeatSlot:
    """One stored seat: ``{"player": id or None, "bot": strength or None, "left": bool}``."""
    player_id, strength, left = entry.get("player"), entry.get("bot"), entry.get("left", False)
    if (
        set(entry) - {"player", "bot", "left"}
        or (player_id is not None and strength is not None)
        or not isinstance(left, bool)
    ):
        raise StorageError(f"seat {seat} is stored as {entry!r}")
    slot = SeatSlot(seat, left=left)
    if strength is not None:
        if strength not in STRENGTHS:
            raise StorageError(f"seat {seat} has a bot of strength {strength!r}")
        slot.is_bot = True
        slot.bot = Bot.for_seat(str(strength), match_id, seat, secret)
    elif player_id is not None:
        player = players.get(player_id) if isinstance(player_id, str) else None
        if player is None:
            raise StorageError(f"seat {seat}'s player {player_id!r} is not stored")
        slot.player = player
    return slot
