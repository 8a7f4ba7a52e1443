"""Misbehaving connections — garbage, text frames, oversized frames, unknown
and malformed messages, floods, a client that never reads, a client that
never says hello — are answered or dropped with the documented codes while
another match plays on undisturbed."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import msgpack
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

import protocol as wire
from client.sdk import Session, connect
from protocol import CloseCode
from server.peer import Peer

from .helpers import RawClient, Running, Tracker, check_message, finish_and_check, serve


async def still_answers(client: RawClient) -> None:
    """The connection is open and its requests are answered."""
    assert (await client.request("list_matches"))["type"] == "match_list"


async def garbage_bytes(running: Running, match_id: str) -> None:
    """Bytes that are not MessagePack: bad_frame, and the connection stays."""
    client = await RawClient.open(running.url, "garbage")
    await client.send_raw(b"\xc1\xff\x00 not msgpack at all")
    answer = await client.next()
    assert (answer["type"], answer["code"]) == ("error", "bad_frame")
    await client.send_raw(msgpack.packb([1, 2, 3]))  # MessagePack, but not a map
    assert (await client.next())["code"] == "bad_frame"
    await still_answers(client)
    await client.close()


async def text_frame(running: Running, match_id: str) -> None:
    """A text frame: bad_frame, and the connection stays."""
    client = await RawClient.open(running.url, "text")
    await client.send_raw('{"v": 1, "type": "list_matches"}')
    answer = await client.next()
    assert (answer["type"], answer["code"]) == ("error", "bad_frame")
    await still_answers(client)
    await client.close()


async def too_large(running: Running, match_id: str) -> None:
    """A frame over MAX_FRAME_BYTES is refused unread: close 1009."""
    client = await RawClient.open(running.url, "large")
    big = msgpack.packb({"v": 1, "type": "chat", "text": "x" * wire.MAX_FRAME_BYTES})
    assert len(big) > wire.MAX_FRAME_BYTES
    await client.send_raw(big)
    assert await client.closed() == CloseCode.MESSAGE_TOO_BIG


async def unknown_type(running: Running, match_id: str) -> None:
    """An unknown message type: unknown_type at path type, with the request id."""
    client = await RawClient.open(running.url, "unknown")
    answer = await client.request("frobnicate", match=match_id)
    assert (answer["type"], answer["code"], answer["path"]) == ("error", "unknown_type", "type")
    await still_answers(client)
    await client.close()


async def wrong_field_type(running: Running, match_id: str) -> None:
    """A field of the wrong type: bad_message with the field's path and the id."""
    client = await RawClient.open(running.url, "wrongtype")
    answer = await client.request("act", action={"kind": "give", "to_seat": "2"})
    assert (answer["code"], answer["path"]) == ("bad_message", "act.action.to_seat")
    assert answer["message"] == "expected int, got str"
    answer = await client.request("watch", match=7)
    assert (answer["code"], answer["path"]) == ("bad_message", "watch.match")
    answer = await client.request("create_match", name="x", seats=9)
    assert (answer["code"], answer["path"]) == ("bad_message", "create_match.seats")
    await still_answers(client)
    await client.close()


async def flood(running: Running, match_id: str) -> None:
    """A flood of requests: read at the connection's rate, then rate_limited and close 4008."""
    client = await RawClient.open(running.url, "flood")
    frame = msgpack.packb({"v": 1, "type": "list_matches"})
    with contextlib.suppress(ConnectionClosed):
        for _ in range(running.server.config.rate_burst * 4):
            await client.send_raw(frame)
    # the server reads no more of a flood, so its close waits for close_timeout
    assert await client.closed(timeout=15) == CloseCode.RATE_LIMITED
    codes = [m.get("code") for m in client.messages if m["type"] == "error"]
    assert codes and set(codes) == {"rate_limited"}


async def too_many_bad_frames(running: Running, match_id: str) -> None:
    """max_bad_frames bad frames in a row: close 4000."""
    client = await RawClient.open(running.url, "bad")
    for _ in range(running.server.config.max_bad_frames):
        await client.send_raw(b"\xc1")
    assert await client.closed() == CloseCode.PROTOCOL_VIOLATION


async def garbage_instead_of_hello(running: Running, match_id: str) -> None:
    """Garbage instead of hello: bad_frame each time, then close 4000."""
    client = await RawClient.connect(running.url)
    for _ in range(running.server.config.max_bad_frames):
        await client.send_raw(b"\xc1")
        assert (await client.next())["code"] == "bad_frame"
    assert await client.closed() == CloseCode.PROTOCOL_VIOLATION


def peer_named(running: Running, name: str) -> Peer:
    """The server's side of the connection whose player has ``name``."""
    (peer,) = [p for p in running.server.peers if p.player is not None and p.player.name == name]
    return peer


