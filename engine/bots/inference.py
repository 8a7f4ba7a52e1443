"""What the other seats' secret cards are likely to be, read from their play.

A card put face down is hidden (R25–R26), but the choice to hide it is public
(R24), and so is everything its player saw when choosing. Assuming the others
choose like the medium bot (:func:`engine.bots.policies.medium_policy`), each
hidden card has a *likelihood*: for every card it could have been, the chance
that such a player would have hidden that card there. Multiplied by how many
copies of each card are still unseen, that gives a posterior to deal from.
A floor keeps every card possible, so a player who does not choose like the
medium bot only makes the guess less sharp, never impossible.

:func:`secret_likelihoods` replays the public record of the match
(:attr:`~engine.observation.Observation.moves`) on a :class:`Table` to find
what each player saw; :func:`medium_choices` is the medium bot's choice on a
table, which the lookahead also uses to play the other seats' turns.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache

from ..actions import ActionKind, TurnAction
from ..observation import Observation
from .table import ADD_FACE_UP, ADD_SECRET, CARD_TYPES, GIVE, KEEP, Table, TableRules, card_index

__all__ = [
    "FLOOR",
    "TURN_ACTION",
    "Choice",
    "deal_secrets",
    "expect_secrets",
    "hidden_likelihood",
    "medium_choices",
    "opening_likelihood",
    "secret_likelihoods",
    "turn_choices",
]

#: The least likelihood a card keeps, whatever the play says.
FLOOR = 0.02

Choice = tuple[int, int | None]  #: how a card is placed (a Table code) and to whom

_HOW = {
    ActionKind.KEEP: KEEP,
    ActionKind.GIVE: GIVE,
    ActionKind.ADD_FACE_UP: ADD_FACE_UP,
    ActionKind.ADD_SECRET: ADD_SECRET,
}
#: The turn action (R13) each way of placing a card uses: both forms of adding are ADD (R16).
TURN_ACTION = {
    KEEP: TurnAction.KEEP,
    GIVE: TurnAction.GIVE,
    ADD_FACE_UP: TurnAction.ADD,
    ADD_SECRET: TurnAction.ADD,
}


@cache
def turn_choices(used: TurnAction | None, seat: int, players: int) -> tuple[Choice, ...]:
    """Every way ``seat`` may place a card when its turn's first card used
    ``used`` (R13, R16; ``None`` for the first card)."""
    choices: list[Choice] = []
    for how in (KEEP, GIVE, ADD_FACE_UP, ADD_SECRET):
        if TURN_ACTION[how] is used:
            continue
        if how == GIVE:
            choices.extend((GIVE, to) for to in range(players) if to != seat)
        else:
            choices.append((how, None))
    return tuple(choices)


def medium_choices(table: Table, seat: int, card: int, used: TurnAction | None) -> list[Choice]:
    """The choices the medium bot finds best for ``card`` at ``seat`` (it picks
    one of them at random): the best :meth:`Table.standing` after placing it,
    a face-down card counting as face up in the chance it is revealed."""
    best = -1e9
    chosen: list[Choice] = []
    face_up = hidden = 0.0
    choices = turn_choices(used, seat, table.players)
    for (how, to), value in zip(choices, table.standings_after(seat, card, choices), strict=True):
        if how == ADD_SECRET:
            hidden = value
            continue
        if how == ADD_FACE_UP:
            face_up = value
        if value > best + 1e-9:
            best, chosen = value, [(how, to)]
        elif value > best - 1e-9:
            chosen.append((how, to))
    if (ADD_SECRET, None) in choices:
        odds = min(1.0, table.rules.reveal_size / (table.secret_size + 1))
        hidden = odds * face_up + (1 - odds) * hidden
        if hidden > best + 1e-9:
            chosen = [(ADD_SECRET, None)]
        elif hidden > best - 1e-9:
            chosen.append((ADD_SECRET, None))
    return chosen


def hidden_likelihood(table: Table, seat: int, used: TurnAction | None) -> list[float]:
    """For each card, the chance the medium bot at ``seat`` would put it face
    down on ``table`` (its turn's first card used ``used``)."""
    likelihood = []
    for card in range(CARD_TYPES):
        chosen = medium_choices(table, seat, card, used)
        likelihood.append(sum(1 for how, _ in chosen if how == ADD_SECRET) / len(chosen))
    return likelihood


def opening_likelihood(rules: TableRules, ranking: Sequence[int], kept: int) -> list[float]:
    """For each card, the chance the medium bot hid it in its opening choice
    (R11) when it kept ``kept``, the festival ranked ``ranking``: it keeps the
    card whose colour would win the best majority as things stand, so it hid
    a card worth no more."""

    def worth(card: int) -> int:
        colour = card // 3
        if colour not in ranking[: len(rules.majority)]:
            return 0
        return rules.majority[ranking.index(colour)][0]

    mine = worth(kept)
    return [1.0 if mine > worth(x) else 0.5 if mine == worth(x) else 0.0 for x in range(CARD_TYPES)]


def secret_likelihoods(observation: Observation) -> list[tuple[int, list[float]]]:
    """For every card another seat put face down, that seat and the
    likelihood of each card index (at least :data:`FLOOR`), in the order they
    were hidden. Empty before the opening choices are revealed."""
    viewer = observation.viewer
    if viewer is None:
        raise ValueError("a spectator has no view of its own")
    seats = observation.seats
    if any(not view.bouquet for view in seats):
        return []
    rules = TableRules.of(observation.ruleset, observation.players)
    table = Table.empty(rules, viewer)
    festival = observation.festival
    first, second = festival[0], festival[1]
    for start in (first, second) if first.value >= second.value else (second, first):
        table.totals[card_index(start) // 3] = start.value
        table.ranking.append(card_index(start) // 3)
        table.seen[card_index(start)] += 1
    found: list[tuple[int, list[float]]] = []
    mine = [card_index(card) for card in observation.my_secret]
    start_ranking = table.ranking[:]
    for view in seats:
        kept = card_index(view.bouquet[0])
        table.place(view.seat, kept, KEEP)
        table.points[view.seat] = 0
        if view.seat == viewer:
            table.place(viewer, mine[0], ADD_SECRET)
        else:
            table.secret_size += 1
            found.append((view.seat, opening_likelihood(rules, start_ranking, kept)))
    placed = [1] * observation.players
    next_face_up, next_mine = 2, 1
    moves = observation.moves
    in_hand = 1 if observation.active is not None else 0
    used: TurnAction | None = None
    last_seat = -1
    for i, (seat, action) in enumerate(moves):
        if seat != last_seat or used is None:
            used = None
        how = _HOW[action.kind]
        deck_then = observation.deck_count + len(moves) - 1 - i + in_hand
        if how == ADD_SECRET and seat != viewer:
            if deck_then > 0:
                found.append((seat, hidden_likelihood(table, seat, used)))
            else:  # the game ended with it: the medium bot then saw a random reveal
                found.append((seat, [1.0] * CARD_TYPES))
            table.secret_size += 1
        else:
            if how == ADD_SECRET:
                card = mine[next_mine]
                next_mine += 1
            elif how == ADD_FACE_UP:
                card = card_index(festival[next_face_up])
                next_face_up += 1
            else:
                holder = seat if how == KEEP else action.to_seat
                assert holder is not None
                card = card_index(seats[holder].bouquet[placed[holder]])
                placed[holder] += 1
            table.place(seat, card, how, action.to_seat)
        used = None if used is not None else TURN_ACTION[how]
        last_seat = seat
    return [(seat, [max(FLOOR, x) for x in likelihood]) for seat, likelihood in found]


def expect_secrets(
    table: Table, likelihoods: Sequence[Sequence[float]], unseen: Sequence[int]
) -> None:
    """Tell ``table`` the expected value, by colour, of the secret cards these
    likelihoods describe, given the ``unseen`` copies of each card."""
    expected = [0.0] * len(table.totals)
    for likelihood in likelihoods:
        weights = [likelihood[x] * unseen[x] for x in range(CARD_TYPES)]
        total = sum(weights) or 1.0
        for x, w in enumerate(weights):
            colour, value = divmod(x, 3)
            expected[colour] += w / total * (value + 2)
    table.expected = tuple(expected)
    table.expected_size = len(likelihoods)


def deal_secrets(
    likelihoods: Sequence[Sequence[float]], unseen: list[int], rng: random.Random
) -> list[int]:
    """One card for each likelihood, drawn from the posterior it gives with
    the ``unseen`` copies of each card (taken out of ``unseen`` as dealt)."""
    dealt = []
    for likelihood in likelihoods:
        weights = [likelihood[x] * unseen[x] for x in range(CARD_TYPES)]
        total = sum(weights)
        if total <= 0:
            weights = [float(n) for n in unseen]
            total = sum(weights)
        u = rng.random() * total
        x = 0
        while x < CARD_TYPES - 1 and u >= weights[x]:
            u -= weights[x]
            x += 1
        while unseen[x] <= 0:
            x = (x + 1) % CARD_TYPES
        unseen[x] -= 1
        dealt.append(x)
    return dealt
