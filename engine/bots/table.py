"""A light copy of one seat's view of the table, for bots that look ahead fast.

The lookahead bot (:mod:`engine.bots.lookahead`) plays tens of thousands of
cards a decision; the engine's :class:`~engine.Match` keeps events, prompts and
hidden cards that such a bot does not need. A :class:`Table` keeps only the
public numbers — festival totals and ranking, bouquets as counts and values
per colour, points so far — and the viewer's own secret cards, with the
ruleset's numbers (R14–R16, R19–R21, R30) read once into a :class:`TableRules`.
The property tests check it against the engine's own rules and scoring.

A card is an index from 0 to 11: ``colour * 3 + value - 2`` (R1, R2).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..actions import ActionKind
from ..cards import COLOURS, VALUES, Card, Colour
from ..match import climb
from ..observation import Observation
from ..ruleset import Ruleset

__all__ = [
    "ADD_FACE_UP",
    "ADD_SECRET",
    "CARD_TYPES",
    "GIVE",
    "KEEP",
    "PLACEMENT",
    "Table",
    "TableRules",
    "card_index",
    "colour_index",
]

#: How a card is placed: the four codes a table understands.
KEEP, GIVE, ADD_FACE_UP, ADD_SECRET = 0, 1, 2, 3
#: The code of each kind of turn action (R14–R16).
PLACEMENT: Mapping[ActionKind, int] = {
    ActionKind.KEEP: KEEP,
    ActionKind.GIVE: GIVE,
    ActionKind.ADD_FACE_UP: ADD_FACE_UP,
    ActionKind.ADD_SECRET: ADD_SECRET,
}
#: Card indices run from 0 to 11.
CARD_TYPES = len(COLOURS) * len(VALUES)

_COLOUR = {colour: i for i, colour in enumerate(COLOURS)}
_LOWEST = VALUES[0]


def card_index(card: Card) -> int:
    """The card's index on a :class:`Table`: ``colour * 3 + value - 2``."""
    return _COLOUR[card.colour] * len(VALUES) + card.value - _LOWEST


def colour_index(colour: Colour) -> int:
    """The colour's position in :data:`~engine.cards.COLOURS`."""
    return _COLOUR[colour]


@dataclass(frozen=True, slots=True)
class TableRules:
    """The ruleset's numbers a table needs, for one player count (R30)."""

    players: int
    copies: int  #: copies of each card in the deck (R3)
    reveal_size: int  #: secret cards turned face up at the end (R19)
    giving_bonus: tuple[int, ...]  #: by rank, 4th last (R15)
    bouquet_points: tuple[int, ...]  #: by rank, 4th last; unranked scores as 4th (R14)
    majority: tuple[tuple[int, ...], ...]  #: by rank 1st–3rd, the places that score (R20)

    @classmethod
    def of(cls, ruleset: Ruleset, players: int) -> TableRules:
        """The numbers of ``ruleset`` at ``players`` players."""
        places = ruleset.majority_places[players]
        return cls(
            players=players,
            copies=ruleset.copies_for(players),
            reveal_size=ruleset.reveal_size,
            giving_bonus=tuple(ruleset.giving_bonus),
            bouquet_points=tuple(ruleset.bouquet_points),
            majority=tuple(tuple(row[:places]) for row in ruleset.majority_points),
        )


