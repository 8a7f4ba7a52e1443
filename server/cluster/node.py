"""This node's membership of the cluster: heartbeat, directory, presence.

A :class:`Node` keeps three background tasks:

- the **heartbeat** renews this node's key in Redis every ``heartbeat``
  seconds (it expires after three missed beats, and the others then show its
  matches as unavailable), reads which nodes are alive, and — when Redis was
  unreachable or has lost this node's key — registers the node afresh:
  its matches, its players and who is connected here are published again;
- the **publisher** sends what changed here (directory entries, who came and
  went) in batches, off every request's path: a match's change only queues;
- the **listener** follows the lobby and presence channels: other nodes'
  match updates go to this node's lobby browsers, and a player who said hello
  elsewhere loses their connections here (``4004``, as on one server). A
  message sent again (too old, or heard before: :mod:`.freshness`) is not
  acted on: one WARNING for each channel and reason, and counted in ``/healthz``.

Invariants: :attr:`entries` holds only other nodes' matches (this node's are
its lobby's matches); :attr:`live` holds only heartbeats sealed with the
cluster's key (the store opens nothing else) and not expired, so a redirect
names only a node of this cluster, at the URL that node gave; an entry in
:attr:`entries` is replaced only by a newer one of its match (by its stamp),
so an old one written or sent again does not undo it, and this node puts its
own entries in Redis right again when a full read finds them changed; nothing here is
awaited by an action, so a match plays on whatever Redis does; every failure
of Redis is :class:`StoreUnavailable`, which marks the store down until the
next beat gets through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import msgspec

import protocol as wire
from protocol import ErrorCode

from ..errors import refused
from ..identity import Player
from ..match.info import MatchInfo
from . import redirect
from .entries import DirectoryEntry, NodeInfo, PlayerEntry, Presence, Stamp
from .freshness import ReplayGuard
from .store import LOBBY, PRESENCE, Store, StoreUnavailable

__all__ = ["Node", "NodeHooks", "entry_for"]

log = logging.getLogger(__name__)

#: Beats between two full reads of the directory (pub/sub carries the changes between).
_REFRESH_EVERY = 10
#: Entries or players per pipeline when a node registers afresh.
_CHUNK = 500


class NodeHooks(Protocol):
    """What the node needs from its lobby."""

    def local_matches(self) -> Mapping[str, MatchInfo]:
        """This node's matches, by id, as each last said."""
        ...

    def known_players(self) -> Iterable[Player]:
        """Every player this node knows (to register them again after Redis lost them)."""
        ...

    def news_changed(self, match_id: str, status: str, update: bytes) -> None:
        """Another node's match changed: ``update`` is its ``match_update`` now,
        for the lobby browsers here that follow it."""
        ...

    def news_removed(self, match_id: str) -> None:
        """Another node's match left the lobby: the browsers here that follow it are told."""
        ...

    def replace_player(self, player_id: str) -> None:
        """Close this node's connections of a player who said hello on another node."""
        ...

    def leave_elsewhere(self, player_id: str, match_id: str) -> None:
        """The player entered ``match_id`` on another node: leave their seats here."""
        ...


def entry_for(info: MatchInfo, node: str) -> DirectoryEntry:
    """The directory entry of one of this node's matches."""
    return DirectoryEntry(
        match=info.id,
        node=node,
        created=info.created,
        summary=info.summary,
        homes=tuple(sorted(info.homes)),
    )


