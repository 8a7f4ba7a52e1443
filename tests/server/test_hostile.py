"""No one client can hurt the server: each attack is made over real sockets on
127.0.0.1, and the server's own accounting says it held.

Clients that never read are closed with TOO_SLOW within their byte budget and
let go of; floods of frames are read at the sender's rate while a normal match
plays on; close reasons never break the 123-byte limit, whatever a client
sent; one address cannot take every slot; web pages from other origins are
refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import time
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.protocol import State
from websockets.typing import Origin

from client.sdk import connect
from protocol import CloseCode
from server.cli import parse_args
from server.peer import MAX_CLOSE_REASON_BYTES, Peer, close_reason

from .helpers import RawClient, Running, finish_and_check, play_randomly, serve

# -- helpers ------------------------------------------------------------------------------


async def finished_match(running: Running) -> str:
    """A match played to its end by bots, so that its replay runs to several KiB."""
    async with connect(running.url, name="Host", reconnect=False) as host:
        bots = [(seat, "easy") for seat in range(5)]
        joined = await host.create_match(name="long", seats=5, bots=bots)
        await host.start()
        room = running.lobby.rooms[joined.match]
        async with asyncio.timeout(20):
            while room.status.value != "finished":
                await asyncio.sleep(0.05)
        return joined.match


async def peer_of(running: Running, name: str) -> Peer:
    """The server's side of the connection whose player is ``name`` (once welcomed)."""
    async with asyncio.timeout(5):
        while True:
            found = [p for p in running.server.peers if p.player and p.player.name == name]
            if found:
                return found[0]
            await asyncio.sleep(0.01)


