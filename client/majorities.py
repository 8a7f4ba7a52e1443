"""The majority points each seat would score if the match ended now (R20–R22),
from what a seat's own view shows: its bouquets, the festival's ranking and
the table's points. The kit's hard strategy weighs its options by them.

A projection, not the final scoring: the reveal (R19) may still change the
ranking, and the server alone scores the match.
"""

from __future__ import annotations

from collections.abc import Sequence

import protocol as wire

__all__ = ["projected_majorities"]


def projected_majorities(state: wire.State, bouquets: Sequence[Sequence[str]]) -> list[int]:
    """Each seat's majority points, by seat, were ``bouquets`` final under
    ``state.ranking``: for the colours ranked 1st to 3rd, seats by most cards,
    then the higher value (R21: seats still tied share the place, the next
    seat takes the following place); a seat without the colour scores none (R22)."""
    won = [0] * len(bouquets)
    places = state.points.majority_places
    for rank, colour in enumerate(state.ranking[: len(state.points.majority)]):
        points = state.points.majority[rank]
        standings = sorted(
            (
                (-len(cards), -sum(wire.card_value(c) for c in cards), seat)
                for seat, bouquet in enumerate(bouquets)
                if (cards := [c for c in bouquet if wire.card_colour(c) == colour])
            ),
        )
        place, last = -1, (0, 0)
        for count, value, seat in standings:
            if (count, value) != last:
                place, last = place + 1, (count, value)
                if place >= min(places, len(points)):
                    break
            won[seat] += points[place]
    return won
