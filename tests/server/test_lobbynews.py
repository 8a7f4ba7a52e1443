"""LobbyNews, the owner of what lobby browsers are told and when: driven by a
fake clock, no socket, no sleep."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from server.lobbynews import LobbyNews


@dataclass
class FakeClock:
    """Timers that fire only when the test moves time on."""

    now: float = 0.0
    timers: list[tuple[float, Callable[[], None], list[bool]]] = field(default_factory=list)

    def schedule(self, delay: float, callback: Callable[[], None]) -> FakeClock.Handle:
        cancelled = [False]
        self.timers.append((self.now + delay, callback, cancelled))
        return FakeClock.Handle(cancelled)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [t for t in self.timers if t[0] <= self.now]
        self.timers = [t for t in self.timers if t[0] > self.now]
        for _, callback, cancelled in due:
            if not cancelled[0]:
                callback()

    @dataclass
    class Handle:
        cancelled: list[bool]

        def cancel(self) -> None:
            self.cancelled[0] = True


def _news() -> tuple[LobbyNews, FakeClock, list[Sequence[bytes]]]:
    clock = FakeClock()
    told: list[Sequence[bytes]] = []
    return LobbyNews(told.append, clock.schedule, interval=0.25), clock, told


def test_a_burst_of_changes_is_told_once_with_the_latest_of_each_match() -> None:
    """Five changes of one match and one of another within the interval: one
    telling, each match once, as it last was."""
    news, clock, told = _news()
    for n in range(5):
        news.changed("a", f"a{n}".encode())
    news.changed("b", b"b0")
    clock.advance(0.2)
    assert told == []
    clock.advance(0.05)
    assert told == [[b"a4", b"b0"]]


def test_a_change_after_a_telling_is_told_at_the_next() -> None:
    """Coalescing delays, it never drops."""
    news, clock, told = _news()
    news.changed("a", b"a0")
    clock.advance(0.25)
    news.changed("a", b"a1")
    clock.advance(0.25)
    assert told == [[b"a0"], [b"a1"]]


def test_a_match_that_leaves_is_not_told_and_closing_tells_nothing() -> None:
    """A removed match's pending change goes; after close nothing fires."""
    news, clock, told = _news()
    news.changed("a", b"a0")
    news.removed("a")
    clock.advance(1)
    assert told == []
    news.changed("b", b"b0")
    news.close()
    clock.advance(1)
    assert told == []
