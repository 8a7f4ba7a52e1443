"""python -m engine.lab.analysis: what the post-game analysis costs, and
whether it tells the bots apart.

Two measures, both on 4-player matches under the standard ruleset:

* time: one match between an easy, a medium, a hard and a medium bot is
  analysed for all four seats, each decision timed in CPU seconds of this
  process (time.process_time, so other work on a shared machine does not
  count); the total, the mean and slowest decision; and the slowest hint
  (engine.analysis.hint at every decision, in wall-clock time, as its budget
  is: the hard bot's thinking time).
* strength: --matches matches between easy, medium and hard bots, every seat
  analysed; the mean loss per decision (expected points given up against the
  analysis's best option), the accuracy and the marks of each strength. Each
  match seats one bot of each strength and a fourth whose strength goes round
  easy, medium, hard, the seats rotating, so that each strength meets the
  others in every seat. A good analysis finds easy > medium > hard.

The hard bot thinks with a fixed number of deals (--hard-simulations), so a
run depends on --seed only. Forced decisions (a single legal action) are
not counted.

Example:

    python -m engine.lab.analysis --matches 50
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ..analysis import (
    DEFAULT_DEALS,
    HINT_BUDGET_MS,
    HINT_DEALS,
    MARKS,
    DecisionAnalysis,
    Mark,
    analyse_decision,
    analyse_match,
    hint,
)
from ..bots.policies import bot_policy
from ..match import Match
from ..observation import observe
from ..record import MatchRecord

__all__ = ["StrengthStats", "main", "play", "seating", "time_match"]

#: The strengths compared, weakest first.
STRENGTHS = ("easy", "medium", "hard")
PLAYERS = 4
#: The hard bot's deals per decision (the lookahead's default is 128).
HARD_SIMULATIONS = 32


def seating(index: int) -> tuple[str, ...]:
    """The bots of match ``index``: one of each strength and a fourth going
    round the strengths, rotated by the match's index."""
    bots = [*STRENGTHS, STRENGTHS[index % len(STRENGTHS)]]
    shift = index % PLAYERS
    return tuple(bots[shift:] + bots[:shift])


def play(bots: Sequence[str], seed: int, simulations: int) -> MatchRecord:
    """One match between ``bots`` (one name a seat), every choice seeded."""
    match = Match.new(len(bots), seed)
    policies = [bot_policy(name, None, simulations) for name in bots]
    rngs = [random.Random(f"{seed}:{seat}") for seat in range(len(bots))]
    while not match.is_over:
        seat = match.to_act[0]
        match.apply(seat, policies[seat](observe(match, seat), rngs[seat]))
    return MatchRecord.of(match)


@dataclass(frozen=True, slots=True)
class Timing:
    """What analysing one match cost, in CPU seconds."""

    decisions: tuple[float, ...]  #: each decision of every seat, in the order analysed
    exact: tuple[float, ...]  #: those of the decisions whose values were enumerated exactly
    hint_slowest: float  #: the slowest hint, in wall-clock seconds (its budget is wall time)
    hint_budget_ms: float

    @property
    def total(self) -> float:
        """The whole match, every seat."""
        return sum(self.decisions)


def time_match(
    record: MatchRecord, deals: int, *, seed: int = 0, hint_budget_ms: float = HINT_BUDGET_MS
) -> Timing:
    """Analyse every decision of every seat of ``record`` as
    :func:`engine.analysis.analyse_seat` does, each one timed; and ask a hint
    (:func:`engine.analysis.hint`, with ``hint_budget_ms``) at each, for the
    slowest hint."""
    match = Match.new(record.players, record.seed, record.ruleset, record.first_seat)
    clock = time.process_time
    spent: list[float] = []
    exact: list[float] = []
    hint_slowest = 0.0
    for index, (seat, action) in enumerate(record.actions):
        observation = observe(match, seat)
        start = clock()
        values = analyse_decision(observation, deals=deals, seed=f"{seed}:{index}")
        spent.append(clock() - start)
        if values.exact:  # the same enumeration whatever the deal count
            exact.append(spent[-1])
        start = time.perf_counter()
        hint(
            observation,
            seed=f"{seed}:{index}",
            clock=time.perf_counter,
            budget_ms=hint_budget_ms,
        )
        hint_slowest = max(hint_slowest, time.perf_counter() - start)
        match.apply(seat, action)
    return Timing(tuple(spent), tuple(exact), hint_slowest, hint_budget_ms)


@dataclass(slots=True)
class StrengthStats:
    """The judged decisions of every seat of one strength."""

    name: str
    seats: int = 0
    losses: list[float] = field(default_factory=list)
    marks: dict[Mark, int] = field(default_factory=lambda: {mark: 0 for mark, _ in MARKS})
    points: int = 0  #: final points over all its seats

    def add(self, decisions: Sequence[DecisionAnalysis], points: int) -> None:
        """Count one seat's decisions and final points."""
        self.seats += 1
        self.points += points
        for decision in decisions:
            if decision.forced:
                continue
            self.losses.append(decision.loss)
            if decision.mark is not None:
                self.marks[decision.mark] += 1

    @property
    def mean_loss(self) -> float:
        """Mean expected points lost per decision."""
        return sum(self.losses) / len(self.losses) if self.losses else 0.0

    @property
    def accuracy(self) -> float:
        """Percentage of decisions without a mark."""
        if not self.losses:
            return 100.0
        return 100.0 * (len(self.losses) - sum(self.marks.values())) / len(self.losses)


@dataclass(frozen=True, slots=True)
class _Job:
    index: int
    seed: int
    deals: int
    simulations: int


