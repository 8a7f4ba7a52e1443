"""Every Redis command the cluster sends, in one place.

This is the only module that imports ``redis`` (redis-py's asyncio client),
and it is imported only when the server runs with ``--cluster``. Whatever
Redis or the network raises comes out as :class:`StoreUnavailable`, so the
rest of the cluster code has one failure to handle: the store is not there now.

Keys (all under ``tulips:``):

=======================  ======  ==============================================
``nodes``                set     every node id that ever registered
``node:<id>``            string  a :class:`NodeInfo`, with a time to live (heartbeat)
``directory``            hash    match id → :class:`DirectoryEntry`
``players``              hash    player id → :class:`PlayerEntry` (token hash only)
``tokens``               hash    token hash → player id
``online``               hash    player id → the node the player is connected to
``rating:<id>``          string  a :class:`RatingEntry` (a player's, or ``bot_<strength>``)
``board``                zset    rating id → ordinal (μ − 3σ): the leaderboard
``applied:<match>``      string  :class:`RatingsApplied`: the match's result counted,
                                 once, with its :class:`ResultRecord` for history
``results``              zset    match id → its cursor: every applied result, in order
``results:seq``          string  the last cursor given (1, 2, 3, … in the order applied)
``history:<id>``         zset    match id → cursor: the identity's finished matches
``totals:<id>``          string  a :class:`TotalsEntry`: the identity's matches, wins, points
``since``                hash    player id → when any node first saw them (Unix time)
``names``                hash    a name's key (casefold) → the player id that holds it
``link:<code>``          string  the player a one-time link code names, with a time to live
``linkfails:<address>``  string  wrong link codes from an address (a pseudonym of
                                 it), each within the lockout of the one before
``linklock:<address>``   string  the address is locked out, until it expires
``removed``              hash    player id → :class:`Removal`: removed by the operator
=======================  ======  ==============================================

Ratings change in one transaction with the mark that a match was applied
(``WATCH`` the mark, the ratings and the totals, read, ``MULTI``/``EXEC``; a
change by another node meanwhile makes it read again), so two nodes ending
matches of one player at once lose no update, and no match counts twice. The
same transaction writes the match's record, its identities' totals and its
place in their histories (a cursor drawn from ``results:seq`` inside it), so
history, totals and ratings agree on every node, whichever node applied it.
A bot strength's history keeps its latest matches only (it is every bot
match of the cluster); a person's keeps all of theirs, as the totals count all.

Channels: ``tulips:lobby`` carries directory entries as they change (the
``match_update``s of every node), ``tulips:presence`` carries
:class:`Presence` (a player said hello somewhere).

Every value above but the plain strings and numbers (``tokens``, ``online``,
``names``, ``since``, ``link:``, the sorted sets, the link-code counters and
locks, ``results:seq``: they name a player, a node or a match, or count) and
every message is sealed with the cluster's key
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
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, ParamSpec, TypeVar
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
    Removal,
    TotalsEntry,
    decode,
    encode,
)
from .freshness import Stamper
from .signing import BadSeal, Sealer

__all__ = [
    "LOBBY",
    "PRESENCE",
    "ResultWrite",
    "Store",
    "StoreUnavailable",
    "Subscription",
    "shown_url",
]

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
RESULTS = _PREFIX + "results"
SEQUENCE = _PREFIX + "results:seq"
REMOVED = _PREFIX + "removed"
SINCE = _PREFIX + "since"
#: tries of a ratings transaction that other nodes' changes keep interrupting
_RATING_TRIES = 100

#: HDEL the player from ``online`` only if it is still marked on this node
#: (a newer hello on another node has moved them there meanwhile).
_FORGET_IF_HERE = (
    "if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then "
    "return redis.call('hdel', KEYS[1], ARGV[1]) end return 0"
)

#: Draw the next cursor and file the match under it in ``results`` and each
#: identity's history (KEYS: the sequence, ``results``, the histories; ARGV: the match).
_FILE_RESULT = (
    "local c = redis.call('incr', KEYS[1]) "
    "for i = 2, #KEYS do redis.call('zadd', KEYS[i], c, ARGV[1]) end return c"
)

#: One wrong link code from an address (KEYS: its count, its lockout; ARGV:
#: tries, milliseconds): the count lives as long as the lockout would, and at
#: the last try it becomes the lockout.
_LINK_FAILED = (
    "local n = redis.call('incr', KEYS[1]) redis.call('pexpire', KEYS[1], ARGV[2]) "
    "if n >= tonumber(ARGV[1]) then redis.call('del', KEYS[1]) "
    "redis.call('set', KEYS[2], '1', 'px', ARGV[2]) end return n"
)

#: Every rating on the board and the board itself, in one step (KEYS: the
#: board; ARGV: the rating keys' prefix): a node's ratings transaction that
#: read one of them reads again.
_RESET_RATINGS = (
    "local ids = redis.call('zrange', KEYS[1], 0, -1) "
    "for _, id in ipairs(ids) do redis.call('del', ARGV[1] .. id) end "
    "redis.call('del', KEYS[1]) return #ids"
)

#: Keep the earliest time a player was first seen (KEYS: the hash; ARGV: player, time).
_EARLIEST = (
    "local c = redis.call('hget', KEYS[1], ARGV[1]) "
    "if not c or tonumber(ARGV[2]) < tonumber(c) then "
    "redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end return 0"
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
    TotalsEntry: "totals",
    Removal: "removal",
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


def _applied_key(match: str) -> str:
    return _PREFIX + "applied:" + match


def _totals_key(ident: str) -> str:
    return _PREFIX + "totals:" + ident


def _history_key(ident: str) -> str:
    return _PREFIX + "history:" + ident


class ResultWrite(NamedTuple):
    """What applying a result writes: its mark (with its record), the new
    ratings of the identities it rates, and the new totals of every identity
    that held a seat (each of which lists the match in its history)."""

    mark: RatingsApplied
    ratings: dict[str, RatingEntry]
    totals: dict[str, TotalsEntry]


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

    @_guarded
    async def seen_since(self, player: str, when: float) -> None:
        """A node first saw the player at ``when``: the cluster keeps the earliest."""
        await self._redis.eval(_EARLIEST, 1, SINCE, player, repr(float(when)))

    @_guarded
    async def since(self, player: str) -> float | None:
        """When any node first saw the player, if one said."""
        value = await self._redis.hget(SINCE, player)
        try:
            return None if value is None else float(value)
        except ValueError:
            return None

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

    # -- ratings and history ---------------------------------------------------------------

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
    async def apply_result(
        self,
        match: str,
        idents: Sequence[str],
        compute: Callable[[dict[str, RatingEntry], dict[str, TotalsEntry]], ResultWrite],
        kept: Mapping[str, int] | None = None,
    ) -> tuple[RatingsApplied, bool]:
        """Apply a match's result once: ``compute`` gets the ratings and totals
        of ``idents`` now and says what to write (:class:`ResultWrite`); it is
        written in one transaction with the match's mark, and the match is
        filed in ``results`` and in the history of every identity with new
        totals (keeping the latest ``kept[ident]`` of those named there); read
        again if another node changed any of it meanwhile. The mark, and
        whether this call applied it (False: a node had before)."""
        rating_keys = [_rating_key(ident) for ident in idents]
        totals_keys = [_totals_key(ident) for ident in idents]
        mark = _applied_key(match)
        async with self._redis.pipeline(transaction=True) as pipe:
            for _ in range(_RATING_TRIES):
                try:
                    await pipe.watch(mark, *rating_keys, *totals_keys)
                    done = await pipe.get(mark)
                    if done is not None:
                        await pipe.reset()
                        found = self.unpack(done, RatingsApplied, f"applied {match!r}")
                        return found or RatingsApplied(match=match), False
                    values = await pipe.mget(rating_keys + totals_keys) if idents else []
                    ratings, totals = self._read_now(idents, values)
                    write = compute(ratings, totals)
                    pipe.multi()
                    pipe.set(mark, self._pack(write.mark))
                    for ident, entry in write.ratings.items():
                        pipe.set(_rating_key(ident), self._pack(entry))
                        pipe.zadd(BOARD, {ident: entry.mu - 3 * entry.sigma})
                    for ident, sums in write.totals.items():
                        pipe.set(_totals_key(ident), self._pack(sums))
                    listed = sorted(write.totals)
                    histories = [_history_key(ident) for ident in listed]
                    keys = [SEQUENCE, RESULTS, *histories]
                    pipe.eval(_FILE_RESULT, len(keys), *keys, match)
                    for ident in listed:
                        if kept and ident in kept:
                            pipe.zremrangebyrank(_history_key(ident), 0, -kept[ident] - 1)
                    await pipe.execute()
                    return write.mark, True
                except WatchError:
                    continue
        raise StoreUnavailable(f"the ratings of match {match} kept changing under it")

    def _read_now(
        self, idents: Sequence[str], values: Sequence[bytes | None]
    ) -> tuple[dict[str, RatingEntry], dict[str, TotalsEntry]]:
        """The ratings and totals among ``values`` (read for ``idents``, in that order)."""
        ratings: dict[str, RatingEntry] = {}
        totals: dict[str, TotalsEntry] = {}
        for ident, data in zip(idents, values[: len(idents)], strict=True):
            rating = None if data is None else self.unpack(data, RatingEntry, f"rating {ident!r}")
            if rating is not None:
                ratings[ident] = rating
        for ident, data in zip(idents, values[len(idents) :], strict=True):
            sums = None if data is None else self.unpack(data, TotalsEntry, f"totals {ident!r}")
            if sums is not None:
                totals[ident] = sums
        return ratings, totals

    @_guarded
    async def result(self, match: str) -> RatingsApplied | None:
        """A match's mark, if its result was applied (and the mark is readable)."""
        data = await self._redis.get(_applied_key(match))
        return None if data is None else self._mark(match, data)

    def _mark(self, match: str, data: bytes) -> RatingsApplied | None:
        where = f"applied {match!r}"
        mark = self.unpack(data, RatingsApplied, where)
        if mark is not None and mark.match != match:
            self._warn_once(where, data, f"it is match {mark.match!r}'s")
            return None
        return mark

    async def _marks(
        self, filed: Sequence[tuple[bytes, float]]
    ) -> list[tuple[int, RatingsApplied]]:
        """The marks of matches filed under these cursors, with their cursors
        (unreadable ones, and those without a record, are left out)."""
        matches = [match.decode(errors="replace") for match, _ in filed]
        if not matches:
            return []
        values = await self._redis.mget([_applied_key(match) for match in matches])
        found = []
        for (_, cursor), match, data in zip(filed, matches, values, strict=True):
            mark = None if data is None else self._mark(match, data)
            if mark is not None and mark.record is not None:
                found.append((int(cursor), mark))
        return found

    @_guarded
    async def history(
        self, ident: str, before: int | None, limit: int
    ) -> list[tuple[int, RatingsApplied]]:
        """The identity's finished matches, latest first, with cursors below ``before``."""
        top = "+inf" if before is None else f"({before}"
        filed = await self._redis.zrevrangebyscore(
            _history_key(ident), top, "-inf", start=0, num=limit, withscores=True
        )
        return await self._marks(filed)

    @_guarded
    async def results(
        self, offset: int, limit: int
    ) -> tuple[list[tuple[int, RatingsApplied]], int]:
        """A page of every applied result with a record, in the order applied,
        and how many the page held (unreadable ones included: page on while
        that is ``limit``)."""
        filed = await self._redis.zrange(RESULTS, offset, offset + limit - 1, withscores=True)
        return await self._marks(filed), len(filed)

    @_guarded
    async def whole_history(self, ident: str) -> list[tuple[int, RatingsApplied]]:
        """Every match the identity's history lists, oldest first."""
        filed = await self._redis.zrange(_history_key(ident), 0, -1, withscores=True)
        found = []
        for start in range(0, len(filed), 500):
            found += await self._marks(filed[start : start + 500])
        return found

    @_guarded
    async def totals(self, ident: str) -> TotalsEntry | None:
        """The identity's totals, if it finished a match."""
        data = await self._redis.get(_totals_key(ident))
        return None if data is None else self.unpack(data, TotalsEntry, f"totals {ident!r}")

    @_guarded
    async def rewrite_results(self, marks: Iterable[RatingsApplied]) -> None:
        """Write marks again, changed (a removed player's seats anonymised)."""
        async with self._redis.pipeline(transaction=True) as pipe:
            for mark in marks:
                pipe.set(_applied_key(mark.match), self._pack(mark))
            await pipe.execute()

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
    async def reset_ratings(self) -> int:
        """Every shared rating starts again, at once (the applied marks, the
        records and the totals stay: nothing counts twice, history keeps the
        changes it shows); how many there were. A node applying a result
        meanwhile reads the ratings again, so none is made of old ones."""
        return int(await self._redis.eval(_RESET_RATINGS, 1, BOARD, _PREFIX + "rating:"))

    # -- removed players ---------------------------------------------------------------------

    @_guarded
    async def remove_player(self, player: str, when: float) -> None:
        """Take a player out of everything the nodes share: identity, tokens,
        names, presence, link codes, rating, board place, history and totals;
        and note the removal, for every node to apply to its file when it starts.
        (Their seats in the records are the caller's to anonymise, first.)"""
        name = player.encode()
        tokens = [t async for t, p in self._redis.hscan_iter(TOKENS, count=1000) if p == name]
        names = [k async for k, p in self._redis.hscan_iter(NAMES, count=1000) if p == name]
        codes = [k async for k in self._redis.scan_iter(match=_PREFIX + "link:*", count=1000)]
        holders = await self._redis.mget(codes) if codes else []
        links = [code for code, holder in zip(codes, holders, strict=True) if holder == name]
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(PLAYERS, player)
            if tokens:
                pipe.hdel(TOKENS, *tokens)
            if names:
                pipe.hdel(NAMES, *names)
            if links:
                pipe.delete(*links)
            pipe.hdel(ONLINE, player)
            pipe.hdel(SINCE, player)
            pipe.delete(_rating_key(player), _history_key(player), _totals_key(player))
            pipe.zrem(BOARD, player)
            pipe.hset(REMOVED, player, self._pack(Removal(player=player, removed=when)))
            await pipe.execute()

    @_guarded
    async def removals(self) -> dict[str, Removal]:
        """Every player the operator removed, by id."""
        found = {}
        for player, data in (await self._redis.hgetall(REMOVED)).items():
            ident = player.decode(errors="replace")
            removal = self.unpack(data, Removal, f"removal of {ident!r}")
            if removal is not None and removal.player == ident:
                found[ident] = removal
        return found

    # -- link-code guessing --------------------------------------------------------------------

    def _link_keys(self, address: str) -> tuple[str, str]:
        alias = self._sealer.pseudonym("address", address)
        return _PREFIX + "linkfails:" + alias, _PREFIX + "linklock:" + alias

    @_guarded
    async def link_failed(self, address: str, tries: int, seconds: float) -> None:
        """Count a wrong link code from ``address``, cluster-wide: at the
        ``tries``-th in a row (each within ``seconds`` of the one before) the
        address is locked out for ``seconds``."""
        fails, lock = self._link_keys(address)
        await self._redis.eval(_LINK_FAILED, 2, fails, lock, tries, max(1, round(seconds * 1000)))

    @_guarded
    async def link_locked(self, address: str) -> float:
        """Seconds ``address`` may try no link code on any node (0: it may)."""
        left = int(await self._redis.pttl(self._link_keys(address)[1]))
        return left / 1000 if left > 0 else 0.0

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
