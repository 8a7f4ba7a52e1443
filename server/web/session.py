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

:class:`SeatFiles` gives each browser *key* (a random id the page keeps in
the tab's ``sessionStorage``) its own resume-token file, so no two tabs share
a token, and a reloaded tab comes back as the same player.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
from asyncio.subprocess import PIPE, Process
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

__all__ = ["BrowserSession", "SeatFiles", "client_command", "dies_with_parent"]


def client_command(
    game_url: str, name: str, identity_file: Path, fingerprint: str | None = None
) -> list[str]:
    """The terminal client a tab runs: ``tulips connect`` with its own token
    file (and, over TLS, the game server's pinned fingerprint)."""
    pin = ["--fingerprint", fingerprint] if fingerprint is not None else []
    return [
        sys.executable, "-m", "client.tui", "connect", game_url,
        "--name", name,
        "--identity-file", str(identity_file),
        *pin,
    ]  # fmt: skip


@functools.cache
def _setpriv() -> str | None:
    """util-linux's ``setpriv``, if it can set a parent-death signal."""
    path = shutil.which("setpriv") if sys.platform == "linux" else None
    if path is None:
        return None
    try:
        done = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if "--pdeathsig" in done.stdout else None


def dies_with_parent(argv: Sequence[str]) -> list[str]:
    """``argv``, run so that the kernel kills it when its parent dies (where it can)."""
    setpriv = _setpriv()
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else list(argv)


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
    ) -> None:
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
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *dies_with_parent(self.argv),  # setpriv execs the client: the same pid
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


class SeatFiles:
    """A resume-token file per browser key, in one private directory.

    A key is the page's secret: whoever holds it plays as that tab's player.
    Files are named by a hash of the key, never by the key itself. At most
    ``keep`` keys are remembered; the least recently used one (not in use)
    is forgotten first, its file deleted.
    """

    def __init__(self, directory: Path, keep: int) -> None:
        self.directory = directory
        self.keep = keep
        self._used: collections.OrderedDict[str, None] = collections.OrderedDict()

    @staticmethod
    def _digest(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()[:32]

    def path_for(self, key: str) -> Path:
        """The token file of ``key`` (remembered as the most recently used)."""
        digest = self._digest(key)
        self._used.pop(digest, None)
        self._used[digest] = None
        return self.directory / f"{digest}.json"

    def forget_old(self, in_use: set[str]) -> None:
        """Delete the files of the least recently used keys beyond ``keep``,
        except those of the keys ``in_use``."""
        busy = {self._digest(key) for key in in_use}
        for digest in list(self._used):
            if len(self._used) <= self.keep:
                return
            if digest in busy:
                continue
            del self._used[digest]
            with contextlib.suppress(OSError):
                (self.directory / f"{digest}.json").unlink()
