"""The per-address limits count an IPv6 client from outside the server's own
network as its whole /64 (PROTOCOL.md, "What an address is"), and a neighbour
in the server's own network one by one — for real, on addresses that exist
only in a network namespace the test makes (nothing reaches the machine's own
network). The server and its clients run in one process inside it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from server.peer import address_key

from .netns import ROOT, NoNamespaces, environment, private_namespace, python

SERVER = "2001:db8:1::1"
#: two addresses of one outside home, one of another home, two of the server's own LAN
AWAY, AWAY_TOO, OTHER_HOME = "2001:db8:2::a", "2001:db8:2::b", "2001:db8:3::a"
NEAR, NEAR_TOO = "2001:db8:1::a", "2001:db8:1::b"

#: Starts a server on [::] limited to 1 connection per address, then opens and
#: holds one connection from each source address in turn; prints each one's
#: HTTP status (101: accepted).
SCRIPT = """
import asyncio, json, sys
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from server.app import TulipsServer
from server.config import ServerConfig

async def main(sources):
    config = ServerConfig(host="::", port=0, max_connections_per_address=1)
    server = TulipsServer(config)
    await server.start()
    held, statuses = [], {}
    try:
        for source in sources:
            try:
                held.append(await connect(
                    f"ws://[%s]:{server.port}/" % sys.argv[1], local_addr=(source, 0)
                ))
                statuses[source] = 101
            except InvalidStatus as exc:
                statuses[source] = exc.response.status_code
    finally:
        for connection in held:
            await connection.close()
        await server.stop()
    print(json.dumps(statuses))

asyncio.run(asyncio.wait_for(main(sys.argv[2:]), 20))
"""


@pytest.fixture
def namespace() -> Iterator[str]:
    """A namespace holding the server's address and every client's."""
    addresses = [f"{SERVER}/64", *(f"{a}/128" for a in (AWAY, AWAY_TOO, OTHER_HOME))]
    addresses += [f"{a}/128" for a in (NEAR, NEAR_TOO)]
    try:
        with private_namespace(addresses) as made:
            yield made
    except NoNamespaces as exc:
        pytest.skip(f"cannot make network namespaces here: {exc}")


def test_one_outside_home_shares_its_limit_and_neighbours_do_not(namespace: str) -> None:
    """With one connection per address: a second address of the same outside
    /64 is refused (429), another home is not; two neighbours in the server's
    own /64 each get their own."""
    sources = [AWAY, AWAY_TOO, OTHER_HOME, NEAR, NEAR_TOO]
    result = subprocess.run(
        ["ip", "netns", "exec", namespace, *python("-c", SCRIPT, SERVER, *sources)],
        env=environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    statuses = json.loads(result.stdout)
    assert statuses == {AWAY: 101, AWAY_TOO: 429, OTHER_HOME: 101, NEAR: 101, NEAR_TOO: 101}


@pytest.mark.parametrize(
    ("host", "local", "prefix", "key"),
    [
        ("192.0.2.7", "192.0.2.1", 64, "192.0.2.7"),
        ("::ffff:192.0.2.7", "::ffff:192.0.2.1", 64, "192.0.2.7"),
        ("::1", "::1", 64, "::1"),
        ("fe80::1234%eth0", "fe80::1", 64, "fe80::1234"),
        ("2001:db8:7:1::a", "2001:db8:1::1", 64, "2001:db8:7:1::/64"),
        ("2001:db8:7:1:ffff::b", "2001:db8:1::1", 64, "2001:db8:7:1::/64"),
        ("2001:db8:7:1::a", "2001:db8:1::1", 56, "2001:db8:7::/56"),
        ("2001:db8:7:1::a", "2001:db8:1::1", 128, "2001:db8:7:1::a"),
        ("2001:db8:1::a", "2001:db8:1::1", 64, "2001:db8:1::a"),  # the server's own LAN
        ("2001:db8:7:1::a", None, 64, "2001:db8:7:1::/64"),
        ("?", None, 64, "?"),
    ],
)
def test_what_an_address_counts_as(host: str, local: str | None, prefix: int, key: str) -> None:
    """IPv4, loopback and link-local one by one; other IPv6 by network, but a
    neighbour in the server's own network one by one."""
    assert address_key(host, local, prefix) == key
