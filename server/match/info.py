"""What the rest of the server knows of a match: plain values its core hands
out whenever they change, so that nothing outside the match reads its state."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import protocol as wire

from .settings import MatchSettings

__all__ = ["MatchInfo", "Status"]


class Status(enum.Enum):
    """Where a match is in its life (its wire spelling is the value)."""

    OPEN = "open"  #: waiting for players and the host's start
    RUNNING = "running"
    #: an action could not be stored: nothing more is played until a restart
    PAUSED = "paused"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """A match as the lobby, the LAN announcement and the cluster see it."""

    id: str
    created: float
    status: Status
    settings: MatchSettings
    #: the host's player id
    host: str
    #: every player the match names (host and seats): who must stay known
    named: frozenset[str]
    #: the players who hold a seat here, left or not
    seated: frozenset[str]
    #: the players who hold a seat here they have not left: where each is put back
    homes: frozenset[str]
    #: seats nobody holds (no person, no bot)
    free_seats: int
    #: the rematch, once someone asked for one
    rematch: str | None
    #: the summary ``list_matches`` shows, and its ``match_update`` frame
    summary: wire.MatchSummary
    update: bytes
