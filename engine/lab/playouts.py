"""The engine benchmark's inner loop: random playouts per CPU second.

This one file is the benchmark that ``python -m engine.lab.bench`` runs,
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
from collections.abc import Callable

from engine import Match

__all__ = ["best_rate", "playout", "playouts_per_cpu_second"]

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


def playouts_per_cpu_second(players: int, seconds: float, slice_seconds: float = 0.1) -> float:
    """The best rate of the slices of ``slice_seconds`` that fill ``seconds`` of CPU time.

    On a loaded machine the CPU itself runs slower while other processes
    share its caches and cores, so a slice can only come out slow, never
    fast: the best slice is the closest to the engine's own cost. The seeds
    and the random choices are the same on every run and every revision, so
    two engines that play the same rules play the same matches.
    """
    return best_rate(playout, players, seconds, slice_seconds)


def best_rate(
    play: Callable[[int, int, random.Random], object],
    players: int,
    seconds: float,
    slice_seconds: float = 0.1,
) -> float:
    """Playouts per CPU second of ``play(players, seed, rng)``, timed as
    :func:`playouts_per_cpu_second` says (any loop, the minimal one too)."""
    rng = random.Random(players)
    for seed in range(_BATCH):  # warm up: imports, caches, the allocator
        play(players, seed, rng)
    clock = time.process_time
    best = 0.0
    seed = 0
    start = clock()
    while True:
        count = 0
        begin = clock()
        while True:
            for _ in range(_BATCH):
                play(players, seed, rng)
                seed += 1
            count += _BATCH
            now = clock()
            if now - begin >= slice_seconds:
                break
        best = max(best, count / (now - begin))
        if now - start >= seconds:
            return best


if __name__ == "__main__":  # the worker of ``bench --compare``: players, seconds -> rate
    print(repr(playouts_per_cpu_second(int(sys.argv[1]), float(sys.argv[2]))))
