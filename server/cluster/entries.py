"""What the cluster keeps in Redis, as typed values with one MessagePack form.

Invariants: a :class:`PlayerEntry` holds a token's SHA-256 hash, never the
token; every value is sealed in Redis with the cluster's key (:mod:`.signing`;
:mod:`.store` seals and opens); a :class:`DirectoryEntry` is written only by
the node that runs its match (``node``), so each entry has one writer; a
:class:`NodeInfo` lives under a key with a time to live, so a node that stops
beating disappears, and carries its own expiry, so an old one written again
is not believed for long.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

import protocol as wire

__all__ = [
    "CLOCK_SKEW",
    "DirectoryEntry",
    "EntryError",
    "NodeInfo",
    "PlayerEntry",
    "Presence",
    "RatedChange",
    "RatingEntry",
    "RatingsApplied",
    "Removal",
    "ResultRecord",
    "SeatRecord",
    "Stamp",
    "TotalsEntry",
    "decode",
    "encode",
]


#: Seconds the clocks of two nodes' machines may disagree by: a heartbeat is
#: believed until this long after the expiry its node wrote in it.
CLOCK_SKEW = 30.0


class EntryError(Exception):
    """Bytes from Redis that are not the entry they should be."""


class Stamp(msgspec.Struct, frozen=True):
    """When, and as what, a sender sent a message: what tells a message sent
    again by someone else (sealed bytes can be copied) from a new one."""

    #: the node id of the sender (``@tulips-cluster`` for the admin command)
    sender: str
    #: random, drawn when the sender's process started: one run of it
    boot: str
    #: when that run started (Unix time, the sender's clock): orders its runs
    started: float
    #: 1, 2, 3, … over everything that run sends
    seq: int
    #: when it was sent (Unix time, the sender's clock; never earlier than the last)
    sent: float

    @property
    def order(self) -> tuple[float, str, int]:
        """What orders one sender's stamps: a later run's come after an earlier's."""
        return (self.started, self.boot, self.seq)


class PlayerEntry(msgspec.Struct, frozen=True):
    """A player identity every node can check a resume token against."""

    id: str
    name: str
    token_hash: str
    #: the token hashes of the player's other devices (linked with a code)
    other_tokens: tuple[str, ...] = ()


class RatingEntry(msgspec.Struct, frozen=True):
    """One identity's rating, shared by every node (``rating:<id>``)."""

    mu: float
    sigma: float
    matches: int = 0
    wins: int = 0


class RatedChange(msgspec.Struct, frozen=True):
    """How one seat's rating moved with a rated match."""

    seat: int
    ident: str
    name: str
    before: tuple[float, float]
    after: tuple[float, float]


class SeatRecord(msgspec.Struct, frozen=True):
    """One seat of a finished match, as history lists it."""

    seat: int
    #: the person's player id; None for a bot's seat (or a removed player's)
    player: str | None
    name: str
    #: a bot's strength; None for a person
    bot: str | None
    points: int
    tulips: int
    #: 1 first; tied seats share it (R23)
    place: int


class ResultRecord(msgspec.Struct, frozen=True):
    """A finished match as every node's history and profiles list it."""

    name: str
    ruleset: str
    open_box: bool
    rated: bool
    #: when it ended (Unix time)
    finished: float
    #: the node that ran it (and keeps its actions: its replay is asked there)
    node: str
    seats: tuple[SeatRecord, ...]


class RatingsApplied(msgspec.Struct, frozen=True):
    """The mark that a match's result was applied to the shared ratings, with
    its changes and its record for history (``applied:<match>``): a match
    counts once, on any node, rated or not."""

    match: str
    changes: tuple[RatedChange, ...] = ()
    #: the match as history lists it (None in a mark written before history was shared)
    record: ResultRecord | None = None


class TotalsEntry(msgspec.Struct, frozen=True):
    """One identity's finished matches, rated or not (``totals:<id>``): one
    for each seat it held, as a profile counts them."""

    matches: int = 0
    wins: int = 0
    #: the points of all those seats together (the profile shows their mean)
    points: int = 0


class Removal(msgspec.Struct, frozen=True):
    """An operator removed this player (``removed``): every node takes them out
    of its own file when it starts (as ``tulips-server players remove`` would)."""

    player: str
    #: when (Unix time)
    removed: float


class DirectoryEntry(msgspec.Struct, frozen=True):
    """One match of the cluster, as its node publishes it.

    ``homes`` are the ids of the players who hold a seat they have not left
    (where a reconnecting player is put back); ``gone`` marks a match its node
    has forgotten (an old finished one), which alone carries no summary.
    """

    match: str
    node: str
    created: float
    summary: wire.MatchSummary | None
    homes: tuple[str, ...] = ()
    #: given by the store when it is sent; one in Redis without it is ignored
    stamp: Stamp | None = None

    @property
    def gone(self) -> bool:
        """Whether this entry removes its match from the directory."""
        return self.summary is None


class NodeInfo(msgspec.Struct, frozen=True):
    """A node's heartbeat: where clients reach it, and what it holds now."""

    node: str
    url: str
    pid: int
    started: float
    matches: int = 0
    connections: int = 0
    #: the fingerprint of the certificate it serves (None: plain ws://)
    fingerprint: str | None = None
    #: when (Unix time) its node stops vouching for it: an old heartbeat
    #: written again is not believed for long
    expires: float = 0.0

    def fresh_at(self, now: float) -> bool:
        """Whether this heartbeat is still believed at ``now`` (Unix time)."""
        return now <= self.expires + CLOCK_SKEW


class Presence(msgspec.Struct, frozen=True):
    """A player said hello at ``node`` (their connections elsewhere are
    replaced) or, with ``match``, took a seat or began watching there (their
    seats on other nodes are left, as ``join`` leaves one's match on one server)."""

    player: str
    node: str
    match: str | None = None
    #: given by the store when it is sent; one without it is ignored
    stamp: Stamp | None = None


_encoder = msgspec.msgpack.Encoder()
_T = TypeVar("_T")


def encode(value: msgspec.Struct) -> bytes:
    """The MessagePack form of an entry."""
    return _encoder.encode(value)


def decode(data: bytes, kind: type[_T]) -> _T:
    """An entry read back, or :class:`EntryError` saying what was wrong."""
    try:
        return msgspec.msgpack.decode(data, type=kind)
    except (msgspec.DecodeError, TypeError, ValueError) as exc:
        raise EntryError(f"not a {kind.__name__}: {exc}") from None
