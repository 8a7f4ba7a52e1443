"""Bots that play a seat in the server: a strength names a policy, and a
policy decides from that seat's observation only, never the match itself."""

from __future__ import annotations

import random
from dataclasses import dataclass

from engine import Action, Match, observe
from engine.policies import Policy, greedy_policy, random_policy

__all__ = ["STRENGTHS", "Bot"]

#: Strengths a host may ask for. *hard* plays greedily until the search bot
#: of the bots issue lands.
STRENGTHS: dict[str, Policy] = {
    "easy": random_policy,
    "medium": greedy_policy,
    "hard": greedy_policy,
}


@dataclass(slots=True)
class Bot:
    """One bot at one seat, with its own seeded generator."""

    strength: str
    rng: random.Random

    @classmethod
    def for_seat(cls, strength: str, match_id: str, seat: int) -> Bot:
        """A bot whose choices are reproducible for this match and seat."""
        if strength not in STRENGTHS:
            raise ValueError(f"unknown bot strength {strength!r}")
        return cls(strength, random.Random(f"{match_id}:{seat}"))

    def decide(self, match: Match, seat: int) -> Action:
        """Choose an action for ``seat`` from what that seat may see."""
        return STRENGTHS[self.strength](observe(match, seat), self.rng)
