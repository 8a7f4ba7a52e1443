"""A private LAN for discovery tests: two network namespaces joined by a veth pair.

mDNS is multicast: run on the machine's own network it would reach every
device on the LAN. These tests never do that. :func:`private_lan` makes two
namespaces of its own (unique names per run), links them with a veth pair
created inside them (it never exists in the machine's namespace), gives each
end a 10.x address that exists only there, turns multicast on, and deletes
both namespaces — and with them the link — on exit, whatever happened.
:func:`private_hub` does the same for several namespaces on one bridge (two
servers and a client, say), the bridge in a namespace of its own.

Creating namespaces needs root (or CAP_SYS_ADMIN); where that fails,
:class:`NoNamespaces` carries the error so a test can say why it skips.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The subnet of the private link (exists only inside the two namespaces).
SUBNET = "10.213.7"


class NoNamespaces(Exception):
    """This machine cannot make network namespaces here (the message says why)."""


@dataclass(frozen=True)
class Lan:
    """Two namespaces on one private link: the server's and the client's."""

    server_ns: str
    client_ns: str
    server_address: str
    client_address: str
    server_if: str
    client_if: str

    def command(self, ns: str, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside namespace ``ns``."""
        return ["ip", "netns", "exec", ns, *argv]


def python(*args: str) -> list[str]:
    """This interpreter, running this checkout's code."""
    return [sys.executable, *args]


def environment(**extra: str) -> dict[str, str]:
    """The environment for processes run in a namespace: this checkout first on
    the path, no proxy (nothing may leave the private link), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def _ip(*args: str) -> None:
    try:
        result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    except FileNotFoundError:
        raise NoNamespaces("the ip command (iproute2) is not installed") from None
    if result.returncode != 0:
        raise NoNamespaces(f"ip {' '.join(args)}: {result.stderr.strip() or result.returncode}")


@contextlib.contextmanager
def private_lan() -> Iterator[Lan]:
    """Two fresh namespaces on a private veth link; removed on exit."""
    tag = f"{os.getpid() % 100000}{secrets.token_hex(2)}"
    lan = Lan(
        server_ns=f"tulips-{tag}-srv",
        client_ns=f"tulips-{tag}-cli",
        server_address=f"{SUBNET}.1",
        client_address=f"{SUBNET}.2",
        server_if="tlp-srv",
        client_if="tlp-cli",
    )
    made: list[str] = []
    try:
        for ns in (lan.server_ns, lan.client_ns):
            _ip("netns", "add", ns)
            made.append(ns)
        # Both ends are made inside the namespaces: the link never exists outside them.
        _ip(
            "-n", lan.server_ns, "link", "add", lan.server_if, "type", "veth",
            "peer", "name", lan.client_if, "netns", lan.client_ns,
        )  # fmt: skip
        for ns, interface, address in (
            (lan.server_ns, lan.server_if, lan.server_address),
            (lan.client_ns, lan.client_if, lan.client_address),
        ):
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", interface)
            _ip("-n", ns, "link", "set", interface, "multicast", "on", "up")
            _ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", interface)
        yield lan
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)


@contextlib.contextmanager
def private_namespace(addresses: Sequence[str]) -> Iterator[str]:
    """A fresh namespace whose only interface is its own loopback, holding
    ``addresses`` (``2001:db8:1::1/64`` …, usable at once); removed on exit.
    Yields its name, for ``ip netns exec``."""
    ns = f"tulips-{os.getpid() % 100000}{secrets.token_hex(2)}-one"
    _ip("netns", "add", ns)
    try:
        _ip("-n", ns, "link", "set", "lo", "up")
        for address in addresses:
            _ip("-n", ns, "addr", "add", address, "dev", "lo", "nodad")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)


#: The subnet of a private hub (:func:`private_hub`; exists only inside its namespaces).
HUB_SUBNET = "10.213.8"


@dataclass(frozen=True)
class Host:
    """One namespace on a private hub: its name, its interface and its address."""

    ns: str
    interface: str
    address: str

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside this host's namespace."""
        return ["ip", "netns", "exec", self.ns, *argv]


@contextlib.contextmanager
def private_hub(count: int) -> Iterator[list[Host]]:
    """``count`` fresh namespaces on one private Ethernet segment: a bridge in a
    namespace of its own, a veth pair from it to each host (made inside the
    namespaces: no link ever exists in the machine's namespace), multicast on.
    Host ``i`` has address ``10.213.8.(i+1)``. Everything is removed on exit."""
    tag = f"{os.getpid() % 100000}{secrets.token_hex(2)}"
    hub = f"tulips-{tag}-hub"
    hosts = [Host(f"tulips-{tag}-h{i}", "tlp-lan", f"{HUB_SUBNET}.{i + 1}") for i in range(count)]
    made: list[str] = []
    try:
        for ns in (hub, *(host.ns for host in hosts)):
            _ip("netns", "add", ns)
            made.append(ns)
        _ip("-n", hub, "link", "add", "br0", "type", "bridge")
        _ip("-n", hub, "link", "set", "br0", "type", "bridge", "mcast_snooping", "0")
        _ip("-n", hub, "link", "set", "br0", "up")
        for i, host in enumerate(hosts):
            port = f"port{i}"
            _ip(
                "-n", hub, "link", "add", port, "type", "veth",
                "peer", "name", host.interface, "netns", host.ns,
            )  # fmt: skip
            _ip("-n", hub, "link", "set", port, "master", "br0", "up")
            _ip("-n", host.ns, "link", "set", "lo", "up")
            _ip("-n", host.ns, "addr", "add", f"{host.address}/24", "dev", host.interface)
            _ip("-n", host.ns, "link", "set", host.interface, "multicast", "on", "up")
            _ip("-n", host.ns, "route", "add", "224.0.0.0/4", "dev", host.interface)
        yield hosts
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)


class LoggedServer:
    """``python -m server ARGV`` run by ``command`` (a namespace's), its log kept
    in ``log``; :meth:`wait_for` reads the log, :meth:`stop` ends it."""

    def __init__(self, command: Sequence[str], log: Path) -> None:
        self.log = log
        self._log_file = log.open("w")
        self.process = subprocess.Popen(
            list(command),
            env=environment(),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log_file,
        )

    def wait_for(self, pattern: re.Pattern[str], timeout: float = 20.0) -> re.Match[str]:
        """The first log line matching ``pattern`` (fails after ``timeout`` s or an exit)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = pattern.search(self.log.read_text())
            if found:
                return found
            assert self.process.poll() is None, self.log.read_text()
            time.sleep(0.05)
        raise AssertionError(f"no {pattern.pattern!r} in the server log:\n{self.log.read_text()}")

    def stop(self) -> None:
        """SIGTERM, and wait for it to end."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._log_file.close()
