"""What a server announces, and where: never from a loopback address; the TXT
record written and read by the one module that owns its keys; a malformed
announcement left out. No test here sends a packet: they read records built
in memory, and a loopback server's own sockets."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable
from pathlib import Path

import pytest
from zeroconf import ServiceInfo

import protocol as wire
from client.discovery import BadAnnouncement, ServerInfo
from client.localserver import free_port
from client.sdk import Session
from protocol.lan import SERVICE_TYPE, Announcement, fingerprint, parse_fingerprint
from server.lan.discovery import (
    Announcer,
    announce_addresses,
    instance_label,
    lobby_announcement,
)
from tests.server.helpers import serve

ROOT = Path(__file__).resolve().parents[2]
FP = fingerprint(b"a certificate")


def _info(txt: dict[str, str], *, port: int | None = 8765, name: str = "Kitchen") -> ServiceInfo:
    return ServiceInfo(
        SERVICE_TYPE,
        f"{name}.{SERVICE_TYPE}",
        port=port,
        properties=txt,
        server="kitchen.local.",
        parsed_addresses=["192.0.2.7"],
    )


def test_fingerprints_read_as_openssl_and_browsers_print_them() -> None:
    """SHA256: and 32 upper-case hex pairs; typed forms with other case or no colons agree."""
    assert re.fullmatch(r"SHA256:([0-9A-F]{2}:){31}[0-9A-F]{2}", FP)
    bare = FP.removeprefix("SHA256:").replace(":", "").lower()
    assert parse_fingerprint(bare) == FP
    assert parse_fingerprint("sha256 Fingerprint=" + FP.removeprefix("SHA256:")) == FP
    for bad in ("", "SHA256:", "SHA256:AB", FP + ":00", "MD5:" + bare, FP.replace("A", "G")):
        with pytest.raises(ValueError, match="not a SHA-256 fingerprint"):
            parse_fingerprint(bad)


def test_an_announcement_reads_back_what_was_written() -> None:
    """to_txt then from_txt is the identity, with and without TLS."""
    for announcement in (
        Announcement(versions=(1,), tls=True, fingerprint=FP, open_seats=3, open_matches=2,
                     matches=5, players=7),
        Announcement(versions=(1, 2)),
    ):  # fmt: skip
        txt = announcement.to_txt()
        assert all(len(f"{k}={v}".encode()) <= 255 for k, v in txt.items())
        raw = {k.encode(): v.encode() for k, v in txt.items()}
        assert Announcement.from_txt(raw) == announcement


@pytest.mark.parametrize(
    ("txt", "key"),
    [
        ({"v": "1", "tls": "0"}, "txtvers"),
        ({"txtvers": "2", "v": "1", "tls": "0"}, "txtvers"),
        ({"txtvers": "1", "tls": "0"}, "v"),
        ({"txtvers": "1", "v": "1,x", "tls": "0"}, "v"),
        ({"txtvers": "1", "v": "0", "tls": "0"}, "v"),
        ({"txtvers": "1", "v": "1", "tls": "yes"}, "tls"),
        ({"txtvers": "1", "v": "1", "tls": "0", "fp": FP}, "fp"),
        ({"txtvers": "1", "v": "1", "tls": "1", "fp": "SHA256:12"}, "fingerprint"),
        ({"txtvers": "1", "v": "1", "tls": "0", "players": "-1"}, "players"),
        ({"txtvers": "1", "v": "1", "tls": "0", "seats": "9" * 30}, "seats"),
        ({"txtvers": "1", "v": "1", "tls": "0", "open": "²"}, "open"),
    ],
)
def test_a_malformed_txt_record_is_refused_naming_the_key(txt: dict[str, str], key: str) -> None:
    """Every wrong key is named in the error (and ServerInfo turns it into BadAnnouncement)."""
    with pytest.raises(ValueError, match=key):
        Announcement.from_txt(txt)
    with pytest.raises(BadAnnouncement):
        ServerInfo.from_service(_info(txt))


def test_unknown_keys_are_skipped_and_keys_compare_without_case() -> None:
    """RFC 6763: receivers ignore keys they do not know; key case does not matter."""
    txt = {b"TXTVERS": b"1", b"V": b"1", b"tls": b"0", b"future": b"whatever", b"flag": None}
    assert Announcement.from_txt(txt) == Announcement(versions=(1,))


def test_server_info_from_a_resolved_service() -> None:
    """Name, address, port and TXT become a ServerInfo with a connectable URL."""
    txt = Announcement((1,), tls=True, fingerprint=FP, open_seats=2, open_matches=1, players=3)
    server = ServerInfo.from_service(_info(txt.to_txt()), seen_after=0.25)
    assert (server.name, server.url, server.fingerprint) == ("Kitchen", "wss://192.0.2.7:8765", FP)
    assert (server.players, server.open_matches, server.open_seats) == (3, 1, 2)
    assert server.compatible and server.seen_after == 0.25
    assert server.to_json()["url"] == "wss://192.0.2.7:8765"
    newer = ServerInfo.from_service(_info(Announcement((99,)).to_txt()))
    assert not newer.compatible and newer.url == "ws://192.0.2.7:8765"


def test_a_service_without_a_port_or_with_a_control_character_in_its_name_is_refused() -> None:
    """Another device's broken record never reaches a list a person reads."""
    good = Announcement((1,)).to_txt()
    with pytest.raises(BadAnnouncement, match="port"):
        ServerInfo.from_service(_info(good, port=0))
    with pytest.raises(BadAnnouncement, match="control"):
        ServerInfo.from_service(_info(good, name="Evil\x9b2J"))


