"""``python -m engine.tools.bench``: random playouts per second, per player count.

Plays whole matches through the public API only (``legal_actions`` and
``apply``; no observations), in this one process, so the figure is for one
core. The target (issue 2) is at least 3,000 four-player playouts a second.
"""

from __future__ import annotations

import argparse
import random
import time

from ..match import Match
from ..ruleset import PLAYER_COUNTS

__all__ = ["main", "playouts_per_second"]


def playout(players: int, seed: int, rng: random.Random) -> Match:
    """Play one match with uniformly random legal actions."""
    match = Match.new(players, seed)
    random_ = rng.random
    while not match.is_over:
        seat = match.to_act[0]
        legal = match.legal_actions(seat)
        match.apply(seat, legal[int(random_() * len(legal))])
    return match


def playouts_per_second(players: int, seconds: float, repeats: int = 3) -> float:
    """The best rate over ``repeats`` runs of about ``seconds`` each."""
    rng = random.Random(players)
    best = 0.0
    seed = 0
    for _ in range(repeats):
        count = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            playout(players, seed, rng)
            seed += 1
            count += 1
            if count % 50 == 0 and time.perf_counter() >= deadline:
                break
        best = max(best, count / (time.perf_counter() - start))
    return best


def main(argv: list[str] | None = None) -> int:
    """Print playouts per second for each player count."""
    parser = argparse.ArgumentParser(prog="python -m engine.tools.bench", description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per count; the best counts")
    parser.add_argument(
        "--players", type=int, nargs="*", choices=PLAYER_COUNTS, default=list(PLAYER_COUNTS)
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be positive and --repeats at least 1")
    print("players  playouts/s  actions/playout")
    for players in args.players:
        rate = playouts_per_second(players, args.seconds, args.repeats)
        actions = len(playout(players, 0, random.Random(0)).history)
        print(f"{players:>7}  {rate:>10,.0f}  {actions:>15}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
