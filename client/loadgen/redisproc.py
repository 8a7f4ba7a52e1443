"""A private ``redis-server`` for benchmarks and tests: on a free loopback port,
in a temporary directory, saving nothing (``--save ""``, no append-only file),
stopped afterwards. It never touches a Redis it did not start.

    with RedisProcess() as redis:
        redis.url  # redis://127.0.0.1:PORT/0
        redis.stop(); redis.start()  # the same port, empty again
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from ..localserver import free_port

__all__ = ["RedisProcess", "redis_server_path"]


def redis_server_path() -> str | None:
    """Where ``redis-server`` is installed, if it is."""
    return shutil.which("redis-server")


class RedisProcess:
    """One ``redis-server`` this process started, on ``port``."""

    def __init__(self, port: int | None = None, start_timeout: float = 10.0) -> None:
        path = redis_server_path()
        if path is None:
            raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
        self._path = path
        self.port = free_port() if port is None else port
        self.start_timeout = start_timeout
        self._dir = tempfile.TemporaryDirectory(prefix="tulips-redis-")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it (again, on the same port) and wait until it answers."""
        command = [self._path, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", self._dir.name]
        command += ["--daemonize", "no", "--loglevel", "warning"]
        with open(Path(self._dir.name) / "redis.log", "ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout
        while not self._answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop it (what it held is lost: it saves nothing)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def __enter__(self) -> RedisProcess:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        self._dir.cleanup()
