"""Deals with every card at a named place, and the ways the tests build two
deals that differ only in cards hidden from one viewer (R24–R26).

Shared by the engine's property tests (tests/engine/test_properties.py) and
the server's no-leak frame test (tests/server/test_no_leak.py). Tests may read
a match's internal attributes here; players never can.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine import Action, ActionKind, Card, Event, Match
from engine.events import SecretRevealed

__all__ = [
    "Deal",
    "Place",
    "before_reveal",
    "hidden_places",
    "mapped_moves",
    "secret_place",
    "snapshot",
    "swap_hidden",
]

Place = tuple[Any, ...]  #: ("deck", i), ("removed", i) or ("hand", seat, i)


def _frozen(value: object) -> object:
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return tuple((key, _frozen(item)) for key, item in value.items())
    return value


def snapshot(match: Match) -> dict[str, object]:
    """The whole true state of a match, random generator included, as values."""
    state = {
        name: _frozen(getattr(match, name))
        for name in Match.__slots__
        if name not in ("_rng", "_legal_table")
    }
    state["_rng"] = match._rng.getstate()
    return state


@dataclass
class Deal:
    """A deal for Match.from_deal, with every card at a named place."""

    players: int
    first_seat: int
    festival: tuple[Card, ...]
    cards: dict[Place, Card]

    @classmethod
    def of(cls, match: Match) -> Deal:
        """The deal of a match that has not started yet."""
        cards: dict[Place, Card] = {}
        for i, card in enumerate(reversed(match._deck)):  # first drawn first
            cards["deck", i] = card
        for i, card in enumerate(match._removed):
            cards["removed", i] = card
        for seat, hand in enumerate(match._hands):
            assert hand is not None
            for i, card in enumerate(hand):
                cards["hand", seat, i] = card
        return cls(match.players, match.first_seat, tuple(match._festival), cards)

    def match(self, seed: int) -> Match:
        """The match of this deal; ``seed`` drives only the reveal (R19)."""
        by_kind: dict[str, list[tuple[Place, Card]]] = {"deck": [], "removed": []}
        for place, card in sorted(self.cards.items()):
            if place[0] in by_kind:
                by_kind[place[0]].append((place, card))
        return Match.from_deal(
            self.players,
            deck=[card for _, card in by_kind["deck"]],
            festival=self.festival,
            hands=[
                [self.cards["hand", seat, 0], self.cards["hand", seat, 1]]
                for seat in range(self.players)
            ],
            removed=[card for _, card in by_kind["removed"]],
            first_seat=self.first_seat,
            seed=seed,
        )


def hidden_places(
    deal: Deal, moves: Sequence[tuple[int, Action]], viewer: int | None
) -> list[Place]:
    """Places whose cards ``viewer`` never sees before the reveal, given the
    moves played: the removed cards (R26), other seats' opening cards put face
    down, and cards other seats drew and added face down (R25)."""
    places: list[Place] = [place for place in deal.cards if place[0] == "removed"]
    turn_moves = 0
    for seat, action in moves:
        if action.kind is ActionKind.OPENING:
            if seat != viewer:
                places.append(secret_place(deal, seat, action))
            continue
        # R13: each turn action resolves the next card drawn, first drawn first.
        if action.kind is ActionKind.ADD_SECRET and seat != viewer:
            places.append(("deck", turn_moves))
        turn_moves += 1
    return places


def secret_place(deal: Deal, seat: int, action: Action) -> Place:
    """Where the card a seat put face down in its opening choice was dealt."""
    first = deal.cards["hand", seat, 0]
    return ("hand", seat, 0 if first == action.secret else 1)


def swap_hidden(deal: Deal, places: list[Place], permutation: Sequence[int]) -> Deal:
    """The deal with the cards at ``places`` permuted, changed at one place at
    least that a seat holds (not only among the removed cards)."""
    cards = dict(deal.cards)
    for target, source in zip(places, permutation, strict=True):
        cards[target] = deal.cards[places[source]]
    held = [place for place in places if place[0] != "removed"]
    if all(cards[place] == deal.cards[place] for place in held):
        pair = next(((a, b) for a in held for b in places if cards[a] != cards[b]), None)
        assert pair is not None, f"every hidden card is the same: {[cards[p] for p in places]}"
        a, b = pair
        cards[a], cards[b] = cards[b], cards[a]
    assert any(cards[place] != deal.cards[place] for place in held)
    assert Counter(cards.values()) == Counter(deal.cards.values())
    return Deal(deal.players, deal.first_seat, deal.festival, cards)


def mapped_moves(
    deal: Deal, other: Deal, moves: Sequence[tuple[int, Action]]
) -> list[tuple[int, Action]]:
    """``moves`` as played on ``other``: the same plan, each opening choice
    naming the card now dealt at the place the original choice's card was."""
    mapped: list[tuple[int, Action]] = []
    for seat, action in moves:
        if action.kind is ActionKind.OPENING:
            action = Action.opening(other.cards[secret_place(deal, seat, action)])
        mapped.append((seat, action))
    return mapped


def before_reveal(events: Iterable[Event]) -> list[Event]:
    """The events up to, not including, the first card of the reveal (R19)."""
    shown: list[Event] = []
    for event in events:
        if isinstance(event, SecretRevealed):
            break
        shown.append(event)
    return shown
