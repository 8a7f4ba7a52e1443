"""The match's chance draws, as :class:`random.Random` makes them, only faster.

:func:`shuffle` and :func:`randbelow` draw exactly the bits that
``Random.shuffle`` and ``Random.randrange(n)`` draw and give exactly their
results (CPython's algorithm: ``getrandbits(n.bit_length())`` until the draw
is below ``n``), so ``(ruleset, seed, actions)`` replays every match the same
as before; ``tests/engine/test_chance.py`` holds them to that. They skip the
method calls of the standard library's Python-level loop, which made up a
sixth of a random playout. Only for a plain :class:`random.Random` (the
match's own), whose ``getrandbits`` nobody overrides.
"""

from __future__ import annotations

import random
from typing import TypeVar

__all__ = ["randbelow", "shuffle"]

T = TypeVar("T")

#: For each list length, the shuffle's steps: (position, bits to draw for it).
_STEPS: dict[int, tuple[tuple[int, int], ...]] = {}


def _steps(length: int) -> tuple[tuple[int, int], ...]:
    steps = _STEPS.get(length)
    if steps is None:
        steps = _STEPS[length] = tuple((i, (i + 1).bit_length()) for i in range(length - 1, 0, -1))
    return steps


def shuffle(rng: random.Random, items: list[T]) -> None:
    """``rng.shuffle(items)``: the same draws from ``rng``, the same order."""
    getrandbits = rng.getrandbits
    for i, bits in _steps(len(items)):
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        items[i], items[j] = items[j], items[i]


def randbelow(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)`` for ``n`` at least 1: the same draws, the same number."""
    bits = n.bit_length()
    r = rng.getrandbits(bits)
    while r >= n:
        r = rng.getrandbits(bits)
    return r
