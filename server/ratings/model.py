"""The rating model: openskill's Weng–Lin (Plackett–Luce) on a finished
match's places, and the rule for which matches and seats count.

Pure functions of their arguments: the owner (:mod:`.book`) reads the ratings
before a match, calls :func:`rate`, and stores what it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from openskill.models import PlackettLuce

import protocol as wire

from ..match.results import MatchResult, SeatResult
from ..match.settings import MatchSettings

__all__ = [
    "BOT_IDS",
    "DEFAULT",
    "STRENGTH_OF",
    "Skill",
    "counted_seats",
    "default_rated",
    "identity_of",
    "rate",
]

#: The rating identity of the server's bots of each strength: one rating per strength.
BOT_IDS: dict[str, str] = {strength: f"bot_{strength}" for strength in wire.STRENGTHS}
#: A bot identity's strength.
STRENGTH_OF: dict[str, str] = {ident: strength for strength, ident in BOT_IDS.items()}


@dataclass(frozen=True, slots=True)
class Skill:
    """One rating: Weng–Lin's mean ``mu`` and uncertainty ``sigma``."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """The conservative rating shown and ranked by: μ − 3σ."""
        return self.mu - 3 * self.sigma

    def to_wire(self) -> wire.Rating:
        """As the protocol carries it (rounded to what a person reads)."""
        return wire.Rating(
            mu=round(self.mu, 4), sigma=round(self.sigma, 4), ordinal=round(self.ordinal, 4)
        )


@cache
def _model() -> PlackettLuce:
    return PlackettLuce()


#: A player's rating before their first rated match: openskill's defaults (μ 25, σ 25/3).
DEFAULT = Skill(_model().mu, _model().sigma)


def default_rated(settings: MatchSettings) -> bool:
    """Whether a match is rated when its host does not say: with the printed
    rules only — not a house ruleset, not open box (its seed is published),
    not a tutorial (its deal is always the same).

    This is the one place for the rule: a match option that changes play (such
    as hints) makes a match unrated here too.
    """
    return (
        settings.ruleset_name == "standard"
        and not settings.open_box
        and not settings.tutorial
        and not settings.hints
    )


def identity_of(seat: SeatResult) -> str | None:
    """Whose rating a seat's result is: its person's, its bot strength's, or
    nobody's (an empty seat, a removed player)."""
    if seat.bot is not None:
        return BOT_IDS.get(seat.bot)
    return seat.player


def counted_seats(result: MatchResult) -> list[SeatResult]:
    """The seats whose result counts: each with a rating identity, not mostly
    played by the server's stand-in. Fewer than two: nothing is rated."""
    seats = [s for s in result.seats if identity_of(s) is not None and not s.stood_in]
    return seats if len(seats) >= 2 else []


def rate(before: Sequence[Skill], places: Sequence[int]) -> list[Skill]:
    """Every seat's rating after a free-for-all whose places (1 first, ties
    shared) are ``places``: each seat a team of one."""
    model = _model()
    teams = [[model.rating(mu=skill.mu, sigma=skill.sigma)] for skill in before]
    after = model.rate(teams, ranks=[float(place) for place in places])
    return [Skill(team[0].mu, team[0].sigma) for team in after]
