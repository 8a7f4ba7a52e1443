"""One browser tab's player: a ``tulips connect`` process behind textual-serve.

textual-serve's :class:`~textual_serve.app_service.AppService` relays one
browser WebSocket to one app process (keys in, screen bytes out). A
:class:`BrowserSession` is that relay with three changes for a game server:

- the client is started with an argument list, never through a shell (a
  player's name is part of the command line), in a session of its own, so its
  whole process group can be ended;
- when the client process ends, the tab's WebSocket is closed too, whatever
  the reason (textual-serve only does so on a clean exit);
- :meth:`BrowserSession.end` asks the client to quit, waits a bounded time,
  then kills what is left: nothing outlives ``tulips-server``. Should
  ``tulips-server`` itself be killed (SIGKILL, a crash), the kernel ends the
  clients too where util-linux's ``setpriv --pdeathsig`` is there (Linux):
  otherwise they would go on trying to reconnect.

Each tab's client runs with its own home (:mod:`server.web.tokens`): its
token file and its configuration (``known_servers`` included) are its own,
never the host user's; and with a pass (:data:`TAB_PASS_ENV`, in its
environment, never on its command line) by which the game server knows the
tab's browser address. Of the server's own environment, it sees only what
it needs to run (:func:`passed_on`). Where util-linux's ``prlimit`` is there, its address
space is capped (``memory``), so one tab cannot take the host's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
from asyncio.subprocess import PIPE, Process
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from protocol.tabs import TAB_PASS_ENV

__all__ = [
    "BrowserSession",
    "can_cap_memory",
    "client_command",
    "dies_with_parent",
    "memory_capped",
    "passed_on",
    "tab_environment",
]

#: What a tab's client takes from the server's own environment: where programs
#: and Python are, the locale (its language) and the time zone. Nothing else —
#: the server's secrets (``TULIPS_REDIS_PASSWORD``, a cloud's keys, whatever its
#: operator exported) are no business of a process a browser drives.
PASSED_ON = frozenset({"PATH", "PYTHONPATH", "VIRTUAL_ENV", "LANG", "LANGUAGE", "TZ", "TMPDIR"})


def passed_on(environment: Mapping[str, str]) -> dict[str, str]:
    """The part of ``environment`` a tab's client may see (:data:`PASSED_ON`,
    the ``LC_*`` locale variables and textual-serve's ``TEXTUAL_*``, ``TERM_*``,
    ``COLUMNS`` and ``ROWS``)."""
    return {
        name: value
        for name, value in environment.items()
        if name in PASSED_ON
        or name in ("COLUMNS", "ROWS")
        or name.startswith(("LC_", "TEXTUAL", "TERM_PROGRAM"))
    }


def client_command(
    game_url: str, name: str, identity_file: Path, fingerprint: str | None = None
) -> list[str]:
    """The terminal client a tab runs: ``tulips connect`` with its own token
    file (and, over TLS, the game server's pinned fingerprint). The name is
    given as ``--name=NAME``, so a name starting with ``-`` is still a name."""
    pin = [f"--fingerprint={fingerprint}"] if fingerprint is not None else []
    return [
        sys.executable, "-m", "client.tui", "connect", game_url,
        f"--name={name}",
        f"--identity-file={identity_file}",
        *pin,
    ]  # fmt: skip


def tab_environment(home: Path, tab_pass: str | None) -> dict[str, str]:
    """What a tab's client gets on top of textual-serve's environment: a home
    and XDG directories of its own under ``home`` (so ``known_servers`` and
    every other file it writes are the tab's, never the host user's), and
    its pass, if any."""
    environment = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
    }
    if tab_pass is not None:
        environment[TAB_PASS_ENV] = tab_pass
    return environment


@functools.cache
def _util(name: str, option: str) -> str | None:
    """The util-linux program ``name``, if it knows ``option`` (Linux only)."""
    path = shutil.which(name) if sys.platform == "linux" else None
    if path is None:
        return None
    try:
        done = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if option in done.stdout else None


def dies_with_parent(argv: Sequence[str]) -> list[str]:
    """``argv``, run so that the kernel kills it when its parent dies (where it can)."""
    setpriv = _util("setpriv", "--pdeathsig")
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else list(argv)


def memory_capped(argv: Sequence[str], memory: int | None) -> list[str]:
    """``argv``, run with its address space capped at ``memory`` bytes (RLIMIT_AS,
    set by util-linux's ``prlimit``, which then execs it: the same pid). Where
    there is no ``prlimit``, or ``memory`` is None, ``argv`` as it is."""
    prlimit = _util("prlimit", "--as") if memory is not None else None
    return [prlimit, f"--as={memory}", "--", *argv] if prlimit else list(argv)


def can_cap_memory() -> bool:
    """Whether :func:`memory_capped` can cap anything here."""
    return _util("prlimit", "--as") is not None


class BrowserSession(AppService):
    """One client process relayed to one browser WebSocket."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[object]],
        downloads: DownloadManager,
        environment: dict[str, str] | None = None,
        memory: int | None = None,
    ) -> None:
        """``environment`` is added to the client's (see :func:`tab_environment`);
        ``memory`` caps its address space, in bytes (see :func:`memory_capped`)."""

        async def close_page() -> None:
            await close()

        super().__init__(
            shlex.join(argv),
            write_bytes=write_bytes,
            write_str=write_str,
            close=close_page,
            download_manager=downloads,
        )
        self.argv = list(argv)
        self.environment = dict(environment or {})
        self.memory = memory
        self._ending = asyncio.Lock()

    @property
    def pid(self) -> int | None:
        """The client's process id (also its process group's), once started."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        """Whether the client process is alive."""
        return self._process is not None and self._process.returncode is None

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        environment = passed_on(self._build_environment(width=width, height=height))
        environment.update(self.environment)
        self._process = process = await asyncio.create_subprocess_exec(
            # setpriv execs prlimit, which execs the client: the same pid
            *dies_with_parent(memory_capped(self.argv, self.memory)),
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=environment,
            start_new_session=True,  # its own process group: end() can end all of it
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        """Relay the client's output until it ends, then close the tab's socket."""
        try:
            await super().run()
        finally:
            with contextlib.suppress(Exception):
                await self.remote_close()

    async def exited(self) -> None:
        """Wait until the client process is gone (at once if it never started)."""
        if self._process is not None:
            await self._process.wait()

    async def end(self, timeout: float) -> None:
        """Ask the client to quit; after ``timeout`` seconds kill its process group.

        Safe to call more than once, and from several tasks."""
        async with self._ending:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self.stop()  # sends "quit", waits for the output to end
            process = self._process
            if process is None:
                return
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await process.wait()
