"""A Gift of Tulips client that follows a cluster's redirects; it needs only
`websockets` and `msgpack`.

It connects to any node of a cluster, joins the match given by id and plays
it out (an action that scores the most now). When the match lives on another
node, the node answers `error` `elsewhere` with that node's `url`: the client
closes its connection, connects there, says `hello` with its token (the same
identity on every node) and sends `join` again — what PROTOCOL.md, "a cluster
of nodes", asks of every client. A single server never sends `elsewhere`, so
this client works there unchanged.

    python examples/cluster_client.py ws://NODE:8765 MATCH_ID [name]
"""

import asyncio
import random
import sys

import msgpack
import websockets

MAX_HOPS = 3  # redirects followed in a row before giving up


async def play(url: str, match: str, name: str) -> None:
    token = None
    next_id = 0
    for _hop in range(MAX_HOPS + 1):
        async with websockets.connect(url) as ws:

            async def send(type_: str, **fields: object) -> None:
                nonlocal next_id
                next_id += 1
                await ws.send(msgpack.packb({"v": 1, "type": type_, "id": next_id, **fields}))

            await send("hello", client="cluster-client/1", name=name, token=token)
            joining = False  # a join we sent is not answered yet
            async for frame in ws:
                msg = msgpack.unpackb(frame)
                kind = msg.get("type")  # ignore types we do not know
                if kind == "welcome":
                    token = msg["token"]
                    await send("join", match=match)
                    joining = True
                elif kind == "error" and msg["code"] == "elsewhere":
                    if joining and msg.get("id") is None:
                        continue  # unasked, about a seat elsewhere: our join decides
                    if url.startswith("wss://") and not msg["url"].startswith("wss://"):
                        sys.exit(f"refused a redirect from {url} to {msg['url']}: not encrypted")
                    url = msg["url"]
                    print(f"match {match} is elsewhere: moved to {url}")
                    break  # close this connection; the loop connects to url
                elif kind == "error" and msg["code"] == "decision_taken":
                    continue  # our act came too late; the newer prompt is already here
                elif kind == "error":
                    sys.exit(f"error {msg['code']}: {msg['message']}")
                elif kind == "joined":
                    joining = False
                    print(f"seat {msg['seat']} in match {msg['match']} at {url}")
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
            else:
                sys.exit("the server closed the connection")
    sys.exit(f"more than {MAX_HOPS} redirects in a row")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    name = sys.argv[3] if len(sys.argv) > 3 else "cluster-client"
    asyncio.run(play(sys.argv[1], sys.argv[2], name))
