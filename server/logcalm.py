"""One log line when a condition starts and one when it ends, not one per event.

A flood repeats the same event thousands of times a second: a connection
refused past a cap, an ``accept()`` out of descriptors. Logged one by one it
fills the disk (issue 29: 507 MB of tracebacks in four minutes). An
:class:`Episodes` turns the events of one condition into an episode: the first
event starts it (log it), and it ends once no event has come for ``quiet``
seconds (log that, with how many events it held). No clock or I/O here: the
caller passes the time, so a test drives it with a fake clock.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Episode", "Episodes"]

K = TypeVar("K", bound=Hashable)


@dataclass(slots=True)
class Episode(Generic[K]):
    """One condition while it lasts: when its first and last events came, and how many."""

    key: K
    started: float
    last: float
    events: int = 1

    @property
    def duration(self) -> float:
        """Seconds from the first event to the last."""
        return self.last - self.started


class Episodes(Generic[K]):
    """Open episodes by key; :meth:`hit` for each event, :meth:`settle` now and then."""

    def __init__(self, quiet: float) -> None:
        """An episode ends after ``quiet`` seconds without an event."""
        self.quiet = quiet
        self._open: dict[K, Episode[K]] = {}

    def hit(self, key: K, now: float) -> bool:
        """Count an event of ``key`` at ``now``; True when it starts a new episode."""
        episode = self._open.get(key)
        if episode is None:
            self._open[key] = Episode(key, now, now)
            return True
        episode.last = now
        episode.events += 1
        return False

    def settle(self, now: float) -> list[Episode[K]]:
        """End and return the episodes without an event for ``quiet`` seconds."""
        ended = [e for e in self._open.values() if now - e.last >= self.quiet]
        for episode in ended:
            del self._open[episode.key]
        return ended

    def get(self, key: K) -> Episode[K] | None:
        """The open episode of ``key``, if any."""
        return self._open.get(key)

    def __bool__(self) -> bool:
        """Whether any episode is open."""
        return bool(self._open)

    def __len__(self) -> int:
        return len(self._open)
