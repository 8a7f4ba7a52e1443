"""What the lobby's browsers are told of the matches' changes, and when.

A :class:`LobbyNews` owns one fact: each match that changed since the
browsers were last told, with its latest ``match_update``. A burst of a
match's changes (a table filling, a match starting) reaches the browsers as
one update, the match as it is at the telling: at most one per match every
:data:`LOBBY_UPDATE_INTERVAL`. A change is delayed, never dropped, unless
its match leaves the lobby first (then its ``match_removed`` says all).
It sets no timer of its own: it asks ``schedule`` for one, so that a test
drives it with a fake clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

__all__ = ["LOBBY_UPDATE_INTERVAL", "LobbyNews", "Timer"]

#: Seconds over which a match's changes reach the lobby's browsers as one ``match_update``.
LOBBY_UPDATE_INTERVAL = 0.25


class Timer(Protocol):
    """A timer that was set (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None:
        """It will not fire."""
        ...


class LobbyNews:
    """Changes of matches, held until the next telling."""

    def __init__(
        self,
        tell: Callable[[Sequence[bytes]], None],
        schedule: Callable[[float, Callable[[], None]], Timer],
        interval: float = LOBBY_UPDATE_INTERVAL,
    ) -> None:
        """``tell`` sends frames to every browser; ``schedule(delay, callback)``
        sets a timer (``loop.call_later``)."""
        self._tell = tell
        self._schedule = schedule
        self._interval = interval
        #: each changed match's latest ``match_update``, by match id
        self._pending: dict[str, bytes] = {}
        self._timer: Timer | None = None

    def changed(self, match_id: str, update: bytes) -> None:
        """The match changed: ``update`` is its ``match_update`` now."""
        self._pending[match_id] = update
        if self._timer is None:
            self._timer = self._schedule(self._interval, self._told)

    def removed(self, match_id: str) -> None:
        """The match left the lobby: what changed before no longer matters."""
        self._pending.pop(match_id, None)

    def close(self) -> None:
        """Nothing more is told."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending.clear()

    def _told(self) -> None:
        self._timer = None
        pending, self._pending = self._pending, {}
        if pending:
            self._tell(list(pending.values()))