@dataclass(frozen=True, slots=True)
class _Judged:
    bots: tuple[str, ...]
    decisions: tuple[tuple[DecisionAnalysis, ...], ...]  #: by seat
    totals: tuple[int, ...]
    seconds: float  #: CPU seconds the analysis took


def _judge(job: _Job) -> _Judged:
    """Play match ``job.index`` and analyse all its seats."""
    bots = seating(job.index)
    record = play(bots, job.seed, job.simulations)
    start = time.process_time()
    analysis = analyse_match(record, deals=job.deals, seed=job.index)
    seconds = time.process_time() - start
    scoring = record.replay().scoring
    assert scoring is not None
    return _Judged(
        bots,
        tuple(seat.decisions for seat in analysis.seats),
        tuple(player.total for player in scoring.players),
        seconds,
    )


def compare(
    matches: int,
    *,
    deals: int = DEFAULT_DEALS,
    seed: int = 0,
    simulations: int = HARD_SIMULATIONS,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, StrengthStats], float]:
    """Every strength's tally over ``matches`` analysed matches, and the CPU
    seconds the analyses took (of the worker processes, with ``workers`` > 1)."""
    rng = random.Random(seed)
    jobs = [_Job(i, rng.getrandbits(32), deals, simulations) for i in range(matches)]
    stats = {name: StrengthStats(name) for name in STRENGTHS}
    seconds = 0.0
    finished: Iterator[_Judged]
    if workers <= 1:
        finished = map(_judge, jobs)
        seconds = _collect(stats, finished, matches, progress)
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            seconds = _collect(stats, pool.imap_unordered(_judge, jobs), matches, progress)
    return stats, seconds


def _collect(
    stats: dict[str, StrengthStats],
    finished: Iterator[_Judged],
    matches: int,
    progress: Callable[[int, int], None] | None,
) -> float:
    seconds = 0.0
    for done, judged in enumerate(finished, 1):
        for name, decisions, total in zip(
            judged.bots, judged.decisions, judged.totals, strict=True
        ):
            stats[name].add(decisions, total)
        seconds += judged.seconds
        if progress is not None:
            progress(done, matches)
    return seconds


def format_strengths(stats: dict[str, StrengthStats], matches: int) -> str:
    """The strengths as a text table."""
    lines = [
        f"mean loss per decision over {matches} 4-player matches "
        "(expected points given up against the analysis's best option)",
        "bot      seats  decisions  mean loss  accuracy  inaccuracies  mistakes  blunders"
        "  mean pts",
    ]
    for s in stats.values():
        marks = s.marks
        points = s.points / s.seats if s.seats else 0.0
        lines.append(
            f"{s.name:<7}  {s.seats:>5}  {len(s.losses):>9}  {s.mean_loss:>9.2f}  "
            f"{s.accuracy:>7.1f}%  {marks['inaccuracy']:>12}  {marks['mistake']:>8}  "
            f"{marks['blunder']:>8}  {points:>8.1f}"
        )
    return "\n".join(lines)


def format_timing(timing: Timing, deals: int) -> str:
    """The cost of one match's analysis as text."""
    spent = timing.decisions
    exact = f", {1000 * max(timing.exact):.0f} ms at most" if timing.exact else ""
    return (
        f"analysis of one 4-player match, all four seats: {len(spent)} decisions,"
        f" {deals} deals each\n"
        f"  {timing.total:.1f} CPU s in all; per decision {1000 * timing.total / len(spent):.0f}"
        f" ms on average, {1000 * max(spent):.0f} ms at most\n"
        f"  the last turn enumerated exactly: {len(timing.exact)} decisions{exact}\n"
        f"  a hint (up to {HINT_DEALS} deals in {timing.hint_budget_ms:.0f} ms):"
        f" {1000 * timing.hint_slowest:.0f} ms at most, wall clock"
    )


def main(argv: list[str] | None = None) -> int:
    """Measure the analysis from the command line and print the tables."""
    parser = argparse.ArgumentParser(
        prog="python -m engine.lab.analysis",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--matches", type=int, default=50, help="matches for the strengths")
    parser.add_argument(
        "--deals", type=int, default=DEFAULT_DEALS, help="deals per decision analysed"
    )
    parser.add_argument(
        "--hard-simulations",
        type=int,
        default=HARD_SIMULATIONS,
        help="the hard bot's deals per decision",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes (1: no pool)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-timing", action="store_true", help="only the strengths")
    parser.add_argument("--skip-strengths", action="store_true", help="only the timing")
    args = parser.parse_args(argv)
    if args.matches < 1 or args.deals < 1 or args.hard_simulations < 1 or args.workers < 1:
        parser.error("--matches, --deals, --hard-simulations and --workers must be at least 1")
    if not args.skip_timing:
        bots = ("easy", "medium", "hard", "medium")
        record = play(bots, args.seed, args.hard_simulations)
        print(format_timing(time_match(record, args.deals, seed=args.seed), args.deals))
    if args.skip_strengths:
        return 0
    step = max(1, args.matches // 10)

    def progress(done: int, total: int) -> None:
        if done % step == 0 or done == total:
            print(f"  {done}/{total} matches", file=sys.stderr, flush=True)

    start = time.perf_counter()
    stats, seconds = compare(
        args.matches,
        deals=args.deals,
        seed=args.seed,
        simulations=args.hard_simulations,
        workers=args.workers,
        progress=progress,
    )
    print(format_strengths(stats, args.matches))
    print(
        f"hard bot: {args.hard_simulations} deals a decision; the analyses took"
        f" {seconds:.0f} CPU s ({seconds / args.matches:.1f} s a match);"
        f" {time.perf_counter() - start:.0f} s in all with {args.workers} worker(s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
