"""A minimal rules loop: the whole game, written the plain way, to measure the engine by.

This is what someone would write in an afternoon to play random matches of
Gift of Tulips under the standard ruleset (R30): plain lists and ints, one
function per match, no events, no validation, no history, no observation.
``python -m engine.lab.bench --minimal`` times it beside the engine's own
loop (:mod:`engine.lab.playouts`), by the same best-slice method, to say how
much the engine's safety and records cost against the bare rules.

Its rules import nothing from the engine (only the timing is shared, so that
both loops are timed alike): its numbers are the published game's,
written out here (``tests/engine/test_minimal.py`` holds them to
:data:`engine.DEFAULT_RULESET`). It is honest, not sabotaged: the state is a
handful of local lists, legal actions are built in a few appends, and chance
is the standard library's :class:`random.Random`, used as the rules read.

Invariants, which make it a check on the engine as much as a yardstick:

* chance draws come from ``random.Random(seed)`` in the engine's order (R4,
  R10, R11, R12, R19) — the shuffles, the starting festival, the hands, the
  first seat and the reveal — so a seed deals the same match as
  :meth:`engine.Match.new`;
* legal actions are listed in the engine's order (the opening: the hand's
  first card face down, then the second, once if both are the same card; a
  turn: KEEP, GIVE to each other seat in seat order, ADD face up, ADD face
  down, less those the turn's first card used), and each decision takes
  ``legal[int(rng.random() * len(legal))]`` as the bench's engine loop does,

so for the same seed and the same choice generator it plays the very match
the engine plays, and reaches the same final points; the test checks that.

Cards are ints: ``colour * 3 + (value - 2)``, colours numbered in the
engine's canonical order (purple, blue, pink, orange).
"""

from __future__ import annotations

import random
import sys

from engine.lab.playouts import best_rate

__all__ = ["playout", "playouts_per_cpu_second"]

# -- the standard ruleset (R3, R4, R19, R20, R30) ----------------------------------------

COPIES = 6  #: R3: copies of each colour-value pair
EXTRA_COPIES = 2  #: R3: more of each pair from EXTRA_FROM players on
EXTRA_FROM = 5
REMOVED = {2: 18, 3: 4, 4: 6, 5: 14, 6: 10}  #: R4
REVEAL = 5  #: R19
GIVING = (3, 2, 1, 0)  #: R30, by rank 1st..4th (4th also for unranked, R7)
BOUQUET = (0, 0, 1, 2)  #: R30
MAJORITY = ((15, 10, 5), (10, 7, 4), (5, 3, 1))  #: R30, ranks 1st..3rd
PLACES = {2: 1, 3: 2, 4: 2, 5: 3, 6: 3}  #: R20: majority places that score

