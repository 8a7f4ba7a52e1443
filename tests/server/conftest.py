"""Fixtures of the server tests: a running server with test-friendly defaults."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .helpers import Running, serve


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    """A server on 127.0.0.1, an OS-picked port, bots acting at once."""
    async with serve() as server:
        yield server
