"""Pings, pongs and fragments count against a connection's rate limit (issue 29, "Pings
are not counted": 16 connections had 15,520 pings a second answered, and a
normal player's latency suffered).

websockets answers every ping by itself; the server charges each ping and
pong to the same per-connection budget as the messages. A client that pings
past its rate is read no more until they are paid for, and one that keeps on
is told ``rate_limited`` and closed with 4008, as a message flood is
(PROTOCOL.md, "Sending"). The flood is made for real, by a client written by
hand over a TCP socket on 127.0.0.1; the protocol itself is checked sans-I/O.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import ssl
import struct
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
from websockets.asyncio.client import connect as ws_connect
from websockets.frames import Opcode
from websockets.protocol import State

from protocol import CloseCode
from server.lan import tls
from server.peer import PacedProtocol
from server.ratelimit import Pacer

from .helpers import RawClient, serve


class Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def ping(payload: bytes = b"") -> bytes:
    """A client's ping frame, masked (with a zero mask) as a client must."""
    return bytes([0x89, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


def pong(payload: bytes = b"") -> bytes:
    """A client's pong frame (unsolicited: the server ignores it, but reads it)."""
    return bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


def paced_protocol(rate: float, burst: int, clock: Clock) -> PacedProtocol:
    """An open server protocol whose pings and pongs are charged to a fresh pacer."""
    protocol = PacedProtocol(state=State.OPEN)
    protocol.pacer = Pacer(rate, burst, clock)
    return protocol


def pongs_sent(protocol: PacedProtocol) -> int:
    """How many pongs the protocol has to send (every one is 2 bytes: empty)."""
    data = b"".join(protocol.data_to_send())
    assert data == b"\x8a\x00" * (len(data) // 2), data[:20]
    return len(data) // 2


# -- the protocol, sans-I/O, on a clock the test turns ---------------------------------------


def test_pings_within_the_burst_are_answered_and_cost_a_token_each() -> None:
    """A burst of pings is answered at once; each spent a token."""
    clock = Clock()
    protocol = paced_protocol(rate=10, burst=20, clock=clock)
    protocol.receive_data(ping() * 20)
    assert pongs_sent(protocol) == 20
    assert protocol.charged and not protocol.flooded
    assert protocol.pacer is not None and protocol.pacer.wait() > 0  # spent


def test_pings_past_the_burst_are_answered_on_credit_then_make_a_flood() -> None:
    """Past its tokens a ping is answered on credit (the connection then reads
    no more until it is paid for); more than a whole burst on credit is a
    flood, and every ping after it is dropped unanswered."""
    clock = Clock()
    protocol = paced_protocol(rate=10, burst=20, clock=clock)
    protocol.receive_data(ping() * 30)
    assert pongs_sent(protocol) == 30
    assert not protocol.flooded
    assert protocol.pacer is not None and protocol.pacer.wait() == 1.1  # 10 owed, +1
    protocol.receive_data(ping() * 500)
    assert protocol.flooded
    assert pongs_sent(protocol) == 10  # the 11th on credit made the flood
    protocol.receive_data(ping() * 10)
    assert pongs_sent(protocol) == 0


def test_pongs_count_too_and_a_paid_debt_is_forgiven() -> None:
    """Pongs spend tokens as pings do; a connection that lets its bucket fill
    half way again has its held-back frames forgiven."""
    clock = Clock()
    protocol = paced_protocol(rate=10, burst=20, clock=clock)
    protocol.receive_data(pong() * 35)  # 15 on credit
    assert protocol.charged and not protocol.flooded
    clock.now += 3.0  # 30 tokens earned: the debt paid, the bucket over half full
    protocol.receive_data(pong() * 35)  # 15 more on credit: forgiven, not 30
    assert not protocol.flooded


def test_messages_are_not_charged_by_the_protocol() -> None:
    """Data frames are the handler's to pace (Pacer.admit): the protocol leaves them."""
    clock = Clock()
    protocol = paced_protocol(rate=1, burst=1, clock=clock)
    frame = bytes([0x82, 0x81]) + b"\0\0\0\0" + b"x"  # binary, masked, 1 byte
    protocol.receive_data(frame * 10)
    assert not protocol.charged and not protocol.flooded
    assert len(protocol.events_received()) == 10


def fragment(first: bool) -> bytes:
    """An empty fragment of a text message that is not its last (FIN clear), masked."""
    return bytes([0x01 if first else 0x00, 0x80]) + b"\0\0\0\0"


def test_fragments_but_the_last_are_charged_so_a_message_that_never_ends_floods() -> None:
    """A message is charged once complete (Pacer.admit); its other fragments are
    charged as they come: empty continuations, on and on, make a flood instead
    of a message websockets keeps assembling for ever."""
    clock = Clock()
    protocol = paced_protocol(rate=10, burst=20, clock=clock)
    protocol.receive_data(fragment(first=True) + fragment(first=False) * 5)
    assert protocol.charged and not protocol.flooded
    protocol.receive_data(fragment(first=False) * 500)
    assert protocol.flooded


# -- a ping flood over a socket ---------------------------------------------------------------


@dataclass
class Seen:
    """What a hand-written client read from the server."""

    pongs: int = 0
    messages: list[dict[str, object]] = field(default_factory=list)
    close_code: int | None = None


async def handshake(
    port: int, tls: ssl.SSLContext | None = None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket opening handshake by hand on a TCP socket to 127.0.0.1
    (over TLS with ``tls``)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=tls)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


async def read_frames(reader: asyncio.StreamReader, seen: Seen) -> None:
    """Read the server's (unmasked) frames until the connection ends."""
    with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
        while True:
            first, second = await reader.readexactly(2)
            size = second & 0x7F
            if size == 126:
                (size,) = struct.unpack("!H", await reader.readexactly(2))
            elif size == 127:
                (size,) = struct.unpack("!Q", await reader.readexactly(8))
            payload = await reader.readexactly(size)
            opcode = first & 0x0F
            if opcode == Opcode.PONG:
                seen.pongs += 1
            elif opcode == Opcode.BINARY:
                seen.messages.append(msgpack.unpackb(payload))
            elif opcode == Opcode.CLOSE:
                seen.close_code = struct.unpack("!H", payload[:2])[0]


async def ping_flood(
    port: int, count: int, tls: ssl.SSLContext | None = None, at_once: int = 100
) -> Seen:
    """``count`` pings as fast as the socket takes them, ``at_once`` a write
    (no hello: pings count from the first frame); what came back, until the
    server hung up."""
    reader, writer = await handshake(port, tls)
    seen = Seen()
    reading = asyncio.create_task(read_frames(reader, seen))
    with contextlib.suppress(ConnectionError):
        for _ in range(count // at_once):
            writer.write(ping() * at_once)
            await writer.drain()
    async with asyncio.timeout(10):
        await reading
    writer.close()
    return seen


async def test_a_ping_flood_is_closed_as_a_flood_while_a_player_plays_on() -> None:
    """Four connections each send 5,000 pings: each is told ``rate_limited``
    and closed with 4008, with far fewer pongs than pings (at most a burst
    answered, a burst on credit, and what it earned meanwhile), while a
    player on another connection has every request answered in order."""
    rate, burst = 50.0, 100
    async with serve(rate_limit=rate, rate_burst=burst) as running:
        player = await RawClient.open(running.url, "Ada")
        started = time.monotonic()
        floods = [asyncio.create_task(ping_flood(running.server.port, 5_000)) for _ in range(4)]
        answered = 0
        while not all(f.done() for f in floods) and answered < 500:
            answer = await player.request("list_matches", timeout=5)
            assert answer["type"] == "match_list", answer
            answered += 1
            await asyncio.sleep(0.02)  # a player's pace, well within its rate
        results = await asyncio.gather(*floods)
        elapsed = time.monotonic() - started
        for seen in results:
            assert seen.close_code == CloseCode.RATE_LIMITED
            assert [m["code"] for m in seen.messages if m["type"] == "error"] == ["rate_limited"]
            assert seen.pongs <= 2 * burst + 1 + rate * elapsed
            assert seen.pongs < 1_000
        assert answered >= 1
        assert (await player.request("list_matches"))["type"] == "match_list"
        assert player.ws.state is State.OPEN
        await player.close()


async def test_a_ping_flood_over_tls_in_one_write_is_closed_as_well(tmp_path: Path) -> None:
    """Over TLS a read is not limited to a few KiB: 5,000 pings written at once
    reach the server together. It still answers no more than a burst, a burst
    on credit and what the rate earned meanwhile (the rest of the read waits
    unparsed), and closes the flooder with 4008."""
    rate, burst = 50.0, 100
    async with serve(
        rate_limit=rate,
        rate_burst=burst,
        tls_cert=tmp_path / tls.CERT_FILE,
        tls_key=tmp_path / tls.KEY_FILE,
        tls_self_signed=True,
    ) as running:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the test's own self-signed certificate
        started = time.monotonic()
        seen = await ping_flood(running.server.port, 5_000, context, at_once=5_000)
        elapsed = time.monotonic() - started
        assert seen.close_code == CloseCode.RATE_LIMITED
        assert seen.pongs <= 2 * burst + 1 + rate * elapsed
        assert seen.pongs < 1_000


async def test_pings_past_the_rate_are_paced() -> None:
    """A client that sends a burst and a half of pings has them all answered
    and stays connected, but its next request waits until the pings are paid
    for: the server read nothing more from it meanwhile."""
    rate, burst = 20.0, 20
    async with serve(rate_limit=rate, rate_burst=burst) as running:
        client = await RawClient.open(running.url, "Bo")
        pongs: list[Awaitable[float]] = []
        for n in range(burst + burst // 2):
            pongs.append(await client.ws.ping(n.to_bytes(4, "big")))
        started = time.monotonic()
        async with asyncio.timeout(10):
            await asyncio.gather(*pongs)
            answer = await client.request("list_matches")
        assert answer["type"] == "match_list"
        # 10 pings owed at 20 a second: about half a second (less the few ms
        # the pings took to send), never much less
        assert time.monotonic() - started >= 0.25
        assert client.ws.state is State.OPEN
        await client.close()


async def test_keepalive_pings_both_ways_cost_a_player_nothing() -> None:
    """websockets' keepalive still works: the server pings every 50 ms and
    the client too; each pong and ping is charged, well within the rate, and
    the connection lives on with its requests answered."""
    async with serve(ping_interval=0.05, ping_timeout=5.0) as running:
        async with asyncio.timeout(5):
            ws = await ws_connect(running.url, compression=None, ping_interval=0.05)
        client = RawClient(ws)
        welcome = await client.request("hello", client="raw-test/1", name="Cy")
        assert welcome["type"] == "welcome"
        await asyncio.sleep(1.0)  # some 20 pings each way
        peer = next(p for p in running.server.peers if p.player and p.player.name == "Cy")
        assert ws.latency > 0  # the client's pings were answered
        assert (await client.request("list_matches"))["type"] == "match_list"
        assert not peer.closing and ws.state is State.OPEN
        await client.close()


async def test_a_message_that_never_ends_is_closed_as_a_flood() -> None:
    """A client that opens a text message and sends empty continuation frames
    for ever (issue 29 review: they cost nothing) is told ``rate_limited`` and
    closed with 4008, as a ping flooder is."""
    async with serve(rate_limit=50.0, rate_burst=100) as running:
        reader, writer = await handshake(running.server.port)
        seen = Seen()
        reading = asyncio.create_task(read_frames(reader, seen))
        with contextlib.suppress(ConnectionError):
            writer.write(fragment(first=True))
            for _ in range(50):
                writer.write(fragment(first=False) * 100)
                await writer.drain()
        async with asyncio.timeout(10):
            await reading
        writer.close()
        assert seen.close_code == CloseCode.RATE_LIMITED