class Table:
    """One seat's view of the table, cheap to copy and to change.

    ``me`` is the viewer. Cards placed face up are counted in ``seen``; the
    viewer's secret cards are in ``mine``; ``others`` holds, when a lookahead
    has dealt them, the cards other seats put face down (``None`` when not).
    """

    __slots__ = (
        "counts",
        "deck",
        "expected",
        "expected_size",
        "me",
        "mine",
        "next_seat",
        "others",
        "points",
        "ranking",
        "rules",
        "secret_counts",
        "secret_size",
        "secret_values",
        "seen",
        "totals",
        "values",
    )

    rules: TableRules
    me: int
    ranking: list[int]  #: ranked colours, 1st first (R7)
    totals: list[int]  #: festival total by colour (R6)
    counts: list[list[int]]  #: cards of each colour in each seat's bouquet
    values: list[list[int]]  #: their total value
    points: list[int]  #: keeping plus giving points by seat
    secret_counts: list[int]  #: the viewer's secret cards by colour
    secret_values: list[int]  #: and their value
    secret_size: int  #: cards in the secret festival (R9)
    deck: int  #: cards left to draw
    seen: list[int]  #: cards of each index the viewer has seen placed or holds
    next_seat: int  #: whose turn comes next (-1 once over)
    mine: list[int]  #: the viewer's secret cards
    others: list[int] | None  #: other seats' secret cards, when dealt
    expected: tuple[float, ...]  #: expected value by colour of the secret cards inferred
    expected_size: int  #: how many secret cards ``expected`` covers

    @classmethod
    def from_observation(cls, observation: Observation) -> Table:
        """The viewer's table, as it stands."""
        if observation.viewer is None:
            raise ValueError("a spectator has no table of its own")
        players = observation.players
        table = cls.empty(TableRules.of(observation.ruleset, players), observation.viewer)
        table.ranking = [_COLOUR[c] for c in observation.ranking]
        for colour, total in observation.totals:
            table.totals[_COLOUR[colour]] = total
        seen = table.seen
        for view in observation.seats:
            count, value = table.counts[view.seat], table.values[view.seat]
            for card in view.bouquet:
                i = _COLOUR[card.colour]
                count[i] += 1
                value[i] += card.value
                seen[card_index(card)] += 1
            table.points[view.seat] = view.keeping + view.giving
        for card in observation.festival:
            seen[card_index(card)] += 1
        for card in observation.my_secret:
            i = _COLOUR[card.colour]
            table.secret_counts[i] += 1
            table.secret_values[i] += card.value
            table.mine.append(card_index(card))
            seen[card_index(card)] += 1
        table.secret_size = observation.secret_count
        table.deck = observation.deck_count
        table.next_seat = observation.viewer
        return table

    @classmethod
    def empty(cls, rules: TableRules, me: int) -> Table:
        """A table with nothing on it yet."""
        t = cls.__new__(cls)
        players = rules.players
        t.rules = rules
        t.me = me
        t.ranking = []
        t.totals = [0] * len(COLOURS)
        t.counts = [[0] * len(COLOURS) for _ in range(players)]
        t.values = [[0] * len(COLOURS) for _ in range(players)]
        t.points = [0] * players
        t.secret_counts = [0] * len(COLOURS)
        t.secret_values = [0] * len(COLOURS)
        t.secret_size = 0
        t.deck = 0
        t.seen = [0] * CARD_TYPES
        t.next_seat = me
        t.mine = []
        t.others = None
        t.expected = (0.0,) * len(COLOURS)
        t.expected_size = 0
        return t

    def copy(self) -> Table:
        """An independent copy."""
        t = Table.__new__(Table)
        t.rules = self.rules
        t.me = self.me
        t.ranking = self.ranking[:]
        t.totals = self.totals[:]
        t.counts = [row[:] for row in self.counts]
        t.values = [row[:] for row in self.values]
        t.points = self.points[:]
        t.secret_counts = self.secret_counts[:]
        t.secret_values = self.secret_values[:]
        t.secret_size = self.secret_size
        t.deck = self.deck
        t.seen = self.seen[:]
        t.next_seat = self.next_seat
        t.mine = self.mine[:]
        t.others = None if self.others is None else self.others[:]
        t.expected = self.expected
        t.expected_size = self.expected_size
        return t

    @property
    def players(self) -> int:
        """How many seats."""
        return self.rules.players

    def rank_of(self, colour: int) -> int:
        """0 for 1st … 3 for 4th or unranked (R7, R14)."""
        ranking = self.ranking
        return ranking.index(colour) if colour in ranking else len(COLOURS) - 1

    def raise_colour(self, colour: int, value: int) -> None:
        """Add ``value`` to a colour's festival total and re-rank (R8)."""
        _raise(self.totals, self.ranking, colour, value)

    def place(self, seat: int, card: int, how: int, to: int | None = None) -> None:
        """``seat`` places ``card`` by ``how`` (KEEP, GIVE to ``to``, or ADD), with
        KEEP and GIVE scored at once (R14, R15, R17)."""
        colour, value = divmod(card, len(VALUES))
        value += _LOWEST
        if how in (KEEP, GIVE):
            scored, receiver = self._hand_over(seat, colour, value, how, to)
            self.points[seat] += scored
            self.counts[receiver][colour] += 1
            self.values[receiver][colour] += value
        elif how == ADD_FACE_UP:
            self.raise_colour(colour, value)
        else:
            self.secret_size += 1
            if seat == self.me:
                self.secret_counts[colour] += 1
                self.secret_values[colour] += value
                self.mine.append(card)
            else:
                if self.others is not None:
                    self.others.append(card)
                return  # the viewer does not see it
        self.seen[card] += 1

    def _hand_over(
        self, seat: int, colour: int, value: int, how: int, to: int | None
    ) -> tuple[int, int]:
        """What ``seat`` scores at once for keeping or giving a card of
        ``colour`` and ``value`` (R14, R15, R17), and whose bouquet it joins."""
        rank = self.rank_of(colour)
        if how == KEEP:
            return self.rules.bouquet_points[rank], seat
        if how == GIVE and to is not None:
            return value + self.rules.giving_bonus[rank], to
        raise ValueError(f"a card is kept, or given to a seat; not placed by {how!r} to {to!r}")

    def majorities(self, ranking: Sequence[int] | None = None) -> list[int]:
        """Each seat's majority points with ``ranking`` (the current one by
        default): R20–R22."""
        ranking = self.ranking if ranking is None else ranking
        won = [0] * self.rules.players
        for colour, points in zip(ranking, self.rules.majority, strict=False):  # R20: 1st–3rd
            for seat, earned in enumerate(_awards(self.holdings(colour), points)):
                won[seat] += earned
        return won

    def holdings(self, colour: int) -> list[tuple[int, int]]:
        """Each seat's cards of ``colour`` as (how many, their total value)."""
        return [(n[colour], v[colour]) for n, v in zip(self.counts, self.values, strict=True)]

    def standing(self, seat: int) -> int:
        """``seat``'s points plus majorities as things stand, less the best
        other seat's: the medium bot's view (:func:`engine.bots.policies.standing`)."""
        return _lead(self.points, self.majorities(), seat)

    def standings_after(
        self, seat: int, card: int, choices: Sequence[tuple[int, int | None]]
    ) -> list[int]:
        """``seat``'s :meth:`standing` after it places ``card`` by each of
        ``choices`` (KEEP, GIVE with the receiver, ADD_FACE_UP or ADD_SECRET,
        which other seats do not see), as :meth:`place` would leave the table;
        the table does not change."""
        colour, value = divmod(card, len(VALUES))
        value += _LOWEST
        rules, points, ranking = self.rules, self.points, self.ranking
        rank = self.rank_of(colour)
        now = self.majorities()
        holdings = self.holdings(colour)
        scoring = colour in ranking[: len(rules.majority)]
        before = _awards(holdings, rules.majority[rank]) if scoring else []
        standings = []
        for how, to in choices:
            if how == ADD_FACE_UP:
                totals, raised = self.totals[:], ranking[:]
                _raise(totals, raised, colour, value)
                majorities = now if raised == ranking else self.majorities(raised)
                standings.append(_lead(points, majorities, seat))
                continue
            if how == ADD_SECRET:
                standings.append(_lead(points, now, seat))
                continue
            scored, to = self._hand_over(seat, colour, value, how, to)
            after = points[:]
            after[seat] += scored
            majorities = now
            if scoring:
                grown = holdings[:]
                n, v = grown[to]
                grown[to] = (n + 1, v + value)
                change = _awards(grown, rules.majority[rank])
                majorities = [m - b + a for m, b, a in zip(now, before, change, strict=True)]
            standings.append(_lead(after, majorities, seat))
        return standings

    def unseen(self) -> list[int]:
        """How many cards of each index the viewer has not seen."""
        copies = self.rules.copies
        return [max(0, copies - n) for n in self.seen]

    def reveal_key(self) -> tuple[object, ...]:
        """Everything :meth:`reveal_rankings` depends on besides its generator:
        two tables with equal keys draw the same reveals from the same generator."""
        return (
            tuple(self.totals),
            tuple(self.ranking),
            tuple(self.seen),
            self.secret_size,
            tuple(sorted(self.mine)),
            tuple(sorted(self.others or ())),
        )

    def reveal_rankings(self, rng: random.Random, samples: int) -> dict[tuple[int, ...], int]:
        """How many of ``samples`` random reveals (R19) leave the colours that
        score majorities (R20) in each order, once no card is left to draw."""
        unseen = self.unseen()
        pile_known = sorted(self.mine + (self.others or []))
        for card in self.others or ():
            if unseen[card]:
                unseen[card] -= 1
        pool = [card for card, n in enumerate(unseen) for _ in range(n)]
        unknown = min(self.secret_size - len(pile_known), len(pool))
        reveal, scoring = self.rules.reveal_size, len(self.rules.majority)
        known, size = len(pile_known), len(pile_known) + max(0, unknown)
        revealed = min(reveal, size)
        random_ = rng.random
        rankings: dict[tuple[int, ...], int] = {}
        for _ in range(samples):
            # Only the revealed cards matter: draw their places in the pile
            # one by one, and a card from the pool for a place no one saw filled.
            places, strangers = list(range(size)), pool[:]
            left = len(strangers)
            totals, ranking = self.totals[:], self.ranking[:]
            for k in range(revealed):
                j = k + int(random_() * (size - k))
                at = places[j]
                places[j] = places[k]
                if at < known:
                    card = pile_known[at]
                else:
                    j = int(random_() * left)
                    left -= 1
                    card = strangers[j]
                    strangers[j] = strangers[left]
                colour, value = divmod(card, len(VALUES))
                _raise(totals, ranking, colour, value + _LOWEST)
            scored = tuple(ranking[:scoring])
            rankings[scored] = rankings.get(scored, 0) + 1
        return rankings

    def share_over(self, rankings: Mapping[tuple[int, ...], int]) -> float:
        """The viewer's mean share of the victory over end rankings of the
        colours that score majorities, each with how often it comes (R20–R23)."""
        won = sum(n * self._final_share(ranking) for ranking, n in rankings.items())
        return won / sum(rankings.values())

    def _final_share(self, ranking: Sequence[int]) -> float:
        """The viewer's share of the victory if the game ended with the
        colours ranked ``ranking`` (R20–R23)."""
        players, me, points = self.rules.players, self.me, self.points
        majorities = self.majorities(ranking)
        final = [points[p] + majorities[p] for p in range(players)]
        best = max(final)
        lead = [p for p in range(players) if final[p] == best]
        if len(lead) > 1:
            sizes = [sum(row) for row in self.counts]
            most = max(sizes[p] for p in lead)
            lead = [p for p in lead if sizes[p] == most]
        return 1.0 / len(lead) if me in lead else 0.0


def _raise(totals: list[int], ranking: list[int], colour: int, value: int) -> None:
    totals[colour] += value
    climb(ranking, totals, colour)


def _awards(holdings: Sequence[tuple[int, int]], points: Sequence[int]) -> list[int]:
    """Each seat's points for one ranked colour, from every seat's (cards,
    value) of it: most cards, then most value, ties sharing a place (R20–R22)."""
    award: dict[tuple[int, int], int] = {}
    for held in sorted(holdings, reverse=True):
        if not held[0]:
            break
        if held not in award:
            if len(award) == len(points):
                break
            award[held] = points[len(award)]
    return [award.get(held, 0) for held in holdings]


def _lead(points: Sequence[int], majorities: Sequence[int], seat: int) -> int:
    """``seat``'s points plus majorities less the best other seat's."""
    totals = [p + m for p, m in zip(points, majorities, strict=True)]
    mine = totals.pop(seat)
    return mine - max(totals)
