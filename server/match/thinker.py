"""Bot decisions for the match actors: quick ones on the event loop, a hard
bot's search in a worker process, so however long it thinks, other matches
keep their latency. Each decision is made from one seat's observation only.

If those worker processes die (killed, out of memory: the pool is broken), a
bot of another strength steps in: a *medium* bot decides the hard bot's moves,
so the match goes on, and fresh worker processes are started for the first
hard decision asked for :attr:`Thinker.retry_after` seconds later.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import multiprocessing
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from engine import Action, Observation
from engine.analysis import DecisionValues, hint
from engine.bots.policies import Policy, medium_policy, random_policy
from engine.bots.search import DEFAULT_BUDGET_MS, hard_policy

from .bots import Bot

__all__ = ["QUICK", "HintRefused", "Thinker"]

#: Strengths decided on the event loop (well under a millisecond on average).
QUICK: dict[str, Policy] = {"easy": random_policy, "medium": medium_policy}
#: Who decides for a hard bot whose search cannot run.
STAND_IN: Policy = medium_policy

log = logging.getLogger(__name__)


class HintRefused(Exception):
    """A hint that cannot be computed now (the workers are busy or broken)."""


class Thinker:
    """Makes bot decisions: quick ones inline, searches in worker processes.

    :meth:`decide` always returns an action: when a search cannot run (the
    pool is broken, the search raised, the thinker is closed), :data:`STAND_IN`
    decides that move instead, and the failure is logged — once per broken pool.
    """

    def __init__(
        self,
        budget_ms: float = DEFAULT_BUDGET_MS,
        workers: int | None = None,
        retry_after: float = 30.0,
    ) -> None:
        self.policy = hard_policy(budget_ms)
        self.workers = workers or max(1, (os.cpu_count() or 2) - 1)
        #: seconds after a broken pool before new worker processes are started
        self.retry_after = retry_after
        #: decisions a bot of another strength made for a hard one
        self.stand_ins = 0
        self._pool: ProcessPoolExecutor | None = None
        self._no_pool_until = -math.inf  # time.monotonic() before which none is started
        self._closed = False
        #: hints being computed now; beyond :attr:`max_hints` more are refused
        self.hints = 0
        self.max_hints = 2 * self.workers

    async def hint(self, observation: Observation, seed: str) -> DecisionValues:
        """A player's hint (:func:`engine.analysis.hint`): the values of the
        options of their open decision, from their ``observation`` only,
        computed in a worker process like a hard bot's search (about as long).
        Raises :class:`HintRefused` when it cannot be computed now."""
        if self.hints >= self.max_hints:
            raise HintRefused("the server is computing as many hints as it can; try again soon")
        pool = self._usable_pool()
        if pool is None:
            raise HintRefused("the server's workers are not running; try again later")
        self.hints += 1
        try:
            loop = asyncio.get_running_loop()
            work = functools.partial(hint, observation, seed=seed, clock=time.perf_counter)
            return await loop.run_in_executor(pool, work)
        except BrokenProcessPool:
            self._broken(pool)
            raise HintRefused("the server's workers stopped; try again later") from None
        finally:
            self.hints -= 1

    async def decide(self, bot: Bot, observation: Observation) -> Action:
        """The bot's action, from its seat's ``observation``."""
        quick = QUICK.get(bot.strength)
        if quick is not None:
            return quick(observation, bot.rng)
        rng = random.Random(bot.rng.getrandbits(64))
        pool = self._usable_pool()
        if pool is not None:
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(pool, self.policy, observation, rng)
            except BrokenProcessPool:
                self._broken(pool)
            except Exception:
                log.exception("a hard bot's search failed; a medium bot decides this move")
        self.stand_ins += 1
        return STAND_IN(observation, rng)

    def _usable_pool(self) -> ProcessPoolExecutor | None:
        """The worker pool, started if need be; None while a broken one is recent."""
        if self._pool is None and not self._closed:
            if time.monotonic() < self._no_pool_until:
                return None
            # spawn: a fresh interpreter that imports only the engine, whatever
            # threads (storage) this process runs
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context)
        return self._pool

    def _broken(self, pool: ProcessPoolExecutor) -> None:
        """A worker process died: drop the pool (logged by the first decision to see it)."""
        if pool is not self._pool:
            return  # another decision already dropped it
        log.error(
            "the hard bots' worker processes died; a medium bot decides their moves,"
            " and new workers start in %g s",
            self.retry_after,
        )
        self._pool = None
        self._no_pool_until = time.monotonic() + self.retry_after
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the worker processes; later hard decisions are the stand-in's."""
        self._closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
