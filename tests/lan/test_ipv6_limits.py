"""Issue 29, "IPv6 addresses are free": a LAN attacker who takes a new IPv6
address for every connection gets no new budget. Every IPv6 address counts
as its /64, the server's own /64 too, and all link-local addresses of one
interface as one (PROTOCOL.md, "What an address is") — for real, on
addresses that exist only in a network namespace the test makes (nothing
reaches the machine's own network). The server and its clients run in one
process inside it (:mod:`tests.lan.ipv6_attacks`)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from . import ipv6_attacks as attacks
from .netns import ROOT, NoNamespaces, environment, private_namespace, python

SERVER = "2001:db8:1::1"
#: addresses of the server's own /64 a neighbour could take (SLAAC, privacy addresses)
OWN_LAN = [f"2001:db8:1::{n:x}" for n in range(0x100, 0x10C)]
#: five addresses of one outside home, then one of another home
HOMES = [*(f"2001:db8:2::{n:x}" for n in range(0xA, 0xF)), "2001:db8:3::a"]
#: link-local addresses on one interface: the server's first, then an attacker's 30,
#: half of them outside fe80::/64 (every fe80::/10 address is link-local)
LINK_LOCAL = ["fe80::1", *(f"fe80:{n % 2}::{n:x}" for n in range(0x100, 0x11E))]
INTERFACE = "tlp-ll"


def _ip(namespace: str, *args: str, batch: str | None = None) -> None:
    """``ip -n namespace args`` (commands on stdin with ``batch``)."""
    result = subprocess.run(
        ["ip", "-n", namespace, *args], input=batch, capture_output=True, text=True, timeout=20
    )
    if result.returncode != 0:
        raise NoNamespaces(f"ip {' '.join(args)}: {result.stderr.strip() or result.returncode}")


@pytest.fixture(scope="module")
def namespace() -> Iterator[str]:
    """A namespace holding the server's address and every client's: global
    ones on its loopback, link-local ones on a veth pair made inside it."""
    addresses = [f"{SERVER}/64", *(f"{a}/128" for a in OWN_LAN + HOMES)]
    try:
        with private_namespace(addresses) as made:
            _ip(made, "link", "add", INTERFACE, "type", "veth", "peer", "name", f"{INTERFACE}-b")
            _ip(made, "link", "set", INTERFACE, "up")
            _ip(made, "link", "set", f"{INTERFACE}-b", "up")
            batch = "".join(f"addr add {a}/64 dev {INTERFACE} nodad\n" for a in LINK_LOCAL)
            _ip(made, "-batch", "-", batch=batch)
            yield made
    except NoNamespaces as exc:
        pytest.skip(f"cannot make network namespaces here: {exc}")


@pytest.fixture(scope="module")
def attacked(namespace: str) -> dict[str, object]:
    """What each attack got (see :mod:`tests.lan.ipv6_attacks`): made once, for
    every test of this module."""
    spec = {
        "server": SERVER,
        "own_lan": OWN_LAN,
        "homes": HOMES,
        "link_local": LINK_LOCAL,
        "interface": INTERFACE,
    }
    result = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            namespace,
            *python("-m", "tests.lan.ipv6_attacks", json.dumps(spec)),
        ],
        env=environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    outcome: dict[str, object] = json.loads(result.stdout)
    return outcome


def test_addresses_of_the_servers_own_lan_share_one_connection_cap(
    attacked: dict[str, object],
) -> None:
    """Twelve addresses of the server's own /64 hold no more connections than
    one address may (4); thirty link-local addresses neither; five addresses
    of an outside home share its /64's cap, another home has its own."""
    cap = attacks.CONNECTIONS_PER_ADDRESS
    connections = attacked["connections"]
    assert isinstance(connections, dict)
    assert connections["own_lan"] == [101] * cap + [429] * (len(OWN_LAN) - cap)
    assert connections["link_local"] == [101] * cap + [429] * (len(LINK_LOCAL) - 1 - cap)
    assert connections["homes"] == [101] * cap + [429, 101]


def test_addresses_of_the_servers_own_lan_share_one_new_identity_budget(
    attacked: dict[str, object],
) -> None:
    """Twelve addresses of the server's own /64 make 5 identities, as one
    address may a minute; the others are refused ``rate_limited``."""
    allowed = attacks.NEW_PLAYERS_PER_MINUTE
    assert attacked["identities"] == ["welcome"] * allowed + ["rate_limited"] * (
        len(OWN_LAN) - allowed
    )


def test_a_join_code_hunt_from_many_link_local_addresses_is_locked_out(
    attacked: dict[str, object],
) -> None:
    """Thirty guesses of a 4-digit join code, each from a new link-local
    address: after 5 wrong ones every guess is ``locked_out``, the right code too."""
    tries = attacks.JOIN_CODE_TRIES
    guesses = len(LINK_LOCAL) - 1
    assert attacked["codes"] == ["bad_join_code"] * tries + ["locked_out"] * (guesses - tries)
