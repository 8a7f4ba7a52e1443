"""Encrypted connections without a certificate authority, over real TLS on 127.0.0.1:
the self-signed certificate made once and kept, clear errors for bad files,
pinned and trusted-on-first-use connections, a changed certificate refused,
and TLS on one side only named as such instead of a hang."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

import protocol as wire
from client.localserver import free_port
from client.sdk import CertificateRefused, ConnectError, Session
from client.trust import KnownServers
from protocol.lan import fingerprint
from server.app import TulipsServer
from server.config import ServerConfig
from server.lan import tls
from tests.server.helpers import serve

ROOT = Path(__file__).resolve().parents[2]
#: The fingerprint of some other certificate.
FP_OTHER = fingerprint(b"another certificate")


@contextlib.asynccontextmanager
async def tls_server(folder: Path, port: int = 0) -> AsyncIterator[tuple[TulipsServer, str]]:
    """A server on 127.0.0.1 with the self-signed certificate kept in ``folder``."""
    config = ServerConfig(
        host="127.0.0.1",
        port=port,
        bot_delay=0.0,
        tls_cert=folder / tls.CERT_FILE,
        tls_key=folder / tls.KEY_FILE,
        tls_self_signed=True,
    )
    server = TulipsServer(config)
    await server.start()
    try:
        yield server, f"wss://127.0.0.1:{server.port}"
    finally:
        async with asyncio.timeout(10):
            await server.stop()


def _fingerprint(server: TulipsServer) -> str:
    assert server.tls is not None
    return server.tls.fingerprint


def test_the_self_signed_certificate_is_made_once_and_kept(tmp_path: Path) -> None:
    """First run makes it (key mode 0600); later runs load the same one."""
    cert, key = tmp_path / "data" / tls.CERT_FILE, tmp_path / "data" / tls.KEY_FILE
    first = tls.self_signed(cert, key)
    assert first.created and cert.exists() and key.exists()
    assert key.stat().st_mode & 0o777 == 0o600
    again = tls.self_signed(cert, key)
    assert not again.created and again.fingerprint == first.fingerprint
    assert tls.load(cert, key).fingerprint == first.fingerprint


def test_unusable_certificate_and_key_files_say_which_and_why(tmp_path: Path) -> None:
    """Missing, a directory, not PEM, encrypted, or a key of another certificate."""
    made = tls.self_signed(tmp_path / "c.pem", tmp_path / "k.pem")
    other = tls.self_signed(tmp_path / "c2.pem", tmp_path / "k2.pem")
    junk = tmp_path / "junk.pem"
    junk.write_text("hello\n")
    locked = tmp_path / "locked.pem"
    locked.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"pw"),
        )
    )
    cases = [
        (tmp_path / "none.pem", made.key, r"none\.pem: no such file"),
        (made.cert, tmp_path / "none.pem", r"TLS key .*none\.pem: no such file"),
        (tmp_path, made.key, "is a directory"),
        (junk, made.key, r"junk\.pem: not a PEM certificate"),
        (made.cert, junk, r"junk\.pem: not a PEM private key"),
        (made.cert, locked, "it is encrypted"),
        (made.cert, other.key, r"k2\.pem does not belong to the certificate .*c\.pem"),
    ]
    for cert, key, message in cases:
        with pytest.raises(tls.TlsError, match=message):
            tls.load(cert, key)


def _run_server(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", "--host", "127.0.0.1", "--no-storage", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_tulips_server_reports_a_bad_key_and_a_port_in_use_in_one_line(tmp_path: Path) -> None:
    """Exit status 1 and the reason, never a traceback; the flags go in pairs."""
    made = tls.self_signed(tmp_path / "c.pem", tmp_path / "k.pem")
    other = tls.self_signed(tmp_path / "c2.pem", tmp_path / "k2.pem")
    mismatched = _run_server(
        "--port", "0", "--tls-cert", str(made.cert), "--tls-key", str(other.key)
    )
    assert mismatched.returncode == 1
    assert "does not belong to the certificate" in mismatched.stderr
    assert "Traceback" not in mismatched.stderr
    alone = _run_server("--tls-cert", str(made.cert))
    assert alone.returncode == 2 and "--tls-cert and --tls-key go together" in alone.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = _run_server("--port", port, "--tls", "--data-dir", str(tmp_path / "d"))
    assert busy.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr
    assert "Traceback" not in busy.stderr


async def _play_to_the_end(session: Session) -> wire.MatchEnded:
    await session.create_match(seats=2, bots=[(1, "easy")])
    await session.start()
    async with asyncio.timeout(60):
        async for message in session:
            if isinstance(message, wire.Prompt):
                await session.answer(message, message.actions[0])
            elif isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                return message.event
    raise AssertionError("the session closed before the end")


async def test_a_pinned_connection_plays_a_whole_match(tmp_path: Path) -> None:
    """Pinned to the server's fingerprint, the SDK plays a match over wss://;
    /healthz answers over https too."""
    async with tls_server(tmp_path) as (server, url):
        pin = _fingerprint(server)
        async with Session(url, "Ada", fingerprint=pin[7:].lower().replace(":", "")) as ada:
            await ada.open()
            ended = await _play_to_the_end(ada)
            assert ended.scoring.winners
            assert ada.fingerprint == pin
        health = url.replace("wss", "https") + "/healthz"
        body = await asyncio.to_thread(_https_get, health, pin)
        assert b'"status": "ok"' in body


def _https_get(url: str, pin: str) -> bytes:
    """GET over https after checking the certificate by its fingerprint."""
    import urllib.request

    from client.trust import pinning_context

    parts = urlsplit(url)
    with (
        socket.create_connection((parts.hostname or "", parts.port or 443), timeout=5) as raw,
        pinning_context().wrap_socket(raw) as tls_socket,
    ):
        der = tls_socket.getpeercert(binary_form=True)
        assert der is not None and fingerprint(der) == pin
    with urllib.request.urlopen(url, timeout=5, context=pinning_context()) as response:
        return bytes(response.read())


async def test_another_pinned_fingerprint_is_refused_before_hello(tmp_path: Path) -> None:
    """A pin that does not match: CertificateRefused, and the server saw no hello."""
    async with tls_server(tmp_path) as (server, url):
        wrong = FP_OTHER
        with pytest.raises(CertificateRefused) as refused:
            await Session(url, "Ada", fingerprint=wrong, reconnect=False).open()
        assert refused.value.code == "fingerprint_mismatch"
        assert wrong in str(refused.value) and _fingerprint(server) in str(refused.value)
        await asyncio.sleep(0.1)
        assert len(server.lobby.players) == 0


async def test_trust_on_first_use_is_remembered_and_a_changed_certificate_refused(
    tmp_path: Path,
) -> None:
    """Asked once, remembered in known_servers across sessions; after the server makes
    a new certificate the client refuses, naming the file, the line and tulips forget."""
    known = KnownServers(tmp_path / "config" / "known_servers")
    asked: list[tuple[str, str]] = []

    async def yes(server: str, fingerprint: str) -> bool:
        asked.append((server, fingerprint))
        return True

    def never(server: str, fingerprint: str) -> bool:
        raise AssertionError("asked again about a remembered server")

    port = free_port()
    data = tmp_path / "data"
    async with tls_server(data, port) as (server, url):
        first = _fingerprint(server)
        async with Session(url, "Ada", trust=yes, known_servers=known) as ada:
            await ada.open()
        assert asked == [(f"127.0.0.1:{port}", first)]
        assert known.get(f"127.0.0.1:{port}") == first
        async with Session(
            url, "Ada", trust=never, known_servers=KnownServers(known.path)
        ) as again:
            await again.open()
    for stale in (data / tls.CERT_FILE, data / tls.KEY_FILE):
        stale.unlink()  # the operator starts afresh: a new certificate
    async with tls_server(data, port) as (server, url):
        second = _fingerprint(server)
        assert second != first
        with pytest.raises(CertificateRefused) as refused:
            await Session(url, "Ada", trust=never, known_servers=known, reconnect=False).open()
    text = str(refused.value)
    assert refused.value.code == "certificate_changed"
    assert "CHANGED" in text and first in text and second in text
    assert f"delete line 2 of {known.path}" in text and f"tulips forget 127.0.0.1:{port}" in text
    assert known.get(f"127.0.0.1:{port}") == first  # nothing was overwritten


async def test_a_plain_ws_client_to_a_tls_server_is_told_to_use_wss(tmp_path: Path) -> None:
    """No hang: the error says the server speaks TLS."""
    async with tls_server(tmp_path) as (_, url):
        plain = url.replace("wss://", "ws://")
        with pytest.raises(ConnectError, match=f"this server speaks TLS: use {url}"):
            async with asyncio.timeout(20):
                await Session(plain, "Ada", reconnect=False).open()


async def test_a_plain_http_request_on_the_tls_port_is_closed_at_once(tmp_path: Path) -> None:
    """The TLS port answers a plain HTTP request by closing (not by waiting for a
    handshake that never comes)."""
    async with tls_server(tmp_path) as (server, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        async with asyncio.timeout(20):  # a hang would wait for the 60 s handshake timeout
            assert await reader.read() == b""
        writer.close()


async def test_a_wss_client_to_a_plain_server_is_told_to_use_ws() -> None:
    """The mirror case: the error says the server does not speak TLS."""
    async with serve() as running:
        url = running.url.replace("ws://", "wss://")
        with pytest.raises(ConnectError, match=f"does not speak TLS: use {running.url}"):
            await Session(url, "Ada", reconnect=False, fingerprint="ab" * 32).open()


async def test_wss_without_a_pin_needs_a_certificate_authority(tmp_path: Path) -> None:
    """With no fingerprint, trust callback or known_servers, the SDK verifies as browsers do,
    and says what to do about a self-signed certificate."""
    async with tls_server(tmp_path) as (_, url):
        with pytest.raises(ConnectError, match="pin it with its fingerprint"):
            await Session(url, "Ada", reconnect=False).open()


async def test_the_tls_example_client_pins_and_plays(tmp_path: Path) -> None:
    """examples/tls_client.py (websockets and msgpack only) plays a match with the
    right fingerprint and refuses, before hello, with another."""
    async with tls_server(tmp_path) as (server, url):
        for pin, code, said in ((_fingerprint(server), 0, "winners:"), (FP_OTHER, 1, "refusing")):
            process = await asyncio.create_subprocess_exec(
                sys.executable, "examples/tls_client.py", url, pin, "Tess",
                cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            async with asyncio.timeout(60):
                out, err = await process.communicate()
            assert process.returncode == code, err.decode()
            assert said in (out + err).decode()
        assert len(server.lobby.players) == 1  # the refused run never said hello
