"""The IPv6 attacks of issue 29 ("IPv6 addresses are free"), made from inside
a network namespace that :mod:`tests.lan.test_ipv6_limits` makes: a server on
``[::]`` and clients that take a new source address for every connection.

Run as ``python -m tests.lan.ipv6_attacks SPEC`` in the namespace; ``SPEC``
is JSON naming the addresses to use, and what happened is printed as JSON:

- ``connections``: the HTTP status of holding one connection from each source
  (101: accepted, 429: the address holds too many already);
- ``identities``: the answer to ``hello`` without a token from each source
  (``welcome``, or the error code);
- ``codes``: the answer to ``join`` of a private match from each link-local
  source, with a wrong join code, then the right one from one more source.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from server.app import TulipsServer
from server.config import ServerConfig

#: the server's limits while attacked
CONNECTIONS_PER_ADDRESS = 4
NEW_PLAYERS_PER_MINUTE = 5
JOIN_CODE_TRIES = 5
JOIN_CODE = "4711"


async def open_from(port: int, source: str, server: str, interface: str | None) -> ClientConnection:
    """A WebSocket connection from ``source`` to ``server`` (both on
    ``interface`` when they are link-local)."""
    scope = socket.if_nametoindex(interface) if interface else 0
    sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.bind((source, 0, 0, scope))
    await asyncio.get_running_loop().sock_connect(sock, (server, port, 0, scope))
    return await connect(f"ws://[{server}]:{port}/", sock=sock, compression=None)


async def request(ws: ClientConnection, type_: str, **fields: Any) -> dict[str, Any]:
    """Send a request; its answer."""
    await ws.send(msgpack.packb({"v": 1, "type": type_, "id": 1, **fields}))
    while True:
        message: dict[str, Any] = msgpack.unpackb(await ws.recv())
        if message.get("id") == 1:
            return message


def outcome(answer: dict[str, Any]) -> str:
    """An answer as the test compares it: its type, or its error's code."""
    return str(answer["code"]) if answer["type"] == "error" else str(answer["type"])


async def released(server: TulipsServer) -> None:
    """Until the server has let go of every closed connection's address."""
    for _ in range(200):
        if not server.addresses:
            return
        await asyncio.sleep(0.01)


async def hold_connections(
    server: TulipsServer, sources: list[str], target: str, interface: str | None
) -> list[int]:
    """Hold one connection from each source, in turn; each one's status."""
    held: list[ClientConnection] = []
    statuses = []
    try:
        for source in sources:
            try:
                held.append(await open_from(server.port, source, target, interface))
                statuses.append(101)
            except InvalidStatus as exc:
                statuses.append(exc.response.status_code)
    finally:
        for ws in held:
            await ws.close()
        await released(server)
    return statuses


async def new_identities(server: TulipsServer, sources: list[str], target: str) -> list[str]:
    """From each source in turn: ``hello`` without a token."""
    answers = []
    for source in sources:
        ws = await open_from(server.port, source, target, None)
        answers.append(outcome(await request(ws, "hello", client="attack/1", name="many")))
        await ws.close()
    await released(server)
    return answers


async def hunt_code(
    server: TulipsServer, sources: list[str], target: str, interface: str
) -> list[str]:
    """A private match made from ``::1``; one identity guessing its join code
    from a new link-local source for every guess; the right code last."""
    host = await connect(f"ws://[::1]:{server.port}/", compression=None)
    await request(host, "hello", client="host/1", name="host")
    joined = await request(host, "create_match", name="private", seats=3, join_code=JOIN_CODE)
    match = joined["match"]
    token = None
    answers = []
    for n, source in enumerate(sources):
        ws = await open_from(server.port, source, target, interface)
        welcome = await request(ws, "hello", client="attack/1", name="guesser", token=token)
        token = welcome["token"] if token is None else token
        code = JOIN_CODE if n == len(sources) - 1 else f"{n:04d}"
        answers.append(outcome(await request(ws, "join", match=match, join_code=code)))
        await ws.close()
    await host.close()
    return answers


async def main(spec: dict[str, Any]) -> dict[str, Any]:
    """Every attack in turn on one server; what each one got."""
    config = ServerConfig(
        host="::",
        port=0,
        max_connections_per_address=CONNECTIONS_PER_ADDRESS,
        new_players_per_minute=NEW_PLAYERS_PER_MINUTE,
        join_code_tries=JOIN_CODE_TRIES,
    )
    server = TulipsServer(config)
    await server.start()
    server_address, link_local, interface = spec["server"], spec["link_local"], spec["interface"]
    try:
        return {
            "connections": {
                "own_lan": await hold_connections(server, spec["own_lan"], server_address, None),
                "link_local": await hold_connections(
                    server, link_local[1:], link_local[0], interface
                ),
                "homes": await hold_connections(server, spec["homes"], server_address, None),
            },
            "identities": await new_identities(server, spec["own_lan"], server_address),
            "codes": await hunt_code(server, link_local[1:], link_local[0], interface),
        }
    finally:
        await server.stop()


if __name__ == "__main__":
    result = asyncio.run(asyncio.wait_for(main(json.loads(sys.argv[1])), 60))
    print(json.dumps(result))
