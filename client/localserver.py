"""A real ``python -m server`` process on 127.0.0.1, for the benchmark commands.

:class:`LocalServer` starts the server on a port found free, with its log in a
file, waits until ``/healthz`` answers, reads its resident memory from
``/proc/PID/status``, and stops it — politely (SIGTERM) or not (SIGKILL).
:func:`scan_log` counts the tracebacks in that log and keeps the first line of
each, so a soak can report what went wrong without a person reading the log.

Only loopback is ever used: the server is told ``--host 127.0.0.1``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "HOST",
    "LocalServer",
    "LogScan",
    "fetch_health",
    "free_port",
    "keep_log",
    "scan_log",
]

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


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


class LocalServer:
    """One server process; ``start()`` may be called again after it has stopped
    (the crash soak restarts it on the same data directory, on a new port)."""

    def __init__(self, log_path: Path, options: Sequence[str] = ()) -> None:
        """``options`` are extra ``tulips-server`` flags (storage, limits, log level)."""
        self.log_path = log_path
        self.options = list(options)
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``ws://127.0.0.1:PORT`` of the current process."""
        return f"ws://{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        """The process id, while there is a process."""
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        """Start the process (its stdout and stderr appended to the log file)."""
        self.port = free_port()
        command = [sys.executable, "-m", "server", "--host", HOST, "--port", str(self.port)]
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                [*command, *self.options], stdout=log, stderr=subprocess.STDOUT
            )

    async def wait_until_up(self, timeout: float = 20.0) -> bool:
        """True once ``/healthz`` answers; False if the process died or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.exit_code() is not None:
                return False
            if await fetch_health(self.url, timeout=1.0) is not None:
                return True
            await asyncio.sleep(0.05)
        return False

    def exit_code(self) -> int | None:
        """None while the process runs; its exit code (negative: a signal) once it is gone."""
        return self._process.poll() if self._process is not None else None

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
        if self._process is not None and self._process.poll() is None:
            os.kill(self._process.pid, signal.SIGKILL)
            self._process.wait(10)

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, and wait for a clean shutdown; SIGKILL after ``timeout``.

        Returns the exit code (0 for a clean shutdown), or None if there was no process.
        """
        process = self._process
        if process is None:
            return None
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        return process.returncode


@dataclass
class LogScan:
    """What a server log holds that a person should hear about."""

    tracebacks: int = 0
    #: each distinct traceback's last line (the exception) with how many times it came
    exceptions: dict[str, int] = field(default_factory=dict)
    #: each distinct traceback's first log line (what the server was doing)
    contexts: dict[str, str] = field(default_factory=dict)
    errors: int = 0  #: lines logged at ERROR or CRITICAL
    warnings: int = 0  #: lines logged at WARNING
    size: int = 0

    def lines(self, limit: int = 5) -> list[str]:
        """The distinct tracebacks, most frequent first, at most ``limit`` of them."""
        ranked = sorted(self.exceptions.items(), key=lambda item: -item[1])
        out = []
        for exception, count in ranked[:limit]:
            out.append(f"    {count:6d} x {exception[:160]}")
            context = self.contexts.get(exception)
            if context:
                out.append(f"             after: {context[:150]}")
        return out


def scan_log(path: Path) -> LogScan:
    """Count tracebacks and ERROR/WARNING lines in a server log (read as a stream)."""
    scan = LogScan()
    if not path.exists():
        return scan
    scan.size = path.stat().st_size
    previous = ""
    in_traceback = chained = False
    context = last = ""
    with open(path, errors="replace") as log:
        for raw in log:
            line = raw.rstrip("\n")
            if line.startswith("Traceback (most recent call last)"):
                if not chained:  # a chained one belongs to the traceback before it
                    scan.tracebacks += 1
                    context = previous
                in_traceback, chained = True, False
            elif line.startswith(("During handling of the above", "The above exception")):
                chained = True  # the exception just counted is replaced by the next one
                if last and scan.exceptions.get(last, 0) > 0:
                    scan.exceptions[last] -= 1
                    if not scan.exceptions[last]:
                        del scan.exceptions[last]
                last = ""
            elif in_traceback and line and not line.startswith((" ", "\t")):
                in_traceback = False
                last = line
                scan.exceptions[line] = scan.exceptions.get(line, 0) + 1
                scan.contexts.setdefault(line, context)
            if " ERROR " in line or " CRITICAL " in line:
                scan.errors += 1
            elif " WARNING " in line:
                scan.warnings += 1
            if line:
                previous = line
    return scan


def keep_log(log_path: Path, keep: Path | None) -> str:
    """Copy the log to ``keep`` (if given) before its temporary directory goes;
    where a person can read it afterwards."""
    if keep is None:
        return "deleted with its temp dir; --keep-log PATH keeps it"
    keep.write_bytes(log_path.read_bytes() if log_path.exists() else b"")
    return str(keep)
