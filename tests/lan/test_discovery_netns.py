"""Discovery for real, on a private LAN of two network namespaces made by the test.

A real ``python -m server`` announces in one namespace; the real client
(``tulips servers``, and a custom client on the SDK) browses in the other.
Nothing is sent on the machine's own network: the only link joins the two
namespaces, and both are deleted afterwards (:mod:`tests.lan.netns`).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .netns import ROOT, Lan, LoggedServer, NoNamespaces, environment, private_lan, python

PORT = "8765"
FINGERPRINT = re.compile(r"TLS certificate fingerprint (SHA256:[0-9A-F:]{95})")


@pytest.fixture
def lan() -> Iterator[Lan]:
    """A private two-namespace LAN, or a skip that says why none can be made."""
    try:
        with private_lan() as made:
            yield made
    except NoNamespaces as exc:
        pytest.skip(f"cannot make network namespaces here: {exc}")


class Server(LoggedServer):
    """``python -m server`` in the server namespace, with its log kept."""

    def __init__(self, lan: Lan, data_dir: Path, *flags: str) -> None:
        argv = python(
            "-m", "server", "--host", lan.server_address, "--port", PORT,
            "--no-storage", "--data-dir", str(data_dir), *flags,
        )  # fmt: skip
        super().__init__(lan.command(lan.server_ns, argv), data_dir / "server.log")


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A fresh data directory (the server's certificate and log)."""
    with tempfile.TemporaryDirectory(prefix="tulips-lan-") as folder:
        yield Path(folder)


def servers(lan: Lan, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """``tulips servers ARGS`` run in the client namespace."""
    return subprocess.run(
        lan.command(lan.client_ns, python("-m", "client.tui.cli", "servers", *args)),
        env=environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


#: Browse for 3 s with the SDK, logging at debug level what it leaves out.
LOGGED_BROWSE = """
import asyncio, logging
logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
from client.discovery import browse
print([s.name for s in asyncio.run(browse(3))])
"""


def announce_garbage(lan: Lan) -> subprocess.Popen[str]:
    """Another device's broken announcements of our service type, in the server's namespace."""
    code = f"""
import asyncio
from zeroconf import ServiceInfo
from zeroconf.asyncio import AsyncZeroconf

TYPE = "_tulips._tcp.local."
BAD = [
    {{"txtvers": "9", "v": "1", "tls": "0"}},
    {{"txtvers": "1", "v": "one", "tls": "0"}},
    {{"txtvers": "1", "v": "1", "tls": "maybe"}},
    {{"txtvers": "1", "v": "1", "tls": "1", "fp": "SHA256:nope"}},
]

async def main():
    zc = AsyncZeroconf(interfaces=["{lan.server_address}"])
    probing = []
    for i, txt in enumerate(BAD):
        info = ServiceInfo(TYPE, f"Broken {{i}}.{{TYPE}}", port=9000 + i, properties=txt,
                           server="broken.local.", parsed_addresses=["{lan.server_address}"])
        probing.append(await zc.async_register_service(info))
    await asyncio.gather(*probing)
    print("registered", flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""
    return subprocess.Popen(
        lan.command(lan.server_ns, python("-c", code)),
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_tulips_servers_lists_a_tls_server_with_its_fingerprint_and_skips_garbage(
    lan: Lan, data_dir: Path
) -> None:
    """``tulips servers --json`` in one namespace lists the server announcing in the
    other — name, wss:// address, counts, and the fingerprint it printed — and leaves
    out announcements it cannot read."""
    garbage = announce_garbage(lan)
    server = Server(lan, data_dir, "--tls", "--name", "Friday table")
    try:
        assert garbage.stdout is not None and garbage.stdout.readline() == "registered\n"
        printed = server.wait_for(FINGERPRINT).group(1)
        server.wait_for(re.compile("announced on the LAN"))
        watched = subprocess.Popen(  # the SDK beside it, logging what it leaves out
            lan.command(lan.client_ns, python("-c", LOGGED_BROWSE)),
            env=environment(),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        result = servers(lan, "--json", "--timeout", "3")
        _, log = watched.communicate(timeout=30)
        for i, key in enumerate(("txtvers", "v", "tls", "fingerprint")):
            assert re.search(rf"ignoring an announcement: 'Broken {i}\..*{key}", log), log
        assert result.returncode == 0, result.stderr
        found = json.loads(result.stdout)
        assert [s["name"] for s in found] == ["Friday table"], found
        (entry,) = found
        assert entry["url"] == f"wss://{lan.server_address}:{PORT}"
        assert entry["tls"] is True and entry["fingerprint"] == printed
        assert (entry["players"], entry["open_matches"], entry["open_seats"]) == (0, 0, 0)
        assert entry["versions"] == [1]
    finally:
        garbage.kill()
        garbage.wait(5)
        server.stop()


def test_browsing_is_limited_to_the_interfaces_given(lan: Lan, data_dir: Path) -> None:
    """``--interface`` browses on that interface only: on loopback the server is not
    seen; on the LAN link (by name) it is, and the first one ends ``--count 1`` early."""
    server = Server(lan, data_dir)
    try:
        server.wait_for(re.compile("announced on the LAN"))
        alone = servers(lan, "--json", "--timeout", "2", "--interface", "lo")
        assert alone.returncode == 1 and json.loads(alone.stdout) == [], alone.stderr
        linked = servers(lan, "--count", "1", "--timeout", "10", "--interface", lan.client_if)
        assert linked.returncode == 0, linked.stderr
        assert f"ws://{lan.server_address}:{PORT}" in linked.stdout
        unknown = servers(lan, "--interface", "nosuch0")
        assert unknown.returncode == 1 and "nosuch0" in unknown.stderr
    finally:
        server.stop()


def test_a_custom_client_connects_by_the_announced_fingerprint_and_follows_the_lobby(
    lan: Lan, data_dir: Path
) -> None:
    """The SDK finds the server, connects pinned to the announced fingerprint; the
    announcement follows the lobby (a match, a player) and is withdrawn on stop."""
    server = Server(lan, data_dir, "--tls")
    client = subprocess.Popen(
        lan.command(lan.client_ns, python(str(Path(__file__).with_name("lan_client.py")))),
        env=environment(),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert client.stdout is not None
        found = json.loads(client.stdout.readline() or "{}")
        assert found.get("step") == "found", client.stderr.read() if client.stderr else ""
        assert found["fingerprint"] == server.wait_for(FINGERPRINT).group(1)
        updated = json.loads(client.stdout.readline() or "{}")
        assert updated.get("step") == "updated", client.stderr.read() if client.stderr else ""
        assert (updated["open_matches"], updated["open_seats"], updated["players"]) == (1, 1, 1)
        assert updated["matches"] == 1
        server.stop()
        assert json.loads(client.stdout.readline() or "{}") == {"step": "gone"}
        assert client.wait(20) == 0
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(5)
        server.stop()
