"""The lobby: players, the directory of matches, and where each request goes.

Each match is an actor (:class:`~server.match.actor.MatchActor`) that owns it;
the lobby never changes a match, it hands the match a command and the match
answers. What the lobby knows of a match is the :class:`~server.match.info.MatchInfo`
the match last handed out, and which match a connection is in is what the
matches said (:meth:`Lobby.entered`, :meth:`Lobby.exited`): one writer each.

:meth:`Lobby.dispatch` is the one place that answers a request the lobby
refuses itself; :func:`~server.errors.error_for` the one place that turns
what was raised into a wire error. A match answers its own requests.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import math
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

import protocol as wire
from engine import Ruleset
from protocol import ErrorCode

from .analyses.report import analysis_message
from .analyses.service import Analyst, PoolBackend
from .analyses.store import MemoryAnalyses, SqlAnalyses
from .archive import Archive, ArchivedMatch
from .config import ServerConfig
from .errors import error_for, refused
from .identity import Player, Players, hash_token
from .linking import LinkCodes
from .lobbynews import LobbyNews
from .match import commands
from .match.actor import MatchActor
from .match.bots import Bot
from .match.commitment import new_salt
from .match.core import CoreConfig, MatchCore, MatchFactory, deal_match
from .match.info import MatchInfo, Status
from .match.outputs import AnalysisOrder, Output, Rematch, Reply
from .match.results import MatchResult
from .match.seats import Seat
from .match.settings import MatchSettings
from .match.thinker import Thinker
from .match.tutorial import TUTORIAL_FIRST_SEAT, TUTORIAL_SEED, check_tutorial
from .match.views import action_from_wire, match_removed_frame
from .names import name_key, numbered, variants
from .operator_tools import REMOVED_TOKEN
from .peer import Peer
from .ratelimit import Lockout
from .ratings import cards
from .ratings.book import RatingsBook
from .ratings.ledger import Change, Ledger, MemoryLedger, SqlLedger
from .ratings.model import STRENGTH_OF, default_rated
from .rulesets import offered, ruleset_info
from .storage import Storage, StorageError, persist

__all__ = ["Lobby"]

log = logging.getLogger(__name__)

#: With storage, players no longer needed in memory are evicted in batches: when
#: this many are waiting, or this many seconds after the first of them.
_EVICT_BATCH = 256
_EVICT_DELAY = 1.0
#: Stored players looked at per round when forgetting the unused.
_FORGET_PAGE = 2000
#: Names a new player tries to hold before keeping the last (a cluster's nodes
#: taking the same names at the same moment, again and again).
_NAME_CLAIMS = 5


def _secret_seed() -> int:
    """A deal seed nobody can guess (R26)."""
    return secrets.randbits(63)


class Lobby:
    """Every player, connection and match of one server."""

    def __init__(
        self,
        config: ServerConfig,
        rulesets: dict[str, Ruleset] | None = None,
        *,
        match_factory: MatchFactory = deal_match,
        new_id: Callable[[], str] | None = None,
        storage: Storage | None = None,
        node: str | None = None,
    ) -> None:
        """``match_factory`` and ``new_id`` let tests choose deals and match ids;
        without ``storage`` nothing outlives the process; ``node`` is the
        cluster node's id that every match's summary names."""
        self.config = config
        self.storage = storage
        #: where each match's deal seed comes from: a secret one (R26); the lab's
        #: fixed-script benchmark (server/lab/budget.py) deals from a known sequence
        self.new_seed: Callable[[], int] = _secret_seed
        self.thinker = Thinker(config.bot_think_ms)
        #: the one owner of post-game analyses (computed in workers of their own)
        self.analyst = Analyst(
            SqlAnalyses(storage) if storage is not None else MemoryAnalyses(),
            PoolBackend(config.max_analyses),
            deals=config.analysis_deals,
            max_running=config.max_analyses,
            max_queued=config.analysis_queue,
            per_player=config.analyses_per_player,
        )
        #: analyses being waited for on behalf of a connection
        self._analysing: set[asyncio.Task[None]] = set()
        self._make_id = new_id
        self.players = Players()
        #: with storage: players who may no longer be needed in memory, and when they go
        self._idle: set[Player] = set()
        self._evict_at: asyncio.TimerHandle | None = None
        #: held while a page of stored players is being forgotten (a hello waits
        #: for it rather than bring back a player about to be deleted)
        self._forgetting = asyncio.Lock()
        #: every match in memory, by id: its actor
        self.matches: dict[str, MatchActor] = {}
        #: every connection past hello, by its number
        self.peers: dict[int, Peer] = {}
        #: which match each connection is in, as the matches said
        self.where: dict[int, str] = {}
        #: each connection's player as the matches know them
        self._people: dict[int, commands.Person] = {}
        self._present: collections.Counter[str] = collections.Counter()
        #: the matches the lobby has shown (a new match is shown once it is on disk)
        self._announced: set[str] = set()
        #: the fingerprint of the certificate the server serves (None: plain ws://),
        #: told by the server before :meth:`open`; a cluster node vouches with it
        self.fingerprint: str | None = None
        self.rulesets = rulesets or offered(config.rulesets)
        #: what welcome tells every client of them
        self.ruleset_infos = tuple(
            ruleset_info(rules, name) for name, rules in self.rulesets.items()
        )
        #: connections that asked for the match list; those in no match get every update
        #: which matches each lobby browser follows, and what it is told of them when
        self._news = LobbyNews(self._tell_browser, self._call_later)
        #: wrong join codes, by (address, match)
        self._code_tries = Lockout(config.join_code_tries, config.join_code_lockout)
        self.core_config = CoreConfig(
            bot_secret=secrets.token_bytes(32),
            grace_period=config.grace_period,
            bot_delay=config.bot_delay,
            match_factory=match_factory,
            node=node,
            durable=storage is not None,
        )
        #: finished matches no longer in memory, revived from storage for a
        #: replay or an analysis (never listed, never counted, never stored)
        self.archive = Archive(
            storage, self.players, self.core_config, self.deliver, size=config.keep_revived
        )
        self._halted = False
        self._stopping: set[asyncio.Task[None]] = set()
        #: the one owner of the ratings: finished matches' results, applied in order
        self.ratings = RatingsBook(self._ledger(), self._announce_ratings)
        #: while :meth:`open` restores matches: the finished ones' results, put in order
        self._restored_results: list[MatchResult] | None = None
        #: one-time codes that link another device to a player
        self.link_codes = LinkCodes()

    def _ledger(self) -> Ledger:
        """Where ratings are kept: SQLite beside the matches, or memory."""
        if self.storage is not None:
            return SqlLedger(self.storage)
        return MemoryLedger(lambda ident: p.name if (p := self.players.get(ident)) else None)

    # -- life -----------------------------------------------------------------------------

    async def open(self) -> None:
        """Open storage and rebuild every stored match (raises StorageError if unusable)."""
        if self.storage is None:
            return
        storage = self.storage
        storage.open()
        finished = storage.matches(["finished"], limit=self.config.keep_finished)
        live = storage.matches(["open", "running"])
        for row in [*reversed(finished), *reversed(live)]:
            if row.status == "open" and not any(seat.player for seat in row.seats):
                # nobody holds a seat in it: nobody is coming back to it
                storage.forget_open_match(row.id).add_done_callback(_log_failure)
                continue
            people = persist.load_named_players(row, storage, self.players)
            try:
                core = persist.restore_match(row, storage, people, self.core_config)
            except StorageError as exc:
                log.error(
                    "match %s cannot be rebuilt and is left out (left on disk): %s", row.id, exc
                )
                continue
            self._add(core)
        self.players.evict(list(self.players), self._named())  # of unrebuilt rows
        self._restored_results = []
        for actor in list(self.matches.values()):  # an open one may go at once
            actor.post(commands.Resume())
        await asyncio.gather(*(actor.settled() for actor in list(self.matches.values())))
        restored, self._restored_results = self._restored_results, None
        # a result not applied yet (a crash between a match's end and its ratings)
        # is applied now, once, in the order the matches finished
        for result in sorted(restored, key=lambda r: (r.finished, r.match)):
            if not self.ratings.ledger.applied(result.match):
                self.ratings.submit(result)
        log.info(
            "storage %s: %d matches (%d running) restored, naming %d players",
            storage.path,
            len(self.matches),
            self.running_count(),
            len(self.players),
        )

    def halt(self) -> None:
        """Stopping: no more requests, and every match stops its timers and bots
        once it has carried out what it was already given."""
        self._halted = True
        for actor in self.matches.values():
            actor.halt()
        self.thinker.close()
        if self._evict_at is not None:
            self._evict_at.cancel()
            self._evict_at = None
        self._news.close()

    async def settle(self, timeout: float) -> list[str]:
        """Wait (at most ``timeout`` s) until every match has carried out what
        it was given, its stores included; the matches still busy then."""
        actors = list(self.matches.values())
        waits = [asyncio.ensure_future(actor.settled()) for actor in actors]
        if waits:
            _, pending = await asyncio.wait(waits, timeout=timeout)
            for wait in pending:
                wait.cancel()
        return [actor.id for actor in actors if not actor.idle]

    async def close(self, timeout: float | None = None) -> None:
        """Halt, let every match finish its stores and storage its writes (for
        at most ``timeout`` s, by default ``config.stop_timeout``), stop the
        matches and close storage."""
        budget = self.config.stop_timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        self.halt()
        busy = await self.settle(budget)
        if busy:
            log.error("matches %s were still waiting for the disk", ", ".join(busy))
        await asyncio.gather(*(actor.stop() for actor in list(self.matches.values())))
        if not self.ratings.idle:  # results not applied by then are applied at the next start
            try:
                await asyncio.wait_for(
                    self.ratings.settled(), max(0.0, deadline - time.monotonic())
                )
            except TimeoutError:
                log.warning("ratings of finished matches are left to apply at the next start")
        await self.ratings.close()
        for task in list(self._analysing):
            task.cancel()
        await self.analyst.close()
        if self._stopping:
            await asyncio.gather(*self._stopping, return_exceptions=True)
        if self.storage is not None:
            await self.storage.aclose(max(0.0, deadline - time.monotonic()))

    # -- what the lobby knows of its matches ----------------------------------------------

    def running_count(self) -> int:
        """Matches being played now."""
        return sum(a.info.status is Status.RUNNING for a in self.matches.values())

    def infos(self) -> list[MatchInfo]:
        """Every match the lobby shows, as each last said."""
        shown = self._announced
        return [actor.info for actor in self.matches.values() if actor.id in shown]

    def listed(self) -> list[MatchInfo]:
        """The matches ``list_matches`` shows: every one but the tutorials (their
        creators' alone)."""
        return [info for info in self.infos() if not info.settings.tutorial]

    def home_of(self, player: Player) -> MatchActor | None:
        """The newest match in which ``player`` holds a seat they have not left:
        where a reconnecting player is put back."""
        homes = [a for a in self.matches.values() if player.id in a.info.homes]
        return max(homes, key=lambda actor: actor.info.created, default=None)

    def _named(self) -> set[str]:
        """The ids of the players a match in memory names (host or seat)."""
        named: set[str] = set()
        for actor in self.matches.values():
            named |= actor.info.named
        return named

    def _actor_of(self, peer: Peer) -> MatchActor:
        match_id = self.where.get(peer.id)
        actor = self.matches.get(match_id) if match_id is not None else None
        if actor is None:
            raise refused(ErrorCode.NOT_IN_MATCH, "join or watch a match first")
        return actor

    def _find(self, match_id: str) -> MatchActor:
        actor = self.matches.get(match_id)
        if actor is None or match_id not in self._announced:
            raise refused(ErrorCode.NO_SUCH_MATCH, f"no match {match_id!r}")
        return actor

    def _find_for(self, peer: Peer, match_id: str) -> MatchActor:
        """The match ``peer`` names, if it may see it: a tutorial is its creator's
        alone, and to anyone else it is no match at all."""
        actor = self._find(match_id)
        self._check_visible(peer, actor)
        return actor

    def _check_visible(self, peer: Peer, actor: MatchActor | ArchivedMatch) -> None:
        """A tutorial is no match at all to anyone but its creator."""
        if actor.info.settings.tutorial and actor.info.host != self._player(peer).id:
            raise refused(ErrorCode.NO_SUCH_MATCH, f"no match {actor.id!r}")

    def _find_record(self, peer: Peer, match_id: str) -> MatchActor | ArchivedMatch:
        """The match a ``replay`` or ``analyse`` names, if ``peer`` may see it:
        one in memory, or else a finished one revived from storage."""
        if match_id not in self.matches:
            archived = self.archive.revive(match_id)
            if archived is not None:
                self._check_visible(peer, archived)
                return archived
        return self._find_for(peer, match_id)

    def _add(self, core: MatchCore) -> MatchActor:
        actor = MatchActor(core, self, self.thinker, self.storage)
        self.matches[core.id] = actor
        return actor

    # -- MatchHost: what the matches tell the lobby ---------------------------------------

    def deliver(self, to: Sequence[int], frames: Sequence[bytes]) -> None:
        """Queue ``frames`` for each of these connections that is still here."""
        peers = self.peers
        for conn in to:
            peer = peers.get(conn)
            if peer is not None:
                peer.send_all(frames)

    def changed(self, info: MatchInfo) -> None:
        """A match changed: the lobby's browsers see it (soon: :class:`LobbyNews`)."""
        self._announced.add(info.id)
        if not info.settings.tutorial:  # never listed: its creator's alone
            self._news.changed(info.id, info.summary.status, info.update)

    @staticmethod
    def _call_later(delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(delay, callback)

    def entered(self, conn: int, match_id: str) -> None:
        """The connection is in ``match_id`` now."""
        if conn not in self.peers:  # it went while it was being let in
            actor = self.matches.get(match_id)
            if actor is not None:
                actor.post(commands.Detach(conn))
            return
        old = self.where.get(conn)
        if old is not None:
            self._present[old] -= 1
        self.where[conn] = match_id
        self._present[match_id] += 1
        self._news.unfollow(conn)  # in a match, a client is no longer browsing

    def exited(self, conn: int, match_id: str) -> None:
        """The connection is no longer in ``match_id``."""
        if self.where.get(conn) != match_id:
            return
        del self.where[conn]
        self._present[match_id] -= 1
        if self._present[match_id] <= 0:
            del self._present[match_id]
            if self.matches.get(match_id) is not None:
                self._forget_old_matches()

    def rematch(self, match_id: str, rematch: Rematch) -> None:
        """A finished match opens its rematch: a new match with its settings,
        its players' seats kept for them (each joins with ``play_again``)."""
        plan = rematch.opened
        if plan is None or rematch.match_id in self.matches:
            return
        host = self._known(plan.host)
        if host is None:
            return
        seats = []
        for index, stored in enumerate(plan.seats):
            seat = Seat(index)
            if stored.bot is not None:
                seat.is_bot = True
                seat.bot = Bot.for_seat(
                    stored.bot, rematch.match_id, index, self.core_config.bot_secret
                )
            elif stored.player is not None:
                seat.player = self._known(stored.player)
                seat.reserved = True  # until they accept (their own play_again)
            seats.append(seat)
        self._new_match(rematch.match_id, plan.settings, host, seats)

    def _known(self, player_id: str) -> commands.Person | None:
        """The player with this id as a match knows them, if in memory."""
        player = self.players.get(player_id)
        return commands.Person(player.id, player.name) if player is not None else None

    def finished(self, result: MatchResult) -> None:
        """A match ended (or was restored ended): its result goes to the ratings."""
        if self._restored_results is not None:
            self._restored_results.append(result)
        else:
            self.ratings.submit(result)

    def _announce_ratings(self, result: MatchResult, changes: list[Change]) -> None:
        """Tell everyone in the match how their ratings moved."""
        actor = self.matches.get(result.match)
        if changes and actor is not None:
            frame = wire.encode(cards.ratings_notice(result.match, changes))
            actor.post(commands.Broadcast((frame,)))

    def gone(self, match_id: str) -> None:
        """An open match nobody is in any more goes away, and is not restored."""
        actor = self.matches.pop(match_id, None)
        if actor is not None:
            self._retire(actor)

    def _retire(self, actor: MatchActor) -> None:
        """A match left memory: the lobby is told, and its players may no longer
        be needed there."""
        self._announced.discard(actor.id)
        task = asyncio.get_running_loop().create_task(actor.stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)
        self.news_removed(actor.id)
        named = (self.players.get(player_id) for player_id in actor.info.named)
        self._may_evict(player for player in named if player is not None)

    def news_changed(self, match_id: str, status: str, update: bytes) -> None:
        """A listed match changed: ``update`` is its ``match_update`` now."""
        self._news.changed(match_id, status, update)

    def news_removed(self, match_id: str) -> None:
        """A listed match left the lobby: the browsers that follow it are told."""
        self._news.removed(match_id, match_removed_frame(match_id))

    def _tell_browser(self, conn: int, frames: Sequence[bytes]) -> None:
        peer = self.peers.get(conn)
        if peer is not None:
            peer.send_all(frames)

    def _forget_old_matches(self) -> None:
        """Keep in memory the newest ``keep_finished`` finished matches, and any
        older one that still has someone in it."""
        finished = [a for a in self.matches.values() if a.info.status is Status.FINISHED]
        finished.sort(key=lambda actor: actor.info.created)
        for actor in finished[: max(0, len(finished) - self.config.keep_finished)]:
            if not self._present.get(actor.id):
                del self.matches[actor.id]
                self._retire(actor)

    # -- players ----------------------------------------------------------------------------

    async def forget_players(self, before: float) -> int:
        """Forget the players not connected since ``before`` whom no match names
        (host or seat); how many were forgotten. With storage, that is on disk,
        a page at a time (those in memory are connected or named by a match);
        without, in memory."""
        if self.storage is None:
            gone = len(self.players.forget(before, self._named()))
        else:
            self._evict_idle()
            self.players.evict(list(self.players), self._named())
            gone = await self._forget_stored(self.storage, before)
        if gone:
            log.info("forgot %d players who have not connected for a long time", gone)
        return gone

    async def _forget_stored(self, storage: Storage, before: float) -> int:
        named = storage.named_players()
        gone, after = 0, ""
        while True:  # bounded: ``after`` grows with every page
            async with self._forgetting:
                page = storage.unused_players(before, after, _FORGET_PAGE)
                if not page:
                    return gone
                after = page[-1]
                unused = [i for i in page if i not in named and self.players.get(i) is None]
                if unused:
                    gone += await storage.forget_players(unused, before)

    def _may_evict(self, players: Iterable[Player]) -> None:
        """With storage, these players may no longer be needed in memory: each
        goes soon (in a batch) unless connected or named by a match by then."""
        if self.storage is None:
            return
        self._idle.update(players)
        if len(self._idle) >= _EVICT_BATCH:
            self._evict_idle()
        elif self._evict_at is None and self._idle:
            self._evict_at = asyncio.get_running_loop().call_later(_EVICT_DELAY, self._evict_idle)

    def _evict_idle(self) -> None:
        if self._evict_at is not None:
            self._evict_at.cancel()
            self._evict_at = None
        idle, self._idle = self._idle, set()
        if idle:
            self.players.evict(idle, self._named())

    # -- connection life ----------------------------------------------------------------

    async def hello(self, peer: Peer, message: wire.Hello, version: int) -> wire.Welcome:
        """Who the peer is: a proved identity or a new one (stored before the welcome),
        welcomed in the negotiated ``version``."""
        token = message.token
        if token is not None:
            player = self.players.by_token(token)
            if player is None and self.storage is not None:
                player = await self._stored_player(self.storage, token)
            if player is None:
                raise refused(ErrorCode.BAD_TOKEN, "unknown resume token")
            # a returning player may change their name with hello, to a free one:
            # a name another player holds leaves theirs as it was
            renamed = (
                player.name != message.name
                and not await self.name_taken(message.name, player.id)
                and await self.hold_name(message.name, player.id, player.name)
            )
            if renamed:
                self.players.rename(player, message.name)
        elif message.link is not None:
            player, token = await self._link(peer, message.link)
            renamed = False
        else:
            player, token = self.players.new(await self.free_name(message.name))
            for _ in range(_NAME_CLAIMS):  # a cluster's other node may take it meanwhile
                if await self.hold_name(player.name, player.id, None):
                    break
                self.players.rename(player, await self.free_name(message.name))
            renamed = True
        if message.token is not None or message.link is not None:
            for old in list(player.connections):  # the newer connection wins, on any device
                if isinstance(old, Peer) and old is not peer:
                    old.close(wire.CloseCode.REPLACED, "replaced by a newer connection")
        peer.player = player  # connected from now: not evicted while its storing is awaited
        player.connections.add(peer)
        if renamed and self.storage is not None:
            try:
                await persist.store_player(
                    self.storage, self.players, player, new=message.token is None
                )
            except wire.ProtocolError:
                peer.player = None
                player.connections.discard(peer)
                raise
        elif self.storage is not None:
            self._touch(self.storage, player, time.time())
        self.peers[peer.id] = peer
        log.info("%s (%s) connected with %s", player.name, player.id, message.client)
        return wire.Welcome(
            v=version,
            id=message.id,
            server=self.config.name,
            versions=wire.SUPPORTED_VERSIONS,
            player=player.id,
            token=token,
            name=player.name,
            limits=self.config.limits(peer.address),
            rulesets=self.ruleset_infos,
        )

    # -- names and linked devices -----------------------------------------------------------

    async def name_taken(self, name: str, me: str | None) -> bool:
        """Whether another player than ``me`` holds ``name``, in any case."""
        holder = self.players.named(name)
        if holder is not None:
            return holder.id != me
        if self.storage is not None:
            try:
                stored = self.storage.player_named(name_key(name))
            except (StorageError, sqlite3.Error) as exc:
                log.warning("names cannot be read now: %s", exc)
                return False
            return stored is not None and stored != me
        return False

    async def hold_name(self, name: str, player_id: str, old: str | None) -> bool:
        """Hold ``name`` for the player where other processes see it, letting
        ``old`` go; False if another player took it first. One server's names
        are its players' own (:meth:`name_taken` tells); a cluster holds them
        in its store, where two nodes cannot both take one."""
        return True

    async def free_name(self, name: str) -> str:
        """``name``, or its first free variant (``Anna 2``) if another player holds it."""
        for candidate in variants(name):
            if not await self.name_taken(candidate, None):
                return candidate
        return numbered(name, secrets.randbelow(10**9))  # a thousand Annas: any number

    async def _link(self, peer: Peer, code: str) -> tuple[Player, str]:
        """A new token of its own for a second device of the player whose
        one-time code it gives; refused for a wrong code, and for an address
        that tried too many."""
        wait = await self.link_locked(peer.address)
        if wait > 0:
            raise refused(
                ErrorCode.RATE_LIMITED,
                f"too many wrong link codes from here; try again in {math.ceil(wait)} s",
            )
        player_id = await self.redeem_link(code, peer.address)
        player = None
        if player_id is not None:
            player = self.players.get(player_id) or await self._stored_by_id(player_id)
        if player is None:
            raise refused(
                ErrorCode.BAD_LINK_CODE,
                "no such link code, or it expired or was used: ask the other device for a new one",
            )
        token = secrets.token_urlsafe(24)
        digest = hash_token(token)
        if self.storage is not None:
            try:
                await self.storage.add_token(player.id, digest, time.time())
            except StorageError as exc:
                log.error("a linked device is refused (storage_unavailable): %s", exc)
                raise refused(
                    ErrorCode.STORAGE_UNAVAILABLE,
                    "the server cannot store the new device now; try again later",
                ) from None
        self.players.add_token(player, digest)
        await self.linked(player, digest)
        log.info("%s (%s) linked another device", player.name, player.id)
        return player, token

    async def link_locked(self, address: str) -> float:
        """Seconds the address may try no link code (a cluster asks its store too)."""
        return self.link_codes.locked(address)

    async def redeem_link(self, code: str, address: str) -> str | None:
        """The player a link code names, spending it (a cluster asks its store)."""
        return self.link_codes.redeem(code, address)

    async def linked(self, player: Player, token_hash: str) -> None:
        """A device was linked to ``player`` (a cluster tells its other nodes)."""

    async def _stored_by_id(self, player_id: str) -> Player | None:
        """The stored player with this id, brought into memory."""
        if self.storage is None:
            return None
        try:
            stored = self.storage.player(player_id)
            others = self.storage.other_tokens(player_id) if stored is not None else []
        except (StorageError, sqlite3.Error) as exc:
            log.error("a player cannot be read (storage_unavailable): %s", exc)
            raise refused(
                ErrorCode.STORAGE_UNAVAILABLE, "the server cannot read its players now; try again"
            ) from None
        if stored is None:
            return None
        player = self.players.get(player_id)
        if player is not None:
            return player
        player = Player(id=stored.id, name=stored.name, token_hash=stored.token_hash)
        player.other_tokens = others
        self.players.add(player)
        return player

    async def _stored_player(self, storage: Storage, token: str) -> Player | None:
        """The player this token proves, brought back from disk into memory."""
        async with self._forgetting:  # not while the player may be being deleted
            pass
        player = self.players.by_token(token)  # another hello may have brought it back
        if player is not None:
            return player
        try:
            stored = storage.player_by_token(hash_token(token))
        except (StorageError, sqlite3.Error) as exc:
            log.error("a returning player cannot be read (storage_unavailable): %s", exc)
            raise refused(
                ErrorCode.STORAGE_UNAVAILABLE, "the server cannot read its players now; try again"
            ) from None
        if stored is None:
            return None
        known = self.players.get(stored.id)  # in memory, proved by another of its tokens
        if known is not None:
            self.players.add_token(known, hash_token(token))
            return known
        player = Player(id=stored.id, name=stored.name, token_hash=stored.token_hash)
        player.other_tokens = storage.other_tokens(stored.id)
        self.players.add(player)
        return player

    def _touch(self, storage: Storage, player: Player, when: float) -> None:
        """Store when the player was last connected (without waiting)."""
        if storage.accepting:
            storage.touch_player_soon(player.id, when).add_done_callback(_log_touch_failure)

    async def after_welcome(self, peer: Peer) -> None:
        """Put a returning player back in the seat they hold (PROTOCOL.md:
        ``joined``, ``match_update``, then ``snapshot`` and ``prompt``)."""
        home = self.home_of(self._player(peer))
        if home is not None:
            await home.call(commands.Attach(peer.id, self._person(peer)))

    def disconnect(self, peer: Peer) -> None:
        """The peer's connection is gone."""
        self._news.unfollow(peer.id)
        self._people.pop(peer.id, None)
        if self.peers.get(peer.id) is peer:
            del self.peers[peer.id]
        player = peer.player
        if player is not None:
            player.connections.discard(peer)
        match_id = self.where.get(peer.id)
        actor = self.matches.get(match_id) if match_id is not None else None
        if actor is not None:
            actor.post(commands.Detach(peer.id))
        if player is not None and not player.connections:
            player.last_seen = time.time()
            if self.storage is not None:
                self._touch(self.storage, player, player.last_seen)
                self._may_evict([player])

    # -- requests -------------------------------------------------------------------------

    async def dispatch(self, peer: Peer, message: wire.ClientMessage) -> None:
        """Carry out one request: its match answers it, or the lobby does, with
        an error that says what was wrong."""
        if self._halted:  # stopping: every connection is being closed with 1001
            if isinstance(message, wire.Act):
                error = refused(ErrorCode.MATCH_PAUSED, "the server is shutting down")
                peer.send(wire.encode(error_for(error, message.id)))
            return
        try:
            await self._handle(peer, message)
        except Exception as exc:  # a refusal, or a bug: either way the client is answered
            if not isinstance(exc, wire.ProtocolError):
                log.exception("a %s request failed", type(message).__name__)
            peer.send(wire.encode(error_for(exc, message.id)))

    def _reply(self, peer: Peer, message: wire.ServerMessage) -> None:
        peer.send(wire.encode(message))

    async def _handle(self, peer: Peer, message: wire.ClientMessage) -> None:
        """The handler of each request type."""
        match message:
            case wire.Act():
                await self.act(peer, message)
            case wire.Sync():
                await self._actor_of(peer).call(commands.Sync(peer.id, message.id))
            case wire.Chat():
                chat = commands.Chat(peer.id, self._person(peer), message.text, message.id)
                await self._actor_of(peer).call(chat)
            case wire.ListMatches():
                self.list_matches(peer, message)
            case wire.CreateMatch():
                await self.create_match(peer, message)
            case wire.Join():
                await self.join(peer, message)
            case wire.Watch():
                await self.watch(peer, message)
            case wire.Leave():
                leave = commands.Leave(peer.id, self._person(peer), message.id)
                await self._actor_of(peer).call(leave)
            case wire.Start():
                await self.start(peer, message)
            case wire.AddBot():
                add = commands.AddBot(
                    peer.id, self._person(peer), message.seat, message.strength, message.id
                )
                await self._actor_of(peer).call(add)
            case wire.RemoveSeat():
                remove = commands.RemoveSeat(peer.id, self._person(peer), message.seat, message.id)
                await self._actor_of(peer).call(remove)
            case wire.PlayAgain():
                await self.play_again(peer, message)
            case wire.Replay():
                await self.replay(peer, message)
            case wire.Analyse():
                await self.analyse(peer, message)
            case wire.Hint():
                hint = commands.Hint(peer.id, self._person(peer), message.seq, message.id)
                await self._actor_of(peer).call(hint)
            case wire.Profile():
                self._reply(peer, await self.profile(peer, message))
            case wire.Leaderboard():
                self._reply(peer, await self.leaderboard(peer, message))
            case wire.History():
                self._reply(peer, await self.history(peer, message))
            case wire.LinkCode():
                await self.link_code(peer, message)
            case wire.Rename():
                await self.rename(peer, message)
            case wire.Hello():
                raise refused(ErrorCode.NOT_WELCOME, "this connection has already said hello")
            case _:
                raise refused(
                    ErrorCode.UNKNOWN_TYPE, f"{type(message).__name__} is not a request here"
                )

    def _player(self, peer: Peer) -> Player:
        assert peer.player is not None, "requests come after hello"
        return peer.player

    def _person(self, peer: Peer) -> commands.Person:
        """The peer's player as a match knows them (made once per hello)."""
        person = self._people.get(peer.id)
        player = self._player(peer)
        if person is None or person.name != player.name:
            person = self._people[peer.id] = commands.Person(player.id, player.name)
        return person

    def _check_lockout(self, peer: Peer, actor: MatchActor | ArchivedMatch) -> None:
        """Refuse an address that kept guessing the join code of this match
        wrong, for a while (a player seated in it needs no code)."""
        if self._player(peer).id in actor.info.seated:
            return
        wait = self._code_tries.locked((peer.address, actor.id))
        if wait > 0:
            raise refused(
                ErrorCode.LOCKED_OUT,
                f"too many wrong join codes for match {actor.id}; try again in {math.ceil(wait)} s",
            )

    def _count_code(
        self, peer: Peer, actor: MatchActor | ArchivedMatch, outputs: list[Output]
    ) -> bool:
        """Count a wrong join code against the address; whether the request was granted."""
        error = _error_in(outputs)
        if error == ErrorCode.BAD_JOIN_CODE:
            self._code_tries.failed((peer.address, actor.id))
        return error is None and bool(outputs)

    async def _move_on(self, peer: Peer, previous: str | None, now: str) -> None:
        """A player is in one match at a time: once in ``now``, they leave the
        one they were in (its seat freed if open, played for them if running)."""
        if previous is None or previous == now:
            return
        actor = self.matches.get(previous)
        if actor is not None:
            await actor.call(commands.Leave(peer.id, self._person(peer), None, answer=False))

    def list_matches(self, peer: Peer, message: wire.ListMatches) -> None:
        """A page of the open, running and recently finished matches, newest
        first; until the peer enters a match, it follows them (the lobby stays
        live: :class:`LobbyNews`)."""
        listed = [(info.created, info.summary) for info in self.listed()]
        self._browse(peer, message, listed)

    def _browse(
        self,
        peer: Peer,
        message: wire.ListMatches,
        listed: list[tuple[float, wire.MatchSummary]],
    ) -> None:
        """Answer ``message`` with its page of ``listed`` (each match's creation
        time and summary), and follow that page."""
        statuses = frozenset(message.status) or None
        if statuses is not None:
            listed = [pair for pair in listed if pair[1].status in statuses]
        listed.sort(key=lambda pair: pair[0], reverse=True)
        page = tuple(s for _, s in listed[message.offset : message.offset + message.limit])
        if peer.id not in self.where:
            self._news.follow(
                peer.id,
                ((s.match, s.status) for s in page),
                statuses,
                message.limit,
                top=message.offset == 0,
            )
        self._reply(
            peer,
            wire.MatchList(id=message.id, matches=page, offset=message.offset, total=len(listed)),
        )

    async def create_match(self, peer: Peer, message: wire.CreateMatch) -> MatchActor | None:
        """A new match; the creator hosts it and takes the first seat no bot
        has (or watches), answered once the match is on disk."""
        open_now = sum(a.info.status is not Status.FINISHED for a in self.matches.values())
        if open_now >= self.config.max_matches:
            raise refused(ErrorCode.SERVER_FULL, "this server hosts its maximum of matches")
        if message.tutorial:
            check_tutorial(message)
        ruleset_name = message.ruleset or "standard"
        ruleset = self.rulesets.get(ruleset_name)
        if ruleset is None:
            known = ", ".join(sorted(self.rulesets))
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE,
                f"unknown ruleset {ruleset_name!r}; this server has {known}",
                path="create_match.ruleset",
            )
        if message.first_seat is not None and not 0 <= message.first_seat < message.seats:
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE, "first_seat is not a seat", path="create_match.first_seat"
            )
        match_id = self._new_id()
        seats = [Seat(index) for index in range(message.seats)]
        for i, bot in enumerate(message.bots):
            if not 0 <= bot.seat < message.seats or seats[bot.seat].is_bot:
                raise wire.ProtocolError(
                    ErrorCode.BAD_MESSAGE,
                    f"bot seat {bot.seat} is not a free seat",
                    path=f"create_match.bots[{i}].seat",
                )
            seats[bot.seat].is_bot = True
            seats[bot.seat].bot = Bot.for_seat(
                bot.strength, match_id, bot.seat, self.core_config.bot_secret
            )
        settings = MatchSettings(
            name=message.name,
            ruleset_name=ruleset_name,
            ruleset=ruleset,
            join_code=message.join_code,
            turn_timer=message.turn_timer,
            first_seat=TUTORIAL_FIRST_SEAT if message.tutorial else message.first_seat,
            open_box=message.open_box,
            tutorial=message.tutorial,
            hints=message.hints,
        )
        if message.hints and message.rated:
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE,
                "a match that allows hints is never rated",
                path="create_match.rated",
            )
        rated = message.rated if message.rated is not None else default_rated(settings)
        settings = dataclasses.replace(settings, rated=rated)
        person = self._person(peer)
        actor = self._new_match(match_id, settings, person, seats)
        free = next((seat.index for seat in seats if seat.kind == "empty"), None)
        previous = self.where.get(peer.id)
        await self.before_open(actor)
        outputs = await actor.call(commands.Open(peer.id, person, free, message.id))
        if _error_in(outputs) is not None:
            return None
        await self._move_on(peer, previous, match_id)
        return actor

    async def before_open(self, actor: MatchActor) -> None:
        """A new match is about to take its first player (a cluster lists it
        everywhere first: whoever is told its id may ask any node for it)."""

    def _new_id(self) -> str:
        if self._make_id is not None:
            return self._make_id()
        while True:
            match_id = secrets.token_hex(4)
            if match_id not in self.matches:
                return match_id

    def _new_match(
        self, match_id: str, settings: MatchSettings, host: commands.Person, seats: list[Seat]
    ) -> MatchActor:
        core = MatchCore(match_id, settings, host, seats, self.core_config, created=time.time())
        actor = self._add(core)
        self._forget_old_matches()
        return actor

    async def join(self, peer: Peer, message: wire.Join) -> None:
        """Take a seat in an open match (or return to one's own seat)."""
        actor = self._find_for(peer, message.match)
        self._check_lockout(peer, actor)
        previous = self.where.get(peer.id)
        join = commands.Join(
            peer.id, self._person(peer), message.seat, message.join_code, message.id
        )
        if self._count_code(peer, actor, await actor.call(join)):
            await self._move_on(peer, previous, actor.id)

    async def watch(self, peer: Peer, message: wire.Watch) -> None:
        """Watch a match as a spectator: public information only (R24)."""
        actor = self._find_for(peer, message.match)
        self._check_lockout(peer, actor)
        previous = self.where.get(peer.id)
        watch = commands.Watch(peer.id, self._person(peer), message.join_code, message.id)
        if self._count_code(peer, actor, await actor.call(watch)):
            await self._move_on(peer, previous, actor.id)

    async def start(self, peer: Peer, message: wire.Start) -> None:
        """The host deals the match, from a seed drawn now."""
        actor = self._actor_of(peer)
        # a tutorial deals its fixed deal; every other match a secret seed (R26)
        seed = TUTORIAL_SEED if actor.info.settings.tutorial else self.new_seed()
        salt = new_salt() if actor.info.settings.open_box else None  # R27: for the commitment
        start = commands.Start(
            peer.id, self._person(peer), seed, salt, message.id, message.without_absent
        )
        await actor.call(start)

    async def act(self, peer: Peer, message: wire.Act) -> None:
        """A proposed action: the match checks, stores, applies and tells it."""
        actor = self._actor_of(peer)
        action = action_from_wire(message.action)
        await actor.call(commands.Act(peer.id, self._person(peer), action, message.seq, message.id))

    async def play_again(self, peer: Peer, message: wire.PlayAgain) -> MatchActor | None:
        """A rematch: same seats, same bots. The first to ask opens it; the
        other players keep their seats in it and are asked (``rematch``), not
        moved: each joins with their own ``play_again``."""
        old = self._actor_of(peer)
        person = self._person(peer)
        outputs = await old.call(commands.PlayAgain(peer.id, person, self._new_id(), message.id))
        rematch = next((out for out in outputs if isinstance(out, Rematch)), None)
        actor = self.matches.get(rematch.match_id) if rematch is not None else None
        if rematch is None or actor is None:
            if rematch is not None:
                raise refused(ErrorCode.NO_SUCH_MATCH, "the rematch is no longer here")
            return None
        if rematch.opened is not None:
            await self.before_open(actor)
        settings = actor.info.settings
        join = commands.Join(peer.id, person, None, settings.join_code, message.id, True)
        if _error_in(await actor.call(join)) is not None:
            return None
        if rematch.opened is not None:
            old.post(commands.RematchOpened(actor.id, person))
        await self._move_on(peer, old.id, actor.id)
        return actor

    async def replay(self, peer: Peer, message: wire.Replay) -> None:
        """A match's events as the requester's seat saw them (a spectator's view
        if it holds none); an open-box match's seed, salt and actions too once
        it is finished (R27). A finished match no longer in memory is revived
        from storage to answer."""
        actor = self._find_record(peer, message.match)
        self._check_lockout(peer, actor)
        replay = commands.Replay(
            peer.id, self._person(peer), message.join_code, message.from_seq, message.id
        )
        self._count_code(peer, actor, await actor.call(replay))

    async def analyse(self, peer: Peer, message: wire.Analyse) -> None:
        """A seat's post-game analysis (R27: one's own, or any of a finished
        open-box match): the match says what it is made from, the analysis
        service computes it (or reads it back); meanwhile the connection goes
        on, and hears the progress. A finished match no longer in memory is
        revived from storage to answer."""
        actor = self._find_record(peer, message.match)
        self._check_lockout(peer, actor)
        ask = commands.Analyse(
            peer.id, self._person(peer), message.seat, message.join_code, message.id
        )
        outputs = await actor.call(ask)
        self._count_code(peer, actor, outputs)
        order = next((out for out in outputs if isinstance(out, AnalysisOrder)), None)
        if order is None:
            return  # refused: the match answered
        task = asyncio.get_running_loop().create_task(self._analysis_for(peer, order))
        self._analysing.add(task)
        task.add_done_callback(self._analysing.discard)

    async def _analysis_for(self, peer: Peer, order: AnalysisOrder) -> None:
        """Wait for the analysis ``order`` asks for, telling ``peer`` how it goes."""

        def progress(place: int, done: int, total: int) -> None:
            notice = wire.AnalysisProgress(
                id=order.request,
                match=order.match_id,
                seat=order.seat,
                queued=place,
                done=done,
                total=total,
            )
            peer.send(wire.encode(notice))

        try:
            stored = await self.analyst.analyse(
                order.match_id, order.seat, order.record, progress, player=self._player(peer).id
            )
            peer.send(wire.encode(analysis_message(stored, order.request)))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not isinstance(exc, wire.ProtocolError):
                log.exception("the analysis of %s seat %d failed", order.match_id, order.seat)
            peer.send(wire.encode(error_for(exc, order.request)))

    # -- profiles, ratings and history ----------------------------------------------------

    def replayable(self, match_id: str) -> bool:
        """Whether ``replay`` of this match is answered now: the server keeps it
        in memory, or its storage holds it finished."""
        if match_id in self.matches:
            return match_id in self._announced
        return self.archive.holds(match_id)

    def _ratings_ledger(self) -> Ledger:
        """The ledger the answers read (a cluster's shared ratings live in its store)."""
        return self.ratings.ledger

    async def whois(self, ident: str) -> tuple[str, float | None] | None:
        """A player's name now and when they were first seen, if the server
        knows them (a removed player is not known)."""
        player = self.players.get(ident)
        if self.storage is not None:
            try:
                rows = self.storage.query(
                    "SELECT name, created, token_hash FROM players WHERE id = ?", (ident,)
                )
            except (StorageError, sqlite3.Error) as exc:
                log.warning("players cannot be read now: %s", exc)
                rows = []
            if rows:
                name, created, token_hash = rows[0]
                if str(token_hash).startswith(REMOVED_TOKEN):
                    return None
                return (player.name if player is not None else str(name)), float(created)
        return (player.name, None) if player is not None else None

    async def profile(self, peer: Peer, message: wire.Profile) -> wire.ProfileCard:
        """A player's card (default: the requester's), or a bot strength's."""
        me = self._player(peer)
        ident = message.player or me.id
        ledger = self._ratings_ledger()
        if ident in STRENGTH_OF:
            card = await cards.profile_card(ledger, ident, ident, None, self.replayable)
        else:
            known = (
                await self.whois(ident) if ident != me.id else (me.name, await self._since(me.id))
            )
            if known is None:
                raise refused(ErrorCode.NO_SUCH_PLAYER, f"no player {ident!r} on this server")
            card = await cards.profile_card(ledger, ident, known[0], known[1], self.replayable)
        return msgspec.structs.replace(card, id=message.id)

    async def _since(self, ident: str) -> float | None:
        known = await self.whois(ident)
        return known[1] if known is not None else None

    async def leaderboard(self, peer: Peer, message: wire.Leaderboard) -> wire.LeaderboardPage:
        """A page of the leaderboard, with the requester's own line."""
        me = self._player(peer).id
        page = await cards.leaderboard_page(
            self._ratings_ledger(), message.offset, message.limit, me
        )
        return msgspec.structs.replace(page, id=message.id)

    async def history(self, peer: Peer, message: wire.History) -> wire.HistoryPage:
        """A page of the requester's finished matches, latest first."""
        me = self._player(peer).id
        page = await cards.history_page(
            self.ratings.ledger, me, message.before, message.limit, self.replayable
        )
        return msgspec.structs.replace(page, id=message.id)

    async def link_code(self, peer: Peer, message: wire.LinkCode) -> None:
        """A one-time code that links another device to the requester."""
        issued = await self.issue_link(self._player(peer).id)
        if issued is None:
            raise refused(
                ErrorCode.RATE_LIMITED, "too many link codes asked for lately; try in a minute"
            )
        code, ttl = issued
        self._reply(peer, wire.LinkCodeIssued(id=message.id, code=code, expires_in=ttl))

    async def issue_link(self, player_id: str) -> tuple[str, float] | None:
        """A new link code for the player, and its seconds to live (a cluster
        keeps it in its store, so that any node takes it)."""
        return self.link_codes.issue(player_id)

    async def rename(self, peer: Peer, message: wire.Rename) -> None:
        """The requester goes by a new name, if no other player holds it."""
        player = self._player(peer)
        if await self.name_taken(message.name, player.id):
            raise wire.ProtocolError(
                ErrorCode.NAME_TAKEN,
                f"another player is called {message.name!r} (names are unique in any case)",
                path="rename.name",
            )
        if not await self.hold_name(message.name, player.id, player.name):
            raise wire.ProtocolError(
                ErrorCode.NAME_TAKEN,
                f"another player took {message.name!r} a moment ago",
                path="rename.name",
            )
        self.players.rename(player, message.name)
        if self.storage is not None:
            await persist.store_player(self.storage, self.players, player, new=False)
        await self.renamed(player)
        self._reply(peer, wire.Ok(id=message.id))

    async def renamed(self, player: Player) -> None:
        """A player took a new name (a cluster tells its store)."""


def _error_in(outputs: list[Output]) -> str | None:
    """The code of the error a match answered with, if it refused."""
    for output in outputs:
        if isinstance(output, Reply) and isinstance(output.message, wire.Error):
            return output.message.code
    return None


def _log_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("could not store a match's state: %s", future.exception())


def _log_touch_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("could not store when a player was last seen: %s", future.exception())
