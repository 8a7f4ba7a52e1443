"""What a match core is told: one command at a time, each a plain value.

Requests come from a connection (``conn``, a number the server gives it) on
behalf of a person (:class:`Person`), and carry the request's ``id`` to
answer with (None: a request that needs no answer). The rest come from the
match's own actor: a timer that fired, a bot's decision, the result of a
store, a connection that went away. Times are not in the commands: the core
is handed the time with each one (:meth:`~server.match.core.MatchCore.handle`).
"""

from __future__ import annotations

import msgspec

import engine
import engine.analysis
import protocol as wire

__all__ = [
    "Act",
    "AddBot",
    "Analyse",
    "Attach",
    "BotDecided",
    "Broadcast",
    "Chat",
    "Command",
    "ConnId",
    "Detach",
    "Halt",
    "Hint",
    "HintReady",
    "Join",
    "Leave",
    "Open",
    "Person",
    "PlayAgain",
    "RematchOpened",
    "RemoveSeat",
    "Replay",
    "Resume",
    "Start",
    "Stored",
    "Sync",
    "Tick",
    "Watch",
]

#: A connection, as the server numbers them.
ConnId = int


class Person(msgspec.Struct, frozen=True):
    """Who a request is from: a player's id and the name they go by now."""

    id: str
    name: str


class Open(msgspec.Struct, frozen=True):
    """The first command of a new match: its host enters (in ``seat``, or
    watching), once the match is on disk."""

    conn: ConnId
    person: Person
    seat: int | None
    request: wire.RequestId | None


class Join(msgspec.Struct, frozen=True):
    """Take a seat (``seat``, or the first free one), or take one's own back."""

    conn: ConnId
    person: Person
    seat: int | None
    code: str | None
    request: wire.RequestId | None
    #: a rematch's latecomer watches if every seat is taken
    watch_if_full: bool = False


class Watch(msgspec.Struct, frozen=True):
    """Follow the match as a spectator."""

    conn: ConnId
    person: Person
    code: str | None
    request: wire.RequestId | None


class Attach(msgspec.Struct, frozen=True):
    """A returning player's new connection: put them back in their seat
    (answered with an unasked ``joined``)."""

    conn: ConnId
    person: Person


class Detach(msgspec.Struct, frozen=True):
    """A member's connection is gone."""

    conn: ConnId


class Leave(msgspec.Struct, frozen=True):
    """Leave the match. ``answer`` False: the player went to another match (on
    this node, ``conn`` is theirs; on another, None), nothing is answered and
    nothing waits for the disk."""

    conn: ConnId | None
    person: Person
    request: wire.RequestId | None
    answer: bool = True


class Start(msgspec.Struct, frozen=True):
    """The host deals, with the seed (and an open box's salt) drawn for it;
    ``without_absent``: first the seats nobody is in (empty, or kept for a
    rematch's player who has not accepted) go, and the rest are renumbered."""

    conn: ConnId
    person: Person
    seed: int
    salt: bytes | None
    request: wire.RequestId | None
    without_absent: bool = False


class AddBot(msgspec.Struct, frozen=True):
    """The host puts a bot of ``strength`` in a free seat (None: the lowest)."""

    conn: ConnId
    person: Person
    seat: int | None
    strength: str
    request: wire.RequestId | None


class RemoveSeat(msgspec.Struct, frozen=True):
    """The host frees a seat of the open match: its bot goes, or its player
    is put out (and told)."""

    conn: ConnId
    person: Person
    seat: int
    request: wire.RequestId | None


class Act(msgspec.Struct, frozen=True):
    """A proposed action for the person's seat, naming (``seq``) the prompt it
    answers; None: whatever decision is open."""

    conn: ConnId
    person: Person
    action: engine.Action
    seq: int | None
    request: wire.RequestId | None


class Sync(msgspec.Struct, frozen=True):
    """A fresh snapshot (and prompt) for the connection."""

    conn: ConnId
    request: wire.RequestId | None


class Replay(msgspec.Struct, frozen=True):
    """A page of the match's record, as the person's seat saw it."""

    conn: ConnId
    person: Person
    code: str | None
    from_seq: int
    request: wire.RequestId | None


class Chat(msgspec.Struct, frozen=True):
    """A chat line to everyone in the match."""

    conn: ConnId
    person: Person
    text: str
    request: wire.RequestId | None


class PlayAgain(msgspec.Struct, frozen=True):
    """Ask for the rematch of a finished match; ``new_id`` is the id a rematch
    opened now gets."""

    conn: ConnId
    person: Person
    new_id: str
    request: wire.RequestId | None


class RematchOpened(msgspec.Struct, frozen=True):
    """The rematch this match asked for exists now: its other players are told."""

    rematch: str
    host: Person


class Broadcast(msgspec.Struct, frozen=True):
    """Frames for everyone in the match now, players and spectators (the
    ``ratings`` notice once a finished match's result is applied)."""

    frames: tuple[bytes, ...]


class Tick(msgspec.Struct, frozen=True):
    """A timer the core set has fired."""

    timer: str


class BotDecided(msgspec.Struct, frozen=True):
    """A bot's answer to :class:`~server.match.outputs.AskBot`."""

    seat: int
    decision: int
    action: engine.Action


class Analyse(msgspec.Struct, frozen=True):
    """Ask for what an analysis of ``seat`` (None: the person's own) needs, if
    the person may have it (R27): answered with an
    :class:`~server.match.outputs.AnalysisOrder`, or an error."""

    conn: ConnId
    person: Person
    seat: int | None
    code: str | None
    request: wire.RequestId | None


class Hint(msgspec.Struct, frozen=True):
    """A player asks for the values of their open decision (the prompt of
    ``seq``; None: whichever is open), in a match that allows hints."""

    conn: ConnId
    person: Person
    seq: int | None
    request: wire.RequestId | None


class HintReady(msgspec.Struct, frozen=True):
    """A hint asked for with :class:`~server.match.outputs.AskHint` was
    computed (``values``), or could not be (None, with ``why``)."""

    conn: ConnId
    request: wire.RequestId | None
    seat: int
    decision: int
    seq: int
    values: engine.analysis.DecisionValues | None
    why: str = ""


class Stored(msgspec.Struct, frozen=True):
    """The writes of the last :class:`~server.match.outputs.Store` are on disk
    (``error`` None), or could not be stored."""

    error: Exception | None = None


class Resume(msgspec.Struct, frozen=True):
    """The first command of a match rebuilt after a restart: absent players get
    their grace period, bots carry on, an open match may go."""


class Halt(msgspec.Struct, frozen=True):
    """The server is stopping: no more actions, timers or bots."""


#: Every command a match core takes.
Command = (
    Open
    | Join
    | Watch
    | Attach
    | Detach
    | Leave
    | Start
    | AddBot
    | RemoveSeat
    | Act
    | Sync
    | Replay
    | Chat
    | PlayAgain
    | RematchOpened
    | Broadcast
    | Tick
    | BotDecided
    | Stored
    | Resume
    | Halt
    | Analyse
    | Hint
    | HintReady
)
