"""One way to start a local ``python -m server``: ``tulips play``'s own server,
the load tools' (:mod:`client.loadgen`) and the tests'.

The client may not import the server (ARCHITECTURE.md), so :class:`LocalServer`
runs it the way a person would — ``python -m server --host 127.0.0.1 --port N``
and the flags it is given — on a port found free (:func:`free_port`; a port can
be taken between the probe and the server's bind, so :meth:`LocalServer.start`
tries again), polls ``/healthz`` until it answers (:func:`fetch_health`), and
stops it by its process id: SIGTERM, then SIGKILL after a timeout.

By default it is ``tulips play``'s server: memory only (``--no-storage``), bots
that take their time, warnings only, stderr kept for the reason it gave should
it die at start, and ``--parent-pid``: it stops by itself when this process
ends some other way. It stays in the terminal's process group (closing the
terminal ends it too) and is stopped from an ``atexit`` hook, should the
caller forget. The tools give a data directory, a log file and flags of their
own; the crash soak kills it and starts it again on the same directory.

Only loopback is ever used unless a host is given.
"""

from __future__ import annotations

import asyncio
import atexit
import json
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
from urllib.parse import urlsplit

__all__ = [
    "HOST",
    "LocalServer",
    "LocalServerError",
    "check_ruleset",
    "fetch_health",
    "free_port",
    "free_port_run",
]

HOST = "127.0.0.1"


class LocalServerError(Exception):
    """The local server did not start (the message says why, in the server's words)."""


