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
===================  ======  ==================================================

Channels: ``tulips:lobby`` carries directory entries as they change (the
``match_update``s of every node), ``tulips:presence`` carries
:class:`Presence` (a player said hello somewhere).

Commands fail fast: two seconds at most each (plus the wait for one of at
most 32 connections), no retries: a node goes on without Redis and catches
up when it is back.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, ParamSpec, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from .entries import DirectoryEntry, EntryError, NodeInfo, PlayerEntry, Presence, decode, encode

__all__ = ["LOBBY", "PRESENCE", "Store", "StoreUnavailable", "Subscription"]

log = logging.getLogger(__name__)

_PREFIX = "tulips:"
NODES = _PREFIX + "nodes"
DIRECTORY = _PREFIX + "directory"
PLAYERS = _PREFIX + "players"
TOKENS = _PREFIX + "tokens"
ONLINE = _PREFIX + "online"
LOBBY = _PREFIX + "lobby"
PRESENCE = _PREFIX + "presence"

#: HDEL the player from ``online`` only if it is still marked on this node
#: (a newer hello on another node has moved them there meanwhile).
_FORGET_IF_HERE = (
    "if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then "
    "return redis.call('hdel', KEYS[1], ARGV[1]) end return 0"
)

_P = ParamSpec("_P")
_R = TypeVar("_R")


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

    def __init__(self, url: str, timeout: float = 2.0, max_connections: int = 32) -> None:
        self.url = url
        # A bounded pool that makes a command wait for a connection (rather than
        # fail) when many hellos and joins ask at once. RESP2: on RESP3, redis-py 8
        # turns on maintenance notifications and then skips its check that a pooled
        # connection is still open, so the first command after a Redis restart
        # would go to a dead socket and fail.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=timeout * 2,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            protocol=2,
        )
        self._redis: Any = aioredis.Redis(connection_pool=pool)

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
            pipe.set(key, encode(info), px=max(1, int(ttl * 1000)))
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
            try:
                live[node] = decode(data, NodeInfo)
            except EntryError as exc:
                log.warning("node %s's heartbeat is unreadable: %s", node, exc)
        return live

    # -- the match directory ------------------------------------------------------------

    @_guarded
    async def publish(self, entries: Iterable[DirectoryEntry]) -> None:
        """Write each entry to the directory (or remove a gone one) and tell every node."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for entry in entries:
                data = encode(entry)
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
            try:
                entries[match.decode()] = decode(data, DirectoryEntry)
            except EntryError as exc:
                log.warning("directory entry %r is unreadable: %s", match, exc)
        return entries

    @_guarded
    async def entry(self, match: str) -> DirectoryEntry | None:
        """One match's entry, if the directory has a readable one."""
        data = await self._redis.hget(DIRECTORY, match)
        if data is None:
            return None
        try:
            return decode(data, DirectoryEntry)
        except EntryError as exc:
            log.warning("directory entry %r is unreadable: %s", match, exc)
            return None

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
                    pipe.hset(PLAYERS, player.id, encode(player))
                    pipe.hset(TOKENS, player.token_hash, player.id)
                else:
                    pipe.hsetnx(PLAYERS, player.id, encode(player))
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
        try:
            entry = decode(data, PlayerEntry)
        except EntryError as exc:
            log.warning("player %r is unreadable: %s", player_id, exc)
            return None
        return entry if entry.token_hash == token_hash else None

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
                pipe.publish(PRESENCE, encode(Presence(player=player, node=node)))
            for player in offline:
                pipe.eval(_FORGET_IF_HERE, 1, ONLINE, player, node)
            for player, match in (entered or {}).items():
                pipe.publish(PRESENCE, encode(Presence(player=player, node=node, match=match)))
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
