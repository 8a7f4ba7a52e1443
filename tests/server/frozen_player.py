"""A player whose machine will freeze: ``python -m tests.server.frozen_player URL``.

It says hello, creates a match (three seats, one bot: it stays open, so the
player stays in it) and prints ``READY``; then it waits, reading what it is
sent, until it is frozen (SIGSTOP) or killed. A frozen one holds its TCP
connection and never answers a close. It gives up by itself after two minutes.
"""

from __future__ import annotations

import asyncio
import sys

import msgpack
from websockets.asyncio.client import connect


async def main(url: str) -> None:
    """Connect, host an open match, say READY, and read until stopped."""
    async with asyncio.timeout(120), connect(url, compression=None) as ws:
        await ws.send(
            msgpack.packb(
                {"v": 1, "type": "hello", "id": 1, "client": "frozen/1", "name": "Frozen"}
            )
        )
        bots = [{"seat": 2, "strength": "easy"}]
        await ws.send(
            msgpack.packb(
                {"v": 1, "type": "create_match", "id": 2, "name": "f", "seats": 3, "bots": bots}
            )
        )
        async for frame in ws:
            if msgpack.unpackb(frame).get("type") == "joined":
                print("READY", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
