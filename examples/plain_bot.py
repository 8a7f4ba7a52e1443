"""A bot with only `websockets` and `msgpack` (PROTOCOL.md): join a match by
id and play the first legal action of every prompt until the match ends.

    python examples/plain_bot.py ws://localhost:8765 MATCH_ID
"""

import asyncio
import sys

import msgpack
import websockets


async def main(url: str, match: str) -> None:
    async with websockets.connect(url) as ws:
        ids = iter(range(1, 1_000_000))

        async def send(type_: str, **fields: object) -> None:
            msg = {"v": 1, "type": type_, "id": next(ids), **fields}
            await ws.send(msgpack.packb(msg))

        await send("hello", client="plain-bot/1", name="plain-bot")
        await send("join", match=match)
        async for frame in ws:
            msg = msgpack.unpackb(frame)
            if msg["type"] == "error":
                sys.exit(f"error: {msg['code']}: {msg['message']}")
            if msg["type"] == "prompt":
                await send("act", action=msg["actions"][0])
            if msg["type"] == "event" and msg["event"]["kind"] == "match_ended":
                scoring = msg["event"]["scoring"]
                print("winners:", scoring["winners"], "by", scoring["decided_by"])
                return


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
