"""A token bucket: how a connection is kept from flooding the server."""

from __future__ import annotations

import time

__all__ = ["TokenBucket"]


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up."""

    __slots__ = ("_last", "_tokens", "burst", "rate")

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._last = time.monotonic()

    def take(self) -> bool:
        """Spend a token if there is one."""
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        self._tokens -= 1  # refused frames still count against a flood
        return False

    def overdrawn(self) -> bool:
        """True once refused frames have piled up to a whole burst: a flood."""
        return self._tokens <= -self.burst