def free_port(host: str = HOST) -> int:
    """A TCP port on ``host`` that nobody listened on a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def free_port_run(count: int, host: str = HOST) -> int:
    """A free port with the ``count`` ports after it free too (``--workers N``
    listens on the port and each worker on one of the ``count`` after it)."""
    for _ in range(100):
        port = free_port(host)
        if port + count < 65536 and all(_free(host, port + i) for i in range(1, count + 1)):
            return port
    raise LocalServerError(f"found no run of {count + 1} free ports on {host}")


def _free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


async def fetch_health(url: str, timeout: float = 5.0) -> dict[str, object] | None:
    """The server's ``/healthz`` JSON, or None if it cannot be read."""
    parts = urlsplit(url)
    host, port = parts.hostname or HOST, parts.port or 80
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, TimeoutError):
        return None
    try:
        writer.write(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = await asyncio.wait_for(reader.read(), timeout)
        body = data.split(b"\r\n\r\n", 1)[1]
        result = json.loads(body)
        return result if isinstance(result, dict) else None
    except (OSError, TimeoutError, IndexError, ValueError):
        return None
    finally:
        writer.transport.abort()  # never leave a connection open: it would hold up a stop


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
    """A ``python -m server`` subprocess on a free local port.

    :meth:`start` (async) starts it and waits until it answers, trying a new
    port when it dies first; :meth:`spawn` only starts it, and
    :meth:`wait_until_up` waits, for a caller that judges a failed start itself.
    Either may be called again once it has stopped or been killed (on a new port).
    """

    def __init__(
        self,
        options: Sequence[str] = (),
        *,
        data_dir: Path | None = None,
        bot_delay: float | None = 0.6,
        log_level: str = "WARNING",
        rulesets: Sequence[Path] = (),
        follow_parent: bool = True,
        workers: int = 0,
        log_path: Path | None = None,
        inherit_output: bool = False,
        host: str = HOST,
        python: str = sys.executable,
        startup_timeout: float = 20.0,
        attempts: int = 3,
    ) -> None:
        """The server's flags: ``options`` (any ``tulips-server`` flags, e.g.
        ``--sync full``), ``data_dir`` (None: ``--no-storage``), ``bot_delay``
        (None: the server's default), ``log_level``, ``rulesets`` (house ruleset
        files it offers, ``--ruleset``), ``follow_parent`` (``--parent-pid``:
        it ends when this process does) and ``workers`` (that many ports after
        its own are kept free for ``--workers``, given in ``options``).

        Its output: appended to ``log_path`` (stdout and stderr); or, with
        ``inherit_output``, this process's; else stdout is dropped and stderr
        kept for the reason it gives should it die at start.
        """
        self.options = list(options)
        self.data_dir = data_dir
        self.bot_delay = bot_delay
        self.log_level = log_level
        self.rulesets = tuple(rulesets)
        self.follow_parent = follow_parent
        self.workers = workers
        self.log_path = log_path
        self.inherit_output = inherit_output
        self.host = host
        self.python = python
        self.startup_timeout = startup_timeout
        self.attempts = attempts
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        #: the exit code of the last process stopped (None: none stopped yet)
        self.returncode: int | None = None
        self._stderr: IO[bytes] | None = None
        atexit.register(self.stop)

    @property
    def url(self) -> str:
        """``ws://HOST:PORT`` of the current process."""
        return f"ws://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        """The process id, while there is a process."""
        return self.process.pid if self.process is not None else None

    def command(self, port: int) -> list[str]:
        """The command line that runs the server on ``port``."""
        storage = ["--no-storage"] if self.data_dir is None else ["--data-dir", str(self.data_dir)]
        bots = [] if self.bot_delay is None else ["--bot-delay", str(self.bot_delay)]
        return [
            self.python, "-m", "server",
            "--host", self.host,
            "--port", str(port),
            *storage,
            *bots,
            "--log-level", self.log_level,
            # killed, we take it with us
            *(["--parent-pid", str(os.getpid())] if self.follow_parent else []),
            *self.options,
            *(arg for path in self.rulesets for arg in ("--ruleset", str(path))),
        ]  # fmt: skip

    def spawn(self) -> None:
        """Start the process on a port found free now; do not wait for it."""
        self.port = free_port_run(self.workers, self.host) if self.workers else free_port(self.host)
        command = self.command(self.port)
        if self._stderr is not None:  # a killed process's, not stopped
            self._stderr.close()
            self._stderr = None
        if self.inherit_output:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        elif self.log_path is not None:
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
                )
        else:
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr
            )

    async def start(self) -> str:
        """Start the server and wait until it answers; returns its URL. Raises
        :class:`LocalServerError` with its last words if it does not come up."""
        reason = ""
        for _ in range(self.attempts):  # a port picked free can be taken before we bind it
            self.spawn()
            reason = await self._wait_ready()
            if not reason:
                return self.url
            self.stop()
        raise LocalServerError(reason)

    async def wait_until_up(self, timeout: float | None = None) -> bool:
        """True once ``/healthz`` answers; False if the process died or ``timeout``
        (default: ``startup_timeout``) passed."""
        return not await self._wait_ready(timeout)

    async def _wait_ready(self, timeout: float | None = None) -> str:
        """'' once /healthz answers; else why not."""
        timeout = self.startup_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            process = self.process
            if process is None or process.poll() is not None:
                code = None if process is None else process.returncode
                return self._last_words() or f"exit status {code}"
            if await fetch_health(self.url, timeout=1.0) is not None:
                return ""
            await asyncio.sleep(0.05)
        return f"no answer on port {self.port} after {timeout:.0f} s"

    def _last_words(self) -> str:
        """The last line the process wrote to stderr (or its log), if kept."""
        if self._stderr is not None:
            self._stderr.seek(0)
            text = self._stderr.read().decode(errors="replace")
        elif self.log_path is not None and self.log_path.exists():
            with open(self.log_path, "rb") as log:
                log.seek(max(0, log.seek(0, os.SEEK_END) - 4096))
                text = log.read().decode(errors="replace")
        else:
            return ""
        lines = text.strip().splitlines()
        return lines[-1] if lines else ""

    def exit_code(self) -> int | None:
        """None while the process runs; its exit code (negative: a signal) once it
        is gone (that of the last one stopped, when there is none)."""
        return self.process.poll() if self.process is not None else self.returncode

    def memory(self) -> tuple[int, int] | None:
        """``(VmRSS, VmHWM)`` in bytes: resident memory now and at its peak."""
        if self.pid is None:
            return None
        found: dict[str, int] = {}
        try:
            with open(f"/proc/{self.pid}/status") as status:
                for line in status:
                    key, _, value = line.partition(":")
                    if key in ("VmRSS", "VmHWM"):
                        found[key] = int(value.split()[0]) * 1024
        except (OSError, ValueError, IndexError):
            return None
        if "VmRSS" not in found:
            return None
        return found["VmRSS"], found.get("VmHWM", found["VmRSS"])

    def kill(self) -> None:
        """SIGKILL: the process dies at once, mid-write if it was writing."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self, timeout: float = 5.0) -> int | None:
        """End the server (SIGTERM, then SIGKILL after ``timeout``) and reap it.

        Returns its exit code (0: a clean shutdown), or None if there was no process.
        """
        # The process stays known until it has ended: a second stop() (the hang-up
        # guard's, with a shorter timeout) may come while the first one waits.
        process = self.process
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            self.returncode = process.returncode
        self.process = None
        stderr, self._stderr = self._stderr, None
        if stderr is not None:
            stderr.close()
        return None if process is None else process.returncode
