"""The analysis service: the one owner of the analyses being computed.

:meth:`Analyst.analyse` answers from the store when the analysis was computed
before; otherwise it joins the analysis of that match and seat already under
way, or queues a new one. At most ``max_running`` analyses are computed at
once, each one decision at a time in worker processes of their own, which run
at a lower scheduling priority than the server, so that the matches being
played keep their pace; beyond that they wait in order, and beyond
``max_queued`` waiting, a new one is refused (``analysis_busy``). One player
may wait for at most ``per_player`` analyses at once (queued or being
computed, whichever of their devices asked): their next new one is refused
(``analysis_busy``) too, so that one client cannot fill the queue for
everyone; asking again for one they already wait for, or joining one someone
else asked for, adds no work and is never refused. Whoever waits for an
analysis hears its progress: its place in the queue, then the decisions
valued of how many.

Every value comes from the seat's own observation (R24–R26), with a fixed
deal count and a seed made from the match id only, so the same match gets
the same analysis every time; once computed it is stored, and read back.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import hashlib
import logging
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from engine import Observation
from engine.analysis import DecisionAnalysis, DecisionValues, SeatAnalysis, analyse_decision
from engine.record import MatchRecord
from protocol import ErrorCode

from ..errors import StorageError, refused
from .moments import Moment, seat_moments
from .report import StoredAnalysis
from .store import AnalysisStore

__all__ = ["Analyst", "Backend", "PoolBackend", "Progress", "analysis_seed"]

log = logging.getLogger(__name__)

#: Told of an analysis's progress: its place in the queue (1: next to start;
#: 0: being computed), then the decisions valued and how many there are.
Progress = Callable[[int, int, int], None]

#: How much lower than the server the analysis workers are scheduled (``nice``).
NICENESS = 10


def analysis_seed(match_id: str) -> int:
    """The analysis's seed for a match: from its id only (nothing a player could
    learn hidden cards from; the values come from each seat's observation)."""
    digest = hashlib.sha256(f"tulips-analysis:{match_id}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


class Backend(Protocol):
    """Where the work of an analysis is done."""

    async def moments(self, record: MatchRecord, seat: int) -> list[Moment]:
        """The seat's decisions in the record (:func:`.moments.seat_moments`)."""
        ...

    async def value(self, observation: Observation, deals: int, seed: str) -> DecisionValues:
        """One decision's values (:func:`engine.analysis.analyse_decision`)."""
        ...

    def close(self) -> None:
        """Stop what runs."""
        ...


def _lower_priority() -> None:
    """In each analysis worker as it starts: yield the CPU to the server. On
    Linux the worker runs only on CPU time nothing else wants (``SCHED_IDLE``):
    at ``nice`` 10 alone it still took enough from the server to triple its
    act→ok p99 under load (``tulips-loadtest reference --analyses 4``)."""
    with contextlib.suppress(OSError):  # not allowed here: run as is
        os.nice(NICENESS)
    if hasattr(os, "SCHED_IDLE"):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _priority() -> tuple[int, int | None]:
    """This process's niceness and scheduling policy (None where unknown)."""
    policy = os.sched_getscheduler(0) if hasattr(os, "sched_getscheduler") else None
    return os.nice(0), policy


class PoolBackend:
    """Worker processes of their own (``spawn``: a fresh interpreter that
    imports only the engine), one per analysis that may run at once."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_lower_priority
            )
        return self._pool

    async def moments(self, record: MatchRecord, seat: int) -> list[Moment]:
        """See :class:`Backend`."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), seat_moments, record, seat)

    async def value(self, observation: Observation, deals: int, seed: str) -> DecisionValues:
        """See :class:`Backend`."""
        loop = asyncio.get_running_loop()
        work = functools.partial(analyse_decision, observation, deals=deals, seed=seed)
        return await loop.run_in_executor(self._executor(), work)

    async def priority(self) -> tuple[int, int | None]:
        """A worker's niceness and scheduling policy (to check they yield)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), _priority)

    def close(self) -> None:
        """See :class:`Backend`."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


@dataclass(eq=False)
class _Job:
    """One analysis, queued or being computed, and who waits for it."""

    match_id: str
    seat: int
    record: MatchRecord
    future: asyncio.Future[StoredAnalysis]
    listeners: list[Progress] = field(default_factory=list)
    place: int = 0  #: in the queue, from 1; 0 once started
    #: the players waiting for it (each counts it once against their bound)
    askers: set[str] = field(default_factory=set)
    done: int = 0
    total: int = 0

    def tell(self, listener: Progress | None = None) -> None:
        for each in [listener] if listener is not None else list(self.listeners):
            try:
                each(self.place, self.done, self.total)
            except Exception:  # a listener must not stop the analysis
                log.exception("an analysis progress listener failed")


class Analyst:
    """Computes, stores and hands out analyses, a bounded number at once."""

    def __init__(
        self,
        store: AnalysisStore,
        backend: Backend,
        *,
        deals: int,
        max_running: int,
        max_queued: int,
        per_player: int | None = None,
    ) -> None:
        """``per_player``: analyses one player may wait for at once (None: no bound)."""
        self.store = store
        self.backend = backend
        self.deals = deals
        self.max_running = max_running
        self.max_queued = max_queued
        self.per_player = per_player
        self._jobs: dict[tuple[str, int], _Job] = {}
        #: per player: the analyses (match, seat) they wait for, queued or computed
        self._waiting_for: dict[str, set[tuple[str, int]]] = {}
        self._queue: collections.deque[_Job] = collections.deque()
        self._running: dict[_Job, asyncio.Task[None]] = {}
        self._closed = False

    @property
    def running(self) -> int:
        """Analyses being computed now."""
        return len(self._running)

    @property
    def queued(self) -> int:
        """Analyses waiting for a free worker."""
        return len(self._queue)

    def waiting_for(self, player: str) -> int:
        """How many analyses ``player`` waits for now (queued or being computed)."""
        return len(self._waiting_for.get(player, ()))

    async def analyse(
        self,
        match_id: str,
        seat: int,
        record: MatchRecord,
        progress: Progress | None = None,
        *,
        player: str | None = None,
    ) -> StoredAnalysis:
        """The analysis of ``seat`` in the finished match of ``record``: the
        stored one, or computed now (``progress`` hears how it goes), for
        ``player`` (None: nobody's bound counts it). Raises ``analysis_busy``
        when too many wait already, or when ``player`` waits for as many as
        one player may."""
        stored = self.store.load(match_id, seat)
        if stored is not None:
            return stored
        key = (match_id, seat)
        job = self._jobs.get(key)
        if job is None:
            if self._closed:
                raise refused(ErrorCode.ANALYSIS_BUSY, "the server is stopping")
            mine = self.waiting_for(player) if player is not None else 0
            if self.per_player is not None and mine >= self.per_player:
                raise refused(
                    ErrorCode.ANALYSIS_BUSY,
                    f"you wait for {mine} analyses already, as many as one player may at"
                    " once; ask again once one of them is done",
                )
            if len(self._queue) >= self.max_queued:
                raise refused(
                    ErrorCode.ANALYSIS_BUSY,
                    f"{len(self._queue)} analyses are waiting already; try again later",
                )
            future = asyncio.get_running_loop().create_future()
            job = _Job(match_id, seat, record, future)
            self._jobs[key] = job
            self._queue.append(job)
            job.place = len(self._queue)
            self._start_next()
        if player is not None and player not in job.askers:
            job.askers.add(player)
            self._waiting_for.setdefault(player, set()).add(key)
        if progress is not None:
            job.listeners.append(progress)
            job.tell(progress)
        return await asyncio.shield(job.future)

    def _start_next(self) -> None:
        """Start queued analyses while fewer than the bound run; tell those
        still waiting their new places."""
        moved = False
        while self._queue and len(self._running) < self.max_running and not self._closed:
            job = self._queue.popleft()
            job.place = 0
            self._running[job] = asyncio.get_running_loop().create_task(self._compute(job))
            job.tell()  # it starts
            moved = True
        if moved:
            for place, job in enumerate(self._queue, start=1):
                job.place = place
                job.tell()

    async def _compute(self, job: _Job) -> None:
        seed = analysis_seed(job.match_id)
        try:
            moments = await self.backend.moments(job.record, job.seat)
            job.total = len(moments)
            job.tell()
            decisions = []
            for moment in moments:
                values = await self.backend.value(
                    moment.observation, self.deals, f"{seed}:{moment.index}"
                )
                decisions.append(
                    DecisionAnalysis(
                        moment.index, job.seat, moment.observation.turn, values, moment.chosen
                    )
                )
                job.done += 1
                job.tell()
            stored = StoredAnalysis(
                job.match_id,
                SeatAnalysis(job.seat, tuple(decisions)),
                self.deals,
                seed,
                tuple((m.seq, None if m.drawn is None else str(m.drawn)) for m in moments),
            )
            try:
                await self.store.save(stored)
            except StorageError as exc:  # answered all the same; computed again next time
                log.warning(
                    "the analysis of %s seat %d was not stored: %s", job.match_id, job.seat, exc
                )
            job.future.set_result(stored)
        except asyncio.CancelledError:
            job.future.cancel()
            raise
        except Exception as exc:
            log.exception("the analysis of %s seat %d failed", job.match_id, job.seat)
            job.future.set_exception(exc)
        finally:
            self._jobs.pop((job.match_id, job.seat), None)
            self._release(job)
            self._running.pop(job, None)
            self._start_next()

    def _release(self, job: _Job) -> None:
        """The job is done (or dropped): its askers no longer wait for it."""
        key = (job.match_id, job.seat)
        for player in job.askers:
            waiting = self._waiting_for.get(player)
            if waiting is not None:
                waiting.discard(key)
                if not waiting:
                    del self._waiting_for[player]
        job.askers.clear()

    async def close(self) -> None:
        """Stop: queued analyses are dropped, running ones cancelled, workers stopped."""
        self._closed = True
        for job in self._queue:
            job.future.cancel()
            self._jobs.pop((job.match_id, job.seat), None)
            self._release(job)
        self._queue.clear()
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.backend.close()