async def stalled(running: Running, name: str) -> tuple[RawClient, Peer]:
    """A client that says hello and then never reads again.

    Loopback sockets buffer megabytes, so its receive buffer is made tiny, and
    the server's send buffer for it too, as over a slow network."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", running.server.port))
    client = await RawClient.connect(running.url, sock=sock, max_queue=1)
    client.stop_reading()
    client.ws.transport.pause_reading()  # not even the pongs, which websockets reads itself
    await client.send("hello", client="sloth/1", name=name)
    peer = await peer_of(running, name)
    server_socket: Any = peer.connection.transport.get_extra_info("socket")
    server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    return client, peer


def unsent(peer: Peer) -> int:
    """What the transport holds for the peer, as asyncio itself counts it."""
    transport = peer.connection.transport
    return 0 if transport is None else transport.get_write_buffer_size()


async def watch_budgets(peers: list[Peer], budget: int, stop: asyncio.Event) -> int:
    """Until ``stop``: check that no peer holds more than its budget (plus the
    WebSocket framing of its frames); the most any one held."""
    most = 0
    while not stop.is_set():
        for peer in peers:
            held = peer.held
            assert held <= budget + 1024, f"{peer!r} holds {held} bytes"
            most = max(most, held, unsent(peer))
        await asyncio.sleep(0.005)
    return most


# -- A: clients that never read -------------------------------------------------------------


async def test_clients_that_never_read_are_closed_and_their_buffers_freed() -> None:
    """30 clients that ask for replay pages and never read are closed with TOO_SLOW
    (4005); none ever holds more than its byte budget, and once the server gives
    up on them nothing is held for them at all — though they never leave."""
    budget = 64 * 1024
    async with serve(max_outbox_bytes=budget, close_timeout=0.5) as running:
        match_id = await finished_match(running)
        pairs = [await stalled(running, f"sloth{i}") for i in range(30)]
        peers = [peer for _, peer in pairs]
        stop = asyncio.Event()
        watcher = asyncio.create_task(watch_budgets(peers, budget, stop))

        async def ask_until_closed(client: RawClient, peer: Peer) -> None:
            for _ in range(1000):  # a replay page is ~10 KiB: a dozen or two suffice
                if peer.closing:
                    return
                with contextlib.suppress(ConnectionClosed):
                    await client.send("replay", match=match_id, from_seq=1)
                await asyncio.sleep(0.02)  # within the rate limit: it is never flooding
            raise AssertionError(f"{peer!r} was never closed; it holds {peer.held} bytes")

        async with asyncio.timeout(60):
            await asyncio.gather(*(ask_until_closed(c, p) for c, p in pairs))
            while any(p in running.server.peers for p in peers):
                await asyncio.sleep(0.05)
        stop.set()
        most = await watcher
        assert most > budget // 2, "the attack never filled a budget: the test tests nothing"
        for peer in peers:
            close_sent = peer.connection.protocol.close_sent
            assert close_sent is not None and close_sent.code == CloseCode.TOO_SLOW
            assert peer.peak <= budget
            assert peer.connection.state is State.CLOSED
            assert peer.held == 0
        assert running.server.health()["outbound_bytes"] == 0
        assert not running.server.addresses
        for client, _ in pairs:
            client.ws.transport.abort()


async def test_a_client_that_pings_and_never_reads_is_held_to_its_budget() -> None:
    """websockets answers pings by itself: a client that pings and never reads
    the pongs is closed with TOO_SLOW too, its pongs within the budget."""
    budget = 16 * 1024
    async with serve(max_outbox_bytes=budget, close_timeout=0.5) as running:
        client, peer = await stalled(running, "pinger")
        async with asyncio.timeout(30):
            for n in range(20_000):
                if peer.closing:
                    break
                with contextlib.suppress(ConnectionClosed):
                    await client.ws.ping(n.to_bytes(4, "big") * 31)  # 124 bytes
                if n % 50 == 0:
                    await asyncio.sleep(0.01)  # let the server read them
            assert peer.closing, "20,000 unread pongs and the pinger was not closed"
            while peer in running.server.peers or peer.connection.state is not State.CLOSED:
                await asyncio.sleep(0.05)
        close_sent = peer.connection.protocol.close_sent
        assert close_sent is not None and close_sent.code == CloseCode.TOO_SLOW
        assert peer.peak <= budget + 256 * 1024  # the budget, give or take one read
        assert peer.held == 0
        client.ws.transport.abort()


# -- B: floods are read at the sender's rate -------------------------------------------------


async def flood_until_closed(running: Running, name: str) -> tuple[Peer, int | None, float]:
    """One connection sending bad frames (and a good one now and then, so that it is
    not closed for bad frames in a row) as fast as TCP lets it, until it is closed:
    its server side, its close code and the seconds it lived."""
    client = await RawClient.open(running.url, name)
    peer = await peer_of(running, name)
    good = msgpack.packb({"v": 1, "type": "list_matches"})
    with contextlib.suppress(ConnectionClosed):
        for n in range(100_000):
            await client.send_raw(good if n % 10 == 0 else b"\xc1")
            if n % 10 == 0:  # the kernel takes it all: yield, as a separate process would
                await asyncio.sleep(0)
    code = await client.closed(timeout=30)
    return peer, code, time.monotonic() - peer.opened


async def test_floods_are_read_at_their_rate_while_a_match_plays() -> None:
    """Connections flooding bad frames are read no faster than their rate — every
    frame counts, good or bad — and closed with 4008, while a normal match is
    played to its end, each of its requests answered."""
    rate, burst = 50.0, 100
    async with (
        serve(rate_limit=rate, rate_burst=burst) as running,
        connect(running.url, name="Ada", reconnect=False) as ada,
    ):
        await ada.create_match(name="normal", seats=3, bots=[(1, "easy"), (2, "medium")])
        await ada.start()
        floods = [asyncio.create_task(flood_until_closed(running, f"flood{i}")) for i in range(6)]
        tracker = await play_randomly(ada, 0, random.Random(7), timeout=60)
        assert tracker.over
        await finish_and_check(ada, tracker)
        async with asyncio.timeout(60):
            results = await asyncio.gather(*floods)
        for peer, code, lived in results:
            assert code == CloseCode.RATE_LIMITED
            # the token bucket's bound, whatever the machine's speed
            assert peer.received <= burst + rate * lived + 1, (peer.received, lived)
            assert peer.received > burst, "it was closed before it flooded"


# -- C: close reasons ------------------------------------------------------------------------


def test_close_reason_is_cut_by_utf8_bytes_on_a_character_boundary() -> None:
    """A close reason fits RFC 6455's 123 bytes, whatever the characters, and is
    left alone when it already fits."""
    assert close_reason("no hello in time") == "no hello in time"
    assert close_reason("x" * MAX_CLOSE_REASON_BYTES) == "x" * MAX_CLOSE_REASON_BYTES
    for text in ("🌷" * 31, "a" + "🌷" * 40, "é" * 100, "x" * 500, "ab🌷" * 33):
        cut = close_reason(text)
        assert len(cut.encode()) <= MAX_CLOSE_REASON_BYTES
        assert cut.endswith("…") and text.startswith(cut[:-1])


async def test_emoji_in_a_refused_hello_close_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    """Frames before hello whose error texts echo 30 emoji, sent until the
    connection is closed for them: each is answered, the close has its documented
    code and a reason within 123 bytes, and nothing logs a traceback."""
    async with serve(max_bad_frames=3) as running:
        attempts: list[dict[str, Any]] = [
            {"type": "🌷" * 30},
            {"type": "hello", "client": "t", "name": "🌷" * 30, "versions": ["🌷" * 30]},
            {"type": "act", "action": {"kind": "🌷" * 60}},
            {"type": "hello", "client": "t", "name": "🌷" * 30, "token": "🌷" * 30},
        ]
        for fields in attempts:
            client = await RawClient.connect(running.url)
            with contextlib.suppress(ConnectionClosed):
                for _ in range(3):
                    await client.send_raw(msgpack.packb({"v": 1, **fields}))
            code = await client.closed()
            assert code is not None and 4000 <= code < 5000, (fields, code)
            reason = client.ws.close_reason
            assert reason is not None and len(reason.encode()) <= MAX_CLOSE_REASON_BYTES
            assert [m["type"] for m in client.messages] == ["error"] * len(client.messages)
            assert client.messages, fields
        async with connect(running.url, name="🌷" * 40, reconnect=False) as late:
            await late.list_matches()  # the server is well
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


# -- D: one address cannot take every slot ---------------------------------------------------


async def test_one_address_cannot_take_every_connection() -> None:
    """Past ``max_connections_per_address`` the handshake is refused with HTTP 429;
    a slot comes back when one of that address's connections closes."""
    async with serve(max_connections_per_address=3, limit_loopback=True) as running:
        clients = [await RawClient.open(running.url, f"p{i}") for i in range(3)]
        with pytest.raises(InvalidStatus) as refused:
            await RawClient.connect(running.url)
        assert refused.value.response.status_code == 429
        await clients.pop().close()
        async with asyncio.timeout(5):
            while running.server.addresses["127.0.0.1"] >= 3:
                await asyncio.sleep(0.01)
        clients.append(await RawClient.open(running.url, "again"))
        for client in clients:
            await client.close()


