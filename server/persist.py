"""Rooms to stored rows and back: what the lobby writes, and how it rebuilds
every stored match after a restart."""

from __future__ import annotations

import time

from engine import Action, ruleset_from_mapping
from engine.record import action_from_data, action_to_data

from .bots import Bot
from .identity import Player, Players
from .room import OnAction, Room, RoomServices, RoomStatus, SeatSlot
from .settings import MatchSettings
from .storage import MatchRow, PlayerRow, Storage, StorageError

__all__ = ["player_row", "restore_room", "room_row", "store_action"]


def player_row(player: Player) -> PlayerRow:
    """The stored form of a player."""
    return PlayerRow(player.id, player.name, player.token_hash)


def room_row(room: Room, seed: int | None = None) -> MatchRow:
    """The stored form of a room (its actions are stored one by one)."""
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
    )


def store_action(storage: Storage) -> OnAction:
    """A room's ``on_action`` hook that appends the action to ``storage``."""

    async def on_action(room: Room, seat: int, action: Action) -> None:
        assert room.match is not None
        index = len(room.match.history)  # called before the action is applied
        await storage.append_action(room.id, index, seat, action_to_data(action))

    return on_action


def restore_room(row: MatchRow, storage: Storage, players: Players, services: RoomServices) -> Room:
    """Rebuild a stored room, its match replayed through the engine."""
    host = players.get(row.host)
    if host is None:
        raise StorageError(f"match {row.id}: its host {row.host} is not stored")
    settings = MatchSettings(
        name=row.name,
        ruleset_name=row.ruleset_name,
        ruleset=ruleset_from_mapping(row.ruleset),
        join_code=row.join_code,
        turn_timer=row.turn_timer,
        first_seat=row.first_seat,
    )
    slots = []
    for seat, entry in enumerate(row.seats):
        slot = SeatSlot(seat, left=bool(entry.get("left", False)))
        if entry.get("bot"):
            slot.is_bot = True
            slot.bot = Bot.for_seat(str(entry["bot"]), row.id, seat)
        elif entry.get("player"):
            slot.player = players.get(str(entry["player"]))
        slots.append(slot)
    room = Room(row.id, settings, host, slots, services, created=row.created)
    if row.seed is not None and row.status != "open":
        actions = [(seat, action_from_data(data)) for seat, data in storage.actions(row.id)]
        room.restore(row.seed, actions)
    return room
