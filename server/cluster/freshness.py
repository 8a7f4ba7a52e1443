"""Old messages sent again: the stamp a sender puts on what it publishes, and
the guard that refuses a message heard before or sent too long ago.

A seal (:mod:`.signing`) proves who wrote a message, not when: someone who can
read and publish on the cluster's Redis can record a sealed message and send
it again at will — a player's hello elsewhere (their connections here are
closed), their seat taken elsewhere (their seats here are left), a match gone
(it leaves every lobby). So every message carries a :class:`~.entries.Stamp`:
its sender, the run of the sender (a random boot id, and when that run
started), a sequence number over that run, and when it was sent. A node acts
on a message only if it was sent within :data:`MESSAGE_WINDOW` seconds (plus
the :data:`~.entries.CLOCK_SKEW` the nodes' clocks may disagree by) and is
newer than what it heard from that sender: a later run, or in the same run a
sequence number not seen yet (messages published side by side may arrive a
little out of order: the last :data:`REORDER` numbers are remembered one by one,
as IPsec's anti-replay window does).

Invariant: a sender's runs are forgotten only once any message of theirs
already heard would be refused for its age anyway.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from .entries import CLOCK_SKEW, Stamp

__all__ = ["ADMIN_SENDER", "MESSAGE_WINDOW", "REORDER", "ReplayGuard", "Stamper"]

#: Seconds a message is believed after it was sent (plus :data:`CLOCK_SKEW`).
MESSAGE_WINDOW = 30.0
#: Sequence numbers below a sender's newest that are still told apart one by one.
REORDER = 4096
#: The sender of what ``tulips-cluster`` publishes (never a node id: those have no ``@``).
ADMIN_SENDER = "@tulips-cluster"


class Stamper:
    """The stamps of one run of one sender, in the order it sends."""

    def __init__(self, sender: str, clock: Callable[[], float] = time.time) -> None:
        """``clock``: Unix time."""
        self.sender = sender
        self._clock = clock
        self.boot = secrets.token_hex(8)
        self.started = clock()
        self._seq = 0
        self._last = self.started

    def next(self) -> Stamp:
        """The stamp of the next message sent."""
        self._seq += 1
        self._last = max(self._last, self._clock())
        return Stamp(
            sender=self.sender, boot=self.boot, started=self.started, seq=self._seq, sent=self._last
        )


@dataclass
class _Run:
    """What the guard heard from one run of a sender."""

    order: tuple[float, str]
    #: the highest sequence number heard
    top: int
    #: bit i set: ``top - i`` was heard
    seen: int
    #: when (this node's clock) the last message of it was taken
    heard: float


class ReplayGuard:
    """Decides, for a node, which stamped messages are new (one owner: the node's
    listener); the reason for each one refused."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        """``clock``: Unix time, the same as the senders' up to :data:`CLOCK_SKEW`."""
        self._clock = clock
        self._runs: dict[str, _Run] = {}
        self._pruned = clock()

    def check(self, stamp: Stamp) -> str | None:
        """None if the message stamped so is new (it is remembered as heard); else
        why it is refused: ``"too old"``, ``"from the future"``, ``"from an
        earlier run"`` or ``"heard before"``."""
        now = self._clock()
        if stamp.sent > now + CLOCK_SKEW:
            return "from the future"
        if now - stamp.sent > MESSAGE_WINDOW + CLOCK_SKEW:
            return "too old"
        self._prune(now)
        order = (stamp.started, stamp.boot)
        run = self._runs.get(stamp.sender)
        if run is None or order > run.order:
            self._runs[stamp.sender] = _Run(order=order, top=stamp.seq, seen=1, heard=now)
            return None
        if order < run.order:
            return "from an earlier run"
        if stamp.seq > run.top:
            run.seen = ((run.seen << (stamp.seq - run.top)) | 1) & ((1 << REORDER) - 1)
            run.top = stamp.seq
        else:
            behind = run.top - stamp.seq
            if behind >= REORDER or run.seen >> behind & 1:
                return "heard before"
            run.seen |= 1 << behind
        run.heard = now
        return None

    def _prune(self, now: float) -> None:
        """Forget runs last heard so long ago that their messages are too old by now:
        a message's ``sent`` is at most ``heard + CLOCK_SKEW``."""
        horizon = MESSAGE_WINDOW + 2 * CLOCK_SKEW
        if now - self._pruned < MESSAGE_WINDOW:
            return
        self._pruned = now
        for sender in [s for s, run in self._runs.items() if now - run.heard > horizon]:
            del self._runs[sender]
