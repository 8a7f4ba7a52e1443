"""Issue 29, "redirects downgrade", made for real: a session pinned to a real
``wss://`` node is sent ``elsewhere`` to a listener of the test's, by a
directory entry sealed with the cluster's key (so the node believes it, as it
would a node of its cluster that is misconfigured, or one whose key leaked).
To ``ws://`` the session does not follow — asked or unasked — and to a
``wss://`` node whose certificate no one vouched for and is not the pinned
one it says no hello; the listeners record that nothing reached them."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from websockets.asyncio.server import ServerConnection, serve

import protocol as wire
from client.loadgen.redisproc import RedisProcess
from client.sdk import RedirectRefused, RequestError, Session
from server.cluster.entries import DirectoryEntry, NodeInfo
from server.cluster.signing import load_key
from server.cluster.store import Store
from server.lan.tls import self_signed

from .helpers import eventually, needs_redis
from .test_tls import TlsNode
from .test_trust import Recorder

pytestmark = needs_redis


class TlsRecorder:
    """A ``wss://`` server on 127.0.0.1 with a certificate of its own, recording
    every message a client sends it."""

    def __init__(self, tmp: Path) -> None:
        self.tls = self_signed(tmp / "rogue-cert.pem", tmp / "rogue-key.pem", "127.0.0.1")
        self.messages: list[str | bytes] = []
        self.port = 0

    async def _handle(self, connection: ServerConnection) -> None:
        async for message in connection:
            self.messages.append(message)

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[TlsRecorder]:
        """Serve while the caller's block runs."""
        async with serve(self._handle, "127.0.0.1", 0, ssl=self.tls.context) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            yield self

    @property
    def url(self) -> str:
        """A ``wss://`` URL that reaches it."""
        return f"wss://127.0.0.1:{self.port}"


async def _plant(
    node: TlsNode, redis_url: str, rogue: str, url: str, homes: tuple[str, ...] = ()
) -> str:
    """List node ``rogue`` at ``url`` and a match of it, sealed with the cluster's
    key; wait until ``node`` believes it. The match's id."""
    store = Store(redis_url, load_key(node.key_file), sender=rogue)
    match = f"{rogue}match"
    summary = wire.MatchSummary(
        match=match, name="over there", status="open",
        seats=(wire.SeatInfo(seat=0, kind="empty"), wire.SeatInfo(seat=1, kind="empty")),
        host="Rogue", has_join_code=False, ruleset="standard", node=rogue,
    )  # fmt: skip
    try:
        await store.beat(
            NodeInfo(node=rogue, url=url, pid=1, started=0.0, expires=time.time() + 3600), 3600
        )
        entry = DirectoryEntry(
            match=match, node=rogue, created=time.time() + 1000, summary=summary, homes=homes
        )
        await store.publish([entry])
    finally:
        await store.close()

    async def believed() -> bool:
        health = node.health() or {}
        return rogue in health.get("cluster", {}).get("nodes", {})

    await eventually(believed, f"the node believes in node {rogue}")
    return match


@pytest.fixture
def tls_node(tmp_path: Path) -> Iterator[tuple[TlsNode, str]]:
    """One real ``wss://`` node of a cluster, and its Redis URL."""
    with RedisProcess() as redis:
        node = TlsNode(redis.url, tmp_path / "node1")
        node.start()
        try:
            node.wait_up()
            yield node, redis.url
        finally:
            node.stop()


async def test_a_pinned_wss_session_does_not_follow_a_redirect_to_ws(
    tls_node: tuple[TlsNode, str],
) -> None:
    """Issue 29: "a session pinned to a wss:// node followed an elsewhere to a ws://
    URL and sent its token there in clear". Now: RedirectRefused, the session stays
    on its node (and works), the ws:// listener receives nothing."""
    node, redis_url = tls_node
    async with Recorder() as listener:
        match = await _plant(node, redis_url, "plain", listener.url)
        session = Session(node.url, "Pinned", fingerprint=node.fingerprint, reconnect=False)
        await session.open()
        try:
            with pytest.raises(RedirectRefused) as refused:
                await session.watch(match)
            assert refused.value.code == "elsewhere"
            assert "wss:// to ws://" in str(refused.value)
            assert session.url == node.url and session.fingerprint == node.fingerprint
            assert isinstance(await session.list_matches(), tuple | list)
        finally:
            await session.close()
        assert listener.connections == 0 and listener.received == b""


async def test_an_unasked_redirect_to_ws_is_not_followed_either(
    tls_node: tuple[TlsNode, str],
) -> None:
    """Issue 29: coming back with the token, the seat the node names is on a ws://
    node: the session is told (the `elsewhere` arrives) but does not go there."""
    node, redis_url = tls_node
    async with Recorder() as listener:
        first = Session(node.url, "Returning", fingerprint=node.fingerprint, reconnect=False)
        await first.open()
        assert first.player_id is not None
        token = first.token
        await first.close()
        await _plant(node, redis_url, "plainhome", listener.url, homes=(first.player_id,))
        again = Session(node.url, "Returning", token=token, fingerprint=node.fingerprint)
        await again.open()
        try:
            told = await again.next_of(wire.Error, timeout=5)
            assert told.code == "elsewhere" and told.url == listener.url
            assert again.url == node.url
            assert isinstance(await again.list_matches(), tuple | list)
        finally:
            await again.close()
        assert listener.connections == 0 and listener.received == b""


async def test_a_pinned_session_says_no_hello_to_a_certificate_nobody_vouched_for(
    tls_node: tuple[TlsNode, str], tmp_path: Path
) -> None:
    """Issue 29: a pinned session follows a redirect only to a node whose certificate
    it can check. No fingerprint in the redirect: the pin it has must fit there,
    and a wss:// listener with another certificate receives no message at all."""
    node, redis_url = tls_node
    recorder = TlsRecorder(tmp_path)
    async with recorder.run() as rogue:
        match = await _plant(node, redis_url, "otherkey", rogue.url)
        session = Session(node.url, "Pinned", fingerprint=node.fingerprint, reconnect=False)
        await session.open()
        try:
            with pytest.raises(RequestError) as refused:
                await session.watch(match)
            assert refused.value.code == "elsewhere"
            assert session.url == node.url and session.fingerprint == node.fingerprint
        finally:
            await session.close()
        await asyncio.sleep(0.1)
        assert rogue.messages == []