def test_instance_names_fit_one_dns_label() -> None:
    """At most 63 bytes of UTF-8, no control characters, never empty."""
    assert instance_label("Friday table") == "Friday table"
    assert len(instance_label("Tulpen für alle " * 10).encode()) <= 63
    assert instance_label("\x00\x07").startswith("Gift of Tulips on ")


def test_loopback_and_unresolvable_hosts_announce_nowhere() -> None:
    """A server bound to loopback has no address to announce on."""
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost", "no-such-host.invalid"):
        assert announce_addresses(host) == [], host
    assert announce_addresses("192.0.2.7") == ["192.0.2.7"]  # a specific address: that one


async def test_the_lobby_counts_what_anyone_on_the_lan_could_join() -> None:
    """Open seats count only open matches without a join code; finished ones not at all."""
    async with (
        serve() as running,
        Session(running.url, "Ada") as ada,
        Session(running.url, "Bea") as bea,
    ):
        await ada.open()
        await bea.open()
        await ada.create_match(seats=4, bots=[(3, "easy")])
        await bea.create_match(seats=3, join_code="secret")
        rooms = running.lobby.infos()
        said = lobby_announcement(rooms, 2, fingerprint=None, tls=False)
    assert (said.open_matches, said.open_seats, said.matches, said.players) == (2, 2, 2, 2)
    assert said.versions == wire.SUPPORTED_VERSIONS and not said.tls


async def test_a_loopback_server_asked_to_announce_starts_no_announcer() -> None:
    """announce=True on 127.0.0.1: no Announcer, so no zeroconf."""
    async with serve(announce=True) as running:
        assert running.server.announcer is None


def _udp_inodes() -> set[str]:
    inodes = set()
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with open(table) as lines:
            next(lines)
            inodes |= {line.split()[9] for line in lines}
    return inodes


@pytest.mark.skipif(not os.path.exists("/proc/net/udp"), reason="needs Linux's /proc")
def test_tulips_server_on_127_0_0_1_opens_no_udp_socket() -> None:
    """The real command bound to 127.0.0.1 (as every test server and ``tulips play``'s
    is) announces by default, yet holds no UDP socket: it sends nothing to the LAN."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port),
         "--no-storage", "--log-level", "DEBUG"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)  # an announcer would have opened its sockets by now
        sockets = set()
        for fd in os.listdir(f"/proc/{process.pid}/fd"):
            target = os.readlink(f"/proc/{process.pid}/fd/{fd}")
            if target.startswith("socket:["):
                sockets.add(target[len("socket:[") : -1])
        assert sockets, "the server holds its listening socket"
        assert not sockets & _udp_inodes()
        maps = Path(f"/proc/{process.pid}/maps").read_text()
        assert "zeroconf" not in maps  # its compiled parts were never loaded
    finally:
        process.terminate()
        _, log = process.communicate(timeout=15)
    assert "announce" not in log.lower()


class _RenamingZeroconf:
    """Stands in for zeroconf when another device holds the name: probing renames."""

    async def async_register_service(
        self, info: ServiceInfo, allow_name_change: bool = False
    ) -> Awaitable[None]:
        assert allow_name_change
        info.name = f"{info.name.removesuffix('.' + SERVICE_TYPE)}-2.{SERVICE_TYPE}"
        return asyncio.sleep(0)


async def test_a_server_that_had_to_rename_itself_says_so_at_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 29: "a server that had to rename itself says so at WARNING, with the name
    it took" (before, only an INFO line named the new name)."""
    announcer = Announcer(
        name="Friday table",
        port=8765,
        addresses=["192.0.2.7"],
        status=lambda: Announcement((1,)),
    )
    announcer._zeroconf = _RenamingZeroconf()  # type: ignore[assignment]
    with caplog.at_level(logging.INFO, logger="server.discovery"):
        task = asyncio.get_running_loop().create_task(announcer._run())
        for _ in range(100):
            if announcer.registered_name is not None:
                break
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert announcer.registered_name == f"Friday table-2.{SERVICE_TYPE}"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "another server on the LAN is called 'Friday table'; this one is announced as "
        "'Friday table-2' (players see both names: start it with another --name to choose"
        " its own)"
    ]