class Node:
    """One node of a cluster, as this process sees the cluster."""

    def __init__(
        self,
        store: Store,
        node_id: str,
        url: str,
        hooks: NodeHooks,
        heartbeat: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock``: Unix time, which heartbeats' expiries and messages' stamps
        are written and read in."""
        self.store = store
        self.id = node_id
        self.url = url
        #: the fingerprint of the certificate this node serves (set before start)
        self.fingerprint: str | None = None
        self.hooks = hooks
        self.heartbeat = heartbeat
        #: a node is taken for dead after three missed beats
        self.ttl = 3 * heartbeat
        self._clock = clock
        self.started = clock()
        #: whether Redis answered the last command
        self.store_ok = False
        #: other nodes' matches, by id
        self.entries: dict[str, DirectoryEntry] = {}
        #: nodes whose heartbeat is alive (this one included), by id
        self.live: dict[str, NodeInfo] = {}
        self._outbox: dict[str, DirectoryEntry] = {}
        self._published: set[str] = set()
        self._arrived: set[str] = set()
        self._departed: set[str] = set()
        self._entered: dict[str, str] = {}
        #: player ids connected here now
        self._here: set[str] = set()
        #: identities made here while Redis was away, registered when it is back
        self._unregistered: dict[str, PlayerEntry] = {}
        self._wake = asyncio.Event()
        self._resubscribe = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._beats = 0
        #: heartbeats in a row that Redis did not answer (two: the store is down)
        self._misses = 0
        #: something could not be published: register afresh at the next beat
        self._stale = False
        #: stopping: every loop ends at its next turn (see :meth:`stop`)
        self._stopping = False
        #: expired heartbeats already warned about: (node, expiry)
        self._stale_seen: set[tuple[str, float]] = set()
        self._guard = ReplayGuard(clock)
        #: messages not acted on, by "channel: why" (each warned about once)
        self.refused: Counter[str] = Counter()

    # -- life -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Register with the cluster (if Redis answers; else keep trying in the
        background) and start the heartbeat, publisher and listener."""
        try:
            await self.store.clear_online(self.id)
            await self._register()
            log.info(
                "node %s joined the cluster at %s as %s (%d nodes alive)",
                self.id,
                self.store.url,
                self.url,
                len(self.live),
            )
        except StoreUnavailable as exc:
            log.warning(
                "node %s cannot reach the cluster store %s (%s): it serves its own matches"
                " and joins the cluster when the store answers",
                self.id,
                self.store.url,
                exc,
            )
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._beat_loop(), name="cluster-heartbeat"),
            loop.create_task(self._publish_loop(), name="cluster-publisher"),
            loop.create_task(self._listen_loop(), name="cluster-listener"),
        ]

    async def stop(self, timeout: float = 2.0) -> None:
        """Stop the tasks; publish the last changes and leave (all within ``timeout`` s)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # CPython gh-86296 (fixed in 3.12): on Python 3.11, asyncio.wait_for — which
        # redis-py wraps around every command — can swallow a task's cancellation when
        # the command it waits for has just finished. A loop that lost its cancel would
        # then wait for ever; so every loop also ends once it sees _stopping, the cancel
        # is repeated, and the wait for the tasks is bounded.
        self._stopping = True
        tasks, self._tasks = self._tasks, []
        while tasks and loop.time() < deadline:
            for task in tasks:
                task.cancel()
            self._wake.set()
            self._resubscribe.set()
            _, pending = await asyncio.wait(tasks, timeout=min(0.1, deadline - loop.time()))
            tasks = list(pending)
        if tasks:
            log.warning("node %s: %d cluster tasks did not stop in time", self.id, len(tasks))
        with contextlib.suppress(StoreUnavailable, TimeoutError):
            async with asyncio.timeout_at(max(deadline, loop.time() + 0.1)):
                self._departed |= self._here
                await self._flush()
                await self.store.drop_node(self.id)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                await self.store.close()

    # -- what the lobby tells the node -------------------------------------------------------

    def publish(self, info: MatchInfo) -> None:
        """A match of this node changed: queue its entry for the directory."""
        self._outbox[info.id] = entry_for(info, self.id)
        self._wake.set()

    async def publish_now(self, info: MatchInfo) -> None:
        """Publish a match's entry before anyone is told its id (a new match:
        whoever is told it may ask another node for it at once)."""
        entry = entry_for(info, self.id)
        self._outbox.pop(info.id, None)
        try:
            await self.store.publish([entry])
            self._published.add(info.id)
        except StoreUnavailable as exc:
            log.info("could not publish match %s: %s", info.id, exc)
            self._outbox[info.id] = entry
            self._stale = True

    def connected(self, player_id: str) -> None:
        """A player said hello here."""
        self._here.add(player_id)
        self._departed.discard(player_id)
        self._arrived.add(player_id)
        self._wake.set()

    def disconnected(self, player_id: str) -> None:
        """A player's last connection here is gone."""
        self._here.discard(player_id)
        self._arrived.discard(player_id)
        self._departed.add(player_id)
        self._wake.set()

    def entered(self, player_id: str, match_id: str) -> None:
        """A player took a seat in, or began watching, a match of this node."""
        self._entered[player_id] = match_id
        self._wake.set()

    async def register_player(self, player: Player) -> None:
        """Make a new identity (or a new name) known to every node before the
        welcome; if Redis is away, it is registered when Redis is back."""
        entry = PlayerEntry(
            id=player.id,
            name=player.name,
            token_hash=player.token_hash,
            other_tokens=tuple(player.other_tokens),
        )
        try:
            await self.store.put_players([entry], overwrite=True)
        except StoreUnavailable as exc:
            log.info("player %s is registered later: %s", player.id, exc)
            self._unregistered[player.id] = entry
            self._stale = True

    async def find_player(self, token_hash: str) -> PlayerEntry | None:
        """The identity another node made for this token hash, if any; raises
        ``cluster_unavailable`` when Redis cannot be asked."""
        try:
            return await self.store.find_player(token_hash)
        except StoreUnavailable as exc:
            log.info("cannot look a token up in the cluster store: %s", exc)
            raise refused(
                ErrorCode.CLUSTER_UNAVAILABLE,
                "this node cannot check your token now (the cluster's store is unreachable);"
                " try again later",
            ) from None

    async def look_up(self, match_id: str) -> None:
        """Ask Redis for a match this node has not heard of yet (made a moment
        ago elsewhere, its update still on its way), so a join of it finds it."""
        if match_id in self.entries:
            return
        try:
            entry = await self.store.entry(match_id)
        except StoreUnavailable:
            return  # the cache answers; the heartbeat says whether Redis is down
        if entry is not None and entry.node != self.id and match_id not in self.entries:
            self.entries[match_id] = entry

    # -- what the lobby asks the node ---------------------------------------------------------

    def redirect(self, match_id: str) -> wire.ProtocolError:
        """The error for a request naming a match that is not on this node."""
        return redirect.for_match(match_id, self.entries, self.live, self.store_ok)

    def redirect_to(self, match_id: str, node_id: str) -> wire.ProtocolError:
        """The error for a request naming a match that ``node_id`` ran (a finished
        one the directory no longer lists, as its record in history says)."""
        return redirect.to_node(match_id, node_id, self.live, self.store_ok)

    def reachable(self, node_id: str) -> bool:
        """Whether a client sent to that node now would get there."""
        return self.store_ok and node_id in self.live

    def home_elsewhere(
        self, player_id: str, local_created: float | None
    ) -> wire.ProtocolError | None:
        """Where a reconnecting player must go, if their newest seat is on another
        node (newer than ``local_created``, their newest seat here)."""
        entry = redirect.home_of(player_id, self.entries.values())
        if entry is None or (local_created is not None and local_created >= entry.created):
            return None
        return redirect.to_entry(entry, self.live, self.store_ok)

    def knows(self, match_id: str) -> bool:
        """Whether another node holds a match with this id."""
        return match_id in self.entries

    def listed(self) -> list[tuple[float, wire.MatchSummary]]:
        """Other nodes' matches as the lobby lists them, with their creation times."""
        return [
            (e.created, self._shown(e))
            for e in self.entries.values()
            if not e.gone and not _tutorial(e)
        ]

    def health(self) -> dict[str, Any]:
        """This node's view of the cluster, for ``/healthz``."""
        return {
            "node": self.id,
            "url": self.url,
            "store": "ok" if self.store_ok else "unreachable",
            "nodes": {node: info.url for node, info in sorted(self.live.items())},
            "remote_matches": len(self.entries),
            "refused_messages": dict(sorted(self.refused.items())),
        }

    # -- the tasks ------------------------------------------------------------------------------

    def _info(self) -> NodeInfo:
        return NodeInfo(
            node=self.id,
            url=self.url,
            pid=os.getpid(),
            started=self.started,
            matches=len(self.hooks.local_matches()),
            connections=len(self._here),
            fingerprint=self.fingerprint,
            expires=self._clock() + self.ttl,
        )

    async def _register(self) -> None:
        """Register afresh: heartbeat, this node's directory (stale entries of it
        removed), its players, who is connected here; then read the cluster."""
        self._stale = False
        await self.store.beat(self._info(), self.ttl)
        local = dict(self.hooks.local_matches())
        directory = await self.store.directory()
        await self.store.forget_matches(
            m for m, e in directory.items() if e.node == self.id and m not in local
        )
        entries = [entry_for(info, self.id) for info in local.values()]
        for start in range(0, len(entries), _CHUNK):
            await self.store.publish(entries[start : start + _CHUNK])
        self._published = set(local)
        players = [
            PlayerEntry(p.id, p.name, p.token_hash, tuple(p.other_tokens))
            for p in self.hooks.known_players()
        ]
        for start in range(0, len(players), _CHUNK):
            await self.store.put_players(players[start : start + _CHUNK], overwrite=False)
        if self._unregistered:
            await self.store.put_players(list(self._unregistered.values()), overwrite=True)
            self._unregistered.clear()
        await self.store.clear_online(self.id)
        await self.store.set_online(self.id, sorted(self._here), ())
        self._arrived.clear()
        self._departed.clear()
        self._set_entries({m: e for m, e in directory.items() if e.node != self.id})
        self._set_live(await self.store.live_nodes())
        self._set_store(True)

    async def _beat_loop(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.heartbeat)
            self._beats += 1
            try:
                was_ok = self.store_ok
                kept = await self.store.beat(self._info(), self.ttl)
                self._misses = 0
                if not kept or not was_ok or self._stale:
                    await self._register()
                    if not kept or not was_ok:
                        log.info(
                            "cluster store %s answers: node %s registered again and published"
                            " its %d matches",
                            self.store.url,
                            self.id,
                            len(self._published),
                        )
                        self._resubscribe.set()
                    continue
                self._set_live(await self.store.live_nodes())
                if self._beats % _REFRESH_EVERY == 0:
                    directory = await self.store.directory()
                    self._set_entries({m: e for m, e in directory.items() if e.node != self.id})
                    self._repair(directory)
                self._forget_gone_matches()
            except StoreUnavailable as exc:
                self._misses += 1
                if self._misses >= 2:  # one slow answer under load is not an outage
                    self._set_store(False, exc)

    def _repair(self, directory: Mapping[str, DirectoryEntry]) -> None:
        """Put this node's entries in Redis right again where they are not what it
        published (an old one written again, one deleted, one of a match it no
        longer has): the publisher sends them again, with new stamps."""
        local = self.hooks.local_matches()
        for match_id, info in local.items():
            stored = directory.get(match_id)
            entry = entry_for(info, self.id)
            if stored is None or msgspec.structs.replace(stored, stamp=None) != entry:
                self._outbox.setdefault(match_id, entry)
        for match_id, stored in directory.items():
            if stored.node == self.id and match_id not in local and match_id not in self._published:
                self._outbox.setdefault(
                    match_id,
                    DirectoryEntry(match=match_id, node=self.id, created=0.0, summary=None),
                )
        if self._outbox:
            self._wake.set()

    def _forget_gone_matches(self) -> None:
        """Entries of matches the lobby forgot (old finished ones) leave the directory."""
        local = self.hooks.local_matches()
        for match_id in self._published - set(local):
            if match_id not in self._outbox:
                self._outbox[match_id] = DirectoryEntry(
                    match=match_id, node=self.id, created=0.0, summary=None
                )
        if self._outbox:
            self._wake.set()

    async def _publish_loop(self) -> None:
        while not self._stopping:
            await self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            try:
                await self._flush()
            except StoreUnavailable as exc:
                # Dropped: the next heartbeat registers afresh, publishing everything.
                log.info("could not publish to the cluster store: %s", exc)
                self._stale = True

    async def _flush(self) -> None:
        batch, self._outbox = self._outbox, {}
        arrived, self._arrived = self._arrived, set()
        departed, self._departed = self._departed, set()
        entered, self._entered = self._entered, {}
        if batch:
            await self.store.publish(batch.values())
            for match_id, entry in batch.items():
                if entry.gone:
                    self._published.discard(match_id)
                else:
                    self._published.add(match_id)
        if arrived or departed or entered:
            await self.store.set_online(self.id, sorted(arrived), sorted(departed), entered)

    async def _listen_loop(self) -> None:
        while not self._stopping:
            try:
                async with self.store.subscribe() as subscription:
                    self._resubscribe.clear()
                    directory = await self.store.directory()
                    self._set_entries({m: e for m, e in directory.items() if e.node != self.id})
                    while not self._resubscribe.is_set() and not self._stopping:
                        message = await subscription.next(timeout=min(1.0, self.heartbeat))
                        if message is not None:
                            self._on_message(*message)
            except StoreUnavailable as exc:
                log.debug("lobby channel lost: %s", exc)  # the heartbeat judges Redis
                await asyncio.sleep(self.heartbeat)

    def _on_message(self, channel: str, data: bytes) -> None:
        if channel == LOBBY:
            entry = self.store.unpack(data, DirectoryEntry, f"a message on {channel}")
            if entry is not None and entry.node != self.id and self._new(channel, entry.stamp):
                self._apply_entry(entry)
        elif channel == PRESENCE:
            presence = self.store.unpack(data, Presence, f"a message on {channel}")
            if presence is None or presence.node == self.id:
                return
            if not self._new(channel, presence.stamp):
                return
            if presence.match is None:
                self.hooks.replace_player(presence.player)
            else:
                self.hooks.leave_elsewhere(presence.player, presence.match)

    def _new(self, channel: str, stamp: Stamp | None) -> bool:
        """Whether a message is new, not one sent again (see :mod:`.freshness`)."""
        assert stamp is not None, "the store opens no unstamped message"
        why = self._guard.check(stamp)
        if why is None:
            return True
        kind = f"{channel}: {why}"
        self.refused[kind] += 1
        if self.refused[kind] == 1:
            log.warning(
                "ignoring a message on %s sealed by %s (%s, sent at %.0f, it is %.0f here):"
                " an old message sent again by someone who can publish on the cluster's"
                " store, or that machine's clock is off; more of the kind are only counted"
                " (/healthz refused_messages)",
                channel,
                stamp.sender,
                why,
                stamp.sent,
                self._clock(),
            )
        return False

    # -- the cache -------------------------------------------------------------------------------

    def _apply_entry(self, entry: DirectoryEntry) -> None:
        if not _newer(entry, self.entries.get(entry.match)):
            return
        if entry.gone:
            if self.entries.pop(entry.match, None) is not None:
                self._tell_removed(entry.match)
            return
        self.entries[entry.match] = entry
        self._tell(entry)

    def _set_entries(self, entries: dict[str, DirectoryEntry]) -> None:
        entries = {
            m: e if _newer(e, self.entries.get(m)) else self.entries[m] for m, e in entries.items()
        }
        changed = [e for m, e in entries.items() if self.entries.get(m) != e]
        removed = [m for m in self.entries if m not in entries]
        self.entries = entries
        for entry in changed:
            self._tell(entry)
        for match_id in removed:
            self._tell_removed(match_id)

    def _set_live(self, heard: dict[str, NodeInfo]) -> None:
        now = self._clock()
        live = {node: info for node, info in heard.items() if info.fresh_at(now)}
        for node in sorted(set(heard) - set(live)):
            # Redis drops a heartbeat when it expires: one still there is an old one
            # written again, or its machine's clock is far off.
            stale = (node, heard[node].expires)
            if stale not in self._stale_seen:
                if len(self._stale_seen) >= 1024:
                    self._stale_seen.clear()
                self._stale_seen.add(stale)
                log.warning(
                    "node %s's heartbeat in the cluster store expired at %.0f (it is %.0f"
                    " here): it is ignored (written again, or that machine's clock is off)",
                    node,
                    heard[node].expires,
                    now,
                )
        flipped = set(live) ^ set(self.live)
        for node in sorted(flipped - {self.id}):
            if node in live:
                log.info("node %s is alive at %s", node, live[node].url)
            else:
                log.warning("node %s stopped beating: its matches are unavailable", node)
        self.live = live
        for entry in self.entries.values():
            if entry.node in flipped:
                self._tell(entry)

    def _set_store(self, ok: bool, why: Exception | None = None) -> None:
        if ok == self.store_ok:
            return
        self.store_ok = ok
        if not ok:
            log.warning(
                "cannot reach the cluster store %s (%s): matches on this node go on; joining"
                " matches on other nodes is refused (cluster_unavailable) until it is back",
                self.store.url,
                why,
            )
        for entry in self.entries.values():
            self._tell(entry)

    def _shown(self, entry: DirectoryEntry) -> wire.MatchSummary:
        ok = redirect.available(entry, self.live, self.store_ok)
        summary = entry.summary
        assert summary is not None, "gone entries are never kept"
        return (
            summary if summary.available == ok else msgspec.structs.replace(summary, available=ok)
        )

    def _tell(self, entry: DirectoryEntry) -> None:
        if entry.gone or _tutorial(entry):  # a tutorial is never listed: its creator's alone
            return
        shown = self._shown(entry)
        self.hooks.news_changed(
            entry.match, shown.status, wire.encode(wire.MatchUpdate(match=shown))
        )

    def _tell_removed(self, match_id: str) -> None:
        self.hooks.news_removed(match_id)


def _tutorial(entry: DirectoryEntry) -> bool:
    """Whether the entry is a tutorial's (kept in the directory, so that its
    creator finds it from any node, but never listed)."""
    return entry.summary is not None and entry.summary.tutorial


def _newer(entry: DirectoryEntry, known: DirectoryEntry | None) -> bool:
    """Whether ``entry`` may replace ``known``, the entry of its match this node
    has (an older one, written or sent again, may not)."""
    if known is None or known.stamp is None:
        return True
    return entry.stamp is not None and entry.stamp.order > known.stamp.order
