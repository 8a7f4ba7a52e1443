"""What a match core asks for, in order: plain values its actor carries out.

The order is the contract. A :class:`Store` with ``wait`` is always the last
output of a batch: what comes after it is only made once the actor tells the
core how the store went (:class:`~server.match.commands.Stored`), so nothing
that follows can tell anyone of a fact before it is on disk.
"""

from __future__ import annotations

from dataclasses import dataclass

import protocol as wire
from engine import Observation

from .bots import Bot
from .commands import ConnId
from .info import MatchInfo
from .records import StoredSeat, Write
from .settings import MatchSettings

__all__ = [
    "AskBot",
    "CancelTimer",
    "Changed",
    "Entered",
    "Exited",
    "Gone",
    "Output",
    "Rematch",
    "RematchPlan",
    "Reply",
    "Send",
    "SetTimer",
    "Store",
]


@dataclass(frozen=True, slots=True)
class Store:
    """Write these to disk; with ``wait``, tell the core (``Stored``) before
    carrying out anything else. Without, the writes are queued behind the
    earlier ones and a failure is only logged."""

    writes: tuple[Write, ...]
    wait: bool = True


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to a request, to the connection that sent it."""

    conn: ConnId
    message: wire.ServerMessage


@dataclass(frozen=True, slots=True)
class Send:
    """Frames for these connections, in order."""

    to: tuple[ConnId, ...]
    frames: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class SetTimer:
    """Tell the core ``Tick(name)`` at time ``at`` (replacing a timer of that name)."""

    name: str
    at: float


@dataclass(frozen=True, slots=True)
class CancelTimer:
    """The timer of that name is no longer wanted."""

    name: str


@dataclass(frozen=True, slots=True)
class AskBot:
    """Let ``bot`` decide for ``seat`` from its ``observation``, after ``delay``
    seconds, and tell the core (``BotDecided``) with the ``decision`` named."""

    seat: int
    decision: int
    bot: Bot
    observation: Observation
    delay: float


@dataclass(frozen=True, slots=True)
class Changed:
    """What others see of the match changed: here it is now."""

    info: MatchInfo


@dataclass(frozen=True, slots=True)
class Entered:
    """The connection is in this match now (in a seat, or watching)."""

    conn: ConnId


@dataclass(frozen=True, slots=True)
class Exited:
    """The connection is no longer in this match."""

    conn: ConnId


@dataclass(frozen=True, slots=True)
class Rematch:
    """The requester of ``play_again`` goes to the rematch ``match_id``; with
    ``opened``, it is new, and the server opens it first."""

    match_id: str
    opened: RematchPlan | None = None


@dataclass(frozen=True, slots=True)
class RematchPlan:
    """A rematch to open: the finished match's settings, hosted by ``host``,
    each seat kept for its player (by id) or its bot (by strength), or empty."""

    settings: MatchSettings
    host: str
    seats: tuple[StoredSeat, ...]


@dataclass(frozen=True, slots=True)
class Gone:
    """The match has nobody left to wait for (an open match everyone left): drop it."""


#: Everything a match core may ask for.
Output = (
    Store
    | Reply
    | Send
    | SetTimer
    | CancelTimer
    | AskBot
    | Changed
    | Entered
    | Exited
    | Rematch
    | Gone
)
