"""Two simple policies that choose from one seat's observation and its legal
actions — never from the match itself: uniformly random, and greedy.

A policy is any callable ``(observation, rng) -> Action``. The bots in the
server and the arena build on these.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .actions import Action, ActionKind
from .observation import Observation

__all__ = ["Policy", "greedy_policy", "immediate_points", "random_policy"]

Policy = Callable[[Observation, random.Random], Action]

_UNRANKED = 3


def random_policy(observation: Observation, rng: random.Random) -> Action:
    """Any legal action, uniformly at random."""
    return rng.choice(observation.legal_actions)


def immediate_points(observation: Observation, action: Action) -> int:
    """The points ``action`` scores at once for the viewer (R14, R15, R17)."""
    card = observation.drawn
    if card is None:
        return 0
    rank = observation.rank_of(card.colour)
    rank = _UNRANKED if rank is None else rank
    if action.kind is ActionKind.KEEP:
        return observation.ruleset.bouquet_points[rank]
    if action.kind is ActionKind.GIVE:
        return observation.ruleset.giving_bonus[rank] + card.value
    return 0


def greedy_policy(observation: Observation, rng: random.Random) -> Action:
    """The action that scores the most points now; ties broken at random.

    The opening choice keeps the higher card face up (it may count for a
    majority); adding, which scores nothing at once, is chosen only when
    nothing else scores more.
    """
    legal = observation.legal_actions
    if legal[0].kind is ActionKind.OPENING:
        cards = [a.secret for a in legal if a.secret is not None]
        lowest = min(cards, key=lambda c: c.value)
        return next(a for a in legal if a.secret is lowest)
    best = max(immediate_points(observation, a) for a in legal)
    return rng.choice([a for a in legal if immediate_points(observation, a) == best])
