"""LobbyNews, the owner of which match each lobby browser follows and what it is
told of them when: driven by a fake clock, no socket, no sleep."""

from __future__ import annotations

from collections.abc import Callable
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


def _news(limit: int = 4) -> tuple[LobbyNews, FakeClock, list[tuple[int, list[bytes]]]]:
    clock = FakeClock()
    told: list[tuple[int, list[bytes]]] = []
    news = LobbyNews(lambda conn, frames: told.append((conn, list(frames))), clock.schedule, 0.25)
    return news, clock, told


def test_a_burst_of_changes_is_told_once_with_the_latest_of_each_match() -> None:
    """Five changes of one match and one of another within the interval: one
    frame list per browser, each match once, as it last was."""
    news, clock, told = _news()
    news.follow(1, [("a", "open"), ("b", "open")], None, 4, top=True)
    news.follow(2, [("a", "open")], None, 4, top=False)
    for n in range(5):
        news.changed("a", "open", f"a{n}".encode())
    news.changed("b", "open", b"b0")
    clock.advance(0.2)
    assert told == []
    clock.advance(0.05)
    assert sorted(told) == [(1, [b"a4", b"b0"]), (2, [b"a4"])]


def test_a_change_after_a_telling_is_told_at_the_next() -> None:
    """Coalescing delays, it never drops."""
    news, clock, told = _news()
    news.follow(1, [("a", "open")], None, 4, top=False)
    news.changed("a", "open", b"a0")
    clock.advance(0.25)
    news.changed("a", "open", b"a1")
    clock.advance(0.25)
    assert told == [(1, [b"a0"]), (1, [b"a1"])]


def test_a_match_that_leaves_is_told_removed_at_once_and_closing_tells_nothing() -> None:
    """A removed match's pending change goes, its followers get its removal
    now; after close nothing fires."""
    news, clock, told = _news()
    news.follow(1, [("a", "open"), ("b", "open")], None, 4, top=False)
    news.changed("a", "open", b"a0")
    news.removed("a", b"gone a")
    assert told == [(1, [b"gone a"])]
    clock.advance(1)
    assert told == [(1, [b"gone a"])]
    assert news.following(1) == ["b"]
    news.changed("b", "open", b"b0")
    news.close()
    clock.advance(1)
    assert told == [(1, [b"gone a"])]


def test_a_change_reaches_only_the_browsers_that_follow_its_match() -> None:
    """Issue 45: the cost of a change grows with the browsers that see the
    match: a match on nobody's page sets no timer and is told to nobody."""
    news, clock, told = _news()
    news.follow(1, [("a", "running")], None, 4, top=False)
    news.follow(2, [("b", "running")], None, 4, top=False)
    news.changed("c", "running", b"c0")
    assert clock.timers == []
    news.changed("b", "running", b"b0")
    clock.advance(0.25)
    assert told == [(2, [b"b0"])]


def test_a_new_match_comes_in_at_the_top_of_a_first_page_and_pushes_the_bottom_off() -> None:
    """A first page of two: a new match is followed, the oldest one falls off
    (no more updates of it); a later page gets no new matches."""
    news, clock, told = _news()
    news.follow(1, [("b", "open"), ("a", "open")], None, 2, top=True)
    news.follow(2, [("a", "open")], None, 2, top=False)
    news.changed("c", "open", b"c0")
    assert news.following(1) == ["c", "b"]
    assert news.following(2) == ["a"]
    news.changed("a", "open", b"a1")
    clock.advance(0.25)
    assert sorted(told) == [(1, [b"c0"]), (2, [b"a1"])]


def test_a_filter_keeps_out_other_statuses_and_lets_go_of_a_match_leaving_it() -> None:
    """A first page of open matches: a new running match stays out; an open
    one that starts is told once more (the browser sees it go), then no
    more; one that opens later comes in."""
    news, clock, told = _news()
    news.follow(1, [("a", "open")], frozenset({"open"}), 4, top=True)
    news.changed("r", "running", b"r0")
    assert news.following(1) == ["a"]
    news.changed("a", "running", b"a1")
    clock.advance(0.25)
    assert told == [(1, [b"a1"])]
    assert news.following(1) == []
    news.changed("a", "running", b"a2")
    news.changed("n", "open", b"n0")
    clock.advance(0.25)
    assert told == [(1, [b"a1"]), (1, [b"n0"])]


def test_a_browser_that_enters_a_match_or_lists_again_follows_only_its_new_page() -> None:
    """``unfollow`` ends it; a second ``follow`` replaces the first page."""
    news, clock, told = _news()
    news.follow(1, [("a", "open")], None, 4, top=True)
    news.follow(1, [("b", "open")], None, 4, top=False)
    news.changed("a", "open", b"a1")
    news.changed("b", "open", b"b1")
    clock.advance(0.25)
    assert told == [(1, [b"b1"])]
    news.unfollow(1)
    news.changed("b", "open", b"b2")
    news.changed("z", "open", b"z0")
    clock.advance(0.25)
    assert told == [(1, [b"b1"])]
