"""The client ends when its terminal goes away (Issue 30).

A terminal closes — its window, its tmux session, its ssh link — and the
client hears of it in one of three ways: SIGHUP; the tty reporting a hang-up
(``POLLHUP``, often before any signal comes, and the only word when the
session's shell passes nothing on); or a write to the tty failing (EIO).
:class:`HangupGuard` listens for all three on a thread of its own, asks the
app to exit, and gives that exit ``grace`` seconds: by then it stops the local
server itself and ends the process (``os._exit``), whatever the app is doing.

Why the app may never finish exiting by itself: Textual's driver writes
through a thread that drains a 30-slot queue
(``textual/drivers/_writer_thread.py``). A write to a hung-up tty raises EIO
and ends that thread; every later write waits in ``Queue.put`` for a slot
that never frees — the shutdown's own (``disable_input`` turning the mouse
off, …) among them — so the main thread, event loop and all, is stuck, and
not even an asyncio signal handler runs any more.
Upstream: Textualize/textual#6692 (a dead ``WriterThread`` whose bounded
queue nothing drains blocks the event loop for good). This module is the one
workaround; the deadline stays whatever Textual does.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType

__all__ = ["HANGUP_STATUS", "HangupGuard"]

#: The exit status after a hang-up: 128 + SIGHUP, as a shell reports it.
HANGUP_STATUS = 128 + signal.SIGHUP

#: Textual's output thread (``WriterThread``): its death by OSError is a failed tty write.
_WRITER_THREAD = "textual-output"


class HangupGuard:
    """Ends the process within ``grace`` seconds of its terminal going away.

    ``cleanup`` runs just before the forced end (stop the local server);
    ``die`` is :func:`os._exit` except in tests."""

    def __init__(
        self,
        cleanup: Callable[[], object] | None = None,
        *,
        grace: float = 0.5,
        fds: Sequence[int] = (0, 1, 2),
        die: Callable[[int], object] = os._exit,
    ) -> None:
        self.cleanup = cleanup
        self.grace = grace
        self.fds = tuple(fds)
        self.die = die
        #: set once the terminal is known to be gone
        self.hung_up = threading.Event()
        self._on_hangup: Callable[[], object] = lambda: None
        self._wake_r, self._wake_w = os.pipe()
        self._previous_hook = threading.excepthook

    def install(self, on_hangup: Callable[[], object]) -> None:
        """Start listening; ``on_hangup`` (called from another thread) asks the app
        to exit. Call it on the main thread: it sets the SIGHUP handler."""
        self._on_hangup = on_hangup
        # A plain handler, not the loop's add_signal_handler: it runs even while
        # the event loop is stuck, and it only wakes the watching thread.
        signal.signal(signal.SIGHUP, self._signalled)
        self._previous_hook = threading.excepthook
        threading.excepthook = self._thread_died
        threading.Thread(target=self._watch, name="tulips-hangup", daemon=True).start()

    def _signalled(self, signum: int, frame: FrameType | None) -> None:
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"!")

    def _thread_died(self, args: threading.ExceptHookArgs) -> None:
        died = args.thread.name if args.thread is not None else ""
        if died == _WRITER_THREAD and issubclass(args.exc_type, OSError):
            self._wake()  # no traceback: there is no terminal to print it on
            return
        self._previous_hook(args)

    def _watch(self) -> None:
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        for fd in self.fds:
            if os.isatty(fd):
                poller.register(fd, 0)  # nothing asked: only POLLHUP and POLLERR come
        while not poller.poll():
            pass
        self.hung_up.set()
        with contextlib.suppress(Exception):  # the loop may be closed already
            self._on_hangup()
        time.sleep(self.grace)  # the process normally ends in the meantime
        with contextlib.suppress(Exception):
            if self.cleanup is not None:
                self.cleanup()
        self.die(HANGUP_STATUS)
