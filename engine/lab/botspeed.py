"""How much the hard bot thinks in its budget: simulations per decision of 300 ms.

``python -m engine.lab.bench --bot`` runs this. One seeded match is played by
medium bots (:func:`engine.bots.policies.medium_policy`, each seat its own
seeded generator); at each of seat 0's turn decisions that has a choice to
make, the hard bot (:class:`engine.bots.search.HardPolicy`, the default
300 ms budget) thinks about that seat's observation, and the simulations it
completes in the budget are counted (:attr:`engine.bots.decision.SearchResult.simulations`:
deals sampled, each tried with every legal action). The median over the
decisions is reported.

At 4 players under the standard ruleset the hard bot is the lookahead
(:mod:`engine.bots.lookahead`), which stops after 128 deals; here it is given
no such cap (only the budget), so that the figure says what it could do in
300 ms. Everywhere else it is the Monte Carlo search of
:mod:`engine.bots.search`, whose every simulation plays the engine to the end
once per legal action: the figure that moves with the engine's speed.

The budget is wall-clock time, as the bot's is, so a loaded machine lowers
the figure; the match and the decisions depend on the seed only.
"""

from __future__ import annotations

import random
import statistics

from ..bots.lookahead import LookaheadPolicy, supports
from ..bots.policies import medium_policy
from ..bots.search import DEFAULT_BUDGET_MS, search
from ..match import Match, Phase
from ..observation import Observation, observe

__all__ = ["decisions", "simulations_per_budget"]


def decisions(players: int, seed: int, count: int) -> list[Observation]:
    """Up to ``count`` of seat 0's turn observations with more than one legal
    action, from one match of medium bots seeded by ``seed``."""
    match = Match.new(players, seed)
    rngs = [random.Random(f"{seed}:{seat}") for seat in range(players)]
    found: list[Observation] = []
    while not match.is_over and len(found) < count:
        seat = match.to_act[0]
        observation = observe(match, seat)
        if seat == 0 and match.phase is Phase.TURN and len(observation.legal_actions) > 1:
            found.append(observation)
        match.apply(seat, medium_policy(observation, rngs[seat]))
    return found


def simulations_per_budget(
    players: int, *, seed: int = 0, count: int = 9, budget_ms: float = DEFAULT_BUDGET_MS
) -> tuple[float, list[int]]:
    """The hard bot's median simulations in ``budget_ms`` over ``count``
    decisions of one seeded match, and each decision's count."""
    counts = []
    for index, observation in enumerate(decisions(players, seed, count)):
        rng = random.Random(index)
        if supports(observation):  # the lookahead, uncapped
            result = LookaheadPolicy(samples=10**9, budget_ms=budget_ms).search(observation, rng)
        else:
            result = search(observation, rng, budget_ms=budget_ms)
        counts.append(result.simulations)
    return statistics.median(counts), counts
