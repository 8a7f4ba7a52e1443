"""A scripted browser tab: what ``textual.js`` does, without a browser.

It opens ``/ws/{key}/{name}`` with textual-serve's envelope (JSON text
frames ``["stdin", keys]``, ``["resize", {...}]``; binary frames of screen
bytes back), and keeps the text drawn so far with the escape sequences
taken out, so a caller can wait until a word is on screen. The measuring
command and the tests use it; it is no part of serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from types import TracebackType
from urllib.parse import quote

import aiohttp

__all__ = ["Tab", "screen_text"]

_ESCAPES = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]"  # CSI: cursor moves, colours, modes
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles and the like
    r"|\x1b[()][0-9A-Za-z]|\x1b[^\[\]]"
)


def screen_text(data: bytes) -> str:
    """The characters in terminal output, without escape sequences."""
    return _ESCAPES.sub("", data.decode("utf-8", "replace"))


class Tab:
    """One browser tab's WebSocket: ``async with Tab(url, name) as tab``."""

    def __init__(
        self,
        base_url: str,
        name: str,
        *,
        key: str | None = None,
        width: int = 120,
        height: int = 36,
        source: str | None = None,
        origin: str | None = None,
    ) -> None:
        """``source``: the local address to connect from (another loopback
        address, say, to play another visitor); ``origin``: the ``Origin``
        header to send (none by default, as a program)."""
        self.base_url = base_url.rstrip("/")
        self.name = name
        self.key = key or secrets.token_hex(16)
        self.width, self.height = width, height
        self.source, self.origin = source, origin
        self.text = ""
        self.closed = asyncio.Event()
        self._http: aiohttp.ClientSession | None = None
        self._socket: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    @property
    def url(self) -> str:
        """The WebSocket address the page would open."""
        ws = "ws" + self.base_url.removeprefix("http")
        return (
            f"{ws}/ws/{self.key}/{quote(self.name, safe='')}"
            f"?width={self.width}&height={self.height}"
        )

    async def __aenter__(self) -> Tab:
        connector = aiohttp.TCPConnector(
            local_addr=(self.source, 0) if self.source is not None else None
        )
        self._http = aiohttp.ClientSession(connector=connector)
        try:
            # ssl=False: a probe of our own front on this machine, whose
            # certificate may be self-signed; the tab's client pins the game's
            self._socket = await self._http.ws_connect(self.url, ssl=False, origin=self.origin)
        except BaseException:
            await self._http.close()
            raise
        self._reader = asyncio.get_running_loop().create_task(self._read())
        await self._send(["resize", {"width": self.width, "height": self.height}])
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the tab (as a browser does when the tab goes)."""
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._http is not None:
            await self._http.close()

    async def _read(self) -> None:
        assert self._socket is not None
        try:
            async for message in self._socket:
                if message.type == aiohttp.WSMsgType.BINARY:
                    self.text += screen_text(message.data)
                    self._changed.set()
        finally:
            self.closed.set()
            self._changed.set()

    async def _send(self, envelope: list[object]) -> None:
        assert self._socket is not None
        await self._socket.send_json(envelope)

    async def press(self, keys: str) -> None:
        """Type ``keys`` (``\\r`` is Enter)."""
        await self._send(["stdin", keys])

    def mark(self) -> int:
        """A place in the text: :meth:`wait_for` can look only past it."""
        return len(self.text)

    async def wait_for(self, words: str, *, since: int = 0, timeout: float = 20.0) -> None:
        """Wait until ``words`` are drawn (after ``since``); TimeoutError if not."""
        async with asyncio.timeout(timeout):
            while words not in self.text[since:]:
                if self.closed.is_set():
                    raise ConnectionError(f"the tab closed before {words!r} was drawn")
                self._changed.clear()
                await self._changed.wait()
