"""The lobby of a cluster node: the one-process lobby, with the cluster hooked in.

What changes from :class:`~server.lobby.Lobby`, and nothing else:

- ``hello`` with a token another node made: the identity is fetched from
  Redis (token hash only) and stored here, so resume tokens work on every
  node; a new identity (or a new name) is registered for every node before
  the welcome; a hello here replaces the player's connections on other nodes;
- after the welcome, a player whose newest seat is on another node is sent
  there (``error`` ``elsewhere`` with the URL, without an id);
- ``join``, ``watch``, ``replay`` and ``analyse`` of a match on another node
  answer ``elsewhere`` (or ``node_unavailable``, ``cluster_unavailable``) —
  of a finished one the directory no longer lists too, when its record in
  the shared history names its node;
- ratings, ``profile`` and ``history`` read the cluster's shared ratings and
  history (:mod:`.ratings`), so every node answers the same; a match of
  another node is replayable there while that node is alive;
- wrong link codes are counted per address in the cluster's store, so an
  address is locked out on every node at once;
- at start, the players an operator removed from the cluster
  (``tulips-cluster players remove``) are removed from this node's file;
- ``list_matches`` lists the whole cluster, and lobby browsers here receive
  every node's ``match_update``s and ``match_removed``s;
- a new match is listed in the directory before its first player is told
  its id, and every change of a match is published to it (queued, never awaited).

Matches, actions and their storage are exactly the one-process lobby's.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Iterable, Mapping
from typing import Any

import protocol as wire
from protocol import CloseCode

from ..config import ServerConfig
from ..identity import Player, hash_token
from ..linking import LOCKOUT, WRONG_TRIES, normalise
from ..lobby import Lobby
from ..match import commands
from ..match.actor import MatchActor
from ..match.info import MatchInfo
from ..names import name_key
from ..operator_tools import REMOVED_TOKEN, OperatorError, remove_from
from ..peer import Peer
from ..ratings.ledger import SqlLedger
from ..storage import persist
from .naming import node_id_for, node_url
from .node import Node
from .ratings import ClusterLedger
from .store import Store, StoreUnavailable

__all__ = ["ClusterLobby"]

log = logging.getLogger(__name__)


class ClusterLobby(Lobby):
    """Every player and match of one node, and the rest of the cluster as Redis has it."""

    def __init__(self, config: ServerConfig, *args: Any, **kwargs: Any) -> None:
        """Like :class:`Lobby`; ``config.cluster`` names the Redis to share."""
        assert config.cluster is not None, "a cluster lobby needs config.cluster"
        node_id = node_id_for(config.data_dir, config.node_id)
        super().__init__(config, *args, node=node_id, **kwargs)
        assert config.cluster_key is not None, "a cluster node needs the cluster's key"
        self.node = Node(
            Store(
                config.cluster,
                config.cluster_key,
                sender=node_id,
                password=config.redis_password,
            ),
            node_id,
            node_url(
                config.host, config.port, config.public_url, secure=config.tls_cert is not None
            ),
            self,
            heartbeat=config.heartbeat,
        )
        #: the shared ratings and history (None: a node without storage keeps its own)
        self.shared: ClusterLedger | None = None
        if self.storage is not None:
            self.shared = ClusterLedger(self.node.store, SqlLedger(self.storage), node_id)
            self.ratings.ledger = self.shared
        else:
            log.warning("a cluster node without storage keeps ratings of its own, in memory")

    # -- life -----------------------------------------------------------------------------

    async def open(self) -> None:
        """Take the players the operator removed out of this node's file, rebuild
        its matches, then join the cluster (Redis may be away: the node serves
        its own matches and joins when Redis answers)."""
        await self._apply_removals()
        await super().open()
        self.node.fingerprint = self.fingerprint
        await self.node.start()

    async def close(self, timeout: float | None = None) -> None:
        """Leave the cluster (its matches stay listed, unavailable) while the
        matches finish their writes and storage closes."""
        budget = self.config.stop_timeout if timeout is None else timeout
        await asyncio.gather(self.node.stop(min(2.0, budget)), super().close(budget))

    async def _apply_removals(self) -> None:
        """Remove from this node's file the players ``tulips-cluster players
        remove`` took out of the cluster (as ``tulips-server players remove``
        would: tokens gone, name anonymised in their matches), before any of
        them is loaded."""
        if self.storage is None:
            return
        try:
            removals = await self.node.store.removals()
        except StoreUnavailable as exc:
            log.warning(
                "removed players cannot be read from the cluster store now (%s): a player"
                " removed since this node last started is removed at its next start",
                exc,
            )
            return
        if not removals:
            return
        try:
            done = await asyncio.to_thread(remove_from, self.storage.path.parent, sorted(removals))
        except (OperatorError, sqlite3.Error, OSError) as exc:
            log.error("the players removed from the cluster cannot be removed here: %s", exc)
            return
        for player in done:
            log.info("player %s was removed from the cluster: removed here too", player)

    def cluster_health(self) -> dict[str, Any]:
        """The cluster part of ``/healthz``."""
        return self.node.health()

    # -- NodeHooks ------------------------------------------------------------------------

    def local_matches(self) -> Mapping[str, MatchInfo]:
        """This node's matches, as each last said."""
        return {info.id: info for info in self.infos()}

    def known_players(self) -> Iterable[Player]:
        """Every player this node knows (and who was not removed)."""
        return (p for p in self.players if not p.token_hash.startswith(REMOVED_TOKEN))

    def replace_player(self, player_id: str) -> None:
        """The player said hello on another node: the newer connection wins."""
        player = self.players.get(player_id)
        if player is None:
            return
        for old in list(player.connections):
            if isinstance(old, Peer):
                old.close(CloseCode.REPLACED, "replaced by a newer connection on another node")

    def leave_elsewhere(self, player_id: str, match_id: str) -> None:
        """The player entered a match on another node: as ``join`` leaves one's
        current match on one server, their seats here are left."""
        player = self.players.get(player_id)
        if player is None:
            return
        person = commands.Person(player.id, player.name)
        for actor in list(self.matches.values()):
            if actor.id != match_id and player.id in actor.info.homes:
                actor.post(commands.Leave(None, person, None, answer=False))

    # -- MatchHost --------------------------------------------------------------------------

    def changed(self, info: MatchInfo) -> None:
        """As on one server, and the directory learns of it."""
        super().changed(info)
        self.node.publish(info)

    def entered(self, conn: int, match_id: str) -> None:
        """As on one server, and the cluster learns where the player is."""
        super().entered(conn, match_id)
        peer = self.peers.get(conn)
        if peer is not None and peer.player is not None and self.where.get(conn) == match_id:
            self.node.entered(peer.player.id, match_id)

    # -- connection life ----------------------------------------------------------------------

    async def hello(self, peer: Peer, message: wire.Hello, version: int) -> wire.Welcome:
        """As on one server; a token made on another node is fetched first."""
        if message.token is not None and self.players.by_token(message.token) is None:
            await self._adopt(hash_token(message.token))
        welcome = await super().hello(peer, message, version)
        player = peer.player
        assert player is not None
        await self.node.register_player(player)
        await self._claim_name(player, None)
        await self._share_since(player.id)
        self.node.connected(player.id)
        return welcome

    # -- names, linked devices and ratings, shared by every node ---------------------------

    async def name_taken(self, name: str, me: str | None) -> bool:
        """Taken here, or by a player of any node (as the cluster's store says)."""
        if await super().name_taken(name, me):
            return True
        try:
            holder = await self.node.store.name_holder(name_key(name))
        except StoreUnavailable as exc:
            log.info("names cannot be checked in the cluster now: %s", exc)
            return False
        return holder is not None and holder != me

    async def hold_name(self, name: str, player_id: str, old: str | None) -> bool:
        """Held in the cluster's store, where one node wins a name two take at
        once; while the store cannot be reached, the name is this node's to give."""
        try:
            return await self.node.store.claim_name(
                name_key(name), player_id, None if old is None else name_key(old)
            )
        except StoreUnavailable as exc:
            log.info("player %s's name is not held in the cluster now: %s", player_id, exc)
            return True

    async def _claim_name(self, player: Player, old: str | None) -> None:
        """Hold a returning player's name in the cluster's store (a name given
        before the store held names); another node's player holding it is logged."""
        if not await self.hold_name(player.name, player.id, old):
            log.warning(
                "player %s's name %r is held by another node's player", player.id, player.name
            )

    async def renamed(self, player: Player) -> None:
        """Every node learns the new name."""
        await self.node.register_player(player)

    async def whois(self, ident: str) -> tuple[str, float | None] | None:
        """Known here, or a player of another node (as the cluster's store has
        them); first seen when any node first saw them."""
        known = await super().whois(ident)
        try:
            since = await self.node.store.since(ident)
            if known is not None:
                here = known[1]
                return known[0], here if since is None else min(since, here or since)
            entry = (await self.node.store.player_entries([ident])).get(ident)
        except StoreUnavailable:
            return known
        return (entry.name, since) if entry is not None else None

    async def _share_since(self, player_id: str) -> None:
        """Tell the cluster when this node first saw the player (it keeps the earliest)."""
        known = await super().whois(player_id)
        if known is None or known[1] is None:
            return
        try:
            await self.node.store.seen_since(player_id, known[1])
        except StoreUnavailable as exc:
            log.info("when player %s was first seen is not shared now: %s", player_id, exc)

    async def issue_link(self, player_id: str) -> tuple[str, float] | None:
        """A code any node of the cluster takes (kept in its store)."""
        issued = self.link_codes.issue(player_id)
        if issued is None:
            return None
        code, ttl = issued
        try:
            await self.node.store.put_link(normalise(code), player_id, ttl)
        except StoreUnavailable as exc:
            log.info("a link code is good on this node only: %s", exc)
        return issued

    async def redeem_link(self, code: str, address: str) -> str | None:
        """A code from any node: this node's, or the cluster store's; a wrong
        one counts against the address on every node."""
        here = self.link_codes.redeem(code, address, count=False)
        try:
            there = await self.node.store.take_link(normalise(code))
        except StoreUnavailable as exc:
            log.info("link codes of other nodes cannot be checked now: %s", exc)
            there = None
        if here is None and there is None:
            try:
                await self.node.store.link_failed(address, WRONG_TRIES, LOCKOUT)
            except StoreUnavailable:  # counted here, until the store is back
                self.link_codes.failed(address)
        return here or there

    async def link_locked(self, address: str) -> float:
        """Locked out on any node (as the cluster's store counts), or here
        (wrong codes counted while the store was away)."""
        here = self.link_codes.locked(address)
        try:
            there = await self.node.store.link_locked(address)
        except StoreUnavailable:
            there = 0.0
        return max(here, there)

    async def linked(self, player: Player, token_hash: str) -> None:
        """Every node learns the new device's token."""
        await self.node.register_player(player)

    async def _stored_by_id(self, player_id: str) -> Player | None:
        """Here, or a player another node made (stored here from now on)."""
        player = await super()._stored_by_id(player_id)
        if player is not None:
            return player
        try:
            entry = (await self.node.store.player_entries([player_id])).get(player_id)
        except StoreUnavailable:
            return None
        if entry is None:
            return None
        player = Player(id=entry.id, name=entry.name, token_hash=entry.token_hash)
        player.other_tokens = list(entry.other_tokens)
        self.players.add(player)
        if self.storage is not None:
            await persist.store_player(self.storage, self.players, player, new=True)
            for digest in entry.other_tokens:
                await self.storage.add_token(player.id, digest, time.time())
        return player

    async def _adopt(self, token_hash: str) -> None:
        """Make a player another node knows a player of this node (stored here,
        as the seats of this node's matches must be)."""
        entry = await self.node.find_player(token_hash)
        if entry is None or self.players.get(entry.id) is not None:
            return  # unknown everywhere: hello answers bad_token
        player = Player(id=entry.id, name=entry.name, token_hash=entry.token_hash)
        player.other_tokens = list(entry.other_tokens)
        self.players.add(player)
        if self.storage is not None:
            await persist.store_player(self.storage, self.players, player, new=True)
            for digest in entry.other_tokens:
                await self.storage.add_token(player.id, digest, time.time())

    async def after_welcome(self, peer: Peer) -> None:
        """Put a returning player back in their newest seat — or send them to
        the node where it is."""
        player = peer.player
        assert player is not None
        local = self.home_of(player)
        elsewhere = self.node.home_elsewhere(player.id, local.info.created if local else None)
        if elsewhere is not None:
            peer.send(wire.encode(wire.error_message_for(elsewhere)))
            return
        await super().after_welcome(peer)

    def disconnect(self, peer: Peer) -> None:
        """As on one server; the cluster learns the player left this node."""
        super().disconnect(peer)
        player = peer.player
        if player is not None and not player.connections:
            self.node.disconnected(player.id)

    # -- requests -------------------------------------------------------------------------------

    async def dispatch(self, peer: Peer, message: wire.ClientMessage) -> None:
        """As on one server; a match named that no node has told this one of yet
        is looked up in Redis first."""
        named = (
            message.match
            if isinstance(message, wire.Join | wire.Watch | wire.Replay | wire.Analyse)
            else None
        )
        if named is not None and named not in self.matches:
            await self.node.look_up(named)
            if (
                isinstance(message, wire.Replay | wire.Analyse)
                and not self.node.knows(named)
                and self.shared is not None
            ):
                await self.shared.look_up(named)  # a finished match of another node?
        await super().dispatch(peer, message)

    async def before_open(self, actor: MatchActor) -> None:
        """Listed everywhere before its id is known."""
        await self.node.publish_now(actor.info)

    def _find(self, match_id: str) -> MatchActor:
        """This node's match; or the node that holds it, as the directory says,
        or — a finished match it no longer lists — as its record in history says."""
        if match_id in self.matches:
            return super()._find(match_id)
        if self.node.knows(match_id) or not self.node.store_ok:
            raise self.node.redirect(match_id)
        played_on = self.shared.played_on(match_id) if self.shared is not None else None
        if played_on is not None and played_on != self.node.id:
            raise self.node.redirect_to(match_id, played_on)
        return super()._find(match_id)

    def replayable(self, match_id: str) -> bool:
        """Kept here, or by the node that ran it while that node is alive."""
        if super().replayable(match_id):
            return True
        entry = self.node.entries.get(match_id)
        node = entry.node if entry is not None else None
        if node is None and self.shared is not None:
            node = self.shared.played_on(match_id)
        return node is not None and node != self.node.id and self.node.reachable(node)

    def list_matches(self, peer: Peer, message: wire.ListMatches) -> None:
        """Every node's matches, newest first (this node's as they are now)."""
        listed = [(info.created, info.summary) for info in self.listed()]
        self._browse(peer, message, listed + self.node.listed())

    def _new_id(self) -> str:
        while True:
            match_id = super()._new_id()
            if not self.node.knows(match_id):
                return match_id
