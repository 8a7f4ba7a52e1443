"""Scoring: the points an action scores at once (R14–R17, :func:`action_points`),
and the final scoring (R20–R23): majorities per ranked colour, totals, the
winner and the tie-breaker that decided, as a breakdown a player can read.

:func:`action_points` is the one owner of the immediate points: the match
scores with it when it applies an action, and a seat's view of the table
(its observation) prices each legal action with it, for bots and prompts."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from .actions import Action, ActionKind
from .cards import COLOURS, Card, Colour
from .ruleset import MAJORITY_RANKS, RANKS, Ruleset

__all__ = [
    "UNRANKED",
    "FinalScoring",
    "MajorityPlace",
    "MajorityResult",
    "PlayerScore",
    "TieBreak",
    "action_points",
    "final_scoring",
]

#: R7: the rank an unranked colour scores as for keeping and giving (4th).
UNRANKED = RANKS - 1


_INDEX = {colour: i for i, colour in enumerate(COLOURS)}


def action_points(
    ruleset: Ruleset, ranking: Sequence[Colour], card: Card | None, action: Action
) -> int:
    """The points ``action`` scores at once for the seat that resolves ``card`` with it.

    ``ranking`` is the festival's ranking before the card moves, 1st first
    (R17). KEEP scores the bouquet points of the colour's rank (R14); GIVE the
    giving bonus of that rank plus the card's value, for the giver (R15); an
    unranked colour scores as 4th (R7). ADD, in either form, and the opening
    choice score nothing (R16, R11); so does any action without a drawn card
    (``card`` None).
    """
    kind = action.kind
    if card is None or (kind is not ActionKind.KEEP and kind is not ActionKind.GIVE):
        return 0
    colour = card.colour
    rank = ranking.index(colour) if colour in ranking else UNRANKED  # R7
    if kind is ActionKind.KEEP:
        return ruleset.bouquet_points[rank]
    return ruleset.giving_bonus[rank] + card.value


class TieBreak(enum.Enum):
    """What decided the winner (R23)."""

    POINTS = "points"  #: one player had the most points
    TULIPS = "tulips"  #: tied on points; the most tulips in the bouquet won
    SHARED = "shared"  #: tied on points and tulips; the victory is shared


@dataclass(frozen=True, slots=True)
class MajorityPlace:
    """One seat's standing for a colour's majority (R20–R21)."""

    seat: int
    cards: int
    value: int
    place: int  #: 0 for the first majority, 1 for the second, …
    points: int


@dataclass(frozen=True, slots=True)
class MajorityResult:
    """How one ranked colour's majorities were scored."""

    colour: Colour
    rank: int  #: 0 for 1st, 1 for 2nd, 2 for 3rd
    places: tuple[MajorityPlace, ...]  #: only seats that scored


@dataclass(frozen=True, slots=True)
class PlayerScore:
    """One seat's final points, split the way the rules earn them."""

    seat: int
    keeping: int
    giving: int
    majorities: tuple[tuple[Colour, int], ...]  #: points per colour, every colour listed
    tulips: int  #: cards in the bouquet, the first tie-breaker (R23)

    @property
    def majority_total(self) -> int:
        """All majority points together."""
        return sum(points for _, points in self.majorities)

    @property
    def total(self) -> int:
        """Keeping, giving and majority points together."""
        return self.keeping + self.giving + self.majority_total


@dataclass(frozen=True, slots=True)
class FinalScoring:
    """The whole end-of-game breakdown."""

    players: tuple[PlayerScore, ...]
    majorities: tuple[MajorityResult, ...]
    winners: tuple[int, ...]
    decided_by: TieBreak


def _tally(bouquets: Sequence[Sequence[Card]]) -> list[list[tuple[int, int]]]:
    """Per seat, per colour (in :data:`COLOURS` order): (cards, total value)."""
    tally = []
    for bouquet in bouquets:
        counts = [0, 0, 0, 0]
        values = [0, 0, 0, 0]
        for card in bouquet:
            i = _INDEX[card.colour]
            counts[i] += 1
            values[i] += card.value
        tally.append(list(zip(counts, values, strict=True)))
    return tally


def majority_result(
    ruleset: Ruleset, rank: int, colour: Colour, tally: Sequence[Sequence[tuple[int, int]]]
) -> MajorityResult:
    """Score one ranked colour's majorities (R20–R22) from :func:`_tally`."""
    places = ruleset.majority_places[len(tally)]
    i = _INDEX[colour]
    standings = sorted(
        ((seat_tally[i], seat) for seat, seat_tally in enumerate(tally) if seat_tally[i][0]),
        key=lambda s: (-s[0][0], -s[0][1], s[1]),
    )  # R22: a seat with no card of the colour is not in the standings
    scored: list[MajorityPlace] = []
    place = -1
    previous = None
    for key, seat in standings:
        if key != previous:  # R21: a tie shares a place; the next takes the next
            place += 1
            previous = key
        if place >= places:
            break
        points = ruleset.majority_points[rank][place]
        scored.append(MajorityPlace(seat, key[0], key[1], place, points))
    return MajorityResult(colour, rank, tuple(scored))


def final_scoring(
    ruleset: Ruleset,
    ranking: Sequence[Colour],
    bouquets: Sequence[Sequence[Card]],
    keeping: Sequence[int],
    giving: Sequence[int],
) -> FinalScoring:
    """Score the end of the game from the final ranking (after the reveal)."""
    tally = _tally(bouquets)
    results = tuple(
        majority_result(ruleset, rank, colour, tally)
        for rank, colour in enumerate(ranking[:MAJORITY_RANKS])  # R20: 4th and unranked score none
    )
    per_seat = [[0, 0, 0, 0] for _ in bouquets]
    for result in results:
        for place in result.places:
            per_seat[place.seat][_INDEX[result.colour]] += place.points
    scores = tuple(
        PlayerScore(
            seat=seat,
            keeping=keeping[seat],
            giving=giving[seat],
            majorities=tuple(zip(COLOURS, per_seat[seat], strict=True)),
            tulips=len(bouquets[seat]),
        )
        for seat in range(len(bouquets))
    )
    winners, decided_by = _winners(scores)
    return FinalScoring(scores, results, winners, decided_by)


def _winners(scores: Sequence[PlayerScore]) -> tuple[tuple[int, ...], TieBreak]:
    """R23: most points; then most tulips; then a shared victory."""
    best = max(s.total for s in scores)
    leaders = [s for s in scores if s.total == best]
    if len(leaders) == 1:
        return (leaders[0].seat,), TieBreak.POINTS
    most = max(s.tulips for s in leaders)
    leaders = [s for s in leaders if s.tulips == most]
    if len(leaders) == 1:
        return (leaders[0].seat,), TieBreak.TULIPS
    return tuple(s.seat for s in leaders), TieBreak.SHARED
