"""``--workers N``: one command, N nodes sharing one port, each with its own
port, data directory and node id; SIGTERM stops them all."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import protocol as wire
from client.loadgen.redisproc import RedisProcess
from client.localserver import free_port_run
from client.sdk import Session
from client.trust import fingerprint
from server.lan.tls import CERT_FILE, KEY_FILE, load

from .helpers import HEARTBEAT, ROOT, eventually, fetch_health, needs_redis, wait_sync

pytestmark = needs_redis


async def test_workers_share_one_port_and_see_each_other(tmp_path: Path) -> None:
    """Two workers: the shared port answers, each worker's own port names it in the
    cluster, each keeps its data in DATA_DIR/node-I; SIGTERM stops every process."""
    with RedisProcess() as redis:
        port = free_port_run(2)
        command = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port)]
        command += ["--data-dir", str(tmp_path), "--cluster", redis.url, "--workers", "2"]
        command += ["--heartbeat", str(HEARTBEAT), "--log-level", "WARNING"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        parent = subprocess.Popen(command, cwd=ROOT, env=env)
        try:
            own = [port + 1, port + 2]
            wait_sync(
                lambda: all(
                    len((fetch_health(p) or {}).get("cluster", {}).get("nodes", {})) == 2
                    for p in own
                ),
                "both workers up and in the cluster",
            )
            urls = {fetch_health(p)["cluster"]["url"] for p in own}  # type: ignore[index]
            assert urls == {f"ws://127.0.0.1:{p}" for p in own}
            assert (tmp_path / "node-0").is_dir() and (tmp_path / "node-1").is_dir()
            session = Session(f"ws://127.0.0.1:{port}", "Shared")
            await session.open()
            joined = await session.create_match(name="on a worker", seats=2, bots=[(1, "easy")])
            assert isinstance(joined, wire.Joined)
            await session.close()
        finally:
            parent.send_signal(signal.SIGTERM)
            assert parent.wait(30) == 0
        wait_sync(lambda: all(fetch_health(p) is None for p in own), "workers stopped", 10)


def _served_fingerprint(port: int) -> str | None:
    """The fingerprint of the certificate served on ``port``, or None if nothing
    speaks TLS there yet."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=2) as raw,
            context.wrap_socket(raw) as wrapped,
        ):
            der = wrapped.getpeercert(binary_form=True)
    except OSError:
        return None
    return fingerprint(der) if der else None


def test_workers_with_tls_serve_one_certificate(tmp_path: Path) -> None:
    """--tls --workers 2 on a fresh data directory: one certificate is made, and
    both workers serve it — on their own ports and on the shared one — so a
    client's pin fits whichever worker it reaches."""
    with RedisProcess() as redis:
        port = free_port_run(2)
        command = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port)]
        command += ["--data-dir", str(tmp_path), "--cluster", redis.url, "--workers", "2"]
        command += ["--heartbeat", str(HEARTBEAT), "--log-level", "WARNING", "--tls"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        parent = subprocess.Popen(command, cwd=ROOT, env=env)
        try:
            own = [port + 1, port + 2]
            wait_sync(
                lambda: all(_served_fingerprint(p) is not None for p in own), "both workers up"
            )
            made = load(tmp_path / CERT_FILE, tmp_path / KEY_FILE).fingerprint
            served = {_served_fingerprint(p) for p in [*own, *[port] * 8]}
            assert served == {made}
        finally:
            parent.send_signal(signal.SIGTERM)
            assert parent.wait(30) == 0


async def test_workers_with_tls_join_each_other_over_wss(tmp_path: Path) -> None:
    """Issue 29: with `--workers 2 --tls` and no `--public-url`, workers registered
    ws:// URLs and cross-worker joins failed ("use wss://"). Now each registers
    wss://, and a pinned player on one worker joins the other's match through
    the redirect, over wss, with the one certificate the workers share."""
    with RedisProcess() as redis:
        port = free_port_run(2)
        command = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port)]
        command += ["--data-dir", str(tmp_path), "--cluster", redis.url, "--workers", "2"]
        command += ["--heartbeat", str(HEARTBEAT), "--log-level", "WARNING", "--tls"]
        command += ["--bot-delay", "0"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        parent = subprocess.Popen(command, cwd=ROOT, env=env)
        own = [port + 1, port + 2]
        urls = [f"wss://127.0.0.1:{p}" for p in own]
        try:
            wait_sync(
                lambda: all(
                    len((fetch_health(p, tls=True) or {}).get("cluster", {}).get("nodes", {})) == 2
                    for p in own
                ),
                "both workers up and in the cluster",
            )
            health = fetch_health(own[0], tls=True)
            assert health is not None
            assert sorted(health["cluster"]["nodes"].values()) == urls
            pin = load(tmp_path / CERT_FILE, tmp_path / KEY_FILE).fingerprint
            host = Session(urls[0], "Host", fingerprint=pin)
            guest = Session(urls[1], "Guest", fingerprint=pin)
            await host.open()
            await guest.open()
            try:
                match = (await host.create_match(name="across workers", seats=2)).match

                async def joined() -> wire.Joined | None:
                    try:
                        return await guest.join(match)
                    except Exception as exc:  # worker 1 may not have heard of it yet
                        if "no match" in str(exc):
                            return None
                        raise

                seat = await eventually(joined, "the guest joins through the redirect")
                assert seat.match == match and seat.seat is not None
                assert guest.url == urls[0] and guest.fingerprint == pin
            finally:
                await host.close()
                await guest.close()
        finally:
            parent.send_signal(signal.SIGTERM)
            assert parent.wait(30) == 0
