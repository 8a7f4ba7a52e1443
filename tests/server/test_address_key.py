"""What a client's address counts as for the per-address limits (issue 29,
"IPv6 addresses are free": link-local addresses and addresses of the
server's own /64 counted one by one, so a LAN attacker could take a fresh
budget with every address it made up).

The rule (PROTOCOL.md, "What an address is"): IPv4 and loopback one by one;
every other IPv6 address as its /ipv6_prefix network, the server's own
network included; all link-local addresses of one interface as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pytest

from server.peer import address_key, client_address


@pytest.mark.parametrize(
    ("host", "local", "prefix", "key"),
    [
        ("192.0.2.7", "192.0.2.1", 64, "192.0.2.7"),
        ("::ffff:192.0.2.7", "::ffff:192.0.2.1", 64, "192.0.2.7"),
        ("127.0.0.1", "127.0.0.1", 64, "127.0.0.1"),
        ("::1", "::1", 64, "::1"),
        ("2001:db8:7:1::a", "2001:db8:1::1", 64, "2001:db8:7:1::/64"),
        ("2001:db8:7:1:ffff::b", "2001:db8:1::1", 64, "2001:db8:7:1::/64"),
        ("2001:db8:7:1::a", "2001:db8:1::1", 56, "2001:db8:7::/56"),
        ("2001:db8:7:1::a", None, 64, "2001:db8:7:1::/64"),
        ("fd00:1:2:3::9", "fd00:1:2:3::1", 64, "fd00:1:2:3::/64"),  # unique local, own LAN
        # the server's own /64 is no exception: a neighbour may take any address in it
        ("2001:db8:1::a", "2001:db8:1::1", 64, "2001:db8:1::/64"),
        ("2001:db8:1::b", "2001:db8:1::1", 64, "2001:db8:1::/64"),
        # every link-local address of one interface is one
        ("fe80::1234%eth0", "fe80::1%eth0", 64, "fe80::/10%eth0"),
        ("fe80::ffff:1%eth0", "fe80::1%eth0", 64, "fe80::/10%eth0"),
        ("fe80:1::5%eth0", "fe80::1%eth0", 64, "fe80::/10%eth0"),  # fe80::/10, not /64
        ("fe80::1234%wlan0", "fe80::1%wlan0", 64, "fe80::/10%wlan0"),
        ("fe80::1234", "fe80::1%3", 64, "fe80::/10%3"),  # the interface the server was reached on
        ("fe80::1234", None, 64, "fe80::/10"),  # no interface known: every link-local is one
        # 128: every address alone, the operator's choice for a trusted LAN
        ("2001:db8:7:1::a", "2001:db8:1::1", 128, "2001:db8:7:1::a"),
        ("fe80::1234%eth0", "fe80::1%eth0", 128, "fe80::1234"),
        ("?", None, 64, "?"),
        ("not an address", None, 64, "not an address"),
    ],
)
def test_what_an_address_counts_as(host: str, local: str | None, prefix: int, key: str) -> None:
    """IPv4 and loopback one by one; any other IPv6 address by its network,
    the server's own too; link-local by interface."""
    assert address_key(host, local, prefix) == key


@dataclass
class Connection:
    """What :func:`client_address` reads of a connection: its socket addresses."""

    remote_address: Any
    local_address: Any


def test_the_interface_of_a_link_local_client_comes_from_its_socket_address() -> None:
    """Python gives an IPv6 socket address as (host, port, flow, scope id),
    without the interface in the host: the scope id names it."""

    def key(remote: Any, local: Any) -> str:
        return client_address(cast(Any, Connection(remote, local)), 64)

    assert key(("fe80::2", 4000, 0, 3), ("fe80::1", 8765, 0, 3)) == "fe80::/10%3"
    assert key(("fe80:1::5", 4001, 0, 3), ("fe80::1", 8765, 0, 3)) == "fe80::/10%3"
    assert key(("fe80::2", 4002, 0, 4), ("fe80::1", 8765, 0, 4)) == "fe80::/10%4"
    assert key(("2001:db8:1::a", 4003, 0, 0), ("2001:db8:1::1", 8765, 0, 0)) == "2001:db8:1::/64"
    assert key(("192.0.2.7", 4004), ("192.0.2.1", 8765)) == "192.0.2.7"
    assert key(None, None) == "?"