async def test_loopback_is_not_capped_unless_asked() -> None:
    """By default the per-address cap leaves loopback alone (tests, loadtest)."""
    async with serve(max_connections_per_address=2) as running:
        clients = [await RawClient.open(running.url, f"p{i}") for i in range(5)]
        assert running.server.addresses["127.0.0.1"] == 5
        for client in clients:
            await client.close()


# -- E: web pages ----------------------------------------------------------------------------


async def origin_status(url: str, origin: str | None) -> int:
    """The HTTP status of a handshake sending ``origin`` (101 when it is accepted)."""
    try:
        header = None if origin is None else Origin(origin)
        async with asyncio.timeout(5), ws_connect(url, origin=header) as ws:
            assert ws.response is not None
            return ws.response.status_code
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_web_pages_from_unknown_origins_are_refused() -> None:
    """A browser's handshake with an Origin the operator did not allow gets 403;
    a client without Origin is never refused; "*" allows every page."""
    async with serve() as running:
        assert await origin_status(running.url, "http://evil.example") == 403
        assert await origin_status(running.url, None) == 101
    allowed = ("http://tulips.lan:8080",)
    async with serve(allowed_origins=allowed) as running:
        assert await origin_status(running.url, "http://tulips.lan:8080") == 101
        assert await origin_status(running.url, "HTTP://Tulips.LAN:8080/") == 101
        assert await origin_status(running.url, "http://tulips.lan:9999") == 403
        assert await origin_status(running.url, "null") == 403
    async with serve(allowed_origins=("*",)) as running:
        assert await origin_status(running.url, "http://anything.example") == 101


def test_the_command_line_sets_the_address_cap_and_the_allowed_origins() -> None:
    """--max-connections-per-address and --allow-origin (repeatable) reach the
    config; an origin that is not one is refused with exit code 2."""
    origins = ["--allow-origin", "http://tulips.lan:8080", "--allow-origin", "*"]
    config = parse_args(["--max-connections-per-address", "5", *origins])
    assert config.max_connections_per_address == 5
    assert config.allowed_origins == ("http://tulips.lan:8080", "*")
    assert parse_args([]).allowed_origins == ()
    for bad in ("tulips.lan", "ftp://x", "http://x/page"):
        with pytest.raises(SystemExit) as exited:
            parse_args(["--allow-origin", bad])
        assert exited.value.code == 2
