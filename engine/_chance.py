"""The match's chance draws, as :class:`random.Random` makes them, only faster.

:func:`generator` seeds a generator exactly as ``random.Random(seed)`` does;
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

import _random
import random
from typing import TypeVar

__all__ = ["generator", "randbelow", "shuffle"]

T = TypeVar("T")

#: For each list length, the shuffle's steps: (position, bits to draw for it).
_STEPS: dict[int, tuple[tuple[int, int], ...]] = {}


def _steps(length: int) -> tuple[tuple[int, int], ...]:
    steps = _STEPS.get(length)
    if steps is None:
        steps = _STEPS[length] = tuple((i, (i + 1).bit_length()) for i in range(length - 1, 0, -1))
    return steps


_new_random = random.Random.__new__
_c_seed = _random.Random.seed


def generator(seed: int) -> random.Random:
    """``random.Random(seed)``: the same state, without the two Python-level calls
    (``__init__`` and ``seed``) around the C seeding, for an ``int`` seed; any
    other seed goes through ``random.Random`` itself."""
    if type(seed) is not int:
        return random.Random(seed)
    rng = _new_random(random.Random)
    _c_seed(rng, seed)  # what Random.seed does for an int: hand it to C as it is
    rng.gauss_next = None  # type: ignore[attr-defined]  # as Random.__init__ sets it
    return rng


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
