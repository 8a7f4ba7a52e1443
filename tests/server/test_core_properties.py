"""The match core under random interleavings (hypothesis): fresh and stale
acts, acts that name no prompt, drops and returns, leaves and joins, turn
timers and grace periods running out, bots answering late and out of order,
a slow disk and a failing one — all on a fake clock, without a socket.

Whatever the order, these hold (checked as each output is carried out by
:class:`~tests.server.core_driver.Driver`, and at the end):

- every applied action answers the decision it named: no other action of
  that seat was taken between the prompt it names and its own — so no
  decision is taken twice, and a late act never lands on a later decision;
- every acknowledged action (``ok``) is on disk, and so is every action
  whose events anyone was sent, before they were sent;
- ``joined`` goes out only once the seat it answers is on disk;
- the server never plays a seat for its player (``stand_in``) while the
  player is connected to it;
- each connection's frames hold only what R24–R26 allow it, and its events
  follow one another and agree with its snapshots.
"""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import protocol as wire
from server.match import commands as c
from server.match.info import Status

from .core_driver import Conn, seated
from .helpers import Tracker

PLAYERS = ("Ada", "Bea")

_act = st.tuples(st.just("act"), st.integers(0, 1), st.sampled_from([0, 1, 2]), st.integers(0, 7))
#: one step of an interleaving; acts come most often (each names the latest
#: prompt, the one before — a late act — or an older one)
_step = st.one_of(
    _act,
    _act,
    _act,
    st.tuples(st.just("act_any"), st.integers(0, 1), st.integers(0, 7)),
    st.tuples(st.just("drop"), st.integers(0, 1)),
    st.tuples(st.just("return"), st.integers(0, 1)),
    st.tuples(st.just("leave"), st.integers(0, 1)),
    st.tuples(st.just("tick"), st.sampled_from([0.5, 1.0, 2.5, 3.0, 5.0, 6.0])),
    st.tuples(st.just("bot"), st.integers(0, 5)),
    st.tuples(st.just("slow"), st.sampled_from([0.5, 3.0, 6.0])),
    st.tuples(st.just("fail"), st.integers(0, 9)),  # the disk fails at 0: rarely
    st.tuples(st.just("sync"), st.integers(0, 1)),
    st.tuples(
        st.just("watch"),
    ),
)


class Run:
    """One interleaving: two players (one connection each at a time) and a bot."""

    def __init__(self) -> None:
        self.driver, conns = seated(PLAYERS, [(2, "easy")], turn_timer=5.0, grace_period=3.0)
        self.current: list[Conn | None] = list(conns)
        self.all: list[Conn] = list(conns)

    def step(self, step: tuple[Any, ...]) -> None:
        driver = self.driver
        kind = step[0]
        if kind in ("act", "act_any"):
            conn = self.current[step[1]]
            if conn is None or not conn.prompts():
                return
            prompts = conn.prompts()
            pick = step[-1]
            if kind == "act_any":
                prompt, seq = prompts[-1], None
            else:
                back = min(step[2] if step[2] < 2 else pick, len(prompts) - 1)
                prompt = prompts[-1 - back]
                seq = prompt["seq"]
            driver.act(conn, prompt["actions"][pick % len(prompt["actions"])], seq)
        elif kind == "drop":
            conn = self.current[step[1]]
            if conn is not None:
                driver.do(c.Detach(conn.number))
                self.current[step[1]] = None
        elif kind == "return":
            if self.current[step[1]] is None:
                conn = driver.connect(PLAYERS[step[1]])
                self.all.append(conn)
                self.current[step[1]] = conn
                seat = driver.core.seat_of(conn.who.id)
                if seat is not None and not driver.core.seats[seat].left:
                    driver.do(c.Attach(conn.number, conn.who))
                else:  # left it, or never seated: join takes one's own seat back
                    driver.do(c.Join(conn.number, conn.who, None, None, driver.request_id()))
        elif kind == "leave":
            conn = self.current[step[1]]
            if conn is not None and conn.inside:
                driver.do(c.Leave(conn.number, conn.who, driver.request_id()))
        elif kind == "tick":
            driver.advance(step[1])
        elif kind == "bot":
            if driver.asks:
                driver.answer_bot(step[1] % len(driver.asks))
        elif kind == "slow":
            driver.slow = step[1]
        elif kind == "fail":
            driver.failing = 1 if step[1] == 0 else 0
        elif kind == "sync":
            conn = self.current[step[1]]
            if conn is not None and conn.inside:
                driver.do(c.Sync(conn.number, driver.request_id()))
        elif kind == "watch":
            conn = driver.connect("Cy")
            self.all.append(conn)
            driver.do(c.Watch(conn.number, conn.who, None, driver.request_id()))

    def finish(self) -> None:
        """Everyone comes back and the bots and timers play on, to the end (bounded)."""
        for index in range(len(PLAYERS)):
            self.step(("return", index))
        for _ in range(400):
            core = self.driver.core
            if core.status is not Status.RUNNING:
                return
            for index, conn in enumerate(self.current):
                if conn is not None and conn.prompts():
                    self.step(("act", index, 0, 0))
                    self.step(("act", index, 1, 3))  # and again, late, naming the one before
            self.driver.answer_bots()
            self.driver.advance(6.0)
        raise AssertionError("the match never ended")

    def check(self) -> None:
        driver = self.driver
        driver.flush()
        # every applied action answers the decision it named; none is taken twice
        applied = driver.applied
        for a in applied:
            if a.named is None:
                continue
            assert a.named <= a.at, (a, "named a decision not yet open")
            between = [b for b in applied if b.seat == a.seat and a.named <= b.at < a.at]
            assert not between, (a, between, "a decision taken twice, or a late act moved on")
        # every action the match took is on disk, in order
        match = driver.core.match
        assert match is not None
        assert len(driver.stored_actions()) == len(match.history) == len(applied)
        # each connection's events follow one another and agree with its snapshots
        for conn in driver.conns.values():
            tracker = Tracker(conn.viewer)
            for message in conn.messages:
                if message["type"] in ("snapshot", "event"):
                    tracker.feed(_decoded(message))


def _decoded(message: dict[str, Any]) -> Any:
    return wire.decode_server_message(msgpack.packb(message))


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(_step, min_size=10, max_size=80))
def test_every_interleaving_keeps_decisions_storage_and_secrets(steps: list[Any]) -> None:
    """Random commands, in any order: the core's promises all hold (module docstring)."""
    run = Run()
    for step in steps:
        run.step(step)
    if run.driver.core.status is Status.RUNNING:
        run.finish()
    run.check()
