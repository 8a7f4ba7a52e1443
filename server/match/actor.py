"""One task per match: the actor that runs its core.

A :class:`MatchActor` takes commands one at a time, hands each to its
:class:`~server.match.core.MatchCore` with the time, and carries out what the
core asks, in order: it writes to storage (and, for a waiting
store, tells the core how it went before doing anything else), sends frames,
sets and cancels timers, asks bots. Requests, timers, bots and departures all
come through the same mailbox, so nothing changes the match while it waits
for the disk, and a bot's answer or a timer that fires meanwhile is judged by
the core against the match as it is when its turn comes.

Commands wait in a mailbox that the match's own task empties. A request that
finds the match idle is carried out at once, in its caller's turn of the event
loop (no task switch for what needs no disk). A command that must wait for a
store goes on from the store's completion; until it is done, the match is
busy and whatever is handed over meanwhile waits in the mailbox.

Except when storage says the store waits for another process's lock
(``on_locked``): the core is told so (``Stored(StorageLocked)``), and if it
holds the change — an action: the match pauses — the command is done and the
mailbox flows again; the store's completion then comes as a new command,
``Stored``, behind whatever was handed over meanwhile, and resumes the match.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import protocol as wire

from ..errors import StorageError, StorageLocked
from .commands import BotDecided, Command, ConnId, Halt, HintReady, Stored, Tick
from .core import MatchCore
from .info import MatchInfo
from .outputs import (
    AnalysisOrder,
    AskBot,
    AskHint,
    CancelTimer,
    Changed,
    Entered,
    Exited,
    Finished,
    Gone,
    Output,
    Rematch,
    Reply,
    Send,
    SetTimer,
    Store,
)
from .records import Write
from .results import MatchResult
from .thinker import HintRefused, Thinker

__all__ = ["MatchActor", "MatchHost", "MatchStore"]

log = logging.getLogger(__name__)


class MatchHost(Protocol):
    """What a match's actor needs from the server around it."""

    def deliver(self, to: Sequence[ConnId], frames: Sequence[bytes]) -> None:
        """Queue ``frames`` for each of these connections (gone ones are skipped)."""
        ...

    def changed(self, info: MatchInfo) -> None:
        """The match as others see it changed."""
        ...

    def entered(self, conn: ConnId, match_id: str) -> None:
        """The connection is in the match now."""
        ...

    def exited(self, conn: ConnId, match_id: str) -> None:
        """The connection is no longer in the match."""
        ...

    def finished(self, result: MatchResult) -> None:
        """The match ended: its result, for the ratings (after its final action's store)."""
        ...

    def rematch(self, match_id: str, rematch: Rematch) -> None:
        """The match asks for its rematch (opened now, if ``rematch.opened``)."""
        ...

    def gone(self, match_id: str) -> None:
        """The match has nobody left to wait for: forget it."""
        ...


class MatchStore(Protocol):
    """Where a match's writes go: in order, each batch whole or not at all."""

    def write(
        self, writes: Sequence[Write], on_locked: Callable[[StorageLocked], None] | None = None
    ) -> asyncio.Future[Any]:
        """Queue the writes; the future is done once they are on disk (or failed).
        While they wait for another process's lock, ``on_locked`` is told once."""
        ...


@dataclass(slots=True, eq=False)
class _Waiting:
    """A store the match waits for: the command it ends, and whether the core
    holds its change (the match paused, the command done) until it is stored."""

    carried: list[Output]
    done: asyncio.Future[list[Output]] | None
    held: bool = False


