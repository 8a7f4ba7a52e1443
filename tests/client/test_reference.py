"""The reference server of ``tulips-loadtest --reference`` (:mod:`client.loadgen.reference`):
SDK players play its canned matches to the end and again, each member's frames
for one request leave in one write, and the CPU figure reads a real process.

Its figures are the benchmark's business (README, Benchmarks); these tests
check that it serves the load generator's clients as the real server does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.server import ServerConnection, serve

import protocol as wire
from client.loadgen import cli as loadtest
from client.loadgen.load import cpu_seconds
from client.loadgen.reference import MATCH_ACTIONS, ReferenceServer, write_frames
from client.sdk import Session

HOST = "127.0.0.1"


class CountingTransport:
    """A real transport that counts the writes made through it."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self._transport.write(data)

    def writelines(self, chunks: list[bytes]) -> None:
        self.write(b"".join(chunks))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


@contextlib.asynccontextmanager
async def reference() -> AsyncIterator[str]:
    """The reference server on 127.0.0.1, a port the OS picks."""
    server = ReferenceServer()
    async with serve(server.handle, HOST, 0, process_request=server.health) as running:
        port = running.sockets[0].getsockname()[1]
        yield f"ws://{HOST}:{port}"


async def play(session: Session, rng: random.Random) -> int:
    """Answer prompts with one of their actions until the match ends; the actions made."""
    made = 0
    async with asyncio.timeout(30):
        async for message in session:
            if isinstance(message, wire.Prompt):
                await session.answer(message, rng.choice(message.actions))
                made += 1
            elif isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                return made
    raise AssertionError("the session closed before the match ended")


async def test_sdk_players_play_reference_matches_to_the_end_and_again() -> None:
    """Four SDK sessions create, join, start, play MATCH_ACTIONS actions in turn,
    see the end, and play a rematch: the load generator's whole loop."""
    async with reference() as url:
        sessions = [Session(url, f"p{i}", reconnect=False) for i in range(4)]
        try:
            for session in sessions:
                await session.open()
            joined = await sessions[0].create_match(seats=4)
            assert joined.seat == 0
            for seat, session in enumerate(sessions[1:], start=1):
                assert (await session.join(joined.match)).seat == seat
            rng = random.Random(3)
            for _ in range(2):
                await sessions[0].start()
                made = await asyncio.gather(*(play(s, rng) for s in sessions))
                assert made == [MATCH_ACTIONS // 4] * 4
                for session in sessions:  # the first opens the rematch, the others accept it
                    await session.play_again()
        finally:
            await asyncio.gather(*(s.close() for s in sessions))


async def test_write_frames_sends_every_frame_in_one_write_in_order() -> None:
    """Three frames for one connection: one write to the transport, received as
    three messages in the order given."""
    frames = [b"\x81first", b"second" * 50, b"third"]
    writes: list[int] = []

    async def handler(connection: ServerConnection) -> None:
        counting = CountingTransport(connection.transport)
        connection.transport = counting  # type: ignore[assignment]
        write_frames(connection, frames)
        writes.append(len(counting.writes))
        await connection.wait_closed()

    async with serve(handler, HOST, 0, compression=None) as running:
        port = running.sockets[0].getsockname()[1]
        async with ws_connect(f"ws://{HOST}:{port}") as client, asyncio.timeout(10):
            received = [await client.recv() for _ in frames]
    assert received == frames
    assert writes == [1]


def test_cpu_seconds_reads_a_process_and_none_for_no_process() -> None:
    """This process's CPU time grows with work; a pid that is not there gives None."""
    before = cpu_seconds(os.getpid())
    assert before is not None
    deadline = before + 0.05
    spins = 0
    while (now := cpu_seconds(os.getpid())) is not None and now < deadline and spins < 10**8:
        spins += 1
    assert now is not None and now >= deadline
    assert cpu_seconds(2**22 + 1) is None  # above Linux's largest pid


@pytest.mark.slow
def test_loadtest_reference_prints_both_runs_and_their_ratios(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``tulips-loadtest --spawn-server --reference``: the server's run, the
    reference's, each with its CPU figure, then the ratios."""
    code = loadtest.main(
        ["--spawn-server", "--reference", "--storage", "off", "--matches", "2", "--duration", "2"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("s per 1,000 actions") == 2, out
    assert "-- reference" in out
    assert "storage off    server CPU" in out and "efficiency" in out, out
