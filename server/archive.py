"""Finished matches brought back from storage, to be replayed and analysed.

The lobby keeps in memory only the newest ``keep_finished`` finished matches;
every finished match stays on disk. A ``replay`` or ``analyse`` naming an
older one is answered by :class:`Archive`: it reads the match's row (one
look-up by its key, so a match that does not exist costs one index probe),
rebuilds it through the engine from its stored actions as
:func:`~server.storage.persist.restore_match` does after a restart, and keeps
the ``keep_revived`` most recently asked at hand.

A revived match (:class:`ArchivedMatch`) answers ``replay`` and ``analyse``
and nothing else, through its own core — so R25–R27 hold exactly as for a
match in memory. It is not the lobby's: never listed, never counted as
running, never written back, never rated again; letting it go is dropping it.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence

import protocol as wire
from protocol import ErrorCode

from .errors import StorageError, refused
from .identity import Players
from .match.commands import Analyse, ConnId, Person, Replay
from .match.core import CoreConfig, MatchCore
from .match.info import MatchInfo, Status
from .match.outputs import Output, Reply, Send
from .match.records import MatchRow
from .storage import Storage, persist

__all__ = ["Archive", "ArchivedMatch"]

log = logging.getLogger(__name__)

#: Delivers frames to connections (the lobby's :meth:`~server.lobby.Lobby.deliver`).
Deliver = Callable[[Sequence[ConnId], Sequence[bytes]], None]
#: Stored matches found unreadable that are remembered as such (not read again).
_BROKEN_KEPT = 256


class ArchivedMatch:
    """A finished match rebuilt from storage: it answers ``replay`` and
    ``analyse`` (``await call(command)``, as a :class:`~server.match.actor.MatchActor`
    does) and nothing else."""

    def __init__(self, core: MatchCore, deliver: Deliver) -> None:
        self.core = core
        self.id = core.id
        self._deliver = deliver

    def __repr__(self) -> str:
        return f"<ArchivedMatch {self.id}>"

    @property
    def info(self) -> MatchInfo:
        """The match as others see it."""
        return self.core.info

    async def call(self, command: Replay | Analyse) -> list[Output]:
        """Hand the match a request and send its answer; returns what the core
        asked for (its answer included), like an actor's ``call``. A finished
        match changes for neither, so it needs no mailbox of its own."""
        loop = asyncio.get_running_loop()
        outputs = self.core.handle(command, loop.time(), time.time())
        for output in outputs:
            if isinstance(output, Reply):
                self._deliver((output.conn,), (wire.encode(output.message),))
            elif isinstance(output, Send):
                self._deliver(output.to, output.frames)
        return outputs


class Archive:
    """The finished matches a server no longer keeps in memory, revived on
    request from storage and the ``size`` most recently asked kept at hand."""

    def __init__(
        self,
        storage: Storage | None,
        players: Players,
        config: CoreConfig,
        deliver: Deliver,
        *,
        size: int,
    ) -> None:
        """Without ``storage`` there is nothing to revive: :meth:`revive` finds nothing."""
        self.storage = storage
        self.size = size
        self._players = players
        self._config = config
        self._deliver = deliver
        self._kept: collections.OrderedDict[str, ArchivedMatch] = collections.OrderedDict()
        #: stored matches that could not be rebuilt, each named once in the log
        self._broken: collections.OrderedDict[str, None] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def __contains__(self, match_id: object) -> bool:
        return match_id in self._kept

    def revive(self, match_id: str) -> ArchivedMatch | None:
        """The stored finished match with this id, rebuilt (or kept from
        before); None if storage holds no finished match by that id. Raises
        ``internal_error`` if it is stored but does not read back."""
        kept = self._kept.get(match_id)
        if kept is not None:
            self._kept.move_to_end(match_id)
            return kept
        storage = self.storage
        if storage is None:
            return None
        if match_id in self._broken:
            raise _unreadable(match_id)
        try:
            row = storage.match(match_id)
            if row is None or row.status != "finished":
                return None
            core = persist.restore_match(row, storage, self._people(row, storage), self._config)
            if core.status is not Status.FINISHED:
                raise StorageError("it is stored as finished but its actions do not end it")
        except sqlite3.Error as exc:  # the disk, not the match: it may read next time
            log.error("match %s cannot be read now: %s", match_id, exc)
            raise refused(
                ErrorCode.INTERNAL_ERROR,
                f"the server cannot read match {match_id} from its disk now; try again later",
            ) from None
        except StorageError as exc:
            log.error("match %s is stored but cannot be rebuilt (left on disk): %s", match_id, exc)
            self._broken[match_id] = None
            while len(self._broken) > _BROKEN_KEPT:
                self._broken.popitem(last=False)
            raise _unreadable(match_id) from None
        archived = ArchivedMatch(core, self._deliver)
        self._kept[match_id] = archived
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return archived

    def holds(self, match_id: str) -> bool:
        """Whether :meth:`revive` would bring this match back: storage holds it
        finished (and it was not found unreadable)."""
        if match_id in self._kept:
            return True
        if self.storage is None or match_id in self._broken:
            return False
        try:
            return self.storage.status_of(match_id) == "finished"
        except (StorageError, sqlite3.Error) as exc:
            log.warning("stored matches cannot be read now: %s", exc)
            return False

    def _people(self, row: MatchRow, storage: Storage) -> dict[str, Person]:
        """The players ``row`` names, as the match knows them — from memory, or
        read from storage without bringing them into memory."""
        people: dict[str, Person] = {}
        for player_id in (row.host, *(seat.player for seat in row.seats)):
            if player_id is None or player_id in people:
                continue
            player = self._players.get(player_id)
            if player is not None:
                people[player_id] = Person(player.id, player.name)
                continue
            stored = storage.player(player_id)
            if stored is not None:
                people[player_id] = Person(stored.id, stored.name)
        return people


def _unreadable(match_id: str) -> wire.ProtocolError:
    return refused(
        ErrorCode.INTERNAL_ERROR,
        f"match {match_id} is stored but cannot be read back (damaged); the server's log says why",
    )