class MatchActor:
    """Runs one :class:`MatchCore`: ``await call(command)`` for a request,
    :meth:`post` for what need not wait; :meth:`halt`, then :meth:`stop`."""

    def __init__(
        self,
        core: MatchCore,
        host: MatchHost,
        thinker: Thinker,
        store: MatchStore | None = None,
    ) -> None:
        self.core = core
        self.id = core.id
        self._host = host
        self._thinker = thinker
        self._store = store
        self._loop = asyncio.get_running_loop()
        self._mailbox: collections.deque[tuple[Command, asyncio.Future[list[Output]] | None]] = (
            collections.deque()
        )
        self._wake: asyncio.Future[None] | None = None
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._thinking: set[asyncio.Task[None]] = set()
        self._busy = False
        self._current: tuple[list[Output], asyncio.Future[list[Output]] | None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopped = False
        self._task = self._loop.create_task(self._run(), name=f"match {self.id}")

    def __repr__(self) -> str:
        return f"<MatchActor {self.id}>"

    @property
    def info(self) -> MatchInfo:
        """The match as others see it, as its core last said."""
        return self.core.info

    # -- the mailbox -------------------------------------------------------------------

    async def call(self, command: Command) -> list[Output]:
        """Hand the match ``command`` and wait until it is carried out; returns
        what the core asked for (its answer included). If the caller is
        cancelled meanwhile, the command is still carried out.

        When the match is idle, the command is carried out at once, in the
        caller's own turn of the event loop; a store it waits for is waited
        for by the store's own completion (not by the caller, whose
        cancellation cannot cut it short), and everything handed to the match
        meanwhile comes after it. Either way one command at a time.
        """
        if self._stopped:
            return []
        done: asyncio.Future[list[Output]] = self._loop.create_future()
        if self._busy or self._mailbox:
            self._put(command, done)
            return await done
        self._carry_out(command, done)
        return await done

    def post(self, command: Command) -> None:
        """Hand the match ``command`` without waiting for it."""
        if not self._stopped:
            self._put(command, None)

    def _put(self, command: Command, done: asyncio.Future[list[Output]] | None) -> None:
        self._mailbox.append((command, done))
        self._idle.clear()
        self._wake_up()

    def _wake_up(self) -> None:
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def _run(self) -> None:
        """The match's task: while the match is not busy, the next command."""
        mailbox = self._mailbox
        while True:
            if not mailbox or self._busy:  # idle is set by _release
                self._wake = self._loop.create_future()
                await self._wake
                self._wake = None
                continue
            command, done = mailbox.popleft()
            self._carry_out(command, done)
            await asyncio.sleep(0)  # a long mailbox does not keep other matches waiting

    def _carry_out(self, command: Command, done: asyncio.Future[list[Output]] | None) -> None:
        """Begin ``command``: what needs no disk now, the rest once each store
        it waits for is done (:meth:`_stored`); ``done`` gets its outputs."""
        self._busy = True
        self._idle.clear()
        carried: list[Output] = []
        self._current = (carried, done)
        self._proceed(command, carried, done)

    def _proceed(
        self, command: Command, carried: list[Output], done: asyncio.Future[list[Output]] | None
    ) -> None:
        """Hand the core ``command`` and carry out what it asks; then wait for
        the store that ends it, if any, or take the next command."""
        try:
            store = self._go_on(self.core.handle(command, self._loop.time(), time.time()), carried)
        except Exception:  # a bug must not take every other command of the match down
            log.exception("match %s: %s failed", self.id, type(command).__name__)
            store = None
        if store is None:
            self._release(carried, done)
        else:
            self._wait_for(store, carried, done)

    def _go_on(self, outputs: list[Output], carried: list[Output]) -> Store | None:
        """Carry out ``outputs``: the waiting store that ends them, if any."""
        core = self.core
        deliver = self._host.deliver
        while outputs:
            carried.extend(outputs)
            for output in outputs:
                kind = type(output)  # the frames first: most of what a match does
                if kind is Send:
                    deliver(output.to, output.frames)  # type: ignore[union-attr]
                elif kind is Reply:
                    deliver((output.conn,), (wire.encode(output.message),))  # type: ignore[union-attr]
                else:
                    self._do(output)
            last = outputs[-1]
            if not (isinstance(last, Store) and last.wait):
                return None
            if self._store is not None:
                return last
            outputs = core.handle(Stored(), self._loop.time(), time.time())  # memory only
        return None

    def _wait_for(
        self, store: Store, carried: list[Output], done: asyncio.Future[list[Output]] | None
    ) -> None:
        """Write ``store``; the match stays busy until :meth:`_stored` is told
        (or :meth:`_locked` finds the core holding it)."""
        assert self._store is not None
        waiting = _Waiting(carried, done)
        try:
            written = self._store.write(store.writes, lambda why: self._locked(waiting, why))
        except Exception as exc:  # a closed store: told to the core as a failed write
            written = self._loop.create_future()
            written.set_exception(exc)
        written.add_done_callback(lambda future: self._stored(future, waiting))

    def _locked(self, waiting: _Waiting, why: StorageLocked) -> None:
        """The store the match waits for waits for another process's lock: the
        core is told; if it holds the change (paused), the command is done."""
        current = self._current
        if self._stopped or waiting.held or current is None or current[0] is not waiting.carried:
            return
        try:
            outputs = self.core.handle(Stored(why), self._loop.time(), time.time())
            store = self._go_on(outputs, waiting.carried)
        except Exception:  # a bug must not take every other command of the match down
            log.exception("match %s: pausing for the lock failed", self.id)
            return
        assert store is None, "a match that waits for a lock asks for no other store"
        if not self.core.waiting:
            waiting.held = True
            self._release(waiting.carried, waiting.done)

    def _stored(self, written: asyncio.Future[Any], waiting: _Waiting) -> None:
        """A store the match waited for is done (or failed): the core is told,
        and the command goes on — or, if the core held it, a new command."""
        error: Exception | None = None
        if written.cancelled():
            error = StorageError("the write was cancelled")
        elif isinstance(written.exception(), Exception):
            error = written.exception()  # type: ignore[assignment]
        if self._stopped:
            if not waiting.held:
                self._release(waiting.carried, waiting.done)
            return
        if waiting.held:
            self.post(Stored(error))  # behind what was handed over while it was paused
        else:
            self._proceed(Stored(error), waiting.carried, waiting.done)

    def _release(self, carried: list[Output], done: asyncio.Future[list[Output]] | None) -> None:
        """The command is carried out: the match takes the next one."""
        self._busy = False
        self._current = None
        if done is not None and not done.done():
            done.set_result(carried)
        if self._mailbox:
            self._wake_up()
        else:
            self._idle.set()

    def _do(self, output: Output) -> None:
        """Carry out one output (a waiting store is :meth:`_wait_for`'s)."""
        host = self._host
        match output:
            case Send(to, frames):
                host.deliver(to, frames)
            case Reply(conn, message):
                host.deliver((conn,), (wire.encode(message),))
            case Store(writes, wait):
                if not wait:
                    self._write_soon(writes)
            case SetTimer(name, at):
                old = self._timers.pop(name, None)
                if old is not None:
                    old.cancel()
                self._timers[name] = self._loop.call_at(at, self._fire, name)
            case CancelTimer(name):
                handle = self._timers.pop(name, None)
                if handle is not None:
                    handle.cancel()
            case AskBot():
                task = self._loop.create_task(self._think(output))
                self._thinking.add(task)
                task.add_done_callback(self._thinking.discard)
            case AskHint():
                task = self._loop.create_task(self._hint(output))
                self._thinking.add(task)
                task.add_done_callback(self._thinking.discard)
            case AnalysisOrder():
                pass  # the lobby hands it to the analysis service
            case Changed(info):
                host.changed(info)
            case Entered(conn):
                host.entered(conn, self.id)
            case Exited(conn):
                host.exited(conn, self.id)
            case Rematch():
                host.rematch(self.id, output)
            case Gone():
                host.gone(self.id)
            case Finished(result):
                host.finished(result)

    def _write_soon(self, writes: Sequence[Write]) -> None:
        if self._store is None:
            return
        try:
            future = self._store.write(writes)
        except Exception as exc:
            log.error("match %s: could not queue a write: %s", self.id, exc)
            return
        future.add_done_callback(self._log_failure)

    def _log_failure(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.error("match %s: could not store its state: %s", self.id, future.exception())

    def _fire(self, name: str) -> None:
        self._timers.pop(name, None)
        self.post(Tick(name))

    async def _think(self, ask: AskBot) -> None:
        if ask.delay > 0:
            await asyncio.sleep(ask.delay)
        else:
            await asyncio.sleep(0)  # let other matches go first
        try:
            action = await self._thinker.decide(ask.bot, ask.observation)
        except Exception:  # a bot must never take the match down
            log.exception("match %s: the bot at seat %d failed", self.id, ask.seat)
            return
        self.post(BotDecided(ask.seat, ask.decision, action))

    async def _hint(self, ask: AskHint) -> None:
        """Compute a hint away from the match (which goes on meanwhile), then
        hand it to the core, which answers if its decision is still open."""
        values = None
        why = ""
        try:
            values = await self._thinker.hint(ask.observation, ask.seed)
        except HintRefused as exc:
            why = str(exc)
        except Exception:
            log.exception("match %s: the hint of seat %d failed", self.id, ask.seat)
            why = "the hint could not be computed"
        self.post(HintReady(ask.conn, ask.request, ask.seat, ask.decision, ask.seq, values, why))

    # -- stopping ---------------------------------------------------------------------

    def halt(self) -> None:
        """The server is stopping: once what is already in the mailbox is carried
        out, the match takes no more actions and its timers and bots stop."""
        self.post(Halt())

    @property
    def idle(self) -> bool:
        """Whether nothing is waiting in the mailbox or being carried out."""
        return not self._mailbox and not self._busy

    async def settled(self) -> None:
        """Wait until the mailbox is empty and nothing is being carried out
        (a store the match waits for included)."""
        await self._idle.wait()

    async def stop(self) -> None:
        """End the actor: its timers and bots first, then its task (whatever
        it is waiting for); later commands are dropped."""
        self._stopped = True
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for task in list(self._thinking):
            task.cancel()
        self._task.cancel()
        for pending in [self._task, *self._thinking]:
            try:
                await pending
            except asyncio.CancelledError:
                pass
            except Exception:  # pragma: no cover - _run logs its own
                log.exception("match %s: stopping failed", self.id)
        if self._current is not None:  # its store never came back: its caller is not kept waiting
            self._release(*self._current)
        for _, done in self._mailbox:
            if done is not None and not done.done():
                done.set_result([])
        self._mailbox.clear()
        self._idle.set()
