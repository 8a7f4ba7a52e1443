"""One write per client per request: everything one action causes for a player
(the ``ok``, the events, a prompt, a match update) reaches its socket in a
single ``transport.write`` — one system call — in the order the protocol
promises; and a client whose socket is full still gets every frame, in order.

Writes are counted on the server's real transports (a counting wrapper around
each one); the frames are read back out of the written bytes and compared
with what the clients received.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgpack
import pytest

from server.peer import Peer

from ..storage.helpers import in_process
from .helpers import RawClient, Running, raw_frame, serve


class CountingTransport:
    """A server connection's real transport, recording every write made through it."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)

    def writelines(self, chunks: list[bytes]) -> None:
        self.write(b"".join(chunks))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


def count_writes(peer: Peer) -> CountingTransport:
    """Count the writes to ``peer``'s socket from now on."""
    counting = CountingTransport(peer.connection.transport)
    peer.connection.transport = counting  # type: ignore[assignment]
    return counting


def frames_in(data: bytes) -> list[bytes]:
    """The payloads of the unmasked, unfragmented binary frames ``data`` holds."""
    payloads = []
    at = 0
    while at < len(data):
        assert data[at] == 0x82, f"not a whole binary frame: {data[at]:#x}"
        size, at = data[at + 1], at + 2
        if size == 126:
            size, at = int.from_bytes(data[at : at + 2], "big"), at + 2
        elif size == 127:
            size, at = int.from_bytes(data[at : at + 8], "big"), at + 8
        payloads.append(data[at : at + size])
        at += size
    return payloads


def peer_of(running: Running, client: RawClient) -> Peer:
    """The server's side of ``client``'s connection."""
    assert client.welcome is not None
    player = client.welcome["player"]
    (peer,) = [p for p in running.server.peers if p.player and p.player.id == player]
    return peer


async def received(client: RawClient, count: int) -> list[bytes]:
    """Wait until ``client`` has received ``count`` frames; return them."""
    async with asyncio.timeout(5):
        while len(client.frames) < count:
            await asyncio.sleep(0.001)
    return client.frames[:count]


@contextlib.asynccontextmanager
async def serve_with(data_dir: Path | None) -> AsyncIterator[Running]:
    """A server on 127.0.0.1, storing every action in ``data_dir`` (sync full) if given."""
    if data_dir is None:
        async with serve() as running:
            yield running
        return
    async with in_process(data_dir, sync="FULL") as stored:
        yield Running(stored.server, stored.url)


async def table(running: Running, players: int = 4) -> list[RawClient]:
    """``players`` bare clients seated at one open match, ``p0`` its host."""
    clients = [await RawClient.open(running.url, f"p{i}") for i in range(players)]
    # unrated: a rated match's `ratings` notice follows its last action in a write of its own
    joined = await clients[0].request("create_match", name="batching", seats=players, rated=False)
    for client in clients[1:]:
        assert (await client.request("join", match=joined["match"]))["type"] == "joined"
    return clients


@pytest.mark.parametrize("storage", ["off", "on"])
async def test_each_player_gets_all_one_action_caused_in_one_write_in_order(
    storage: str, tmp_path: Path
) -> None:
    """Start, then every action of a 4-player match to its end: each player's
    frames for that request leave in exactly one write, and arrive as written:
    the actor's ``ok`` first, then the events by sequence number, then the rest."""
    async with serve_with(tmp_path if storage == "on" else None) as running:
        clients = await table(running)
        try:
            counters = [count_writes(peer_of(running, c)) for c in clients]
            prompted: dict[int, dict[str, Any]] = {}
            request = "start"
            actor = 0
            for step in range(200):  # a 4-player match has 60 actions
                before = [len(counter.writes) for counter in counters]
                seen = [len(client.frames) for client in clients]
                fields = {"action": prompted.pop(actor)["actions"][0]} if step else {}
                answer = await clients[actor].request(request, **fields)
                assert answer["type"] == "ok", answer
                over = False
                for seat, (client, counter) in enumerate(zip(clients, counters, strict=True)):
                    writes = counter.writes[before[seat] :]
                    assert len(writes) == 1, f"seat {seat}: {len(writes)} writes for {request}"
                    sent = frames_in(writes[0])
                    got = await received(client, seen[seat] + len(sent))
                    assert got[seen[seat] :] == sent, f"seat {seat}: frames arrived otherwise"
                    messages = [msgpack.unpackb(frame) for frame in sent]
                    kinds = [m["type"] for m in messages]
                    if seat == actor:
                        assert kinds[0] == "ok" and messages[0]["id"] == answer["id"], kinds
                    rest = kinds[1:] if seat == actor else kinds
                    assert "ok" not in rest, kinds
                    if "prompt" in rest:  # the prompt follows what it is about
                        after = set(rest[rest.index("prompt") :])
                        assert not after & {"event", "snapshot"}, kinds
                    seqs = [m["seq"] for m in messages if m["type"] == "event"]
                    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else True
                    for message in messages:
                        if message["type"] == "prompt":
                            prompted[seat] = message
                        if message["type"] == "event" and message["event"]["kind"] == "match_ended":
                            over = True
                if over:
                    break
                assert prompted, "nobody was prompted"
                actor, request = min(prompted), "act"
            assert over, "the match did not end"
        finally:
            await asyncio.gather(*(client.close() for client in clients))


async def test_a_client_whose_socket_is_full_gets_every_frame_in_order_once_it_reads() -> None:
    """A client that stops reading: its frames wait for it (the transport pauses
    and the writer task takes over), and once it reads again every frame arrives,
    whole and in the order sent."""
    async with serve(rate_limit=10_000.0, rate_burst=20_000) as running:
        talker, reader = await table(running, players=2)
        try:
            peer = peer_of(running, reader)
            server_socket = peer.connection.transport.get_extra_info("socket")
            server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            peer.connection.transport.set_write_buffer_limits(high=2048)
            reader.ws.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_RCVBUF, 4096
            )
            reader.ws.transport.pause_reading()
            start = len(reader.frames)
            lines = 300
            for i in range(lines):
                await talker.send("chat", text=f"line {i:04d} " + "x" * 100)
            async with asyncio.timeout(10):
                while not peer.connection.paused:  # the socket is full: the server waits
                    await asyncio.sleep(0.005)
            assert peer.held > 0
            reader.ws.transport.resume_reading()
            async with asyncio.timeout(10):
                while sum(m["type"] == "chat" for m in reader.messages[start:]) < lines:
                    await asyncio.sleep(0.005)
            texts = [m["text"][:9] for m in reader.messages[start:] if m["type"] == "chat"]
            assert texts == [f"line {i:04d}" for i in range(lines)]
        finally:
            await asyncio.gather(talker.close(), reader.close())


async def test_a_read_full_of_pings_is_answered_in_one_write() -> None:
    """websockets answers every ping with a pong as it reads them; the pongs of
    one read leave in one write, not one system call each."""
    async with serve() as running:
        client = await RawClient.open(running.url, "Pinger")
        try:
            counter = count_writes(peer_of(running, client))
            pings = 50
            burst = b"".join(raw_frame(b"", 0x9) for _ in range(pings))
            client.ws.transport.write(burst)  # one segment on loopback: one read
            async with asyncio.timeout(5):
                while b"".join(counter.writes).count(b"\x8a\x00") < pings:
                    await asyncio.sleep(0.001)
            assert len(counter.writes) == 1
        finally:
            await client.close()