async def never_reads(running: Running, match_id: str) -> None:
    """A spectator that never reads is dropped with TOO_SLOW once its queue is full.

    Loopback sockets buffer megabytes, so the test shrinks the buffers on both
    ends of this one connection (as a slow network would) and asks for a few
    snapshots to fill them sooner."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", running.server.port))
    client = await RawClient.connect(running.url, sock=sock, max_queue=1)
    client.stop_reading()
    await client.send("hello", client="t", name="sloth")
    async with asyncio.timeout(5):
        while True:
            try:
                peer = peer_named(running, "sloth")
                break
            except ValueError:
                await asyncio.sleep(0.01)
    server_socket: Any = peer.connection.transport.get_extra_info("socket")
    server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    await client.send("watch", match=match_id)
    for _ in range(running.server.config.rate_burst * 4 // 5):  # a burst the limit allows
        await client.send("sync")
    async with asyncio.timeout(10):
        while peer.connection.state is State.OPEN:
            await client.send("sync")
            await asyncio.sleep(1 / running.server.config.rate_limit)
    close_sent = peer.connection.protocol.close_sent
    assert close_sent is not None and close_sent.code == CloseCode.TOO_SLOW
    # The server has given up on it. Reading now (with room to read: a tiny window
    # would leave TCP to probe it with growing back-off), it finds the close.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    async with asyncio.timeout(10):
        with contextlib.suppress(ConnectionClosed):
            while True:
                await client.ws.recv()
    assert client.ws.close_code == CloseCode.TOO_SLOW


MISBEHAVIOURS = [
    garbage_bytes,
    text_frame,
    too_large,
    unknown_type,
    wrong_field_type,
    flood,
    too_many_bad_frames,
    garbage_instead_of_hello,
    never_reads,
]


async def test_misbehaving_connections_leave_a_running_match_undisturbed() -> None:
    """Misbehaving connections get their documented codes; a watched match plays on."""
    async with (
        serve(bot_delay=0.1, max_outbox_bytes=8192, max_bad_frames=8, close_timeout=1) as running,
        connect(running.url, name="Watcher", reconnect=False) as watcher,
    ):
        bots = [(seat, ("easy", "medium", "hard")[seat % 3]) for seat in range(5)]
        joined = await watcher.create_match(name="bots only", seats=5, bots=bots)
        assert joined.seat is None  # bots hold every seat: the host watches
        await watcher.start()
        room = running.lobby.matches[joined.match].core
        follow = asyncio.create_task(follow_to_the_end(watcher))
        async with asyncio.timeout(20):
            assert room.status.value == "running"
            await asyncio.gather(*(misbehave(running, joined.match) for misbehave in MISBEHAVIOURS))
            assert room.status.value == "running", "the match ended before the misbehaviour did"
            tracker = await follow
        await finish_and_check(watcher, tracker)
        assert tracker.snapshots == 1
        # and the server still takes new clients
        async with connect(running.url, name="Late", reconnect=False) as late:
            assert [m.match for m in await late.list_matches()] == [joined.match]


async def follow_to_the_end(session: Session) -> Tracker:
    """A spectator's model of the match, once it has ended; no private card seen."""
    tracker = Tracker(None)
    async for message in session:
        check_message(message, None)
        tracker.feed(message)
        if tracker.over:
            return tracker
    raise AssertionError("the watcher's session ended")


async def test_bad_frames_close_the_connection_only_in_a_row() -> None:
    """Bad frames separated by good requests never reach max_bad_frames in a row."""
    async with serve(max_bad_frames=3) as running:
        client = await RawClient.open(running.url, "mixed")
        for _ in range(4):
            for _ in range(2):
                await client.send_raw(b"\xc1")
                assert (await client.next())["code"] == "bad_frame"
            await still_answers(client)
        await client.close()


async def test_hello_timeout_closes_a_silent_connection() -> None:
    """A connection silent past hello_timeout is closed with HELLO_TIMEOUT (4003)."""
    async with serve(hello_timeout=0.3) as running:
        silent = await RawClient.connect(running.url)
        polite = await RawClient.open(running.url, "polite")
        assert await silent.closed(timeout=3) == CloseCode.HELLO_TIMEOUT
        await asyncio.sleep(0.3)
        await still_answers(polite)
        await polite.close()


async def test_server_stop_tells_clients_it_is_going_away() -> None:
    """Stopping the server closes every connection with GOING_AWAY (1001)."""
    async with serve() as running:
        client = await RawClient.open(running.url, "Ada")
        await client.request("create_match", name="t", seats=2, bots=[{"seat": 1}])
    assert await client.closed() == CloseCode.GOING_AWAY


async def test_pipelined_requests_of_a_reading_client_are_not_too_slow() -> None:
    """Many requests at once from a client that reads are served, not dropped as TOO_SLOW."""
    async with serve(max_outbox_bytes=8192) as running:
        client = await RawClient.open(running.url, "eager")
        frame = msgpack.packb({"v": 1, "type": "list_matches", "id": 1})
        for _ in range(60):
            await client.send_raw(frame)
        for _ in range(60):
            assert (await client.next())["type"] == "match_list"
        await still_answers(client)
        await client.close()
