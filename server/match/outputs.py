"""What a match core asks for, in order: plain values its actor carries out.

The order is the contract. A :class:`Store` with ``wait`` is always the last
output of a batch: what comes after it is only made once the actor tells the
core how the store went (:class:`~server.match.commands.Stored`), so nothing
that follows can tell anyone of a fact before it is on disk.
"""

from __future__ import annotations

import msgspec

import protocol as wire
from engine import Observation
from engine.record import MatchRecord

from .bots import Bot
from .commands import ConnId
from .info import MatchInfo
from .records import StoredSeat, Write
from .results import MatchResult
from .settings import MatchSettings

__all__ = [
    "AnalysisOrder",
    "AskBot",
    "AskHint",
    "CancelTimer",
    "Changed",
    "Entered",
    "Exited",
    "Finished",
    "Gone",
    "Output",
    "Rematch",
    "RematchPlan",
    "Reply",
    "Send",
    "SetTimer",
    "Store",
]


class Store(msgspec.Struct, frozen=True):
    """Write these to disk; with ``wait``, tell the core (``Stored``) before
    carrying out anything else. Without, the writes are queued behind the
    earlier ones and a failure is only logged."""

    writes: tuple[Write, ...]
    wait: bool = True


class Reply(msgspec.Struct, frozen=True):
    """The answer to a request, to the connection that sent it."""

    conn: ConnId
    message: wire.ServerMessage


class Send(msgspec.Struct, frozen=True):
    """Frames for these connections, in order."""

    to: tuple[ConnId, ...]
    frames: tuple[bytes, ...]


class SetTimer(msgspec.Struct, frozen=True):
    """Tell the core ``Tick(name)`` at time ``at`` (replacing a timer of that name)."""

    name: str
    at: float


class CancelTimer(msgspec.Struct, frozen=True):
    """The timer of that name is no longer wanted."""

    name: str


class AskBot(msgspec.Struct, frozen=True):
    """Let ``bot`` decide for ``seat`` from its ``observation``, after ``delay``
    seconds, and tell the core (``BotDecided``) with the ``decision`` named."""

    seat: int
    decision: int
    bot: Bot
    observation: Observation
    delay: float


class AskHint(msgspec.Struct, frozen=True):
    """Compute the hint of ``seat``'s open ``decision`` from its ``observation``
    (away from the match: it does not wait), and tell the core (``HintReady``)."""

    conn: ConnId
    request: wire.RequestId | None
    seat: int
    decision: int
    seq: int
    observation: Observation
    seed: str


class AnalysisOrder(msgspec.Struct, frozen=True):
    """What the analysis of ``seat`` in this finished match is made from — the
    match's record (the engine rebuilds the seat's observations from it) — for
    the requester ``conn``. The core's answer to ``Analyse``; the lobby hands it
    to the analysis service."""

    conn: ConnId
    request: wire.RequestId | None
    match_id: str
    seat: int
    record: MatchRecord


class Changed(msgspec.Struct, frozen=True):
    """What others see of the match changed: here it is now."""

    info: MatchInfo


class Entered(msgspec.Struct, frozen=True):
    """The connection is in this match now (in a seat, or watching)."""

    conn: ConnId


class Exited(msgspec.Struct, frozen=True):
    """The connection is no longer in this match."""

    conn: ConnId


class Rematch(msgspec.Struct, frozen=True):
    """The requester of ``play_again`` goes to the rematch ``match_id``; with
    ``opened``, it is new, and the server opens it first."""

    match_id: str
    opened: RematchPlan | None = None


class RematchPlan(msgspec.Struct, frozen=True):
    """A rematch to open: the finished match's settings, hosted by ``host``,
    each seat kept for its player (by id) or its bot (by strength), or empty."""

    settings: MatchSettings
    host: str
    seats: tuple[StoredSeat, ...]


class Finished(msgspec.Struct, frozen=True):
    """The match ended (or was restored ended): its result, for the ratings.
    It follows the store of the final action, so the result is on disk."""

    result: MatchResult


class Gone(msgspec.Struct, frozen=True):
    """The match has nobody left to wait for (an open match everyone left): drop it."""


#: Everything a match core may ask for.
Output = (
    Store
    | Reply
    | Send
    | SetTimer
    | CancelTimer
    | AskBot
    | AskHint
    | AnalysisOrder
    | Changed
    | Entered
    | Exited
    | Rematch
    | Gone
    | Finished
)
