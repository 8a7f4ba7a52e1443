"""Token buckets, per-key buckets and lockouts, on a clock the test turns."""

from __future__ import annotations

import pytest

from server.ratelimit import KeyedBuckets, Lockout, Pacer, TokenBucket


class Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_spends_its_burst_then_earns_at_its_rate() -> None:
    """A full bucket gives ``burst`` tokens at once, then ``rate`` a second;
    wait() says how long until the next."""
    clock = Clock()
    bucket = TokenBucket(rate=8, burst=3, clock=clock)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    assert bucket.wait() == 0.125
    clock.now += 0.125
    assert bucket.wait() == 0 and bucket.take() and not bucket.take()
    clock.now += 60
    assert bucket.full() and bucket.level() == 3


def test_a_bucket_spent_past_empty_owes_and_earns_its_debt_back_first() -> None:
    """spend() takes a token there is not: the bucket owes it, and has a token
    again only once the debt is earned back."""
    clock = Clock()
    bucket = TokenBucket(rate=10, burst=2, clock=clock)
    for _ in range(5):
        bucket.spend()
    assert bucket.level() == -3 and bucket.wait() == pytest.approx(0.4)
    clock.now += 0.3
    assert not bucket.take()
    clock.now += 0.15
    assert bucket.take()


def test_a_pacer_charges_frames_on_credit_and_says_when_they_flood() -> None:
    """Issue 29, "Pings are not counted": a frame handled at once (a ping) is
    charged, on credit once the tokens are gone, and a whole burst on credit
    since the bucket was last half full is a flood; wait() says how long the
    connection owes."""
    clock = Clock()
    pacer = Pacer(rate=10, burst=4, clock=clock)
    assert all(pacer.charge() for _ in range(4)) and pacer.wait() == pytest.approx(0.1)
    assert all(pacer.charge() for _ in range(4))  # four on credit: held back, not yet a flood
    assert pacer.wait() == pytest.approx(0.5)
    assert not pacer.charge()  # the fifth held back is more than a burst


def test_a_pacer_forgives_a_client_that_let_its_bucket_refill() -> None:
    """Frames on credit are forgiven once the bucket is half full again: a
    client that pauses between bursts is never a flooder."""
    clock = Clock()
    pacer = Pacer(rate=10, burst=4, clock=clock)
    for _ in range(10):
        assert all(pacer.charge() for _ in range(8))  # a burst, and a burst on credit
        clock.now += 1.0  # the debt paid and the bucket full again
    assert pacer.wait() == 0


def test_keyed_buckets_are_separate_and_forgotten_once_full() -> None:
    """Each key has its own bucket; prune() forgets the ones that refilled."""
    clock = Clock()
    buckets = KeyedBuckets(rate=1, burst=2, clock=clock)
    assert [buckets.take("a") for _ in range(3)] == [True, True, False]
    assert buckets.take("b")
    clock.now += 0.5
    buckets.prune()
    assert len(buckets) == 2  # neither has refilled
    clock.now += 10
    buckets.prune()
    assert len(buckets) == 0


def test_a_lockout_follows_tries_in_a_row_and_ends() -> None:
    """``tries`` failures, each within ``seconds`` of the last, lock a key out
    for ``seconds``; failures further apart are forgiven; other keys are free."""
    clock = Clock()
    lockout = Lockout(tries=3, seconds=60, clock=clock)
    lockout.failed("k")
    lockout.failed("k")
    assert lockout.locked("k") == 0
    clock.now += 61  # forgiven
    lockout.failed("k")
    lockout.failed("k")
    assert lockout.locked("k") == 0
    lockout.failed("k")
    assert lockout.locked("k") == pytest.approx(60)
    assert lockout.locked("other") == 0
    clock.now += 30
    assert lockout.locked("k") == pytest.approx(30)
    clock.now += 31
    assert lockout.locked("k") == 0
    lockout.prune()
    assert len(lockout) == 0
