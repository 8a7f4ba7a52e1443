"""The analysis service alone (issue 32), with a backend whose every piece of
work the test finishes by hand: no worker, no socket, no sleep.

* At most ``max_running`` analyses are computed at once; the rest wait in
  order, and hear their place in the line as it moves; beyond ``max_queued``
  waiting, a new one is refused (``analysis_busy``).
* Progress is told per decision: done of total, in order.
* Two requests for the same match and seat share one computation; once
  computed, it is stored, and the store answers the next request.
* One player waits for at most ``per_player`` analyses at once: a new one
  beyond is refused (``analysis_busy``, their own limit), while asking again
  for one they wait for, or joining another's, is not; once one is done they
  may ask again.
* Every decision is valued from the seat's own observation with the seed the
  match id gives (the same seed the engine's ``analyse_seat`` takes).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import deque

import pytest

import protocol as wire
from engine import DEFAULT_RULESET, Match, Observation
from engine.analysis import DecisionValues, OptionValue
from engine.record import MatchRecord
from server.analyses.moments import Moment, seat_moments
from server.analyses.service import NICENESS, Analyst, PoolBackend, analysis_seed
from server.analyses.store import MemoryAnalyses


def _record(seed: int = 11, players: int = 3) -> MatchRecord:
    """A whole match of first legal actions."""
    match = Match.new(players, seed, DEFAULT_RULESET, 0)
    while not match.is_over:
        seat = match.to_act[0]
        match.apply(seat, match.legal_actions(seat)[0])
    return MatchRecord.of(match)


class HandBackend:
    """A backend whose work waits until the test finishes it (in order)."""

    def __init__(self) -> None:
        self.work: deque[tuple[str, asyncio.Future[object]]] = deque()
        self.seeds: list[str] = []
        self.viewers: list[int | None] = []
        self.closed = False

    async def moments(self, record: MatchRecord, seat: int) -> list[Moment]:
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self.work.append((f"moments {seat}", future))
        await future
        return seat_moments(record, seat)

    async def value(self, observation: Observation, deals: int, seed: str) -> DecisionValues:
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self.work.append(("value", future))
        await future
        self.seeds.append(seed)
        self.viewers.append(observation.viewer)
        options = tuple(
            OptionValue(action, float(i), 0.5) for i, action in enumerate(observation.legal_actions)
        )
        return DecisionValues(options, False, deals)

    def close(self) -> None:
        self.closed = True

    async def finish(self, count: int = 1) -> None:
        """Finish the oldest ``count`` pieces of work, letting each go on."""
        for _ in range(count):
            for _ in range(50):  # bounded: the service queues its next piece in a few turns
                if self.work:
                    break
                await asyncio.sleep(0)
            _, future = self.work.popleft()
            future.set_result(None)
            for _ in range(5):
                await asyncio.sleep(0)

    async def finish_all(self, limit: int = 500) -> None:
        for _ in range(limit):
            for _ in range(20):
                if self.work:
                    break
                await asyncio.sleep(0)
            if not self.work:
                return
            await self.finish()
        raise AssertionError("the work never ended")


def _analyst(backend: HandBackend, **bounds: int) -> Analyst:
    return Analyst(
        MemoryAnalyses(),
        backend,
        deals=4,
        max_running=bounds.get("max_running", 1),
        max_queued=bounds.get("max_queued", 2),
        per_player=bounds.get("per_player"),
    )


async def test_progress_is_told_per_decision_and_the_seed_comes_from_the_match_id() -> None:
    """Issue 32: place 0 (computed), then 0 of N, 1 of N … N of N; every
    decision valued from the analysed seat's own observation (R24–R26), with
    the seed ``analyse_seat`` would be given (match seed, then decision index)."""
    backend = HandBackend()
    analyst = _analyst(backend)
    record = _record()
    heard: list[tuple[int, int, int]] = []
    asking = asyncio.ensure_future(analyst.analyse("m1", 1, record, lambda *p: heard.append(p)))
    await backend.finish_all()
    stored = await asking
    total = len(stored.seat.decisions)
    assert total > 0
    assert heard == [(0, 0, 0), (0, 0, total)] + [(0, done, total) for done in range(1, total + 1)]
    seed = analysis_seed("m1")
    assert backend.seeds == [f"{seed}:{d.index}" for d in stored.seat.decisions]
    assert set(backend.viewers) == {1}
    assert stored.seed == seed and stored.deals == 4


async def test_analyses_beyond_the_bound_wait_in_order_and_beyond_the_queue_are_refused() -> None:
    """Issue 32: one runs, two wait (places 1 and 2), a fourth is refused
    with `analysis_busy`; when the first ends the next starts and the last
    hears its place move up to 1."""
    backend = HandBackend()
    analyst = _analyst(backend, max_running=1, max_queued=2)
    record = _record()
    heard: dict[str, list[tuple[int, int, int]]] = {"a": [], "b": [], "c": []}
    tasks = {
        name: asyncio.ensure_future(
            analyst.analyse(name, 0, record, lambda *p, name=name: heard[name].append(p))
        )
        for name in ("a", "b", "c")
    }
    for _ in range(5):
        await asyncio.sleep(0)
    assert (analyst.running, analyst.queued) == (1, 2)
    assert heard["b"] == [(1, 0, 0)] and heard["c"] == [(2, 0, 0)]
    with pytest.raises(wire.ProtocolError) as busy:
        await analyst.analyse("d", 0, record)
    assert busy.value.code == wire.ErrorCode.ANALYSIS_BUSY
    assert [kind for kind, _ in backend.work] == ["moments 0"], "only the first is computed"

    while not tasks["a"].done():
        await backend.finish()
    for _ in range(5):
        await asyncio.sleep(0)
    assert not tasks["b"].done() and analyst.running == 1 and analyst.queued == 1
    assert heard["c"][-1] == (1, 0, 0), "the last one moved up"
    assert heard["b"][1][0] == 0, "the second one started"
    await backend.finish_all()
    done = [await tasks[name] for name in ("a", "b", "c")]
    assert [d.match_id for d in done] == ["a", "b", "c"]


async def test_the_same_seat_is_computed_once_then_read_from_the_store() -> None:
    """Issue 32: two requests for one seat share its computation; a third, after,
    is answered by the store at once (no work, no progress)."""
    backend = HandBackend()
    analyst = _analyst(backend)
    record = _record()
    first = asyncio.ensure_future(analyst.analyse("m", 2, record))
    second = asyncio.ensure_future(analyst.analyse("m", 2, record))
    await backend.finish_all()
    one, two = await first, await second
    assert one is two
    heard: list[tuple[int, int, int]] = []
    three = await analyst.analyse("m", 2, record, lambda *p: heard.append(p))
    assert three == one and heard == [] and not backend.work


async def test_one_player_waits_for_at_most_their_share() -> None:
    """Issue 32 on a game night: with two per player, Ada's third new analysis
    is refused (``analysis_busy``, saying it is her own limit) and nothing is
    queued for it; asking again for one she waits for counts once, joining
    Bo's adds no work and is granted; Bo is served meanwhile; once one of
    Ada's ends, her next is granted."""
    backend = HandBackend()
    analyst = _analyst(backend, max_running=1, max_queued=8, per_player=2)
    record = _record()
    ada = [asyncio.ensure_future(analyst.analyse(m, 0, record, player="ada")) for m in "ab"]
    again = asyncio.ensure_future(analyst.analyse("a", 0, record, player="ada"))
    bos = asyncio.ensure_future(analyst.analyse("c", 0, record, player="bo"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert analyst.waiting_for("ada") == 2 and analyst.waiting_for("bo") == 1
    with pytest.raises(wire.ProtocolError) as busy:
        await analyst.analyse("d", 0, record, player="ada")
    assert busy.value.code == wire.ErrorCode.ANALYSIS_BUSY and "one player" in str(busy.value)
    assert (analyst.running, analyst.queued) == (1, 2), "nothing was queued for it"
    joined = asyncio.ensure_future(analyst.analyse("c", 0, record, player="ada"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not joined.done() and analyst.waiting_for("ada") == 3
    assert (analyst.running, analyst.queued) == (1, 2), "joining adds no work"

    while not ada[0].done():
        await backend.finish()
    assert (await again) is (await ada[0]), "asked twice, computed once"
    assert analyst.waiting_for("ada") == 2  # b, and Bo's c she joined
    with pytest.raises(wire.ProtocolError):
        await analyst.analyse("d", 0, record, player="ada")
    while not ada[1].done():
        await backend.finish()
    late = asyncio.ensure_future(analyst.analyse("d", 0, record, player="ada"))
    await backend.finish_all()
    assert (await late).match_id == "d"
    assert (await joined) is (await bos)
    assert analyst.waiting_for("ada") == analyst.waiting_for("bo") == 0


async def test_closing_drops_the_queue_and_stops_the_backend() -> None:
    """The server stops: what waits is dropped, what runs is cancelled."""
    backend = HandBackend()
    analyst = _analyst(backend)
    record = _record()
    running = asyncio.ensure_future(analyst.analyse("a", 0, record))
    waiting = asyncio.ensure_future(analyst.analyse("b", 0, record))
    for _ in range(5):
        await asyncio.sleep(0)
    await analyst.close()
    for task in (running, waiting):
        with pytest.raises(asyncio.CancelledError):
            await task
    assert backend.closed


@pytest.mark.skipif(sys.platform != "linux", reason="SCHED_IDLE is Linux's")
async def test_the_workers_compute_only_on_cpu_time_nothing_else_wants() -> None:
    """A real analysis worker process runs at SCHED_IDLE and nice 10, so the
    server's matches are never kept waiting for the CPU by an analysis."""
    backend = PoolBackend(1)
    try:
        niceness, policy = await asyncio.wait_for(backend.priority(), 60)
    finally:
        backend.close()
    assert policy == os.SCHED_IDLE
    assert niceness >= min(19, os.nice(0) + NICENESS)
