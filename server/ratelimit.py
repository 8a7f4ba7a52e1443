"""Token buckets: how a connection, or an address, is kept from flooding the server.

A :class:`TokenBucket` earns ``rate`` tokens a second up to ``burst``; each
thing counted spends one. The server does not refuse a connection's frame
because it came too soon: its :class:`Pacer` waits until the bucket has a
token, reading nothing more from that connection meanwhile, so the frames
wait in the sender's own socket and TCP slows it down to its rate, while
every other connection is read as usual. A frame that has to be handled the
moment it is read (a ping, which websockets answers at once, or a pong) is
charged instead (:meth:`Pacer.charge`): it spends a token on credit, and
the connection is read no more until its bucket is out of debt.
:class:`KeyedBuckets` keeps one bucket per key (an address) and forgets the
buckets that have filled up again, so a stream of new keys costs nothing lasting.
A :class:`Lockout` refuses a key for a while after too many failures (wrong
join codes), and forgets the failures that are old enough to be forgiven.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable

__all__ = ["KeyedBuckets", "Lockout", "Pacer", "TokenBucket"]


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up."""

    __slots__ = ("_clock", "_last", "_tokens", "burst", "rate")

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        return self._tokens

    def level(self) -> float:
        """Tokens saved up now."""
        return self._refill()

    def take(self) -> bool:
        """Spend a token if there is one; False (and nothing spent) if not."""
        if self._refill() >= 1:
            self._tokens -= 1
            return True
        return False

    def spend(self) -> None:
        """Spend a token whether there is one or not: below zero the bucket is in
        debt, and earns it back before it has a token again."""
        self._refill()
        self._tokens -= 1

    def wait(self) -> float:
        """Seconds until a token is there (0 if one is there now)."""
        return max(0.0, (1 - self._refill()) / self.rate)

    def full(self) -> bool:
        """Whether the bucket has saved up a whole burst again (nothing to remember)."""
        return self._refill() >= self.burst


class Pacer:
    """Lets one connection's frames through at its bucket's rate, and says when
    it floods: more than a whole burst of its frames held back since its bucket
    was last half full (a sender that lets it refill is not flooding; a timer
    that wakes late under load earns a flooder a stray token, not a pardon)."""

    __slots__ = ("_held_back", "bucket")

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.bucket = TokenBucket(rate, burst, clock)
        self._held_back = 0  # frames held back since the bucket was half full

    def _forgive(self) -> None:
        bucket = self.bucket
        if bucket.level() >= bucket.burst / 2:
            self._held_back = 0

    def charge(self) -> bool:
        """Count a frame that is handled at once, without waiting (a ping, a
        pong): it spends a token, on credit if there is none, and one on credit
        is held back as one :meth:`admit` waits for would be (the caller reads
        no more until :meth:`wait` is 0). False if it is a flood's."""
        self._forgive()
        if self.bucket.take():
            return True
        self.bucket.spend()
        self._held_back += 1
        return self._held_back <= self.bucket.burst

    def wait(self) -> float:
        """Seconds until the connection has a token again (0: it has one)."""
        return self.bucket.wait()

    async def admit(self) -> bool:
        """Wait until the next frame may be handled; False if it is a flood's."""
        bucket = self.bucket
        self._forgive()
        if bucket.take():
            # A frame already received is handed over without a pause: yield, so
            # the writer drains this client's answers and others get their turn.
            await asyncio.sleep(0)
            return True
        self._held_back += 1
        if self._held_back > bucket.burst:
            return False
        for _ in range(1000):  # bounded; one round, or a few if the timer rounds down
            await asyncio.sleep(max(bucket.wait(), 0.001))
            if bucket.take():
                break
        return True


class KeyedBuckets:
    """One :class:`TokenBucket` per key, made on first use and forgotten once full."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[Hashable, TokenBucket] = {}
        self._prune_at = 1024  # doubles with what survives a prune: amortised O(1)

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: Hashable) -> bool:
        """Spend one of ``key``'s tokens if it has one."""
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._prune_at:
                self.prune()
                self._prune_at = max(1024, 2 * len(self._buckets))
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst, self._clock)
        return bucket.take()

    def prune(self) -> None:
        """Forget every bucket that has filled up again: it is as good as new."""
        for key in [k for k, b in self._buckets.items() if b.full()]:
            del self._buckets[key]


class Lockout:
    """After ``tries`` failures of a key, each within ``seconds`` of the one
    before, the key is locked out for ``seconds``."""

    def __init__(
        self, tries: int, seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.tries = tries
        self.seconds = seconds
        self._clock = clock
        #: key -> (failures in a row, when the last one was, locked until)
        self._keys: dict[Hashable, tuple[int, float, float]] = {}
        self._prune_at = 1024

    def __len__(self) -> int:
        return len(self._keys)

    def locked(self, key: Hashable) -> float:
        """Seconds ``key`` stays locked out (0: it is not)."""
        entry = self._keys.get(key)
        return 0.0 if entry is None else max(0.0, entry[2] - self._clock())

    def failed(self, key: Hashable) -> None:
        """Count one failure of ``key``; lock it out at the ``tries``-th."""
        now = self._clock()
        count, last, until = self._keys.get(key, (0, now, 0.0))
        if now - last > self.seconds:  # forgiven
            count = 0
        count += 1
        if count >= self.tries:
            count, until = 0, now + self.seconds
        self._keys[key] = (count, now, until)
        if len(self._keys) >= self._prune_at:
            self.prune()
            self._prune_at = max(1024, 2 * len(self._keys))

    def prune(self) -> None:
        """Forget keys whose failures are forgiven and whose lockout is over."""
        now = self._clock()
        for key in [
            k
            for k, (_, last, until) in self._keys.items()
            if now - last > self.seconds and until <= now
        ]:
            del self._keys[key]
