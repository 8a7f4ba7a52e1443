"""What the browser-front tests share: a game server and its web front
in-process, bounded waits, and a look at the client processes in ``/proc``."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.app import TulipsServer
from server.config import ServerConfig
from server.lan import tls
from server.web import WebFront


@dataclass
class Front:
    """A started game server, its browser front, and the front's base URL."""

    server: TulipsServer
    web: WebFront

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (https with TLS): what a player would open."""
        scheme = "https" if self.web.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.web.port}"


@contextlib.asynccontextmanager
async def front(
    max_sessions: int = 4,
    bot_delay: float = 0.0,
    tls_dir: Path | None = None,
    *,
    per_address: int = 4,
    config: dict[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[Front]:
    """A server on 127.0.0.1 (OS-picked ports) serving ``max_sessions`` browser
    tabs, ``per_address`` of them to one address; with ``tls_dir``, both over
    TLS with a self-signed certificate made there. ``config`` is more of the
    server's settings, ``options`` more of the front's."""
    tls_files: dict[str, Any] = {}
    if tls_dir is not None:
        tls_files = {
            "tls_cert": tls_dir / tls.CERT_FILE,
            "tls_key": tls_dir / tls.KEY_FILE,
            "tls_self_signed": True,
        }
    settings = ServerConfig(
        host="127.0.0.1",
        port=0,
        bot_delay=bot_delay,
        ping_interval=None,
        **tls_files,
        **(config or {}),
    )
    server = TulipsServer(settings)
    await server.start()
    web = WebFront(
        host="127.0.0.1",
        port=0,
        game_port=server.port,
        max_sessions=max_sessions,
        per_address=per_address,
        tab_addresses=server.tab_addresses,
        **options,
        tls=server.tls.context if server.tls is not None else None,
        fingerprint=server.tls.fingerprint if server.tls is not None else None,
    )
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


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG image (ValueError if ``data`` is not one)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    width, height = struct.unpack(">II", data[16:24])
    return width, height
