"""How the storage writer waits out another process's lock on the database:
when to try a locked write again, and when to say it is waiting, and that it
went through. A plain owner of that state, told the time: no clock, no sleep."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LockWait"]


@dataclass(slots=True)
class LockWait:
    """One wait for the lock after another: each failed try says how long to
    wait before the next (``first`` s, doubling up to ``longest`` s), and
    whether it is the first of a wait (the time to warn); :meth:`through`
    ends the wait and says how long it lasted (the time to say so)."""

    first: float = 0.1
    longest: float = 2.0
    #: when the writes began waiting for the lock (None: they are not waiting)
    since: float | None = None
    #: tries that found the lock held, in this wait
    tries: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.longest:
            raise ValueError("LockWait: 0 < first <= longest")

    @property
    def waiting(self) -> bool:
        """Whether writes are waiting for the lock now."""
        return self.since is not None

    def locked(self, now: float) -> tuple[float, bool]:
        """A try at ``now`` found the lock held: seconds to wait before the
        next, and whether this try began the wait."""
        began = self.since is None
        if began:
            self.since = now
        self.tries += 1
        delay = min(self.longest, self.first * 2 ** (self.tries - 1))
        return delay, began

    def through(self, now: float) -> float | None:
        """A write went through at ``now``: how long the writes had waited for
        the lock (None if they were not waiting); the wait is over."""
        since, self.since, self.tries = self.since, None, 0
        return None if since is None else now - since
