"""Players and matches read back from storage: storing a player before the
welcome, and rebuilding every stored match after a restart."""

from __future__ import annotations

import logging
import time
from typing import cast, get_args

import protocol as wire
from engine.record import action_from_data

from ..errors import StorageError
from ..identity import Player, Players
from ..match.bots import STRENGTHS, Bot
from ..match.commands import Person
from ..match.commitment import SALT_BYTES
from ..match.core import CoreConfig, MatchCore
from ..match.records import MatchRow
from ..match.seats import Seat
from .database import PlayerRow, Storage

__all__ = ["load_named_players", "player_row", "restore_match", "store_player"]

log = logging.getLogger(__name__)

_PLAYED_BY = frozenset(get_args(wire.PlayedBy))


def player_row(player: Player) -> PlayerRow:
    """The stored form of a player."""
    return PlayerRow(id=player.id, name=player.name, token_hash=player.token_hash)


async def store_player(storage: Storage, players: Players, player: Player, *, new: bool) -> None:
    """Store a player (a new one, or a new name) before it is welcomed.

    If storage fails, a new player is forgotten and refused with
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


def load_named_players(row: MatchRow, storage: Storage, players: Players) -> dict[str, Person]:
    """Bring the stored players ``row`` names (host and seats) into memory, each
    once, and return them by id, as the match knows them."""
    named = [row.host, *(seat.player for seat in row.seats)]
    people: dict[str, Person] = {}
    for player_id in named:
        if player_id is None:
            continue
        player = players.get(player_id)
        if player is None:
            stored = storage.player(player_id)
            if stored is None:
                continue
            player = Player(id=stored.id, name=stored.name, token_hash=stored.token_hash)
            player.other_tokens = storage.other_tokens(stored.id)
            players.add(player)
        people[player.id] = Person(player.id, player.name)
    return people


def restore_match(
    row: MatchRow, storage: Storage, people: dict[str, Person], config: CoreConfig
) -> MatchCore:
    """Rebuild a stored match, its actions replayed through the engine.

    Raises :class:`StorageError` — and nothing else, whatever the row holds —
    if the row does not rebuild: a seat count the ruleset cannot deal, a bot
    of no known strength, a player or host that is not stored, a running
    match without its seed, actions that are damaged or do not replay, or
    names no client would accept.
    """
    try:
        return _rebuild(row, storage, people, config)
    except StorageError:
        raise
    except Exception as exc:  # whatever a damaged row provokes in the engine or the views
        raise StorageError(f"{type(exc).__name__}: {exc}") from exc


def _rebuild(
    row: MatchRow, storage: Storage, people: dict[str, Person], config: CoreConfig
) -> MatchCore:
    host = people.get(row.host)
    if host is None:
        raise StorageError(f"its host {row.host} is not stored")
    settings = row.settings
    settings.ruleset.check_players(len(row.seats))
    if settings.first_seat is not None and not 0 <= settings.first_seat < len(row.seats):
        raise StorageError(f"first seat {settings.first_seat} is not a seat")
    if row.status != "open" and row.seed is None:
        raise StorageError(f"{row.status} but no seed is stored")
    seats = []
    for index, stored in enumerate(row.seats):
        seat = Seat(index, left=stored.left, reserved=stored.reserved)
        if stored.bot is not None:
            if stored.bot not in STRENGTHS:
                raise StorageError(f"seat {index} has a bot of strength {stored.bot!r}")
            seat.is_bot = True
            seat.bot = Bot.for_seat(stored.bot, row.id, index, config.bot_secret)
        elif stored.player is not None:
            person = people.get(stored.player)
            if person is None:
                raise StorageError(f"seat {index}'s player {stored.player!r} is not stored")
            seat.player = person
        seats.append(seat)
    dealt = row.seed is not None and row.status != "open"
    if settings.open_box and dealt and (row.salt is None or len(row.salt) != SALT_BYTES):
        raise StorageError(f"an open-box match without its {SALT_BYTES}-byte salt")
    core = MatchCore(row.id, settings, host, seats, config, created=row.created)
    if dealt:
        assert row.seed is not None
        actions = [(seat, action_from_data(data)) for seat, data in storage.actions(row.id)]
        marks = {
            index: cast(wire.PlayedBy, by)
            for index, by in storage.played_by(row.id).items()
            if by in _PLAYED_BY  # a damaged mark is only a mark: the match still restores
        }
        core.restore(row.seed, actions, row.salt if settings.open_box else None, marks)
    core.mark_stored(row)
    wire.decode_server_message(core.info.update)  # as every client reads it
    return core
