"""Who holds the browser seats: one :class:`Ticket` per tab's WebSocket.

:class:`SeatBook` is the one owner of the seats. Its invariants, whatever
the order in which tabs come and go:

- at most ``max_sessions`` keys hold a seat, and one address (as the
  per-address limits count it) at most ``per_address`` of them;
- a key holds one seat, whatever number of WebSockets it opens: a new one
  replaces the key's ticket (a reload), and the replaced ticket is told so
  (:attr:`Ticket.replaced`) — it must not start its client, or must end it;
- a key's seat is given back only when its last ticket is done
  (:meth:`SeatBook.release`), that is when its client process has ended,
  *and* so is every one it replaced; a new ticket starts its client only once
  every ticket it replaced is done (:meth:`Ticket.predecessors_done`): so
  client processes never outnumber the seats, and one key never has two.

A ticket also remembers when its tab last did something (keys, a resize),
so the front can close the tabs idle for too long (:meth:`SeatBook.idle`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["SeatBook", "SeatRefused", "Ticket"]


class SeatRefused(Exception):
    """No seat for this tab: every seat is taken, or its address has its share."""


@dataclass(eq=False)
class Ticket:
    """One tab's claim on its key's seat."""

    key: str
    address: str
    #: the ticket of the same key this one replaced (a reload), if any
    previous: Ticket | None
    #: when the tab last did something (the book's clock)
    active: float
    #: set when a newer ticket of the same key took the seat, or the tab idled out
    replaced: asyncio.Event = field(default_factory=asyncio.Event)
    #: set when the tab's client process has ended (or never started)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def predecessors_done(self) -> None:
        """Wait until the client of every ticket this one replaced has ended."""
        ticket = self.previous
        while ticket is not None:
            await ticket.done.wait()
            ticket = ticket.previous

    def _replaced_running(self) -> bool:
        """Whether a ticket this one replaced still has its client; once none
        has, the chain is let go (a key reloaded all evening keeps no history)."""
        ticket = self.previous
        while ticket is not None:
            if not ticket.done.is_set():
                return True
            ticket = ticket.previous
        self.previous = None
        return False


class SeatBook:
    """The seats of the browser front. ``clock`` gives the time in seconds."""

    def __init__(self, max_sessions: int, per_address: int, clock: Callable[[], float]) -> None:
        self.max_sessions = max_sessions
        self.per_address = per_address
        self._clock = clock
        self._live: dict[str, Ticket] = {}  # the seat holders, by key

    def __len__(self) -> int:
        """How many seats are taken."""
        return len(self._live)

    @property
    def full(self) -> bool:
        """Whether every seat is taken."""
        return len(self._live) >= self.max_sessions

    def keys(self) -> set[str]:
        """The keys holding a seat."""
        return set(self._live)

    def held_by(self, address: str) -> int:
        """How many seats ``address`` holds."""
        return sum(ticket.address == address for ticket in self._live.values())

    def by_address(self) -> Counter[str]:
        """The seats each address holds."""
        return Counter(ticket.address for ticket in self._live.values())

    def admit(self, key: str, address: str) -> Ticket:
        """A ticket for a tab of ``key`` at ``address``; raises :class:`SeatRefused`."""
        previous = self._live.get(key)
        others = [ticket for ticket in self._live.values() if ticket.key != key]
        if previous is None and len(others) >= self.max_sessions:
            raise SeatRefused(
                f"every browser seat is taken ({self.max_sessions} of {self.max_sessions})"
            )
        if sum(ticket.address == address for ticket in others) >= self.per_address:
            raise SeatRefused(
                f"your address has its share of the browser seats ({self.per_address});"
                " close one of your tabs first"
            )
        ticket = Ticket(key, address, previous, self._clock())
        self._live[key] = ticket
        if previous is not None:
            previous.replaced.set()
        return ticket

    def touch(self, ticket: Ticket) -> None:
        """The tab did something now."""
        ticket.active = self._clock()

    def idle(self, timeout: float) -> list[Ticket]:
        """The seat holders whose tab has done nothing for ``timeout`` seconds."""
        now = self._clock()
        return [t for t in self._live.values() if now - t.active >= timeout]

    def release(self, ticket: Ticket) -> None:
        """``ticket``'s client process has ended (or never started): its key's
        seat is free once the key's newest ticket is done, and every ticket
        that one replaced."""
        ticket.done.set()
        live = self._live.get(ticket.key)
        if live is not None and live.done.is_set() and not live._replaced_running():
            del self._live[ticket.key]
