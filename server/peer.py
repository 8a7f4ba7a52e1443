"""One connected client, as the server holds it: who it is, where it sits,
and a bounded queue of frames on their way to it.

Rooms never await a client: :meth:`Peer.send` queues a frame and returns, and
one writer task per connection drains the queue. A client that stops reading
lets its queue grow to ``max_outbox`` frames and is then dropped, so it can
neither block a match nor hold the server's memory.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from protocol import CloseCode

from .identity import Player

if TYPE_CHECKING:
    from .room import Room

__all__ = ["Peer"]

log = logging.getLogger(__name__)


class Peer:
    """A WebSocket connection with its player, its room and its outbound queue."""

    def __init__(self, connection: ServerConnection, max_outbox: int) -> None:
        self.connection = connection
        self.player: Player | None = None
        self.room: Room | None = None
        self._max_outbox = max_outbox
        self._queue: collections.deque[bytes] = collections.deque()
        self._wake = asyncio.Event()
        self._closing = False
        self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    def __repr__(self) -> str:
        who = self.player.name if self.player else "?"
        return f"<Peer {who} {self.connection.remote_address}>"

    def send(self, frame: bytes) -> None:
        """Queue a frame; drop the client if it lets too many pile up."""
        if self._closing:
            return
        if len(self._queue) >= self._max_outbox:
            log.warning("%r does not read its frames; closing", self)
            self.close(CloseCode.TOO_SLOW, "too many unread messages")
            return
        self._queue.append(frame)
        self._wake.set()

    def close(self, code: int, reason: str) -> None:
        """Close the connection with a documented code, without waiting."""
        if self._closing:
            return
        self._closing = True
        self._queue.clear()
        self._wake.set()
        asyncio.get_running_loop().create_task(self.connection.close(code, reason))

    async def flush_and_close(self, code: int, reason: str, timeout: float = 2.0) -> None:
        """Write what is queued (within ``timeout``), then close."""
        self._closing = True
        self._wake.set()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._writer), timeout)
        await self.connection.close(code, reason)

    async def _write_loop(self) -> None:
        queue = self._queue
        connection = self.connection
        batch_write = getattr(connection, "send_context", None)
        try:
            while True:
                if batch_write is not None and len(queue) > 1:
                    # Every queued frame in one write (one syscall), the way
                    # websockets' send_context docstring shows user code writing.
                    async with batch_write():
                        while queue:
                            connection.protocol.send_binary(queue.popleft())
                while queue:
                    await connection.send(queue.popleft())
                if self._closing:
                    return
                self._wake.clear()
                await self._wake.wait()
        except ConnectionClosed:
            queue.clear()

    def stop(self) -> None:
        """Stop the writer (the connection is gone)."""
        self._closing = True
        self._writer.cancel()
