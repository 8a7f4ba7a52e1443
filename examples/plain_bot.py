"""A bot with only `websockets` and `msgpack` (PROTOCOL.md): join a match by
id and, at every prompt, play the action that scores the most points now (the
prompt's `points`; the first action when the server sends none).

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
            if msg["type"] == "error" and msg["code"] != "decision_taken":  # (a late act)
                sys.exit(f"error: {msg['code']}: {msg['message']}")
            if msg["type"] == "prompt":
                actions = msg["actions"]
                points = msg.get("points") or []
                if len(points) != len(actions):  # older servers send no points
                    points = [0] * len(actions)
                best = max(range(len(actions)), key=lambda i: points[i])
                await send("act", action=actions[best], seq=msg["seq"])
            if msg["type"] == "event" and msg["event"]["kind"] == "match_ended":
                scoring = msg["event"]["scoring"]
                print("winners:", scoring["winners"], "by", scoring["decided_by"])
                return


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
