"""``tulips play``'s own server: a subprocess on a free local port.

The client may not import the server (ARCHITECTURE.md), so it runs it the way
a person would: ``python -m server --host 127.0.0.1 --port N --no-storage``,
then polls ``/healthz`` until it answers. It stays in the terminal's process
group (closing the terminal ends it too), :meth:`LocalServer.stop` ends it
on exit — also from an ``atexit`` hook, should the caller forget — and it
stops by itself when this process ends some other way (``--parent-pid``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

__all__ = ["LocalServer", "LocalServerError", "check_ruleset", "free_port"]


class LocalServerError(Exception):
    """The local server did not start."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def check_ruleset(path: Path, python: str = sys.executable, timeout: float = 20.0) -> str:
    """The name ``path``'s house ruleset is offered under, as the server reads
    it (``--check-rulesets``); the server's one-line reason if it cannot be
    offered, as :class:`LocalServerError`. The client never parses it itself."""
    try:
        done = subprocess.run(
            [python, "-m", "server", "--ruleset", str(path), "--check-rulesets"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LocalServerError(f"--ruleset {path}: the server could not check it: {exc}") from None
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        reason = lines[-1] if lines else f"exit status {done.returncode}"
        raise LocalServerError(reason.removeprefix("tulips-server: error: "))
    names = done.stdout.decode().split("\n")
    return [n for n in names if n.strip()][-1]


class LocalServer:
    """A server subprocess on 127.0.0.1 with bots that take their time."""

    def __init__(
        self,
        *,
        bot_delay: float = 0.6,
        host: str = "127.0.0.1",
        python: str = sys.executable,
        startup_timeout: float = 20.0,
        attempts: int = 3,
        rulesets: Sequence[Path] = (),
    ) -> None:
        """``rulesets``: house ruleset files the server offers (``--ruleset``)."""
        self.bot_delay = bot_delay
        self.host = host
        self.python = python
        self.startup_timeout = startup_timeout
        self.attempts = attempts
        self.rulesets = tuple(rulesets)
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        atexit.register(self.stop)

    @property
    def url(self) -> str:
        """Where to connect once started."""
        return f"ws://{self.host}:{self.port}"

    def command(self, port: int) -> list[str]:
        """The command line that runs the server on ``port``."""
        return [
            self.python, "-m", "server",
            "--host", self.host,
            "--port", str(port),
            "--no-storage",
            "--bot-delay", str(self.bot_delay),
            "--log-level", "WARNING",
            "--parent-pid", str(os.getpid()),  # killed, we take it with us
            *(arg for path in self.rulesets for arg in ("--ruleset", str(path))),
        ]  # fmt: skip

    async def start(self) -> str:
        """Start the server and wait until it answers; returns its URL."""
        reason = ""
        for _ in range(self.attempts):  # a port picked free can be taken before we bind it
            port = free_port(self.host)
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
            self.process = subprocess.Popen(
                self.command(port),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
            )
            self.port = port
            reason = await self._wait_ready(port)
            if not reason:
                return self.url
            self.stop()
        raise LocalServerError(reason)

    async def _wait_ready(self, port: int) -> str:
        """'' once /healthz answers; else why not."""
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return self._last_words() or f"exit status {self.process.returncode}"
            if await self._healthy(port):
                return ""
            await asyncio.sleep(0.05)
        return f"no answer on port {port} after {self.startup_timeout:.0f} s"

    async def _healthy(self, port: int) -> bool:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, port), timeout=1.0
            )
        except (OSError, TimeoutError):
            return False
        try:
            writer.write(f"GET /healthz HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
            await writer.drain()
            status = await asyncio.wait_for(reader.readline(), timeout=1.0)
            return status.split(b" ")[1:2] == [b"200"]
        except (OSError, TimeoutError, IndexError):
            return False
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _last_words(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def stop(self, timeout: float = 5.0) -> None:
        """End the server (SIGTERM, then SIGKILL after ``timeout``) and reap it."""
        # The process stays known until it has ended: a second stop() (the hang-up
        # guard's, with a shorter timeout) may come while the first one waits.
        process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.process = None
        stderr, self._stderr = self._stderr, None
        if stderr is not None:
            stderr.close()
