"""Simple policies that choose from one seat's observation and its legal
actions — never from the match itself: uniformly random (the *easy* bot),
greedy for immediate points, and greedy with a view of the majorities (the
*medium* bot). The *hard* bot, which searches, lives in :mod:`engine.bots.search`.

A policy is any callable ``(observation, rng) -> Action``; :func:`bot_policy`
builds every bot by name, for the server and the arena.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..actions import Action, ActionKind
from ..cards import Card
from ..observation import Observation, observe
from ..scoring import action_points, final_scoring
from .determinize import Determiniser
from .search import DEFAULT_BUDGET_MS, hard_policy

__all__ = [
    "BOTS",
    "Policy",
    "bot_policy",
    "greedy_policy",
    "medium_policy",
    "random_policy",
    "standing",
]

# module globals: EnumType.__getattr__ makes ActionKind.OPENING slow on a hot path (3.11)
_OPENING, _ADD_SECRET = ActionKind.OPENING, ActionKind.ADD_SECRET

Policy = Callable[[Observation, random.Random], Action]


def random_policy(observation: Observation, rng: random.Random) -> Action:
    """Any legal action, uniformly at random."""
    return rng.choice(observation.legal_actions)


def greedy_policy(observation: Observation, rng: random.Random) -> Action:
    """The action that scores the most points now; ties broken at random.

    The opening choice keeps the higher card face up (it may count for a
    majority); adding, which scores nothing at once, is chosen only when
    nothing else scores more.
    """
    legal = observation.legal_actions
    if legal[0].kind is _OPENING:
        cards = [a.secret for a in legal if a.secret is not None]
        lowest = min(cards, key=lambda c: c.value)
        return next(a for a in legal if a.secret is lowest)
    rules, ranking, drawn = observation.ruleset, observation.ranking, observation.drawn
    points = [action_points(rules, ranking, drawn, action) for action in legal]
    best = max(points)
    return rng.choice([a for a, p in zip(legal, points, strict=True) if p == best])


# -- the medium bot: immediate points and a simple view of the majorities ---------------


def standing(observation: Observation, seat: int, extra: Card | None = None) -> float:
    """``seat``'s points so far plus the majorities it would score if the game
    ended now (R20–R22, from the ranking as it stands), less the best other
    seat's: the medium bot's view of the table. Uses only public fields (R24),
    and ``extra``, a card to count in ``seat``'s bouquet."""
    seats = observation.seats
    bouquets = [view.bouquet for view in seats]
    if extra is not None:
        bouquets[seat] = (*bouquets[seat], extra)
    scoring = final_scoring(
        observation.ruleset,
        observation.ranking,
        bouquets,
        [view.keeping for view in seats],
        [view.giving for view in seats],
    )
    totals = [player.total for player in scoring.players]
    mine = totals.pop(seat)
    return mine - max(totals)


def medium_policy(observation: Observation, rng: random.Random) -> Action:
    """Greedy with a simple view of the majorities: the action after which the
    viewer's :func:`standing` is best; ties broken at random.

    Keeping scores little but may win a majority; giving scores more but may
    hand one to the receiver, so the bot gives where it helps the others
    least; adding face up re-ranks the colours (R8); adding face down counts
    as adding face up in the chance that the card is revealed at the end
    (R19), and as nothing otherwise.

    It looks one action ahead by playing each action on a determinised copy
    of the match (:mod:`engine.bots.determinize`) and reading only the public
    result, so the engine alone applies the rules and no hidden card matters.
    """
    legal = observation.legal_actions
    seat = observation.viewer
    if len(legal) == 1 or seat is None:
        return legal[0]
    after: dict[Action, float] = {}
    if legal[0].kind is _OPENING:  # R11: the card not hidden joins the bouquet
        first, second = observation.hand
        for action in legal:
            kept = second if action.secret is first else first
            after[action] = standing(observation, seat, kept)
    else:
        world = Determiniser(observation).sample(rng)
        for action in legal:
            if action.kind is not _ADD_SECRET:
                match = world.clone()
                match.apply_quiet(seat, action)
                after[action] = standing(observe(match, seat), seat)
        secret = Action.add_secret()
        if secret in legal:
            odds = min(1.0, observation.ruleset.reveal_size / (observation.secret_count + 1))
            now = standing(observation, seat)
            after[secret] = odds * after[Action.add_face_up()] + (1 - odds) * now
    best = max(after.values())
    return rng.choice([action for action in legal if after[action] >= best - 1e-9])


# -- every bot by name ------------------------------------------------------------------

#: The bots by name, weakest first: easy (random), greedy (immediate points only),
#: medium (:func:`medium_policy`) and hard (:mod:`engine.bots.search`).
BOTS = ("easy", "greedy", "medium", "hard")


def bot_policy(
    name: str, budget_ms: float | None = DEFAULT_BUDGET_MS, simulations: int | None = None
) -> Policy:
    """The policy of the bot called ``name``; the bounds matter only for *hard*."""
    if name == "easy":
        return random_policy
    if name == "greedy":
        return greedy_policy
    if name == "medium":
        return medium_policy
    if name == "hard":
        return hard_policy(budget_ms, simulations=simulations)
    raise ValueError(f"unknown bot {name!r}; choose from {', '.join(BOTS)}")
