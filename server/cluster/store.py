"""Every Redis command the cluster sends, in one place.

This is the only module that imports ``redis`` (redis-py's asyncio client),
and it is imported only when the server runs with ``--cluster``. Whatever
Redis or the network raises comes out as :class:`StoreUnavailable`, so the
rest of the cluster code has one failure to handle: the store is not there now.

Keys (all under ``tulips:``):

===================  ======  ==================================================
``nodes``            set     every node id that ever registered
``node:<id>``        string  a :class:`NodeInfo`, with a time to live (heartbeat)
``directory``        hash    match id → :class:`DirectoryEntry`
``players``          hash    player id → :class:`PlayerEntry` (token hash only)
``tokens``           hash    token hash → player id
``online``           hash    player id → the node the player is connected to
``rating:<id>``      string  a :class:`RatingEntry` (a player's, or ``bot_<strength>``)
``board``            zset    rating id → ordinal (μ − 3σ): the leaderboard
``applied:<match>``  string  :class:`RatingsApplied`: the match's result counted, once
``names``            hash    a name's key (casefold) → the player id that holds it
``link:<code>``      string  the player a one-time link code names, with a time to live
===================  ======  ==================================================

Ratings change in one transaction with the mark that a match was applied
(``WATCH`` the mark and the ratings, read, ``MULTI``/``EXEC``; a change by
another node meanwhile makes it read again), so two nodes ending matches of
one player at once lose no update, and no match counts twice.

Channels: ``tulips:lobby`` carries directory entries as they change (the
``match_update``s of every node), ``tulips:presence`` carries
:class:`Presence` (a player said hello somewhere).

Every value above but the two plain strings (``tokens`` and ``online``, which
name a player and a node) and every message is sealed with the cluster's key
(:mod:`.signing`): what comes back is opened here, and a value a node of this
cluster did not seal — or one filed under another key than its own (a
heartbeat of node A under ``node:B``) — is left out, with one warning.
A token's player is believed only if that player's sealed entry holds the
token's hash. Every directory entry and presence message is stamped when it
is sent (:class:`~.entries.Stamp`: sender, run, sequence number, time), so
that an old one sent again can be told from a new one (:mod:`.freshness`);
one without a stamp is left out like an unsealed one.

Commands fail fast: two seconds at most each (plus the wait for one of at
most 32 connections), no retries: a node goes on without Redis and catches
up when it is back.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlsplit, urlunsplit

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, WatchError

from .entries import (
    DirectoryEntry,
    EntryError,
    NodeInfo,
    PlayerEntry,
    Presence,
    RatingEntry,
    RatingsApplied,
    decode,
    encode,
)
from .freshness import Stamper
from .signing import BadSeal, Sealer

__all__ = ["LOBBY", "PRESENCE", "Store", "StoreUnavailable", "Subscription", "shown_url"]

log = logging.getLogger(__name__)

_PREFIX = "tulips:"
NODES = _PREFIX + "nodes"
DIRECTORY = _PREFIX + "directory"
PLAYERS = _PREFIX + "players"
TOKENS = _PREFIX + "tokens"
ONLINE = _PREFIX + "online"
LOBBY = _PREFIX + "lobby"
PRESENCE = _PREFIX + "presence"
BOARD = _PREFIX + "board"
NAMES = _PREFIX + "names"
#: tries of a ratings transaction that other nodes' changes keep interrupting
_RATING_TRIES = 100

#: HDEL the player from ``online`` only if it is still marked on this node
#: (a newer hello on another node has moved them there meanwhile).
_FORGET_IF_HERE = (
    "if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then "
    "return redis.call('hdel', KEYS[1], ARGV[1]) end return 0"
)

_P = ParamSpec("_P")
_R = TypeVar("_R")
_E = TypeVar("_E")

#: What each sealed value is (part of its seal: one kind is never taken for another).
_SEAL_KIND: dict[type, str] = {
    NodeInfo: "node",
    DirectoryEntry: "directory",
    PlayerEntry: "player",
    Presence: "presence",
    RatingEntry: "rating",
    RatingsApplied: "applied",
}
#: The values stamped when they are sent (and refused without a stamp).
_STAMPED = (DirectoryEntry, Presence)
#: Bad values remembered so that each is warned about once (then forgotten, all at once).
_MAX_WARNED = 4096


def shown_url(url: str) -> str:
    """``url`` with its password, if any, hidden (for logs and messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _rating_key(ident: str) -> str:
    return _PREFIX + "rating:" + ident


def _node_key(node: str) -> str:
    return f"{_PREFIX}node:{node}"


class StoreUnavailable(Exception):
    """Redis did not answer (down, unreachable, too slow, or refused the command)."""


def _guarded(method: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
    """Turn whatever Redis or the network raised into :class:`StoreUnavailable`."""

    @functools.wraps(method)
    async def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await method(*args, **kwargs)
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(f"{type(exc).__name__}: {exc}") from exc

    return guarded


class Store:
    """The cluster's Redis, as the commands a node needs."""

    def __init__(
        self,
        url: str,
        key: bytes | None,
        *,
        sender: str | None = None,
        password: str | None = None,
        clock: Callable[[], float] = time.time,
        timeout: float = 2.0,
        max_connections: int = 32,
    ) -> None:
        """``key`` is the cluster's (None: read unchecked, write nothing —
        ``tulips-cluster nodes`` without the key); ``sender`` names who stamps
        the directory entries and presence messages written (this node's id;
        None: nothing of the kind is written); Redis's ``password`` is given
        apart (or in ``url``: ``redis://:PASSWORD@HOST:6379/0``); ``clock``:
        Unix time, for the stamps."""
        #: the URL as logs show it (its password hidden)
        self.url = shown_url(url)
        self._sealer = Sealer(key)
        self._stamper = None if sender is None else Stamper(sender, clock)
        self._warned: set[bytes] = set()
        # A bounded pool that makes a command wait for a connection (rather than
        # fail) when many hellos and joins ask at once. RESP2: on RESP3, redis-py 8
        # turns on maintenance notifications and then skips its check that a pooled
        # connection is still open, so the first command after a Redis restart
        # would go to a dead socket and fail.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            password=password,
            max_connections=max_connections,
            timeout=timeout * 2,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            protocol=2,
        )
        self._redis: Any = aioredis.Redis(connection_pool=pool)

    # -- seals --------------------------------------------------------------------------

    @property
    def checks(self) -> bool:
        """Whether this store has the cluster's key (and so checks what it reads)."""
        return self._sealer.checks

    def _pack(self, value: msgspec.Struct) -> bytes:
        if isinstance(value, _STAMPED):
            if self._stamper is None:
                raise RuntimeError("a store without a sender sends no stamped value")
            value = msgspec.structs.replace(value, stamp=self._stamper.next())
        return self._sealer.seal(_SEAL_KIND[type(value)], encode(value))

    def unpack(self, data: bytes, kind: type[_E], where: str) -> _E | None:
        """The value a node of this cluster sealed (and, if it is of a kind that
        is, stamped) in ``data``, or None (warned about once) if it is unreadable
        or not sealed so; ``where`` names it in the warning."""
        try:
            value = decode(self._sealer.open(_SEAL_KIND[kind], data), kind)
        except (BadSeal, EntryError) as exc:
            self._warn_once(where, data, str(exc))
            return None
        if isinstance(value, _STAMPED) and value.stamp is None:
            self._warn_once(where, data, "it has no stamp (a node of an older version?)")
            return None
        return value

    def _warn_once(self, where: str, data: bytes, why: str) -> None:
        seen = hashlib.sha256(where.encode() + b"\0" + data).digest()[:16]
        if seen in self._warned:
            return
        if len(self._warned) >= _MAX_WARNED:
            self._warned.clear()
        self._warned.add(seen)
        log.warning("ignoring %s from the cluster store: %s", where, why)

    async def close(self) -> None:
        """Close every connection to Redis."""
        with contextlib.suppress(RedisError, OSError):
            await self._redis.aclose()

    # -- nodes ------------------------------------------------------------------------

    @_guarded
    async def beat(self, info: NodeInfo, ttl: float) -> bool:
        """Renew this node's heartbeat for ``ttl`` seconds; True if it was still
        there (False: the node was gone long enough to expire, or Redis lost it)."""
        key = _node_key(info.node)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.exists(key)
            pipe.set(key, self._pack(info), px=max(1, int(ttl * 1000)))
            pipe.sadd(NODES, info.node)
            existed, _, _ = await pipe.execute()
        return bool(existed)

    @_guarded
    async def drop_node(self, node: str) -> None:
        """This node stops: its heartbeat goes at once (its matches stay listed)."""
        await self._redis.delete(_node_key(node))

    @_guarded
    async def known_nodes(self) -> list[str]:
        """Every node id that ever registered and was not forgotten, sorted."""
        return sorted(n.decode() for n in await self._redis.smembers(NODES))

    @_guarded
    async def forget_node(self, node: str) -> None:
        """Take a node out of the cluster for good (its heartbeat must have
        expired): it is no longer known; its directory entries are the caller's."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.srem(NODES, node)
            pipe.delete(_node_key(node))
            await pipe.execute()

    @_guarded
    async def live_nodes(self) -> dict[str, NodeInfo]:
        """Every node whose heartbeat has not expired, by id."""
        nodes = await self.known_nodes()
        if not nodes:
            return {}
        live: dict[str, NodeInfo] = {}
        for node, data in zip(
            nodes, await self._redis.mget([_node_key(n) for n in nodes]), strict=True
        ):
            if data is None:
                continue
            info = self.unpack(data, NodeInfo, f"node {node}'s heartbeat")
            if info is not None and info.node != node:
                self._warn_once(f"node {node}'s heartbeat", data, f"it is {info.node}'s")
            elif info is not None:
                live[node] = info
        return live

    # -- the match directory ------------------------------------------------------------

    @_guarded
    async def publish(self, entries: Iterable[DirectoryEntry]) -> None:
        """Write each entry to the directory (or remove a gone one) and tell every node."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for entry in entries:
                data = self._pack(entry)
                if entry.gone:
                    pipe.hdel(DIRECTORY, entry.match)
                else:
                    pipe.hset(DIRECTORY, entry.match, data)
                pipe.publish(LOBBY, data)
            await pipe.execute()

    @_guarded
    async def directory(self) -> dict[str, DirectoryEntry]:
        """Every match of the cluster, by id (unreadable entries are left out)."""
        entries: dict[str, DirectoryEntry] = {}
        for match, data in (await self._redis.hgetall(DIRECTORY)).items():
            entry = self._directory_entry(match.decode(errors="replace"), data)
            if entry is not None:
                entries[entry.match] = entry
        return entries

    def _directory_entry(self, match: str, data: bytes) -> DirectoryEntry | None:
        where = f"directory entry {match!r}"
        entry = self.unpack(data, DirectoryEntry, where)
        if entry is not None and entry.match != match:
            self._warn_once(where, data, f"it is match {entry.match!r}'s")
            return None
        return entry

    @_guarded
    async def entry(self, match: str) -> DirectoryEntry | None:
        """One match's entry, if the directory has a readable one."""
        data = await self._redis.hget(DIRECTORY, match)
        return None if data is None else self._directory_entry(match, data)

    @_guarded
    async def forget_matches(self, matches: Iterable[str]) -> None:
        """Remove directory entries without telling anyone (stale ones of this node)."""
        names = list(matches)
        if names:
            await self._redis.hdel(DIRECTORY, *names)

    # -- players --------------------------------------------------------------------------

    @_guarded
    async def put_players(self, players: Iterable[PlayerEntry], *, overwrite: bool) -> None:
        """Register identities; with ``overwrite`` False, ones already there are kept
        (a node re-registering what it stored must not undo a newer rename)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for player in players:
                if overwrite:
                    pipe.hset(PLAYERS, player.id, self._pack(player))
                    pipe.hset(TOKENS, player.token_hash, player.id)
                else:
                    pipe.hsetnx(PLAYERS, player.id, self._pack(player))
                    pipe.hsetnx(TOKENS, player.token_hash, player.id)
            await pipe.execute()

    @_guarded
    async def find_player(self, token_hash: str) -> PlayerEntry | None:
        """The identity a token hash proves, if any node registered it."""
        player_id = await self._redis.hget(TOKENS, token_hash)
        if player_id is None:
            return None
        data = await self._redis.hget(PLAYERS, player_id)
        if data is None:
            return None
        player = player_id.decode(errors="replace")
        entry = self.unpack(data, PlayerEntry, f"player {player!r}")
        if entry is None or entry.id != player:
            return None
        return entry if token_hash in (entry.token_hash, *entry.other_tokens) else None

    @_guarded
    async def player_entries(self, ids: Iterable[str]) -> dict[str, PlayerEntry]:
        """The registered identities of these player ids (names for the leaderboard)."""
        names = list(ids)
        if not names:
            return {}
        found = {}
        for player, data in zip(names, await self._redis.hmget(PLAYERS, names), strict=True):
            entry = None if data is None else self.unpack(data, PlayerEntry, f"player {player!r}")
            if entry is not None and entry.id == player:
                found[player] = entry
        return found

    # -- names and link codes ---------------------------------------------------------------

    @_guarded
    async def name_holder(self, key: str) -> str | None:
        """The player id that holds a name (by its key), if any."""
        holder = await self._redis.hget(NAMES, key)
        return None if holder is None else holder.decode(errors="replace")

    @_guarded
    async def claim_name(self, key: str, player_id: str, old_key: str | None) -> bool:
        """Hold a name for a player (and let go of its old one); False if
        another player holds it already."""
        if not await self._redis.hsetnx(NAMES, key, player_id):
            holder = await self._redis.hget(NAMES, key)
            if holder is None or holder.decode(errors="replace") != player_id:
                return False
        if old_key is not None and old_key != key:
            await self._redis.eval(_FORGET_IF_HERE, 1, NAMES, old_key, player_id)
        return True

    @_guarded
    async def put_link(self, code: str, player_id: str, ttl: float) -> None:
        """A one-time link code naming a player, until it expires."""
        await self._redis.set(_PREFIX + "link:" + code, player_id, px=max(1, round(ttl * 1000)))

    @_guarded
    async def take_link(self, code: str) -> str | None:
        """The player a link code names, spending it; None if unknown or expired."""
        player = await self._redis.getdel(_PREFIX + "link:" + code)
        return None if player is None else player.decode(errors="replace")

    # -- ratings -------------------------------------------------------------------------

    @_guarded
    async def ratings(self, idents: Iterable[str]) -> dict[str, RatingEntry]:
        """The shared ratings of these identities (those that have one)."""
        names = list(idents)
        if not names:
            return {}
        values = await self._redis.mget([_rating_key(ident) for ident in names])
        found = {}
        for ident, data in zip(names, values, strict=True):
            entry = None if data is None else self.unpack(data, RatingEntry, f"rating {ident!r}")
            if entry is not None:
                found[ident] = entry
        return found

    @_guarded
    async def apply_ratings(
        self,
        match: str,
        idents: Iterable[str],
        compute: Callable[[dict[str, RatingEntry]], tuple[RatingsApplied, dict[str, RatingEntry]]],
    ) -> tuple[RatingsApplied, bool]:
        """Apply a match's result to the shared ratings, once: ``compute`` gets
        the ratings now and says the new ones; they are written with the
        match's mark in one transaction, read again if another node changed
        any of them meanwhile. The mark, and whether this call applied it (False:
        a node had before)."""
        keys = [_rating_key(ident) for ident in idents]
        mark = _PREFIX + "applied:" + match
        async with self._redis.pipeline(transaction=True) as pipe:
            for _ in range(_RATING_TRIES):
                try:
                    await pipe.watch(mark, *keys)
                    done = await pipe.get(mark)
                    if done is not None:
                        await pipe.reset()
                        found = self.unpack(done, RatingsApplied, f"applied {match!r}")
                        return found or RatingsApplied(match=match), False
                    values = await pipe.mget(keys) if keys else []
                    now = {}
                    for key, data in zip(keys, values, strict=True):
                        entry = None if data is None else self.unpack(data, RatingEntry, key)
                        if entry is not None:
                            now[key[len(_PREFIX + "rating:") :]] = entry
                    applied, new = compute(now)
                    pipe.multi()
                    pipe.set(mark, self._pack(applied))
                    for ident, entry in new.items():
                        pipe.set(_rating_key(ident), self._pack(entry))
                        pipe.zadd(BOARD, {ident: entry.mu - 3 * entry.sigma})
                    await pipe.execute()
                    return applied, True
                except WatchError:
                    continue
        raise StoreUnavailable(f"the ratings of match {match} kept changing under it")

    @_guarded
    async def board(self, offset: int, limit: int) -> tuple[list[tuple[str, RatingEntry]], int]:
        """A page of the shared leaderboard, best first, and its length."""
        idents = [
            ident.decode(errors="replace")
            for ident in await self._redis.zrevrange(BOARD, offset, offset + limit - 1)
        ]
        total = int(await self._redis.zcard(BOARD))
        entries = await self.ratings(idents)
        return [(ident, entries[ident]) for ident in idents if ident in entries], total

    @_guarded
    async def board_place(self, ident: str) -> int | None:
        """An identity's place on the shared leaderboard (1 first), if on it."""
        rank = await self._redis.zrevrank(BOARD, ident)
        return None if rank is None else int(rank) + 1

    @_guarded
    async def reset_ratings(self) -> None:
        """Every shared rating starts again (the applied marks stay: nothing counts twice)."""
        async for key in self._redis.scan_iter(match=_PREFIX + "rating:*", count=1000):
            await self._redis.delete(key)
        await self._redis.delete(BOARD)

    # -- presence ---------------------------------------------------------------------------

    @_guarded
    async def set_online(
        self,
        node: str,
        online: Iterable[str],
        offline: Iterable[str],
        entered: Mapping[str, str] | None = None,
    ) -> None:
        """Mark players connected to ``node`` (telling the others, whose connections
        of these players are replaced) or gone from it, and tell the others
        which players entered which match here (``entered``: player → match)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for player in online:
                pipe.hset(ONLINE, player, node)
                pipe.publish(PRESENCE, self._pack(Presence(player=player, node=node)))
            for player in offline:
                pipe.eval(_FORGET_IF_HERE, 1, ONLINE, player, node)
            for player, match in (entered or {}).items():
                pipe.publish(PRESENCE, self._pack(Presence(player=player, node=node, match=match)))
            await pipe.execute()

    @_guarded
    async def clear_online(self, node: str) -> None:
        """Forget every player marked on ``node`` (it is starting afresh)."""
        stale = [
            player
            async for player, where in self._redis.hscan_iter(ONLINE, count=1000)
            if where.decode() == node
        ]
        if stale:
            await self._redis.hdel(ONLINE, *stale)

    @_guarded
    async def online_count(self) -> int:
        """Players marked connected somewhere (dead nodes' included until they restart)."""
        return int(await self._redis.hlen(ONLINE))

    def subscribe(self) -> Subscription:
        """A subscription to the lobby and presence channels."""
        return Subscription(self._redis)


class Subscription:
    """``async with store.subscribe() as sub: await sub.next(timeout)``."""

    def __init__(self, client: Any) -> None:
        self._pubsub: Any = client.pubsub(ignore_subscribe_messages=True)

    @_guarded
    async def __aenter__(self) -> Subscription:
        await self._pubsub.subscribe(LOBBY, PRESENCE)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self._pubsub.aclose()

    @_guarded
    async def next(self, timeout: float) -> tuple[str, bytes] | None:
        """The next ``(channel, data)``, or None if none came within ``timeout`` s."""
        message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=timeout)
        if message is None or message.get("type") != "message":
            return None
        return message["channel"].decode(), message["data"]
