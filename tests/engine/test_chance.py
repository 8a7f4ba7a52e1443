"""The match's fast chance draws (engine._chance) are the standard library's
draws exactly: the same bits taken from the generator and the same result, so
that ``(ruleset, seed, actions)`` replays every match as before (R10, R12, R19)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine._chance import generator, randbelow, shuffle


@given(seed=st.integers(0, 2**64), length=st.integers(0, 120))
def test_shuffle_is_random_shuffle(seed: int, length: int) -> None:
    """Same order and same generator state afterwards, for any list length."""
    ours, theirs = random.Random(seed), random.Random(seed)
    mine, standard = list(range(length)), list(range(length))
    shuffle(ours, mine)
    theirs.shuffle(standard)
    assert mine == standard
    assert ours.getstate() == theirs.getstate()


@given(seed=st.integers(0, 2**64), n=st.integers(1, 2**40))
def test_randbelow_is_randrange(seed: int, n: int) -> None:
    """Same number and same generator state afterwards as ``randrange(n)``."""
    ours, theirs = random.Random(seed), random.Random(seed)
    assert [randbelow(ours, n) for _ in range(5)] == [theirs.randrange(n) for _ in range(5)]
    assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_randbelow_covers_every_seat(n: int) -> None:
    """Every seat can be drawn first (R12), and none outside the match."""
    rng = random.Random(n)
    assert {randbelow(rng, n) for _ in range(400)} == set(range(n))


@given(seed=st.integers(-(2**70), 2**70))
def test_generator_is_random_random(seed: int) -> None:
    """A generator seeded by generator(seed) is in random.Random(seed)'s state."""
    assert generator(seed).getstate() == random.Random(seed).getstate()


@pytest.mark.parametrize("seed", ["tulips", b"tulips", 2.5])
def test_generator_of_any_other_seed_is_random_random(seed: str | bytes | float) -> None:
    """Seeds that are not ints go through random.Random itself, hashing and all."""
    made = generator(seed)  # type: ignore[arg-type]
    assert made.getstate() == random.Random(seed).getstate()
    assert type(made) is random.Random
