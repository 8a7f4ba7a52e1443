"""What the browser-front tests share: a game server and its web front
in-process, bounded waits, and a look at the client processes in ``/proc``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from server.app import TulipsServer
from server.config import ServerConfig
from server.web import WebFront


@dataclass
class Front:
    """A started game server, its browser front, and the front's base URL."""

    server: TulipsServer
    web: WebFront

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: what a player would open."""
        return f"http://127.0.0.1:{self.web.port}"


@contextlib.asynccontextmanager
async def front(max_sessions: int = 4, bot_delay: float = 0.0) -> AsyncIterator[Front]:
    """A server on 127.0.0.1 (OS-picked ports) serving ``max_sessions`` browser tabs."""
    config = ServerConfig(host="127.0.0.1", port=0, bot_delay=bot_delay, ping_interval=None)
    server = TulipsServer(config)
    await server.start()
    web = WebFront(host="127.0.0.1", port=0, game_port=server.port, max_sessions=max_sessions)
    try:
        await web.start()
        yield Front(server, web)
    finally:
        await web.stop()
        await server.stop()


async def wait_until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    """Poll ``check`` until it holds; TimeoutError after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.05)


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (and is not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def session_pids(web: WebFront) -> list[int]:
    """The client process ids of the running browser sessions."""
    return [s.pid for s in web.sessions if s.pid is not None]
