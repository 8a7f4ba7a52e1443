"""python -m engine.lab.arena: strategies play each other; win rates with 95% CIs.

Matches come in groups that share one deal (the same seed): in each group
the strategies sit in every distinct arrangement over the seats (or, past 24
arrangements, in every rotation of one random arrangement), so neither the
seat order nor the luck of a deal favours a strategy. A shared victory (R23)
counts as a fraction for each winner.

Every bot decides from its own seat's observation (engine.observe) and its
own seeded generator; the time a hard bot thinks is the only thing not fixed
by --seed.

Example:

    python -m engine.lab.arena --strategies hard,medium,medium,medium --matches 400
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ..bots.policies import BOTS, bot_policy
from ..bots.search import DEFAULT_BUDGET_MS, HardPolicy
from ..match import Match
from ..observation import observe
from ..ruleset import DEFAULT_RULESET, PLAYER_COUNTS, Ruleset, RulesetError, load_ruleset

__all__ = [
    "ArenaResult",
    "MatchResult",
    "StrategyStats",
    "arrangements",
    "format_table",
    "main",
    "play_match",
    "run_arena",
    "wilson_interval",
]

_MAX_ARRANGEMENTS = 24
_Z95 = 1.959963984540054


def arrangements(strategies: Sequence[str], rng: random.Random) -> list[tuple[str, ...]]:
    """One group's seatings: every distinct one, or the rotations of a random one."""
    distinct = sorted(set(itertools.permutations(strategies)))
    if len(distinct) <= _MAX_ARRANGEMENTS:
        return distinct
    seating = list(strategies)
    rng.shuffle(seating)
    return [tuple(seating[i:] + seating[:i]) for i in range(len(seating))]


@dataclass(frozen=True, slots=True)
class MatchResult:
    """One finished match, as the arena tallies it."""

    seating: tuple[str, ...]  #: strategy name by seat
    totals: tuple[int, ...]  #: final points by seat
    winners: tuple[int, ...]
    think: tuple[tuple[float, int, float], ...]  #: by seat: seconds, decisions, slowest
    #: by seat: decisions a search made (more than one legal action), and the
    #: simulations (sampled deals) those searches ran; zeros for bots that do not search
    searched: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class _Job:
    ruleset: Ruleset
    seating: tuple[str, ...]
    deal_seed: int
    bot_seed: str
    budget_ms: float | None
    simulations: int | None


def play_match(job: _Job) -> MatchResult:
    """Play one match between the seated strategies."""
    players = len(job.seating)
    match = Match.new(players, job.deal_seed, job.ruleset)
    policies = [bot_policy(name, job.budget_ms, job.simulations) for name in job.seating]
    rngs = [random.Random(f"{job.bot_seed}:{seat}") for seat in range(players)]
    spent = [0.0] * players
    slowest = [0.0] * players
    decisions = [0] * players
    searches = [0] * players
    simulations = [0] * players
    clock = time.perf_counter
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        policy = policies[seat]
        start = clock()
        if isinstance(policy, HardPolicy):  # the same decision, with what the search did
            result = policy.search(observation, rngs[seat])
            took = clock() - start
            action = result.action
            if result.simulations:  # 0: a single legal action, nothing to search
                searches[seat] += 1
                simulations[seat] += result.simulations
        else:
            action = policy(observation, rngs[seat])
            took = clock() - start
        spent[seat] += took
        slowest[seat] = max(slowest[seat], took)
        decisions[seat] += 1
        match.apply(seat, action)
    scoring = match.scoring
    assert scoring is not None
    return MatchResult(
        job.seating,
        tuple(player.total for player in scoring.players),
        scoring.winners,
        tuple(zip(spent, decisions, slowest, strict=True)),
        tuple(zip(searches, simulations, strict=True)),
    )


