"""A complete Gift of Tulips client that needs only `websockets` and `msgpack`.

It says hello, creates a 3-seat match against two bots, starts it, and
whenever it is prompted plays an action that scores the most points now (the
prompt's `points`; at random among equals), then prints the final scores.

    python examples/plain_client.py [ws://localhost:8765] [name]
"""

import asyncio
import random
import sys

import msgpack
import websockets


async def play(url: str, name: str) -> None:
    async with websockets.connect(url) as ws:
        next_id = 0

        async def send(type_: str, **fields: object) -> None:
            nonlocal next_id
            next_id += 1
            await ws.send(msgpack.packb({"v": 1, "type": type_, "id": next_id, **fields}))

        await send("hello", client="plain-client/1", name=name, features=["batch"])
        async for frame in ws:
            first = msgpack.unpackb(frame)  # a batch: what one action caused, in order
            for msg in first["messages"] if first.get("type") == "batch" else [first]:
                kind = msg.get("type")  # ignore types we do not know
                if kind == "error" and msg["code"] == "decision_taken":
                    continue  # our act came too late; the newer prompt is already here
                elif kind == "error":
                    sys.exit(f"error {msg['code']}: {msg['message']}")
                elif kind == "welcome":
                    print(f"connected to {msg['server']} as {msg['name']}")
                    bots = [{"seat": 1, "strength": "easy"}, {"seat": 2, "strength": "easy"}]
                    await send("create_match", name=f"{name} vs bots", seats=3, bots=bots)
                elif kind == "joined":
                    await send("start")
                elif kind == "prompt":
                    actions, points = msg["actions"], msg.get("points") or []
                    if len(points) != len(actions):  # older servers send no points
                        points = [0] * len(actions)
                    best = [a for a, p in zip(actions, points, strict=True) if p == max(points)]
                    await send("act", action=random.choice(best), seq=msg["seq"])
                elif kind == "event" and msg["event"]["kind"] == "match_ended":
                    scoring = msg["event"]["scoring"]
                    for player in scoring["players"]:
                        print(f"seat {player['seat']}: {player['total']} points")
                    print(f"winners: {scoring['winners']} (by {scoring['decided_by']})")
                    return


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "ws://localhost:8765"
    asyncio.run(play(url, sys.argv[2] if len(sys.argv) > 2 else "plain"))
