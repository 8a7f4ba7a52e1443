"""Bots that play a seat in the server, each deciding from its own seat's
observation only (never the match itself).

*easy* plays at random, *medium* looks one action ahead, *hard* searches
sampled deals for a time budget (engine/bots/search.py). Quick decisions are made
on the event loop; a hard bot's search runs in a worker process, so however
long it thinks, other matches keep their latency.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from engine import Action, Match, observe
from engine.bots.policies import Policy, medium_policy, random_policy
from engine.bots.search import DEFAULT_BUDGET_MS, hard_policy

__all__ = ["QUICK", "STRENGTHS", "Bot", "Thinker"]

#: Strengths decided on the event loop (well under a millisecond on average).
QUICK: dict[str, Policy] = {"easy": random_policy, "medium": medium_policy}
#: Every strength a host may ask for.
STRENGTHS: tuple[str, ...] = ("easy", "medium", "hard")


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


class Thinker:
    """Makes bot decisions: quick ones inline, searches in worker processes."""

    def __init__(self, budget_ms: float = DEFAULT_BUDGET_MS, workers: int | None = None) -> None:
        self.policy = hard_policy(budget_ms)
        self.workers = workers or max(1, (os.cpu_count() or 2) - 1)
        self._pool: ProcessPoolExecutor | None = None

    async def decide(self, bot: Bot, match: Match, seat: int) -> Action:
        """The bot's action for ``seat``, from that seat's observation."""
        observation = observe(match, seat)
        quick = QUICK.get(bot.strength)
        if quick is not None:
            return quick(observation, bot.rng)
        if self._pool is None:
            # spawn: a fresh interpreter that imports only the engine, whatever
            # threads (storage) this process runs
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context)
        rng = random.Random(bot.rng.getrandbits(64))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self.policy, observation, rng)

    def close(self) -> None:
        """Stop the worker processes."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
