"""Playing a dealt world on to the end, every seat as the medium bot, and
scoring it for the viewer: the continuation the analysis values options by.

A world is a :class:`~engine.bots.table.Table` (the viewer's view, with
``others`` holding the cards other seats put face down in the world once it
was dealt) and the cards still to be drawn. The medium bot
(:func:`engine.bots.inference.medium_choices`, the table form of
:func:`engine.bots.policies.medium_policy`) places every card that is drawn,
for every seat, the viewer included; its ties are broken by a generator
(:func:`play_out`) or followed each with its share of the chance
(:func:`expect_out`, with the cards drawn enumerated too). Why the medium
bot: it sees what a card scores at once and the majorities it may swing
(R14–R22), like a sensible player; it costs tens of microseconds a card,
where the hard bot thinks for a third of a second.

At the end (R18), :mod:`engine.analysis.reveal` gives the chance of each
order of the colours that score after the reveal (R19), and :class:`Scorer`
turns that into the viewer's expected final points (R20–R22) and share of
the victory (R23).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from ..actions import TurnAction
from ..bots.inference import TURN_ACTION, medium_choices
from ..bots.table import CARD_TYPES, KEEP, Table
from ..cards import VALUES
from ..match import climb
from .reveal import Ranking, reveal_rankings

_VALUES = len(VALUES)
_LOWEST = VALUES[0]

__all__ = ["Outcome", "Scorer", "expect_out", "opening_choice", "place", "play_out"]

Outcome = tuple[float, float]  #: the viewer's expected final points and share of the victory


class Scorer:
    """Scores finished worlds for the viewer: the reveal's chances (R19), then
    final points and the share of the victory for each order (R20–R23).

    ``unknown`` is how many cards others put face down that the viewer never
    saw; ``pool`` counts the unseen cards they are drawn from. Worlds that
    end alike share one reveal: its chances are kept by everything they
    depend on."""

    __slots__ = ("_rankings", "unknown")

    def __init__(self, unknown: int) -> None:
        self.unknown = unknown
        self._rankings: dict[tuple[object, ...], dict[Ranking, float]] = {}

    def score(self, t: Table, pool: Sequence[int]) -> Outcome:
        """The viewer's expected final points and share of the victory at the
        end of world ``t`` (its deck empty), with ``pool`` the unseen cards
        the unknown secret cards come from: exact."""
        known = [0] * CARD_TYPES
        for card in t.mine:
            known[card] += 1
        for card in t.others or ():
            known[card] += 1
        key = (tuple(t.totals), tuple(t.ranking), tuple(known), tuple(pool))
        rankings = self._rankings.get(key)
        if rankings is None:
            rankings = reveal_rankings(
                t.totals,
                t.ranking,
                known,
                self.unknown,
                pool,
                t.rules.reveal_size,
                len(t.rules.majority),
            )
            self._rankings[key] = rankings
        return _outcome(t, rankings.items())

    @staticmethod
    def sample(t: Table, hidden: Sequence[int], rng: random.Random, reveals: int) -> Outcome:
        """The viewer's mean final points and share of the victory at the end
        of world ``t`` over ``reveals`` random reveals (R19), the secret
        festival holding, besides the world's known cards, ``hidden`` (the
        cards others put face down unseen, as dealt). Two worlds with the same
        secret festival draw the same reveals from equal generators."""
        pile = sorted([*t.mine, *(t.others or ()), *hidden])
        size = min(t.rules.reveal_size, len(pile))
        places = len(t.rules.majority)
        counts: dict[Ranking, int] = {}
        for _ in range(reveals):
            totals, ranking = t.totals[:], t.ranking[:]
            for card in rng.sample(pile, size):
                colour, value = divmod(card, _VALUES)
                totals[colour] += value + _LOWEST
                climb(ranking, totals, colour)  # R8
            final = tuple(ranking[:places])
            counts[final] = counts.get(final, 0) + 1
        return _outcome(t, ((r, n / reveals) for r, n in counts.items()))


def _outcome(t: Table, rankings: Iterable[tuple[Ranking, float]]) -> Outcome:
    """The viewer's final points and share of the victory (R20–R23), averaged
    over final orders of the colours that score, each with its chance."""
    me = t.me
    points = share = 0.0
    for ranking, p in rankings:
        points += p * (t.points[me] + t.majorities(ranking)[me])
        share += p * t.share_over({ranking: 1})
    return points, share


def _next(t: Table, seat: int, used: TurnAction | None, how: int) -> tuple[int, TurnAction | None]:
    """Who draws next, and what their turn has used, once ``seat`` placed a
    card by ``how`` (``used``: what the turn had used before it, R13)."""
    if used is None and t.deck > 0:
        return seat, TURN_ACTION[how]
    return (seat + 1) % t.players, None


def place(
    t: Table, seat: int, used: TurnAction | None, card: int, how: int, to: int | None
) -> tuple[int, TurnAction | None]:
    """``seat`` places the drawn ``card`` (already taken from the deck count);
    returns who draws next and what their turn has used."""
    t.place(seat, card, how, to)
    return _next(t, seat, used, how)


def play_out(
    t: Table, deck: list[int], seat: int, used: TurnAction | None, rng: random.Random
) -> None:
    """Play world ``t`` to the end (R18): ``seat`` draws next, its turn having
    used ``used``; ``deck`` holds the cards to draw, the next one last. Ties
    of the medium bot are broken by ``rng``."""
    random_ = rng.random
    while t.deck > 0:
        card = deck.pop()
        t.deck -= 1
        chosen = medium_choices(t, seat, card, used)
        how, to = chosen[int(random_() * len(chosen))] if len(chosen) > 1 else chosen[0]
        seat, used = place(t, seat, used, card, how, to)


def expect_out(
    t: Table, pool: list[int], seat: int, used: TurnAction | None, scorer: Scorer
) -> Outcome:
    """The viewer's expected outcome of world ``t`` played to the end, every
    card still to draw enumerated from ``pool`` (counts by card index of the
    unseen cards, which the deck is a uniform draw from) with its chance, and
    every tie of the medium bot followed with its share: exact, and as costly
    as the cards left to draw are many."""
    if t.deck <= 0:
        return scorer.score(t, pool)
    left = sum(pool)
    points = share = 0.0
    for card in range(CARD_TYPES):
        n = pool[card]
        if not n:
            continue
        pool[card] -= 1
        chosen = medium_choices(t, seat, card, used)
        weight = n / left / len(chosen)
        for how, to in chosen:
            after = t.copy()
            after.deck -= 1
            next_seat, next_used = place(after, seat, used, card, how, to)
            p, s = expect_out(after, pool, next_seat, next_used, scorer)
            points += weight * p
            share += weight * s
        pool[card] += 1
    return points, share


def opening_choice(t: Table, seat: int, hand: tuple[int, int], rng: random.Random | None) -> int:
    """The card of ``hand`` the medium bot puts face down at the opening (R11):
    it keeps the one after which its standing is best, the majorities in view
    (:func:`engine.bots.policies.medium_policy`); ties broken by ``rng``, or the
    first card when there is none."""
    standings = []
    for kept in hand:
        after = t.copy()
        after.place(seat, kept, KEEP)
        after.points[seat] = t.points[seat]  # R11: the opening scores nothing
        standings.append(after.standing(seat))
    first, second = hand
    if standings[0] > standings[1]:
        return second
    if standings[1] > standings[0]:
        return first
    if rng is None:
        return second
    return second if rng.random() < 0.5 else first
