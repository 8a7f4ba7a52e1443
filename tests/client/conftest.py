"""Fixtures of the client tests: English by default, and a real server in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from client.tui import i18n
from server.app import TulipsServer
from server.config import ServerConfig


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    """Every test starts (and ends) in plain English."""
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@dataclass
class Running:
    """A started server and its URL."""

    server: TulipsServer
    url: str


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    """A server on 127.0.0.1 and an OS-picked port, bots acting at once."""
    config = ServerConfig(host="127.0.0.1", port=0, bot_delay=0, ping_interval=None)
    tulips = TulipsServer(config)
    await tulips.start()
    try:
        yield Running(tulips, f"ws://127.0.0.1:{tulips.port}")
    finally:
        await tulips.stop()
