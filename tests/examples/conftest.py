"""What the example-client tests share: a real server on 127.0.0.1 and a way
to run a client program in the repository under a time limit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import TulipsServer
from server.config import ServerConfig

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a client program may take to play its match.
TIMEOUT = 30


@pytest.fixture
async def url() -> AsyncIterator[str]:
    """A real server on an OS-picked port."""
    server = TulipsServer(ServerConfig(host="127.0.0.1", port=0, bot_delay=0, bot_think_ms=5))
    await server.start()
    try:
        yield f"ws://127.0.0.1:{server.port}"
    finally:
        await server.stop()


async def run(*command: str) -> tuple[int, str, str]:
    """Run a command in the repository; its exit code, stdout and stderr."""
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT
    )
    try:
        async with asyncio.timeout(TIMEOUT):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()
