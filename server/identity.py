"""Players and their secret resume tokens.

A player is who a connection says it is after hello: a fresh identity, or an
old one proved with its resume token. Only a SHA-256 hash of each token is
kept, so a leaked player table does not let anyone act for a seat.

Identities are not kept for ever: :meth:`Players.forget` drops the players
who have not connected for a long time (``--forget-players-after``) and whom
no match still names, so a client making identities in a loop leaves nothing
lasting behind. With storage, :class:`Players` holds only the players the
server needs now (connected, or named by a room in memory): the lobby
evicts the others (:meth:`~Players.evict`), and brings one back from disk when its
token is presented.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field

from .names import name_key

__all__ = ["Player", "Players", "hash_token"]


def hash_token(token: str) -> str:
    """The stored form of a resume token."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(eq=False, slots=True)
class Player:
    """One person (or remote bot) known to the server."""

    id: str
    name: str
    token_hash: str
    #: live connections of this player (a reconnect may overlap the old one)
    connections: set[object] = field(default_factory=set)
    #: when the player was last connected (time.time()); for forgetting the unused
    last_seen: float = field(default_factory=time.time)
    #: the token hashes of the player's other devices (linked with a one-time code)
    other_tokens: list[str] = field(default_factory=list)

    @property
    def token_hashes(self) -> list[str]:
        """Every token hash that proves this player."""
        return [self.token_hash, *self.other_tokens]

    @property
    def connected(self) -> bool:
        """Whether any connection of the player is open."""
        return bool(self.connections)


class Players:
    """The players this server holds in memory, by id and by token hash: every
    one it knows without storage, those it needs now with storage."""

    def __init__(self) -> None:
        self._by_id: dict[str, Player] = {}
        self._by_token: dict[str, Player] = {}
        self._by_name: dict[str, Player] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[Player]:
        return iter(list(self._by_id.values()))

    def new(self, name: str) -> tuple[Player, str]:
        """A new player and its secret token (shown once, to its owner)."""
        token = secrets.token_urlsafe(24)
        player = Player(id=secrets.token_hex(6), name=name, token_hash=hash_token(token))
        self.add(player)
        return player, token

    def add(self, player: Player) -> None:
        """Register a player (new, or restored from storage)."""
        self._by_id[player.id] = player
        for digest in player.token_hashes:
            self._by_token[digest] = player
        self._by_name.setdefault(name_key(player.name), player)

    def add_token(self, player: Player, token_hash: str) -> None:
        """One more device's token proves ``player`` (a linked device)."""
        if token_hash not in player.other_tokens:
            player.other_tokens.append(token_hash)
        if self._by_id.get(player.id) is player:
            self._by_token[token_hash] = player

    def rename(self, player: Player, name: str) -> None:
        """The player goes by ``name`` now."""
        self._unname(player)
        player.name = name
        if self._by_id.get(player.id) is player:
            self._by_name.setdefault(name_key(name), player)

    def named(self, name: str) -> Player | None:
        """The player in memory whose name is ``name`` in any case, if any."""
        return self._by_name.get(name_key(name))

    def _unname(self, player: Player) -> None:
        key = name_key(player.name)
        if self._by_name.get(key) is player:
            del self._by_name[key]

    def _drop(self, player: Player) -> None:
        self._by_id.pop(player.id, None)
        for digest in player.token_hashes:
            if self._by_token.get(digest) is player:
                del self._by_token[digest]
        self._unname(player)

    def remove(self, player: Player) -> None:
        """Forget a player (one whose identity could not be stored)."""
        self._drop(player)

    def by_token(self, token: str) -> Player | None:
        """The player this token proves, if any."""
        digest = hash_token(token)
        player = self._by_token.get(digest)
        if player is None or not any(
            hmac.compare_digest(known, digest) for known in player.token_hashes
        ):
            return None
        return player

    def get(self, player_id: str) -> Player | None:
        """The player with this id, if known."""
        return self._by_id.get(player_id)

    def evict(self, candidates: Iterable[Player], keep: Container[str]) -> int:
        """Drop from memory (not from storage) each of ``candidates`` that has no
        live connection and whose id is not in ``keep`` (ids a room in memory
        names); how many went. A player object is never replaced while held."""
        evicted = 0
        for player in candidates:
            if player.connections or player.id in keep or self._by_id.get(player.id) is not player:
                continue
            self._drop(player)
            evicted += 1
        return evicted

    def forget(self, before: float, keep: Container[str] = ()) -> list[Player]:
        """Forget every player not connected since ``before`` and not in ``keep``
        (ids of players a match still names); returns the forgotten."""
        gone = [
            player
            for player in self._by_id.values()
            if not player.connections and player.last_seen < before and player.id not in keep
        ]
        for player in gone:
            self._drop(player)
        return gone
