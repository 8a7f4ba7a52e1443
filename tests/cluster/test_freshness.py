"""Issue 29 review, "replay of sealed pub/sub messages", decided without Redis
(a fake clock): the stamp every directory entry and presence message carries,
the guard that refuses one sent again, and a node's cache, which an older
entry does not undo."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest

import protocol as wire
from server.cluster.entries import CLOCK_SKEW, DirectoryEntry, Presence
from server.cluster.freshness import MESSAGE_WINDOW, REORDER, ReplayGuard, Stamper
from server.cluster.node import Node
from server.cluster.store import LOBBY, PRESENCE, Store

KEY = bytes(range(32))
NOWHERE = "redis://127.0.0.1:1/0"  # never connected to: only seals are made and opened


class Clock:
    """Unix time that moves only when told."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Hooks:
    """A node's lobby that records what the node asks of it."""

    def __init__(self) -> None:
        self.replaced: list[str] = []
        self.left: list[tuple[str, str]] = []
        self.frames: list[bytes] = []
        self.matches: dict[str, Any] = {}

    def local_matches(self) -> dict[str, Any]:
        return self.matches

    def known_players(self) -> list[Any]:
        return []

    def news_changed(self, match_id: str, status: str, update: bytes) -> None:
        self.frames.append(update)

    def news_removed(self, match_id: str) -> None:
        self.frames.append(match_id.encode())

    def replace_player(self, player_id: str) -> None:
        self.replaced.append(player_id)

    def leave_elsewhere(self, player_id: str, match_id: str) -> None:
        self.left.append((player_id, match_id))


def _summary(match: str, taken: int) -> wire.MatchSummary:
    seats = tuple(
        wire.SeatInfo(
            seat=i, kind="human" if i < taken else "empty", name="Ada" if i < taken else None
        )
        for i in range(3)
    )
    return wire.MatchSummary(
        match=match, name="tulips", status="open", seats=seats, host="Ada",
        has_join_code=False, ruleset="standard", node="far",
    )  # fmt: skip


def _entry(match: str, taken: int = 1) -> DirectoryEntry:
    return DirectoryEntry(match=match, node="far", created=1.0, summary=_summary(match, taken))


def _gone(match: str) -> DirectoryEntry:
    return DirectoryEntry(match=match, node="far", created=0.0, summary=None)


def _near(clock: Clock) -> tuple[Node, Hooks]:
    hooks = Hooks()
    return Node(
        Store(NOWHERE, KEY, sender="near"), "near", "ws://near:1", hooks, clock=clock
    ), hooks


def test_a_message_is_taken_once_and_only_while_it_is_fresh() -> None:
    """A stamp is new once; after ``MESSAGE_WINDOW`` + ``CLOCK_SKEW`` it is too
    old; one from further ahead than the skew is refused too."""
    clock = Clock()
    far = Stamper("far", clock)
    guard = ReplayGuard(clock)
    first = far.next()
    assert guard.check(first) is None
    assert guard.check(first) == "heard before"
    clock.now += 5
    second = far.next()
    assert second.seq == 2 and second.sent == clock.now
    assert guard.check(second) is None
    clock.now += MESSAGE_WINDOW + CLOCK_SKEW + 1
    assert guard.check(far.next()) is None  # sent now: fresh
    late = msgspec.structs.replace(far.next(), sent=clock.now - MESSAGE_WINDOW - CLOCK_SKEW - 1)
    assert guard.check(late) == "too old"
    ahead = msgspec.structs.replace(far.next(), sent=clock.now + CLOCK_SKEW + 1)
    assert guard.check(ahead) == "from the future"


def test_messages_a_little_out_of_order_are_each_taken_once() -> None:
    """Two pipelines of one node may arrive in either order: each message is
    taken, once; one further behind than the window remembers is refused."""
    clock = Clock()
    far = Stamper("far", clock)
    guard = ReplayGuard(clock)
    stamps = [far.next() for _ in range(10)]
    for stamp in [stamps[5], stamps[9], stamps[0], stamps[7]]:
        assert guard.check(stamp) is None
    for stamp in [stamps[5], stamps[9], stamps[0], stamps[7]]:
        assert guard.check(stamp) == "heard before"
    assert guard.check(stamps[3]) is None
    for _ in range(REORDER):
        far.next()
    assert guard.check(far.next()) is None
    assert guard.check(stamps[4]) == "heard before"  # too far behind to tell: refused


def test_a_senders_earlier_run_is_refused_and_its_next_run_taken() -> None:
    """A node that restarted is a new run: its messages are taken; those of the
    run before it, within the window, are not."""
    clock = Clock()
    old = Stamper("far", clock)
    clock.now += 1
    new = Stamper("far", clock)
    guard = ReplayGuard(clock)
    kept = old.next()
    assert guard.check(kept) is None
    assert guard.check(new.next()) is None
    assert guard.check(old.next()) == "from an earlier run"


def test_what_is_forgotten_is_too_old_anyway() -> None:
    """The guard forgets a sender it has not heard from for a while; a message
    of theirs it had heard is by then refused for its age."""
    clock = Clock()
    far = Stamper("far", clock)
    guard = ReplayGuard(clock)
    heard = far.next()
    assert guard.check(heard) is None
    for _ in range(4):
        clock.now += MESSAGE_WINDOW
        assert guard.check(Stamper("other", clock).next()) is None  # prunes
    assert "far" not in guard._runs
    assert guard.check(heard) == "too old"