def wilson_interval(successes: float, trials: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (fractional successes allowed)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = _Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(slots=True)
class StrategyStats:
    """One strategy's tally over an arena run."""

    name: str
    seats: int  #: seats it holds in every match
    wins: float = 0.0  #: matches won by one of its seats, shared victories as fractions
    points: int = 0  #: final points over all its seats and matches
    think_seconds: float = 0.0
    decisions: int = 0
    slowest: float = 0.0
    searches: int = 0  #: decisions that ran a search (hard bots only)
    simulations: int = 0  #: sampled deals those searches tried

    @property
    def simulations_per_search(self) -> float:
        """Mean sampled deals per searched decision; 0 for bots that do not search."""
        return self.simulations / self.searches if self.searches else 0.0


@dataclass(slots=True)
class ArenaResult:
    """Every strategy's tally over ``matches`` matches."""

    players: int
    matches: int
    stats: dict[str, StrategyStats] = field(default_factory=dict)

    def add(self, result: MatchResult) -> None:
        """Count one match."""
        winners = result.winners
        for seat, name in enumerate(result.seating):
            stats = self.stats[name]
            if seat in winners:
                stats.wins += 1.0 / len(winners)
            stats.points += result.totals[seat]
            seconds, decisions, slowest = result.think[seat]
            stats.think_seconds += seconds
            stats.decisions += decisions
            stats.slowest = max(stats.slowest, slowest)
            searches, simulations = result.searched[seat]
            stats.searches += searches
            stats.simulations += simulations

    def share(self, name: str) -> float:
        """The fraction of matches won by a seat of this strategy."""
        return self.stats[name].wins / self.matches if self.matches else 0.0


def _jobs(
    strategies: Sequence[str],
    matches: int,
    seed: int,
    ruleset: Ruleset,
    budget_ms: float | None,
    simulations: int | None,
) -> Iterator[_Job]:
    rng = random.Random(seed)
    index = 0
    while True:
        deal_seed = rng.getrandbits(32)
        for seating in arrangements(strategies, rng):
            if index == matches:
                return
            yield _Job(ruleset, seating, deal_seed, f"{seed}:{index}", budget_ms, simulations)
            index += 1


def run_arena(
    strategies: Sequence[str],
    matches: int,
    *,
    seed: int = 0,
    budget_ms: float | None = DEFAULT_BUDGET_MS,
    simulations: int | None = None,
    workers: int = 2,
    ruleset: Ruleset = DEFAULT_RULESET,
    progress: Callable[[int, int], None] | None = None,
) -> ArenaResult:
    """Play ``matches`` matches between ``strategies`` (one name per seat).

    ``workers`` processes share the matches; 1 plays them in this process.
    ``progress(done, matches)`` is called after each match.
    """
    for name in strategies:
        bot_policy(name, budget_ms, simulations)  # reject unknown names early
    ruleset.check_players(len(strategies))
    result = ArenaResult(len(strategies), matches)
    for name in strategies:
        result.stats.setdefault(name, StrategyStats(name, strategies.count(name)))
    jobs = _jobs(strategies, matches, seed, ruleset, budget_ms, simulations)
    if workers <= 1:
        finished: Iterator[MatchResult] = map(play_match, jobs)
        _collect(result, finished, progress)
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            _collect(result, pool.imap_unordered(play_match, jobs), progress)
    return result


def _collect(
    result: ArenaResult,
    finished: Iterator[MatchResult],
    progress: Callable[[int, int], None] | None,
) -> None:
    for done, match in enumerate(finished, 1):
        result.add(match)
        if progress is not None:
            progress(done, result.matches)


def format_table(result: ArenaResult) -> str:
    """The win rates as a text table, one row per strategy."""
    n = result.matches
    fair = 1.0 / result.players
    lines = [
        f"{n} matches, {result.players} players; fair share per seat {fair:.1%}",
        "strategy  seats  wins    win share (95% CI)       per seat (95% CI)        "
        "mean pts  ms/decision (max)  sims/search",
    ]
    for stats in result.stats.values():
        low, high = wilson_interval(stats.wins, n)
        k = stats.seats
        share = stats.wins / n if n else 0.0
        mean_points = stats.points / (n * k) if n else 0.0
        think = 1000 * stats.think_seconds / stats.decisions if stats.decisions else 0.0
        lines.append(
            f"{stats.name:<8}  {k:>5}  {stats.wins:>6.1f}  "
            f"{share:>6.1%} [{low:>6.1%}, {high:>6.1%}]  "
            f"{share / k:>6.1%} [{low / k:>6.1%}, {high / k:>6.1%}]  "
            f"{mean_points:>8.1f}  {f'{think:.1f} ({1000 * stats.slowest:.0f})':>17}  "
            + (f"{stats.simulations_per_search:>11.0f}" if stats.searches else f"{'-':>11}")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run an arena from the command line and print the table."""
    parser = argparse.ArgumentParser(
        prog="python -m engine.lab.arena",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--strategies",
        default="hard,medium,medium,medium",
        help=f"one per seat, comma-separated, from {', '.join(BOTS)}",
    )
    parser.add_argument(
        "--players", type=int, choices=PLAYER_COUNTS, help="default: one per strategy"
    )
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument(
        "--budget-ms", type=float, default=DEFAULT_BUDGET_MS, help="hard bot's time per decision"
    )
    parser.add_argument(
        "--simulations",
        type=int,
        help="hard bot's deals per decision instead of a time budget (reproducible)",
    )
    parser.add_argument("--workers", type=int, default=2, help="processes (1: no pool)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ruleset", help="a ruleset TOML file (R30)")
    args = parser.parse_args(argv)
    strategies = [name.strip() for name in args.strategies.split(",") if name.strip()]
    if args.players is not None and len(strategies) == 1:
        strategies *= args.players
    if args.players is not None and len(strategies) != args.players:
        parser.error(f"--players {args.players} needs that many --strategies, or just one")
    unknown = [name for name in strategies if name not in BOTS]
    if unknown:
        parser.error(f"unknown strategy {unknown[0]!r}; choose from {', '.join(BOTS)}")
    if args.matches < 1 or args.workers < 1:
        parser.error("--matches and --workers must be at least 1")
    if args.simulations is not None and args.simulations < 1:
        parser.error("--simulations must be at least 1")
    if args.budget_ms <= 0:
        parser.error("--budget-ms must be positive")
    try:
        ruleset = load_ruleset(args.ruleset) if args.ruleset else DEFAULT_RULESET
        ruleset.check_players(len(strategies))
    except RulesetError as exc:
        parser.error(str(exc))
    budget = None if args.simulations is not None else args.budget_ms
    step = max(1, args.matches // 20)

    def progress(done: int, total: int) -> None:
        if done % step == 0 or done == total:
            print(f"  {done}/{total} matches", file=sys.stderr, flush=True)

    bound = ""
    if "hard" in strategies:
        bound = (
            f"; hard: {args.simulations} simulations a decision"
            if budget is None
            else f"; hard: {budget:g} ms a decision"
        )
    print(f"arena: {','.join(strategies)}; seed {args.seed}{bound}; {args.workers} worker(s)")
    start = time.perf_counter()
    result = run_arena(
        strategies,
        args.matches,
        seed=args.seed,
        budget_ms=budget,
        simulations=args.simulations,
        workers=args.workers,
        ruleset=ruleset,
        progress=progress,
    )
    print(format_table(result))
    print(f"took {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
