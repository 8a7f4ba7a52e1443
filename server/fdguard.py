"""Running out of file descriptors is one logged condition that recovers.

Every connection is a file descriptor, and a process has only so many
(``RLIMIT_NOFILE``). When none is left, ``accept()`` fails with EMFILE;
asyncio then reports it to the loop's exception handler, stops reading the
listening socket and tries again a second later. Two things turn that into a
flood of tracebacks (issue 29: 453,328 of them, 507 MB of log in four
minutes, 57 % CPU):

- CPython's accept loop does not stop after such a failure: it tries again up
  to ``backlog`` times in the same turn, reporting and scheduling a retry each
  time, and the retries multiply (cpython#151615, fixed upstream after 3.13).
  :class:`CalmSelectorLoop` stops it after the first failure;
- the default handler logs each report with its traceback.
  :func:`install` puts :class:`AcceptWatch` in front of it: one WARNING when
  a listening socket runs out, one INFO when it accepts again; every other
  report goes to the handler that was there before.

:func:`raise_fd_limit` lifts the soft limit to the hard one at start, as
most servers do; the web port keeps a reserve on top (server/web/guard.py).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import resource
import socket
import time
from collections.abc import Callable
from typing import Any

from .logcalm import Episode, Episodes

__all__ = [
    "RESOURCE_ERRNOS",
    "AcceptWatch",
    "CalmSelectorLoop",
    "descriptors_free",
    "fd_limit",
    "install",
    "new_event_loop",
    "raise_fd_limit",
]

log = logging.getLogger("server.fdguard")

#: What ``accept()`` fails with when the process or the system has no
#: descriptor (or buffer) left for a new connection.
RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
#: Seconds without a failed accept after which a listening socket counts as
#: accepting again: asyncio retries (and, failing, reports) once a second.
QUIET = 2.5


def fd_limit() -> int:
    """The process's soft limit on open file descriptors."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def raise_fd_limit() -> int:
    """Lift the soft descriptor limit to the hard one; the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):  # e.g. macOS refuses an "unlimited" hard limit
            return soft
        return hard
    return soft


def descriptors_free() -> bool:
    """Whether this process has descriptors to spare again: at least one in
    32 of its limit (8 at least) free, so that a process hovering at its limit
    is still taken as out of them (Linux counts ``/proc/self/fd``; elsewhere,
    whether one more descriptor can be opened)."""
    limit = fd_limit()
    try:
        in_use = len(os.listdir("/proc/self/fd"))
    except FileNotFoundError:
        in_use = None
    except OSError as exc:
        if exc.errno in RESOURCE_ERRNOS:
            return False
        raise
    if in_use is not None:
        return limit - in_use >= max(8, limit // 32)
    try:
        os.close(os.open(os.devnull, os.O_RDONLY))
    except OSError as exc:
        if exc.errno in RESOURCE_ERRNOS:
            return False
        raise
    return True


class _StopAfterResourceError:
    """A listening socket as CPython's accept loop sees it: after one accept
    failed for want of resources, the next says "nothing to accept", which
    ends the loop until asyncio's retry (the fix of cpython#151615)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.failed = False

    def accept(self) -> tuple[socket.socket, Any]:
        if self.failed:
            raise BlockingIOError(errno.EAGAIN, "stopped after a resource error")
        try:
            return self.sock.accept()
        except OSError as exc:
            if exc.errno in RESOURCE_ERRNOS:
                self.failed = True
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class CalmSelectorLoop(asyncio.SelectorEventLoop):
    """asyncio's own event loop, but an ``accept()`` out of descriptors is
    reported once per retry, not up to ``backlog`` times (cpython#151615)."""

    def _accept_connection(self, protocol_factory: Any, sock: Any, *args: Any, **kw: Any) -> None:
        if isinstance(sock, _StopAfterResourceError):  # the retry passes it back
            sock = sock.sock
        super()._accept_connection(  # type: ignore[misc]
            protocol_factory, _StopAfterResourceError(sock), *args, **kw
        )


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A :class:`CalmSelectorLoop` (for ``asyncio.Runner(loop_factory=...)``)."""
    return CalmSelectorLoop()


def _listener(context: dict[str, Any]) -> str:
    """The listening address a loop report is about, as ``host:port``."""
    sock = context.get("socket")
    try:
        host, port = sock.getsockname()[:2]  # type: ignore[union-attr]
    except (AttributeError, OSError, TypeError, ValueError):
        return "a listening socket"
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


class AcceptWatch:
    """Which listening sockets are out of descriptors, and since when.

    :meth:`failed` for each failed accept (the first of a run is logged at
    WARNING), :meth:`check` now and then: a socket without a failure for
    ``quiet`` seconds, while this process can open a descriptor again, is
    accepting again (logged at INFO with what the run cost).
    """

    def __init__(
        self,
        *,
        quiet: float = QUIET,
        clock: Callable[[], float] = time.monotonic,
        probe: Callable[[], bool] = descriptors_free,
        limit: Callable[[], int] = fd_limit,
    ) -> None:
        self.episodes: Episodes[str] = Episodes(quiet)
        self._clock = clock
        self._probe = probe
        self._limit = limit

    def failed(self, listener: str, error: OSError) -> bool:
        """Count a failed accept on ``listener``; True when it starts a run."""
        if not self.episodes.hit(listener, self._clock()):
            return False
        log.warning(
            "cannot accept connections on %s: %s (this process may open %d descriptors); "
            "the connections it has go on, new ones wait until some close",
            listener,
            os.strerror(error.errno) if error.errno else error,
            self._limit(),
        )
        return True

    def check(self) -> list[Episode[str]]:
        """End (and log) the runs that are over."""
        if not self.episodes or not self._probe():
            return []
        ended = self.episodes.settle(self._clock())
        for run in ended:
            log.info(
                "accepting connections on %s again, after %.1f s out of descriptors "
                "(%d accepts failed)",
                run.key,
                run.duration,
                run.events,
            )
        return ended


def install(loop: asyncio.AbstractEventLoop, watch: AcceptWatch | None = None) -> AcceptWatch:
    """Make ``watch`` (a new :class:`AcceptWatch` by default) the loop's judge of
    "out of descriptors" reports; every other report goes where it went before."""
    watch = watch if watch is not None else AcceptWatch()
    previous = loop.get_exception_handler()
    pending: list[asyncio.TimerHandle] = []

    def tick() -> None:
        pending.clear()
        watch.check()
        if watch.episodes:
            pending.append(loop.call_later(watch.episodes.quiet / 2, tick))

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if isinstance(error, OSError) and error.errno in RESOURCE_ERRNOS:
            watch.failed(_listener(context), error)
            if not pending:
                pending.append(loop.call_later(watch.episodes.quiet / 2, tick))
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    return watch
