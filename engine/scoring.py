"""Scoring: the points an action scores at once (R14–R17, :func:`action_points`),
and the final scoring (R20–R23): majorities per ranked colour, totals, the
winner and the tie-breaker that decided, as a breakdown a player can read.

:func:`action_points` states the immediate points: a seat's view of the table
(its observation) prices each legal action with it, for bots and prompts.
The match applies the same two lines inline, on its hottest path (a call
there cost 4% of a playout); a property test (``test_r14_r17_...`` in
``tests/engine/test_properties.py``) holds the two to each other for every
legal action of random matches of every size."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from ._values import maker, value_class
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
# Enum members read from module globals: in Python 3.11, EnumType.__getattr__ makes
# every ``ActionKind.KEEP`` on a hot path cost a fifth of a microsecond.
_KEEP, _GIVE = ActionKind.KEEP, ActionKind.GIVE


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
    if card is None or (kind is not _KEEP and kind is not _GIVE):
        return 0
    colour = card.colour
    rank = ranking.index(colour) if colour in ranking else UNRANKED  # R7
    if kind is _KEEP:
        return ruleset.bouquet_points[rank]
    return ruleset.giving_bonus[rank] + card.value


class TieBreak(enum.Enum):
    """What decided the winner (R23)."""

    POINTS = "points"  #: one player had the most points
    TULIPS = "tulips"  #: tied on points; the most tulips in the bouquet won
    SHARED = "shared"  #: tied on points and tulips; the victory is shared


@value_class
class MajorityPlace:
    """One seat's standing for a colour's majority (R20–R21)."""

    seat: int
    cards: int
    value: int
    place: int  #: 0 for the first majority, 1 for the second, …
    points: int


@value_class
class MajorityResult:
    """How one ranked colour's majorities were scored."""

    colour: Colour
    rank: int  #: 0 for 1st, 1 for 2nd, 2 for 3rd
    places: tuple[MajorityPlace, ...]  #: only seats that scored


@value_class
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


@value_class
class FinalScoring:
    """The whole end-of-game breakdown."""

    players: tuple[PlayerScore, ...]
    majorities: tuple[MajorityResult, ...]
    winners: tuple[int, ...]
    decided_by: TieBreak


#: Builders of the breakdown's values (engine._values.maker): the same values as
#: calling the classes, without type.__call__ and __init__; a bot's search scores
#: every playout.
_majority_place = maker(MajorityPlace)
_majority_result = maker(MajorityResult)
_player_score = maker(PlayerScore)
_final = maker(FinalScoring)


def final_scoring(
    ruleset: Ruleset,
    ranking: Sequence[Colour],
    bouquets: Sequence[Sequence[Card]],
    keeping: Sequence[int],
    giving: Sequence[int],
) -> FinalScoring:
    """Score the end of the game from the final ranking (after the reveal).

    Written as plain loops, not comprehensions: it runs once per playout of
    a bot's search, and each comprehension is a call in Python 3.11.
    """
    places = ruleset.majority_places[len(bouquets)]
    majority_points = ruleset.majority_points
    index = _INDEX
    tallies = []  # per seat: how many cards of each colour, and their total value
    won = []  # per seat, the majority points of each colour
    for bouquet in bouquets:
        counts = [0, 0, 0, 0]  # in COLOURS order
        values = [0, 0, 0, 0]
        for card in bouquet:
            i = index[card.colour]
            counts[i] += 1
            values[i] += card.value
        tallies.append((counts, values))
        won.append([0, 0, 0, 0])
    results = []
    for rank, colour in enumerate(ranking[:MAJORITY_RANKS]):  # R20: 4th and unranked none
        i = index[colour]
        # most cards first, then the higher value (R21), then seat order; a seat
        # with no card of the colour is not in the standings (R22)
        standings = []
        for seat, (counts, values) in enumerate(tallies):
            if counts[i]:
                standings.append((-counts[i], -values[i], seat))
        standings.sort()
        points = majority_points[rank]
        scored = []
        place = -1
        last_cards = last_value = 0
        for minus_cards, minus_value, seat in standings:
            if minus_cards != last_cards or minus_value != last_value:  # R21: ties share
                place += 1
                if place >= places:
                    break
                last_cards = minus_cards
                last_value = minus_value
            earned = points[place]
            won[seat][i] += earned
            scored.append(_majority_place(seat, -minus_cards, -minus_value, place, earned))
        results.append(_majority_result(colour, rank, tuple(scored)))
    c0, c1, c2, c3 = COLOURS
    scores = []
    totals = []
    tulips = []
    for seat, w in enumerate(won):
        kept, given, cards = keeping[seat], giving[seat], len(bouquets[seat])
        majorities = ((c0, w[0]), (c1, w[1]), (c2, w[2]), (c3, w[3]))
        scores.append(_player_score(seat, kept, given, majorities, cards))
        totals.append(kept + given + w[0] + w[1] + w[2] + w[3])
        tulips.append(cards)
    winners, decided_by = _winners(totals, tulips)
    return _final(tuple(scores), tuple(results), winners, decided_by)


_POINTS, _TULIPS, _SHARED = TieBreak.POINTS, TieBreak.TULIPS, TieBreak.SHARED


def _winners(totals: Sequence[int], tulips: Sequence[int]) -> tuple[tuple[int, ...], TieBreak]:
    """R23: most points; then most tulips; then a shared victory."""
    best = max(totals)
    leaders = [seat for seat, total in enumerate(totals) if total == best]
    if len(leaders) == 1:
        return (leaders[0],), _POINTS
    most = max(tulips[seat] for seat in leaders)
    leaders = [seat for seat in leaders if tulips[seat] == most]
    if len(leaders) == 1:
        return (leaders[0],), _TULIPS
    return tuple(leaders), _SHARED
