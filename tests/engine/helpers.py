"""Shared helpers for the engine tests: spelling cards, playing a list of
actions, playing random legal moves to the end, and snapshotting a match."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from engine import Action, Card, Event, Match, Observation, observe
from engine.record import MatchRecord

KEEP = Action.keep()
UP = Action.add_face_up()
SECRET = Action.add_secret()


def give(seat: int) -> Action:
    """GIVE to ``seat``; short for :meth:`Action.give`."""
    return Action.give(seat)


def card(text: str) -> Card:
    """One card from its spelling: ``card("pink-3")``."""
    return Card.parse(text)


def cards(text: str) -> list[Card]:
    """Cards from their spellings, separated by spaces: ``cards("pink-3 blue-2")``."""
    return [Card.parse(word) for word in text.split()]


def deal(players: int, *, deck: str, festival: str, hands: Sequence[str], **kwargs: Any) -> Match:
    """:meth:`Match.from_deal` with every card spelt out (deck first drawn first)."""
    return Match.from_deal(
        players,
        deck=cards(deck),
        festival=cards(festival),
        hands=[cards(hand) for hand in hands],
        **kwargs,
    )


def open_all(match: Match, secrets: str) -> list[Event]:
    """Every seat, in seat order, puts the named card face down (R11)."""
    events: list[Event] = []
    for seat, secret in enumerate(cards(secrets)):
        events.extend(match.apply(seat, Action.opening(secret)))
    return events


def play(match: Match, actions: Iterable[Action]) -> list[Event]:
    """Apply each action for whichever seat is active, and return the events."""
    events: list[Event] = []
    for action in actions:
        (seat,) = match.to_act
        events.extend(match.apply(seat, action))
    return events


def play_random(match: Match, rng: random.Random, steps: int | None = None) -> list[Event]:
    """Play uniformly random legal actions to the end (or for ``steps`` actions)."""
    events: list[Event] = []
    while not match.is_over and (steps is None or steps > 0):
        seat = match.to_act[0]
        events.extend(match.apply(seat, rng.choice(match.legal_actions(seat))))
        steps = None if steps is None else steps - 1
    return events


def snapshot(match: Match) -> tuple[dict[str, Any], tuple[Observation, ...]]:
    """The record and every view of a match (each seat's and a spectator's)."""
    views = tuple(observe(match, seat) for seat in [*range(match.players), None])
    return MatchRecord.of(match).to_data(), views
