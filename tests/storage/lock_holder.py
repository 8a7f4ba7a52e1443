"""Another process holding a SQLite database's lock, as a backup tool or
``sqlite3`` at a prompt does::

    python -m tests.storage.lock_holder DATABASE MAX_SECONDS

It takes ``BEGIN EXCLUSIVE`` on the file, prints ``held``, and keeps the lock
until a line arrives on its stdin (or ``MAX_SECONDS`` pass), then rolls back
and exits. :func:`holding` runs it from a test and always ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Holder", "holding"]


@dataclass
class Holder:
    """The process holding the lock."""

    process: asyncio.subprocess.Process

    @property
    def pid(self) -> int:
        """Its process id (what the server's log should name)."""
        return self.process.pid

    async def release(self) -> None:
        """Let the lock go, and wait until the process has exited."""
        if self.process.returncode is None and self.process.stdin is not None:
            with contextlib.suppress(ConnectionError):
                self.process.stdin.write(b"release\n")
                await self.process.stdin.drain()
        async with asyncio.timeout(10):
            await self.process.wait()


@contextlib.asynccontextmanager
async def holding(database: Path, max_seconds: float = 30.0) -> AsyncIterator[Holder]:
    """Another process holds ``database``'s lock from entry until
    :meth:`Holder.release` (or the exit, or ``max_seconds``)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.storage.lock_holder",
        str(database),
        str(max_seconds),
        cwd=Path(__file__).resolve().parents[2],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    holder = Holder(process)
    try:
        assert process.stdout is not None
        async with asyncio.timeout(10):
            line = await process.stdout.readline()
        assert line.strip() == b"held", f"the lock holder said {line!r}"
        yield holder
    finally:
        if process.returncode is None:
            process.kill()
        async with asyncio.timeout(10):
            await process.wait()


def main(argv: list[str]) -> None:
    """Hold the lock of ``argv[0]`` until a line on stdin, or ``argv[1]`` seconds."""
    database, max_seconds = argv[0], float(argv[1])
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    print("held", flush=True)
    released = threading.Event()

    def wait_for_a_line() -> None:
        sys.stdin.readline()
        released.set()

    threading.Thread(target=wait_for_a_line, daemon=True).start()
    released.wait(max_seconds)
    connection.execute("ROLLBACK")
    connection.close()


if __name__ == "__main__":
    main(sys.argv[1:])
