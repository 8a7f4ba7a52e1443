"""A player's process, frozen: started, seated in an open match, then stopped
with SIGSTOP so it holds its connection and never answers the close."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def frozen_player(url: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """``tests.server.frozen_player`` against ``url``, frozen once it is in its
    match; killed (frozen or not) on exit."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.server.frozen_player",
        url,
        cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(20):
            line = await process.stdout.readline()
        assert line.strip() == b"READY", line
        process.send_signal(signal.SIGSTOP)
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()  # SIGKILL ends a stopped process too
        async with asyncio.timeout(10):
            await process.wait()
