"""The end-of-game reveal (R19), exactly: how likely each final order of the
colours that score majorities (R20) is, from what is known of the secret
festival.

The secret festival holds *known* cards (those the viewer put there, and, in
a dealt world, those others put there while it was played on) and *unknown*
ones: cards others put face down unseen, which are a uniform draw from the
*pool* of cards the viewer has not seen (the removed cards and those unknown
ones, in a uniform arrangement, R4, R26). The reveal shuffles the pile and
turns over ``reveal_size`` cards one at a time, re-ranking after each (R8);
so the next card turned over is any one card of the pile with equal chance,
and, when it is an unknown one, a uniform draw from what is left of the pool.
:func:`reveal_rankings` follows that chance tree card by card, merging
equal states, and stops early on a branch where no card left can still
change the order of the colours that score.

A card is an index from 0 to 11, ``colour * 3 + value - 2``, and a colour an
index from 0 to 3, as on a :class:`~engine.bots.table.Table`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..bots.table import CARD_TYPES
from ..cards import COLOURS, VALUES
from ..match import climb

__all__ = ["reveal_rankings"]

_VALUES = len(VALUES)
_LOWEST = VALUES[0]
#: each colour's cards, highest value first: the most a colour can still gain
_BY_VALUE = tuple(
    tuple(colour * _VALUES + v for v in reversed(range(_VALUES))) for colour in range(len(COLOURS))
)

Ranking = tuple[int, ...]


def reveal_rankings(
    totals: Sequence[int],
    ranking: Sequence[int],
    known: Sequence[int],
    unknown: int,
    pool: Sequence[int],
    reveal_size: int,
    places: int,
) -> dict[Ranking, float]:
    """The chance of each order of the first ``places`` ranked colours once the
    reveal is over (R19, R8).

    ``totals`` are the festival's totals by colour and ``ranking`` its ranked
    colours, 1st first, before the reveal; ``known`` counts the known cards
    of the secret festival by card index, ``unknown`` how many others are in
    it, and ``pool`` counts by card index the unseen cards those are drawn
    from (it must hold at least ``unknown`` cards).
    """
    if sum(pool) < unknown:
        raise ValueError(f"{unknown} unknown secret cards, but only {sum(pool)} unseen")
    steps = min(reveal_size, sum(known) + unknown)
    memo: dict[tuple[object, ...], dict[Ranking, float]] = {}
    return _follow(
        list(totals), tuple(ranking), tuple(known), unknown, tuple(pool), steps, places, memo
    )


def _follow(
    totals: list[int],
    ranking: Ranking,
    known: tuple[int, ...],
    unknown: int,
    pool: tuple[int, ...],
    steps: int,
    places: int,
    memo: dict[tuple[object, ...], dict[Ranking, float]],
) -> dict[Ranking, float]:
    """The chance of each final order from this state, ``steps`` cards still to turn."""
    if steps == 0 or _settled(totals, ranking, known, unknown, pool, steps, places):
        return {ranking[:places]: 1.0}
    # Within one reveal the totals follow from the cards turned so far, so they
    # need not be part of the key.
    key = (known, unknown, pool, ranking)
    found = memo.get(key)
    if found is not None:
        return found
    pile = sum(known) + unknown
    left = sum(pool)
    out: dict[Ranking, float] = {}
    for card in range(CARD_TYPES):
        chance_known = known[card] / pile
        chance_unknown = unknown * pool[card] / (pile * left) if unknown else 0.0
        if not chance_known and not chance_unknown:
            continue
        colour, value = divmod(card, _VALUES)
        raised = totals[:]
        raised[colour] += value + _LOWEST
        order = list(ranking)
        climb(order, raised, colour)  # R8
        after = tuple(order)
        if chance_known:
            rest = (*known[:card], known[card] - 1, *known[card + 1 :])
            sub = _follow(raised, after, rest, unknown, pool, steps - 1, places, memo)
            for final, p in sub.items():
                out[final] = out.get(final, 0.0) + chance_known * p
        if chance_unknown:
            rest = (*pool[:card], pool[card] - 1, *pool[card + 1 :])
            sub = _follow(raised, after, known, unknown - 1, rest, steps - 1, places, memo)
            for final, p in sub.items():
                out[final] = out.get(final, 0.0) + chance_unknown * p
    memo[key] = out
    return out


def _settled(
    totals: list[int],
    ranking: Ranking,
    known: tuple[int, ...],
    unknown: int,
    pool: tuple[int, ...],
    steps: int,
    places: int,
) -> bool:
    """True when no ``steps`` cards still in play can change the order of the
    first ``places`` ranked colours: no colour can reach the total of the
    colour it would have to pass into, or within, those places (R8)."""
    ranked = len(ranking)
    for colour in range(len(COLOURS)):
        gain = _most_gain(colour, known, unknown, pool, steps)
        if not gain:
            continue
        if colour in ranking:
            place = ranking.index(colour)
            if place == 0:
                continue
            rival = ranking[min(place, places) - 1]
        elif ranked < places:
            return False  # it would join the places that score
        else:
            rival = ranking[places - 1]
        if totals[colour] + gain >= totals[rival]:
            return False
    return True


def _most_gain(
    colour: int, known: tuple[int, ...], unknown: int, pool: tuple[int, ...], steps: int
) -> int:
    """The most ``colour``'s total can still rise by in ``steps`` cards turned over."""
    gain = 0
    for card in _BY_VALUE[colour]:
        n = known[card] + (min(pool[card], unknown) if unknown else 0)
        take = min(n, steps)
        gain += take * (card % _VALUES + _LOWEST)
        steps -= take
        if not steps:
            break
    return gain
