"""A custom client run inside the client namespace by the discovery tests.

It follows the LAN with the SDK (:class:`client.discovery.ServerBrowser`),
connects to the first server it finds with the fingerprint that server
announced (no question asked), opens a 3-seat match with one bot, and prints
one JSON line per step to stdout for the test to read:

- ``{"step": "found", ...}``: the server as first announced;
- ``{"step": "updated", ...}``: the announcement once it shows the match;
- ``{"step": "gone"}``: the announcement withdrawn (the test stops the server
  after "updated").

Every wait is bounded; it exits with status 1 and a line on stderr if a step
does not come.
"""

from __future__ import annotations

import asyncio
import json
import sys

from client.discovery import ServerBrowser, ServerInfo
from client.sdk import Session


def say(step: str, server: ServerInfo | None = None) -> None:
    """One step, as a JSON line."""
    data = {"step": step, **(server.to_json() if server is not None else {})}
    print(json.dumps(data), flush=True)


async def main() -> None:
    """Find, connect, see the update, see the withdrawal."""
    async with ServerBrowser() as browser:
        changes = browser.changes()
        async with asyncio.timeout(20):
            servers: tuple[ServerInfo, ...] = ()
            while not servers:
                servers = await anext(changes)
        server = servers[0]
        say("found", server)
        session = Session(server.url, "Ada", fingerprint=server.fingerprint, reconnect=False)
        await session.open()
        await session.create_match(seats=3, bots=[(2, "easy")])
        async with asyncio.timeout(20):
            while not (servers and servers[0].open_matches == 1 and servers[0].players == 1):
                servers = await anext(changes)
        say("updated", servers[0])
        async with asyncio.timeout(30):
            while servers:
                servers = await anext(changes)
        say("gone")
        await session.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except TimeoutError:
        sys.exit("lan_client: a step did not come in time")
