"""The *hard* bot: information-set Monte Carlo search with the engine as its
forward model — or, at 4 players under the standard ruleset, where a learned
evaluation was trained, the lookahead of :mod:`engine.bots.lookahead`
(:class:`HardPolicy` picks).

It decides from one seat's observation only. Each simulation deals the cards
that seat cannot see at random (:mod:`engine.bots.determinize`), then tries every
legal action on a copy of that same deal and plays each copy to the end with
a fast rollout policy; the action with the best average outcome wins. Trying
every action on the same deal and the same rollout random numbers (common
random numbers) cancels most of the luck of the deal out of the comparison.

Thinking time is bounded: by a wall-clock budget per decision (300 ms by
default), or by a fixed number of simulations, which makes a decision a pure
function of the observation and the generator — for tests and replays.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..actions import Action
from ..match import Match
from ..observation import Observation
from .decision import SearchResult
from .determinize import Determiniser
from .lookahead import DEFAULT_SAMPLES, LookaheadPolicy, supports

__all__ = [
    "DEFAULT_BUDGET_MS",
    "HardPolicy",
    "SearchResult",
    "hard_policy",
    "rollout_random",
    "search",
]

#: Thinking time per decision when none is given.
DEFAULT_BUDGET_MS = 300.0

Rollout = Callable[[Match, random.Random], None]


def rollout_random(match: Match, rng: random.Random) -> None:
    """Play uniformly random legal actions to the end of the match.

    Through :meth:`~engine.Match.apply_quiet`: the same judge and the same
    state as :meth:`~engine.Match.apply`, without the events nobody reads here."""
    random_ = rng.random
    apply = match.apply_quiet
    while not match.is_over:
        seat = match.to_act[0]
        legal = match.legal_actions(seat)
        apply(seat, legal[int(random_() * len(legal))])


def outcome(match: Match, seat: int) -> float:
    """How well ``seat`` did in a finished match: its share of the victory
    (R23), plus a hundredth of its lead over the best other seat, so that
    among equally likely wins a larger margin counts a little more."""
    scoring = match.scoring
    assert scoring is not None
    totals = [player.total for player in scoring.players]
    mine = totals[seat]
    del totals[seat]
    share = 1.0 / len(scoring.winners) if seat in scoring.winners else 0.0
    return share + (mine - max(totals)) / 100.0


def search(
    observation: Observation,
    rng: random.Random,
    *,
    budget_ms: float | None = DEFAULT_BUDGET_MS,
    simulations: int | None = None,
    rollout: Rollout = rollout_random,
) -> SearchResult:
    """Choose the viewer's action by flat Monte Carlo over determinisations.

    Stops after ``simulations`` determinisations if given, else when
    ``budget_ms`` has passed (after at least one). With ``simulations`` and no
    budget the result depends only on the observation and ``rng``.
    """
    seat = observation.viewer
    if seat is None:
        raise ValueError("a spectator has no actions to choose from")
    legal = observation.legal_actions
    if not legal:
        raise ValueError(f"seat {seat} has nothing to do now")
    if simulations is None and budget_ms is None:
        raise ValueError("give a time budget, a number of simulations, or both")
    if len(legal) == 1:
        return SearchResult(legal[0], legal, (0.0,), 0)
    deadline = None if budget_ms is None else time.perf_counter() + budget_ms / 1000.0
    determiniser = Determiniser(observation)
    sums = [0.0] * len(legal)
    done = 0
    while True:
        world = determiniser.sample(rng)
        seed = rng.getrandbits(64)
        for i, action in enumerate(legal):
            match = world.clone()
            match.apply_quiet(seat, action)
            rollout(match, random.Random(seed))
            sums[i] += outcome(match, seat)
        done += 1
        if simulations is not None and done >= simulations:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
    values = tuple(total / done for total in sums)
    return SearchResult(_best(legal, values), legal, values, done)


def _best(legal: Sequence[Action], values: Sequence[float]) -> Action:
    best = max(values)
    return next(action for action, value in zip(legal, values, strict=True) if value == best)


@dataclass(frozen=True, slots=True)
class HardPolicy:
    """The hard bot as a :data:`~engine.bots.policies.Policy`: the lookahead
    where it plays, else :func:`search`, with a fixed bound (``simulations``
    counts the deals either samples). A plain value, so it pickles into a
    worker process."""

    budget_ms: float | None = DEFAULT_BUDGET_MS  #: thinking time per decision
    simulations: int | None = None  #: or a fixed number of deals, reproducibly

    def __post_init__(self) -> None:
        if self.budget_ms is None and self.simulations is None:
            raise ValueError("give a time budget, a number of simulations, or both")
        if self.budget_ms is not None and self.budget_ms <= 0:
            raise ValueError(f"budget_ms must be positive, got {self.budget_ms!r}")
        if self.simulations is not None and self.simulations < 1:
            raise ValueError(f"simulations must be at least 1, got {self.simulations!r}")

    def __call__(self, observation: Observation, rng: random.Random) -> Action:
        """Search and return the chosen action."""
        return self.search(observation, rng).action

    def search(self, observation: Observation, rng: random.Random) -> SearchResult:
        """Think, and return all it found: the lookahead where it plays
        (:func:`engine.bots.lookahead.supports`), else :func:`search`."""
        if supports(observation):
            lookahead = LookaheadPolicy(
                samples=self.simulations if self.simulations is not None else DEFAULT_SAMPLES,
                budget_ms=self.budget_ms,
            )
            return lookahead.search(observation, rng)
        return search(observation, rng, budget_ms=self.budget_ms, simulations=self.simulations)


def hard_policy(
    budget_ms: float | None = DEFAULT_BUDGET_MS,
    *,
    simulations: int | None = None,
) -> HardPolicy:
    """The hard bot (see :class:`HardPolicy`).

    ``hard_policy()`` thinks for at most about 300 ms a decision (the
    lookahead stops sooner, after its 128 deals); ``hard_policy(50)`` for
    50 ms; ``hard_policy(None, simulations=20)`` tries 20 deals and is
    reproducible.
    """
    return HardPolicy(budget_ms, simulations)
