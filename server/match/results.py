"""A finished match's result as ratings, profiles and history need it: each
seat's final points and place, who held it, and how many of its decisions the
server's stand-in made.

The places follow R23: most points first, then most tulips; seats tied on both
share their place (a shared victory is a shared first place). Places are
numbered as in sport, 1, 1, 3: a seat's place is one more than the seats
strictly ahead of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import FinalScoring

__all__ = ["MatchResult", "SeatResult", "places"]


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of a finished match."""

    seat: int
    #: the person's player id; None for a bot's seat
    player: str | None
    #: the name it played under: the person's, or ``bot N``
    name: str
    #: a bot's strength; None for a person
    bot: str | None
    points: int
    tulips: int
    #: 1 first; tied seats share it (R23)
    place: int
    #: decisions the seat took in the match, and those the server's stand-in took
    decisions: int = 0
    stand_in: int = 0

    @property
    def stood_in(self) -> bool:
        """Whether the stand-in made most of the seat's decisions: its result
        does not count for its player (as a zombie's does not)."""
        return self.player is not None and self.stand_in * 2 > self.decisions


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A finished match: what it was, and every seat's result."""

    match: str
    name: str
    ruleset: str
    open_box: bool
    rated: bool
    #: when it ended, seconds since the epoch
    finished: float
    seats: tuple[SeatResult, ...]


def places(scoring: FinalScoring) -> list[int]:
    """Each seat's place by R23: points, then tulips; ties share a place."""
    keys = [(score.total, score.tulips) for score in scoring.players]
    return [1 + sum(other > key for other in keys) for key in keys]
