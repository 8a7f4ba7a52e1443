"""python -m engine.lab.bench: random playouts per CPU second, per player count.

Plays whole matches through the public API only (legal_actions and apply,
which builds every event; no observations), one core, timed in CPU seconds
of this process (time.process_time), so that other work on a shared machine
does not count, and reports the best tenth of a second of each run
(engine.lab.playouts.playouts_per_cpu_second says why). The loop is
engine.lab.playouts.

--compare REV measures another git revision side by side with this working
tree: it checks REV out in a temporary git worktree, runs the same loop
(this tree's engine.lab.playouts) in fresh interpreters with PYTHONPATH at
REV and at this tree in turn, alternating which goes first round by round so
that changes in the machine's load fall on both alike, prints both medians
and their ratio, and removes the worktree.

--minimal measures the engine beside a minimal rules loop
(engine.lab.minimal: the same game, the same seeds and the same random
choices, written the plain way with no events, checks or records): both
loops by the same best-slice method, in fresh interpreters, alternating
which goes first round by round; it prints both medians and the engine's
rate as a multiple of the minimal loop's (above 1.0x: the engine is faster).

--bot counts the hard bot's simulations in its 300 ms budget, the median
over nine decisions of one seeded match (engine.lab.botspeed says how).

The post-game analysis has its own measure, python -m engine.lab.analysis
--skip-strengths: the CPU seconds of one seeded match's analysis, every seat.

Examples:

    python -m engine.lab.bench --compare ef266fd --rounds 5
    python -m engine.lab.bench --minimal --players 2 4 6
    python -m engine.lab.bench --bot --players 3 5
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..ruleset import PLAYER_COUNTS
from . import minimal, playouts
from .botspeed import simulations_per_budget
from .playouts import playout, playouts_per_cpu_second

__all__ = ["compare", "compare_minimal", "main", "measure_at"]

#: The root of this working tree: the folder that holds the ``engine`` package.
ROOT = Path(__file__).resolve().parents[2]
#: The loop both sides of a comparison run, always this tree's copy.
LOOP = Path(playouts.__file__).resolve()
#: The minimal rules loop of ``--minimal``.
MINIMAL = Path(minimal.__file__).resolve()


def measure_at(root: Path, players: int, seconds: float, loop: Path = LOOP) -> float:
    """Playouts per CPU second of ``loop`` (the engine's, by default) with the
    engine under ``root``, in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    # -P: the script's own folder does not go on sys.path, so ``engine`` is root's
    done = subprocess.run(
        [sys.executable, "-P", str(loop), str(players), str(seconds)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the benchmark failed under {root}:\n{done.stderr.strip()}")
    return float(done.stdout.split()[-1])


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def compare(
    rev: str, players: Sequence[int], seconds: float, rounds: int
) -> dict[int, tuple[list[float], list[float]]]:
    """For each player count, the rates of ``rev`` and of this tree, round by round."""
    try:
        commit = _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except RuntimeError:
        raise RuntimeError(f"{rev!r} is not a commit of {ROOT}") from None
    results: dict[int, tuple[list[float], list[float]]] = {n: ([], []) for n in players}
    with tempfile.TemporaryDirectory(prefix="tulips-bench-") as tmp:
        other = Path(tmp) / "rev"
        _git("worktree", "add", "--detach", "--quiet", str(other), commit)
        try:
            for n in players:
                base, here = results[n]
                for round_ in range(rounds):
                    sides = [(other, base), (ROOT, here)]
                    if round_ % 2:
                        sides.reverse()
                    for root, rates in sides:
                        rates.append(measure_at(root, n, seconds))
        finally:
            _git("worktree", "remove", "--force", str(other))
    return results


def compare_minimal(
    players: Sequence[int], seconds: float, rounds: int
) -> dict[int, tuple[list[float], list[float]]]:
    """For each player count, the rates of the minimal loop and of this tree's
    engine, round by round, alternating which goes first."""
    results: dict[int, tuple[list[float], list[float]]] = {n: ([], []) for n in players}
    for n in players:
        plain, engine = results[n]
        for round_ in range(rounds):
            sides = [(MINIMAL, plain), (LOOP, engine)]
            if round_ % 2:
                sides.reverse()
            for loop, rates in sides:
                rates.append(measure_at(ROOT, n, seconds, loop))
    return results


def _print_pairs(
    what: str,
    names: tuple[str, str],
    results: dict[int, tuple[list[float], list[float]]],
    seconds: float,
) -> None:
    """Each player count's two medians (``names``: the first side, the second)
    and the second's ratio to the first, round by round too."""
    rounds = len(next(iter(results.values()))[0])
    print(
        f"playouts per CPU second (best 0.1 s of each run), median of {rounds} alternating"
        f" runs of {seconds:g} s; {what}"
    )
    first, second = (f"{name} playouts/s" for name in names)
    print(f"players  {first:>20}  {second:>20}  ratio  (per-round ratios)")
    for n, (one, other) in results.items():
        ratio = statistics.median(other) / statistics.median(one)
        each = ", ".join(f"{b / a:.2f}" for a, b in zip(one, other, strict=True))
        print(
            f"{n:>7}  {statistics.median(one):>20,.0f}  {statistics.median(other):>20,.0f}"
            f"  {ratio:>4.2f}x  ({each})"
        )


def _print_bot(players: Sequence[int]) -> None:
    print("the hard bot's simulations in a 300 ms budget, median of 9 decisions (seed 0)")
    print("players  simulations  (each decision)")
    for n in players:
        median, counts = simulations_per_budget(n)
        print(f"{n:>7}  {median:>11g}  ({', '.join(map(str, counts))})")


def main(argv: list[str] | None = None) -> int:
    """Print playouts per CPU second for each player count, or compare with a revision."""
    parser = argparse.ArgumentParser(
        prog="python -m engine.lab.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds of one run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per count; the best counts")
    parser.add_argument(
        "--players",
        type=int,
        nargs="*",
        choices=PLAYER_COUNTS,
        help="player counts (default: all, or 4 with --compare, 2 4 6 with --minimal)",
    )
    parser.add_argument("--compare", metavar="REV", help="a git revision to measure beside")
    parser.add_argument(
        "--minimal", action="store_true", help="measure beside the minimal rules loop"
    )
    parser.add_argument("--bot", action="store_true", help="the hard bot's simulations")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of --compare")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1 or args.rounds < 1:
        parser.error("--seconds must be positive, --repeats and --rounds at least 1")
    if args.bot:
        _print_bot(args.players or PLAYER_COUNTS)
        return 0
    if args.minimal:
        results = compare_minimal(args.players or [2, 4, 6], args.seconds, args.rounds)
        what = "the minimal rules loop (engine.lab.minimal), then the engine: engine/minimal"
        _print_pairs(what, ("minimal", "engine"), results, args.seconds)
        return 0
    if args.compare is not None:
        players = args.players or [4]
        try:
            results = compare(args.compare, players, args.seconds, args.rounds)
        except RuntimeError as exc:
            print(f"bench: {exc}", file=sys.stderr)
            return 1
        what = f"{args.compare}, then this tree: this tree/{args.compare}"
        _print_pairs(what, (args.compare, "this tree"), results, args.seconds)
        return 0
    print("players  playouts/s  actions/playout   (per CPU second)")
    for players in args.players or PLAYER_COUNTS:
        rate = max(playouts_per_cpu_second(players, args.seconds) for _ in range(args.repeats))
        actions = len(playout(players, 0, random.Random(0)).history)
        print(f"{players:>7}  {rate:>10,.0f}  {actions:>15}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
