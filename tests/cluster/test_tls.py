"""Two real nodes serving ``wss://``, each with a self-signed certificate of
its own: a client that pinned node 1's certificate follows the redirect to
node 2's match, because node 1 names node 2's certificate in it
(``error.fingerprint``); a certificate other than the one vouched for is
still refused."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import protocol as wire
from client.loadgen.redisproc import RedisProcess
from client.sdk import RequestError, Session
from server.lan.tls import CERT_FILE, KEY_FILE, load

from .helpers import NodeProcess, eventually, fetch_health, needs_redis, wait_sync

pytestmark = needs_redis


class TlsNode(NodeProcess):
    """A node with ``--tls``: a certificate of its own, made in its data directory."""

    def __init__(self, redis_url: str, data_dir: Path) -> None:
        super().__init__(redis_url, data_dir, "--tls")

    @property
    def url(self) -> str:
        """Where clients reach it."""
        return f"wss://127.0.0.1:{self.port}"

    def health(self) -> dict[str, Any] | None:
        """Its ``/healthz`` over https."""
        return fetch_health(self.port, tls=True)

    @property
    def fingerprint(self) -> str:
        """The fingerprint of the certificate it made."""
        return load(self.data_dir / CERT_FILE, self.data_dir / KEY_FILE).fingerprint


@pytest.fixture
def tls_nodes(tmp_path: Path) -> Iterator[list[TlsNode]]:
    """Two TLS nodes of one cluster, seeing each other."""
    with RedisProcess() as redis:
        nodes = [TlsNode(redis.url, tmp_path / f"node{i + 1}") for i in range(2)]
        try:
            for node in nodes:
                node.start()
            for node in nodes:
                node.wait_up()
            wait_sync(
                lambda: all(
                    len((n.health() or {}).get("cluster", {}).get("nodes", {})) == 2 for n in nodes
                ),
                "both nodes see each other",
            )
            yield nodes
        finally:
            for node in nodes:
                node.stop()


async def _watch_through(session: Session, match: str) -> wire.Joined:
    async def watched() -> wire.Joined | None:
        try:
            return await session.watch(match)
        except Exception as exc:  # node 1 may not have heard of the match yet
            if "no match" in str(exc):
                return None
            raise

    return await eventually(watched, "the redirect is followed")


async def test_a_pinned_client_follows_a_redirect_to_a_node_with_its_own_certificate(
    tls_nodes: list[TlsNode],
) -> None:
    """Pinned to node 1 (its fingerprint given), the client watches node 2's
    match: it lands on node 2, which showed the certificate node 1 vouched for."""
    near, far = tls_nodes
    assert near.fingerprint != far.fingerprint
    host = Session(far.url, "Host", fingerprint=far.fingerprint)
    await host.open()
    viewer = Session(near.url, "Viewer", fingerprint=near.fingerprint)
    await viewer.open()
    try:
        match = (await host.create_match(name="across", seats=2)).match
        joined = await _watch_through(viewer, match)
        assert joined.match == match and joined.seat is None
        assert viewer.url == far.url and viewer.fingerprint == far.fingerprint
    finally:
        await asyncio.gather(host.close(), viewer.close())


async def test_without_the_vouching_a_pinned_client_does_not_follow(
    tls_nodes: list[TlsNode], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A redirect whose fingerprint is not node 2's (as a node posing as
    another would be) is not followed: the client stays on node 1, pinned."""
    near, far = tls_nodes
    host = Session(far.url, "Host", fingerprint=far.fingerprint)
    await host.open()
    viewer = Session(near.url, "Viewer", fingerprint=near.fingerprint, reconnect=False)
    await viewer.open()
    real = wire.decode_server_messages

    def forged(data: bytes) -> list[Any]:
        return [_forge(message, near.fingerprint) for message in real(data)]

    monkeypatch.setattr(wire, "decode_server_messages", forged)
    try:
        match = (await host.create_match(name="across", seats=2)).match
        with pytest.raises(RequestError) as refused:
            await _watch_through(viewer, match)
        assert refused.value.code == "elsewhere"
        assert viewer.url == near.url and viewer.fingerprint == near.fingerprint
    finally:
        await asyncio.gather(host.close(), viewer.close())


def _forge(message: Any, fingerprint: str) -> Any:
    """An ``elsewhere`` error vouching for ``fingerprint``; any other message as it is."""
    if isinstance(message, wire.Error) and message.code == "elsewhere":
        return wire.Error(**{**_fields(message), "fingerprint": fingerprint})
    return message


def _fields(message: wire.Error) -> dict[str, Any]:
    return {name: getattr(message, name) for name in message.__struct_fields__}
