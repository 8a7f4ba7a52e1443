"""What each lobby browser is told of the matches' changes, and when.

A :class:`LobbyNews` owns two facts: which matches each browser follows (the
page of the match list it asked for, see ``list_matches``), and each
followed match that changed since the browsers were last told, with its
latest ``match_update``.

- A browser follows the matches of its page. On the first page (offset 0) a
  match that enters its filter (a new match, or one whose status became one
  it asked for) comes in at the top; when the page then holds more than its
  ``limit``, the match at the bottom falls off and is followed no more. A
  followed match whose status leaves the filter is told once more (the
  browser sees it go) and then no longer followed.
- A burst of a match's changes reaches its followers as one update, the
  match as it is at the telling: at most one per match every
  :data:`LOBBY_UPDATE_INTERVAL`. A change is delayed, never dropped, unless
  its match leaves the lobby first (then its ``match_removed`` says all).

So the cost of a change grows with the browsers that follow that match, not
with every browser; only a match entering a filter is looked at by every
browser on a first page. It sets no timer of its own: it asks ``schedule``
for one, so that a test drives it with a fake clock.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["LOBBY_UPDATE_INTERVAL", "LobbyNews", "Timer"]

#: Seconds over which a match's changes reach the lobby's browsers as one ``match_update``.
LOBBY_UPDATE_INTERVAL = 0.25


class Timer(Protocol):
    """A timer that was set (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None:
        """It will not fire."""
        ...


@dataclass(slots=True)
class _Page:
    """What one browser follows."""

    #: the statuses it asked for; None: every one
    statuses: frozenset[str] | None
    limit: int
    #: the first page: matches entering the filter come in at its top
    top: bool
    #: the followed match ids, bottom first (a dict keeps their order)
    matches: dict[str, None] = field(default_factory=dict)

    def shows(self, status: str) -> bool:
        return self.statuses is None or status in self.statuses


class LobbyNews:
    """Who follows which match, and the changes held until the next telling."""

    def __init__(
        self,
        send: Callable[[int, Sequence[bytes]], None],
        schedule: Callable[[float, Callable[[], None]], Timer],
        interval: float = LOBBY_UPDATE_INTERVAL,
    ) -> None:
        """``send(conn, frames)`` sends frames to one browser; ``schedule(delay,
        callback)`` sets a timer (``loop.call_later``)."""
        self._send = send
        self._schedule = schedule
        self._interval = interval
        self._pages: dict[int, _Page] = {}
        #: the browsers on a first page
        self._tops: dict[int, _Page] = {}
        #: who follows each match
        self._followers: defaultdict[str, set[int]] = defaultdict(set)
        #: each listed match's status as last told here, by match id
        self._statuses: dict[str, str] = {}
        #: each changed match's status and latest ``match_update``, by match id
        self._pending: dict[str, tuple[str, bytes]] = {}
        self._timer: Timer | None = None

    def follow(
        self,
        conn: int,
        page: Iterable[tuple[str, str]],
        statuses: frozenset[str] | None,
        limit: int,
        top: bool,
    ) -> None:
        """``conn`` was listed ``page`` (each match's id and status, newest
        first) of the matches with these ``statuses`` (None: all), at most
        ``limit``; ``top``: it is the first page. Whatever it followed before,
        it follows this now."""
        self.unfollow(conn)
        listed = list(page)
        followed = _Page(statuses, limit, top, dict.fromkeys(m for m, _ in reversed(listed)))
        self._pages[conn] = followed
        if top:
            self._tops[conn] = followed
        for match_id, status in listed:
            self._followers[match_id].add(conn)
            self._statuses.setdefault(match_id, status)

    def unfollow(self, conn: int) -> None:
        """``conn`` follows nothing (it entered a match, or went)."""
        followed = self._pages.pop(conn, None)
        if followed is None:
            return
        self._tops.pop(conn, None)
        for match_id in followed.matches:
            self._drop(match_id, conn)

    def following(self, conn: int) -> list[str]:
        """The matches ``conn`` follows, newest first."""
        followed = self._pages.get(conn)
        return list(reversed(followed.matches)) if followed is not None else []

    def changed(self, match_id: str, status: str, update: bytes) -> None:
        """The match changed: ``update`` is its ``match_update`` now."""
        if self._statuses.get(match_id) != status:
            self._statuses[match_id] = status
            self._entered(match_id, status)
        if match_id in self._followers:
            self._pending[match_id] = (status, update)
            if self._timer is None:
                self._timer = self._schedule(self._interval, self._told)

    def removed(self, match_id: str, frame: bytes) -> None:
        """The match left the lobby: its followers get ``frame`` (its
        ``match_removed``) now; what changed before no longer matters."""
        self._statuses.pop(match_id, None)
        self._pending.pop(match_id, None)
        for conn in self._followers.pop(match_id, ()):
            self._pages[conn].matches.pop(match_id, None)
            self._send(conn, (frame,))

    def close(self) -> None:
        """Nothing more is told."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending.clear()
        self._pages.clear()
        self._tops.clear()
        self._followers.clear()

    def _entered(self, match_id: str, status: str) -> None:
        """The match is new, or its status changed: it comes in at the top of
        each first page whose filter it now passes."""
        for conn, followed in self._tops.items():
            if match_id in followed.matches or not followed.shows(status):
                continue
            followed.matches[match_id] = None
            self._followers[match_id].add(conn)
            if len(followed.matches) > followed.limit:
                bottom = next(iter(followed.matches))
                del followed.matches[bottom]
                self._drop(bottom, conn)

    def _drop(self, match_id: str, conn: int) -> None:
        followers = self._followers.get(match_id)
        if followers is not None:
            followers.discard(conn)
            if not followers:
                del self._followers[match_id]
                self._pending.pop(match_id, None)

    def _told(self) -> None:
        self._timer = None
        pending, self._pending = self._pending, {}
        frames: defaultdict[int, list[bytes]] = defaultdict(list)
        for match_id, (status, update) in pending.items():
            for conn in list(self._followers.get(match_id, ())):
                frames[conn].append(update)
                followed = self._pages[conn]
                if not followed.shows(status):  # seen going: followed no more
                    del followed.matches[match_id]
                    self._drop(match_id, conn)
        for conn, told in frames.items():
            self._send(conn, told)
