"""The ratings' one owner: finished matches' results, applied one at a time.

Matches end on their own actors, at any moment; their results queue here and
one task applies them in the order they came (a restart queues the finished
matches not applied yet, in the order they finished). Only this task writes
the ratings, and it reads the ratings a result changes just before storing
it, so two matches of one player ending together cannot lose an update.
Each result is applied exactly once (:class:`~.ledger.Ledger`). The match
goes on meanwhile: it never waits for its ratings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from ..errors import StorageError
from ..match.results import MatchResult
from .ledger import Change, Ledger

__all__ = ["RatingsBook"]

log = logging.getLogger(__name__)

#: Told each applied result's changes (none for an unrated match).
Announce = Callable[[MatchResult, list[Change]], None]


class RatingsBook:
    """Applies finished matches' results to a ledger, one at a time, in order."""

    def __init__(self, ledger: Ledger, announce: Announce | None = None) -> None:
        self.ledger = ledger
        self._announce = announce
        self._queue: asyncio.Queue[MatchResult] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    def submit(self, result: MatchResult) -> None:
        """Queue a finished match's result (applied soon, once)."""
        self._idle.clear()
        self._queue.put_nowait(result)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    @property
    def idle(self) -> bool:
        """Whether every result queued so far is applied (or failed)."""
        return self._idle.is_set()

    async def settled(self) -> None:
        """Wait until every result queued so far is applied (or failed)."""
        await self._idle.wait()

    async def _run(self) -> None:
        while True:
            if self._queue.empty():
                self._idle.set()
            result = await self._queue.get()
            try:
                changes = await self.ledger.apply(result)
            except (StorageError, Exception) as exc:  # applied at the next start instead
                log.error("match %s: its result could not be applied now: %s", result.match, exc)
                continue
            if changes is None:
                continue  # applied before (a restart after the rating was stored)
            if changes:
                log.info(
                    "match %s: ratings applied (%s)",
                    result.match,
                    ", ".join(
                        f"{c.ident} {c.before.ordinal:+.1f}→{c.after.ordinal:.1f}" for c in changes
                    ),
                )
            if self._announce is not None:
                try:
                    self._announce(result, changes)
                except Exception:  # a notice that cannot go changes nothing stored
                    log.exception("match %s: the ratings notice failed", result.match)

    async def close(self) -> None:
        """Stop applying (what is queued and not applied is applied at the next start)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._idle.set()
