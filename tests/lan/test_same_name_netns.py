"""Issue 29 for real: servers that call themselves alike, on a private LAN.

Three network namespaces on one bridge of their own (:func:`tests.lan.netns.private_hub`):
two announce "Friday table", the third browses with the real client. They
share this machine's host name, as two machines called ``kitchen`` would, so
their SRV records name the same host: a resolver reading the shared mDNS
cache would pair one's address with the other's fingerprint. Nothing is sent
on the machine's own network; the namespaces are deleted afterwards.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.lan import Announcement, fingerprint

from .netns import ROOT, Host, LoggedServer, NoNamespaces, environment, private_hub, python

PORT = "8765"
FINGERPRINT = re.compile(r"TLS certificate fingerprint (SHA256:[0-9A-F:]{95})")
ANNOUNCED = re.compile(r"announced on the LAN as '([^']*)'")
IMPOSTOR_FP = fingerprint(b"an impostor's certificate")


@pytest.fixture
def hosts() -> Iterator[list[Host]]:
    """Three namespaces on a private bridge (two servers, one client), or a skip."""
    try:
        with private_hub(3) as made:
            yield made
    except NoNamespaces as exc:
        pytest.skip(f"cannot make network namespaces here: {exc}")


@pytest.fixture
def folder() -> Iterator[Path]:
    """A fresh folder for the servers' data and logs."""
    with tempfile.TemporaryDirectory(prefix="tulips-samename-") as made:
        yield Path(made)


class Server(LoggedServer):
    """``python -m server --tls --name NAME`` in one namespace, its log kept."""

    def __init__(self, host: Host, folder: Path, name: str) -> None:
        data = folder / host.address
        data.mkdir()
        self.host = host
        argv = python(
            "-m", "server", "--host", host.address, "--port", PORT, "--tls",
            "--name", name, "--no-storage", "--data-dir", str(data),
        )  # fmt: skip
        super().__init__(host.command(argv), data / "server.log")


def impostor(host: Host, name: str) -> subprocess.Popen[str]:
    """A device that answers for instance ``name`` without probing first (so it
    never renames), naming its own address and a fingerprint of its own."""
    txt = Announcement(versions=(1,), tls=True, fingerprint=IMPOSTOR_FP).to_txt()
    code = f"""
import asyncio, socket
from zeroconf import ServiceInfo
from zeroconf.asyncio import AsyncZeroconf

async def main():
    zc = AsyncZeroconf(interfaces=[{host.address!r}])
    info = ServiceInfo("_tulips._tcp.local.", {name!r} + "._tulips._tcp.local.",
                       port={PORT}, properties={txt!r},
                       server=socket.gethostname().split(".")[0] + ".local.",
                       parsed_addresses=[{host.address!r}])
    await (await zc.async_register_service(info, cooperating_responders=True))
    print("registered", flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""
    return subprocess.Popen(
        host.command(python("-c", code)),
        env=environment(),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


#: Browse three times with the SDK, two servers expected; print each round's list.
BROWSE_ROUNDS = """
import asyncio, json
from client.discovery import browse

async def main():
    for _ in range(3):
        found = await browse(8, count=2)
        print(json.dumps([s.to_json() for s in found]), flush=True)

asyncio.run(main())
"""


def browse_rounds(host: Host) -> list[list[dict[str, object]]]:
    """What three browses in a row found, in the client namespace."""
    done = subprocess.run(
        host.command(python("-c", BROWSE_ROUNDS)),
        env=environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_second_server_called_alike_warns_and_each_entry_keeps_its_own_certificate(
    hosts: list[Host], folder: Path
) -> None:
    """Issue 29: "If the impostor announces first, the real server renames itself
    'Friday table-2', logged only at INFO, and the list combines the real address
    with the impostor's fingerprint." Now it says so at WARNING, with the name it
    took, and ``tulips servers`` lists each server with its own address and the
    fingerprint that server printed — nothing mixed."""
    first_host, second_host, client = hosts
    first = Server(first_host, folder, "Friday table")
    second: Server | None = None
    try:
        assert first.wait_for(ANNOUNCED).group(1) == "Friday table"
        second = Server(second_host, folder, "Friday table")
        assert second.wait_for(ANNOUNCED).group(1) == "Friday table-2"
        warning = re.search(r"WARNING server\.discovery: (.*)", second.log.read_text())
        assert warning is not None, second.log.read_text()
        assert "'Friday table'" in warning.group(1) and "'Friday table-2'" in warning.group(1)
        assert "WARNING" not in first.log.read_text()
        printed = {
            first_host.address: first.wait_for(FINGERPRINT).group(1),
            second_host.address: second.wait_for(FINGERPRINT).group(1),
        }
        listing = python(
            "-m", "client.tui.cli", "servers", "--json", "--count", "2", "--timeout", "10"
        )
        result = subprocess.run(
            client.command(listing),
            env=environment(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        found = {s["name"]: s for s in json.loads(result.stdout)}
        assert set(found) == {"Friday table", "Friday table-2"}, found
        for name, host in (("Friday table", first_host), ("Friday table-2", second_host)):
            entry = found[name]
            assert entry["addresses"] == [host.address], entry
            assert entry["url"] == f"wss://{host.address}:{PORT}"
            assert entry["fingerprint"] == printed[host.address], entry
    finally:
        first.stop()
        if second is not None:
            second.stop()


def test_an_impostor_answering_for_the_very_same_name_is_an_entry_of_its_own(
    hosts: list[Host], folder: Path
) -> None:
    """Issue 29: "a second announcement of 'Friday table' from another machine took
    2 of 5 picks". A device that answers for the same instance name without probing
    is listed beside the real server — two "Friday table" entries, each with its own
    address and its own fingerprint — in every browse, never one replacing the other
    nor one's address with the other's fingerprint."""
    real_host, impostor_host, client = hosts
    real = Server(real_host, folder, "Friday table")
    fake: subprocess.Popen[str] | None = None
    try:
        assert real.wait_for(ANNOUNCED).group(1) == "Friday table"
        real_fp = real.wait_for(FINGERPRINT).group(1)
        fake = impostor(impostor_host, "Friday table")
        assert fake.stdout is not None and fake.stdout.readline() == "registered\n", (
            fake.stderr.read() if fake.stderr else ""
        )
        expected = {
            (real_host.address, real_fp),
            (impostor_host.address, IMPOSTOR_FP),
        }
        rounds = browse_rounds(client)
        assert len(rounds) == 3
        for found in rounds:
            assert [s["name"] for s in found] == ["Friday table", "Friday table"], found
            seen = set()
            for entry in found:
                addresses = entry["addresses"]
                assert isinstance(addresses, list) and len(addresses) == 1, entry
                seen.add((addresses[0], entry["fingerprint"]))
                assert entry["url"] == f"wss://{addresses[0]}:{PORT}"
            assert seen == expected, found
    finally:
        if fake is not None:
            fake.kill()
            fake.wait(5)
        real.stop()