def test_a_presence_sent_again_is_not_acted_on_and_warned_about_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The reviewer's attack: a sealed ``Presence`` recorded and published again —
    with a match (the player's seats here would be left) or without (their
    connections here closed with 4004). The first is acted on; every copy,
    now or later, is not; one WARNING per channel and reason; /healthz counts them."""
    clock = Clock()
    far = Store(NOWHERE, KEY, sender="far", clock=clock)
    node, hooks = _near(clock)
    hello = far._pack(Presence(player="p1", node="far"))
    seated = far._pack(Presence(player="p1", node="far", match="m1"))
    with caplog.at_level(logging.WARNING, logger="server.cluster.node"):
        node._on_message(PRESENCE, hello)
        node._on_message(PRESENCE, seated)
        assert hooks.replaced == ["p1"] and hooks.left == [("p1", "m1")]
        for _ in range(3):
            node._on_message(PRESENCE, hello)
            node._on_message(PRESENCE, seated)
        clock.now += MESSAGE_WINDOW + CLOCK_SKEW + 1
        for _ in range(3):
            node._on_message(PRESENCE, hello)
    assert hooks.replaced == ["p1"] and hooks.left == [("p1", "m1")]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings
    assert "heard before" in warnings[0] and "too old" in warnings[1]
    assert node.health()["refused_messages"] == {
        "tulips:presence: heard before": 6,
        "tulips:presence: too old": 3,
    }


def test_a_gone_entry_sent_again_does_not_hide_a_live_match() -> None:
    """A match removed and listed again (its node forgot it, then had it back):
    the old ``gone`` published again leaves it listed; so does an old entry."""
    clock = Clock()
    far = Store(NOWHERE, KEY, sender="far", clock=clock)
    node, _ = _near(clock)
    first = far._pack(_entry("m1", taken=1))
    gone = far._pack(_gone("m1"))
    node._on_message(LOBBY, first)
    node._on_message(LOBBY, gone)
    assert "m1" not in node.entries
    clock.now += 1
    node._on_message(LOBBY, far._pack(_entry("m1", taken=2)))
    for replayed in (gone, first):
        node._on_message(LOBBY, replayed)
    assert node.entries["m1"].summary == _summary("m1", 2)
    assert node.refused["tulips:lobby: heard before"] == 2


def test_an_older_entry_in_redis_does_not_undo_a_newer_one() -> None:
    """An old sealed entry written into the directory again (not sent: stored
    values are not judged by their age): a full read keeps the newer entry the
    node has, and takes a newer one."""
    clock = Clock()
    far = Store(NOWHERE, KEY, sender="far", clock=clock)
    node, _ = _near(clock)
    old = far.unpack(far._pack(_entry("m1", taken=1)), DirectoryEntry, "old")
    new = far.unpack(far._pack(_entry("m1", taken=2)), DirectoryEntry, "new")
    assert old is not None and new is not None
    node._set_entries({"m1": new})
    node._set_entries({"m1": old})
    assert node.entries["m1"] == new
    node._on_message(LOBBY, far._pack(_entry("m1", taken=1)))  # a new message, older content
    assert node.entries["m1"].summary == _summary("m1", 1)
    newest = far.unpack(far._pack(_entry("m1", taken=3)), DirectoryEntry, "newest")
    assert newest is not None
    node._set_entries({"m1": newest})
    assert node.entries["m1"] == newest


def test_a_node_puts_its_own_entries_right_again() -> None:
    """The writer of an entry repairs it: an old value of its match in Redis, a
    deleted one, or one of a match it no longer has, are published again."""
    clock = Clock()
    node, hooks = _near(clock)
    info = type("Info", (), {"id": "mine", "created": 5.0, "summary": _summary("mine", 2)})()
    info.homes = frozenset({"p1"})
    hooks.matches = {"mine": info}
    current = DirectoryEntry(
        match="mine", node="near", created=5.0, summary=_summary("mine", 2), homes=("p1",)
    )
    stale = msgspec.structs.replace(current, summary=_summary("mine", 1), homes=())
    forgotten = DirectoryEntry(match="old", node="near", created=1.0, summary=_summary("old", 1))
    node._repair({"mine": current, "old": forgotten})
    assert node._outbox == {"old": _gone_of("old")}
    node._outbox.clear()
    node._repair({"mine": stale})
    assert node._outbox == {"mine": current}
    node._outbox.clear()
    node._repair({})
    assert node._outbox == {"mine": current}


def _gone_of(match: str) -> DirectoryEntry:
    return DirectoryEntry(match=match, node="near", created=0.0, summary=None)


def test_a_store_stamps_what_it_sends_and_refuses_what_is_unstamped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every directory entry and presence the store seals carries its sender's
    stamp, numbered in order; a sealed one without a stamp (a node of the
    version before) is left out, with a warning."""
    clock = Clock()
    far = Store(NOWHERE, KEY, sender="far", clock=clock)
    a = far.unpack(far._pack(_entry("m1")), DirectoryEntry, "a")
    b = far.unpack(far._pack(Presence(player="p1", node="far")), Presence, "b")
    assert a is not None and b is not None and a.stamp is not None and b.stamp is not None
    assert (a.stamp.sender, a.stamp.seq, b.stamp.seq) == ("far", 1, 2)
    unstamped = far._sealer.seal("presence", msgspec.msgpack.encode(Presence("p1", "far")))
    with caplog.at_level(logging.WARNING, logger="server.cluster.store"):
        assert far.unpack(unstamped, Presence, "a message on tulips:presence") is None
    assert "no stamp" in caplog.text
    with pytest.raises(RuntimeError):
        Store(NOWHERE, KEY)._pack(_entry("m1"))