#: A card's colour and value, by card (``colour * 3 + value - 2``).
COLOUR = tuple(card // 3 for card in range(12))
VALUE = tuple(card % 3 + 2 for card in range(12))

# Actions: ints. GIVE to seat s is GIVE_TO + s.
KEEP, UP, SECRET, GIVE_TO = 0, 1, 2, 3
# What a turn's first card used (R13; both forms of adding are one ADD, R16).
USED_KEEP, USED_GIVE, USED_ADD = 1, 2, 3


def _climb(ranking: list[int], totals: list[int], colour: int) -> None:
    """R8: ``colour``'s total has risen; it goes above every colour it ties or passes."""
    if colour in ranking:
        ranking.remove(colour)
    total = totals[colour]
    i = 0
    while i < len(ranking) and totals[ranking[i]] > total:
        i += 1
    ranking.insert(i, colour)


def _final_points(
    players: int, ranking: list[int], bouquets: list[list[int]], points: list[int]
) -> list[int]:
    """R20–R22: the majorities of the colours ranked 1st to 3rd, added to ``points``."""
    places = PLACES[players]
    final = points.copy()
    for rank, colour in enumerate(ranking[:3]):
        standings = []  # (cards, value, seat) of the seats with a card of the colour (R22)
        for seat in range(players):
            count = value = 0
            for card in bouquets[seat]:
                if COLOUR[card] == colour:
                    count += 1
                    value += VALUE[card]
            if count:
                standings.append((count, value, seat))
        standings.sort(reverse=True)
        place = -1
        last = None
        for count, value, seat in standings:
            if (count, value) != last:  # R21: tied seats share a place
                place += 1
                if place >= places:
                    break
                last = (count, value)
            final[seat] += MAJORITY[rank][place]
    return final


def playout(players: int, seed: int, rng: random.Random) -> list[int]:
    """Play one whole match with uniformly random legal actions; every seat's final points."""
    chance = random.Random(seed)
    copies = COPIES + (EXTRA_COPIES if players >= EXTRA_FROM else 0)
    deck = [card for card in range(12) for _ in range(copies)]  # the top is the end
    chance.shuffle(deck)
    del deck[len(deck) - REMOVED[players] :]  # R4
    first = deck.pop()  # R10: turn over until two colours have appeared
    second = deck.pop()
    turned = []
    while COLOUR[second] == COLOUR[first]:
        turned.append(second)
        second = deck.pop()
    deck.extend(turned)
    chance.shuffle(deck)
    hands = [(deck.pop(), deck.pop()) for _ in range(players)]  # R11
    seat = chance.randrange(players)  # R12
    totals = [0, 0, 0, 0]
    ranking: list[int] = []
    for card in (second, first) if VALUE[second] > VALUE[first] else (first, second):
        totals[COLOUR[card]] += VALUE[card]
        ranking.append(COLOUR[card])
    bouquets: list[list[int]] = [[] for _ in range(players)]
    points = [0] * players
    secret = []
    random_ = rng.random
    for owner, (a, b) in enumerate(hands):  # R11: one face down, the other in the bouquet
        options = (a,) if a == b else (a, b)
        hidden = options[int(random_() * len(options))]
        secret.append(hidden)
        bouquets[owner].append(b if hidden == a else a)
    gives = [[GIVE_TO + s for s in range(players) if s != me] for me in range(players)]
    while deck:  # R13, R18: a turn of two cards, until a turn ends with the deck empty
        used = 0
        for _ in range(2):
            if not deck:
                break
            card = deck.pop()
            legal = []
            if used != USED_KEEP:
                legal.append(KEEP)
            if used != USED_GIVE:
                legal.extend(gives[seat])
            if used != USED_ADD:
                legal.append(UP)
                legal.append(SECRET)
            action = legal[int(random_() * len(legal))]
            colour = COLOUR[card]
            if action == KEEP:  # R14, R17
                rank = ranking.index(colour) if colour in ranking else 3
                points[seat] += BOUQUET[rank]
                bouquets[seat].append(card)
                used = USED_KEEP
            elif action >= GIVE_TO:  # R15, R17
                rank = ranking.index(colour) if colour in ranking else 3
                points[seat] += GIVING[rank] + VALUE[card]
                bouquets[action - GIVE_TO].append(card)
                used = USED_GIVE
            elif action == UP:  # R16, R8
                totals[colour] += VALUE[card]
                _climb(ranking, totals, colour)
                used = USED_ADD
            else:  # R16: face down
                secret.append(card)
                used = USED_ADD
        seat = (seat + 1) % players
    chance.shuffle(secret)  # R19: five at random, face up one at a time
    for card in secret[:REVEAL]:
        totals[COLOUR[card]] += VALUE[card]
        _climb(ranking, totals, COLOUR[card])
    return _final_points(players, ranking, bouquets, points)


def playouts_per_cpu_second(players: int, seconds: float, slice_seconds: float = 0.1) -> float:
    """The best rate of the slices of ``slice_seconds`` that fill ``seconds`` of CPU
    time, timed as the engine's loop is (:func:`engine.lab.playouts.best_rate`)."""
    return best_rate(playout, players, seconds, slice_seconds)


if __name__ == "__main__":  # a worker of ``bench --minimal``: players, seconds -> rate
    print(repr(playouts_per_cpu_second(int(sys.argv[1]), float(sys.argv[2]))))
