"""The engine benchmark's inner loop: random playouts per CPU second.

This one file is the benchmark that ``python -m engine.tools.bench`` runs,
both in its own process and, for ``--compare REV``, as a script in a fresh
interpreter against another revision's engine (``python -P playouts.py``,
``PYTHONPATH`` at that revision): so both sides run the very same loop. It
therefore imports the engine by its absolute name and uses only the public
API every revision has — :meth:`engine.Match.new`, ``is_over``, ``to_act``,
:meth:`~engine.Match.legal_actions` and :meth:`~engine.Match.apply`.

It measures CPU time (:func:`time.process_time`), not wall time: on a shared,
loaded machine other processes stretch the wall clock but not this process's
own CPU seconds. A playout is a whole match, setup and final scoring included.
"""

from __future__ import annotations

import random
import sys
import time

from engine import Match

__all__ = ["playout", "playouts_per_cpu_second"]

#: Playouts between two looks at the clock.
_BATCH = 20


def playout(players: int, seed: int, rng: random.Random) -> Match:
    """Play one match with uniformly random legal actions, through the public API."""
    match = Match.new(players, seed)
    random_ = rng.random
    while not match.is_over:
        seat = match.to_act[0]
        legal = match.legal_actions(seat)
        match.apply(seat, legal[int(random_() * len(legal))])
    return match


def playouts_per_cpu_second(players: int, seconds: float) -> float:
    """Playouts per CPU second, over at least ``seconds`` of this process's CPU time.

    The seeds and the random choices are the same on every run and every
    revision, so two engines that play the same rules play the same matches.
    """
    rng = random.Random(players)
    for seed in range(_BATCH):  # warm up: imports, caches, the allocator
        playout(players, seed, rng)
    clock = time.process_time
    count = 0
    start = clock()
    while True:
        for _ in range(_BATCH):
            playout(players, count, rng)
            count += 1
        elapsed = clock() - start
        if elapsed >= seconds:
            return count / elapsed


if __name__ == "__main__":  # the worker of ``bench --compare``: players, seconds -> rate
    print(repr(playouts_per_cpu_second(int(sys.argv[1]), float(sys.argv[2]))))
