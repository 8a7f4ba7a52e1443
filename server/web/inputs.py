"""What one tab may send its client: keys and pastes within a byte budget,
a terminal of a sane size, resizes coalesced.

A person types a few bytes a second; a mouse over the terminal sends a
dozen-byte report per move; a paste is one message. Past those, input is
only work for the tab's client process (each key is an event it handles),
so every tab is held to :class:`InputBudget`: ``RATE`` bytes a second in
bursts of up to ``BURST``, every message charged at least ``MIN_CHARGE``
bytes (pings and pongs included: each is work to answer, however small).
A tab over budget is simply not read for a while (TCP holds the browser
back): nothing it typed is lost, and it costs the host nothing meanwhile.
Resizes are applied at most once per ``RESIZE_EVERY`` seconds, the latest
size winning (:class:`Resizes`).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "BURST",
    "MAX_HEIGHT",
    "MAX_MESSAGE_BYTES",
    "MAX_WIDTH",
    "MIN_CHARGE",
    "MIN_SIZE",
    "RATE",
    "RESIZE_EVERY",
    "InputBudget",
    "Resizes",
    "terminal_size",
]

#: The largest WebSocket message a tab may send (a paste); a larger one closes it (1009).
MAX_MESSAGE_BYTES = 16 * 1024
#: Bytes of keys a second a tab may send, and in one burst.
RATE = 2048.0
BURST = 16 * 1024
#: The least a message costs, in bytes: a tab may send 32 of them a second.
MIN_CHARGE = 64
#: The largest terminal a tab's client draws (columns, rows), and the smallest side.
MAX_WIDTH = 400
MAX_HEIGHT = 150
MIN_SIZE = 10
#: Seconds between two resizes passed to the client.
RESIZE_EVERY = 0.25


def terminal_size(width: object, height: object) -> tuple[int, int]:
    """A tab's terminal size as its client gets it: whole numbers within
    ``MIN_SIZE``..``MAX_WIDTH`` x ``MIN_SIZE``..``MAX_HEIGHT`` (80 x 24 when
    it is not a number)."""

    def one(value: object, default: int, largest: int) -> int:
        try:
            number = int(str(value))
        except ValueError:
            return default
        return min(max(number, MIN_SIZE), largest)

    return one(width, 80, MAX_WIDTH), one(height, 24, MAX_HEIGHT)


class InputBudget:
    """A token bucket of bytes: ``take(n)`` says how long to wait before
    reading more (0: go on). ``clock`` gives the time in seconds."""

    def __init__(
        self, clock: Callable[[], float], rate: float = RATE, burst: float = BURST
    ) -> None:
        self.rate, self.burst = rate, burst
        self._clock = clock
        self._tokens = burst
        self._at = clock()

    def take(self, size: int) -> float:
        """Spend ``size`` bytes, at least ``MIN_CHARGE`` (the budget may go into
        debt by one message); the seconds to wait before the next read."""
        size = max(size, MIN_CHARGE)
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        self._tokens -= size
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


class Resizes:
    """The latest size a tab asked for, passed on at most once per ``every``
    seconds. ``clock`` gives the time in seconds."""

    def __init__(self, clock: Callable[[], float], every: float = RESIZE_EVERY) -> None:
        self.every = every
        self._clock = clock
        self._last = -every
        self.pending: tuple[int, int] | None = None

    def ask(self, size: tuple[int, int]) -> None:
        """The tab asks for ``size`` (replacing any not yet applied)."""
        self.pending = size

    def wait(self) -> float:
        """Seconds until the next resize may be applied (0: now)."""
        return max(0.0, self._last + self.every - self._clock())

    def due(self) -> tuple[int, int] | None:
        """The size to apply now, if one is pending and its time has come."""
        if self.pending is None or self._clock() < self._last + self.every:
            return None
        size, self.pending = self.pending, None
        self._last = self._clock()
        return size
