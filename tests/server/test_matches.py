"""Whole matches over real sockets: SDK clients playing random legal actions
beside bots of every strength, for 2 to 6 players, one at a time and two
dozen at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from typing import Any

import pytest

import protocol as wire
from client.sdk import Session, connect

from .helpers import (
    Running,
    bots_for,
    check_message,
    finish_and_check,
    get,
    play_randomly,
    serve,
)

#: the seats SDK clients take; bots (easy, medium, hard in turn) take the rest
HUMANS = {2: (0,), 3: (1,), 4: (0, 2), 5: (1, 3), 6: (0, 2, 4)}


async def seat_clients(
    running: Running, stack: contextlib.AsyncExitStack, players: int, humans: tuple[int, ...]
) -> tuple[str, list[Session]]:
    """Connect one SDK client per human seat; the first hosts and the others join."""
    sessions = [
        await stack.enter_async_context(connect(running.url, name=f"P{seat}", reconnect=False))
        for seat in humans
    ]
    bots = bots_for(players, humans)
    joined = await sessions[0].create_match(name=f"{players} players", seats=players, bots=bots)
    assert (joined.seat, joined.host) == (humans[0], True)
    for session, seat in zip(sessions[1:], humans[1:], strict=True):
        answer = await session.join(joined.match, seat=seat)
        assert (answer.match, answer.seat, answer.host) == (joined.match, seat, False)
    return joined.match, sessions


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
async def test_full_match_between_sdk_clients_and_bots(players: int) -> None:
    """SDK clients and bots finish a match; events consecutive, final snapshot agrees."""
    humans = HUMANS[players]
    rng = random.Random(players)
    async with serve() as running, contextlib.AsyncExitStack() as stack:
        match_id, sessions = await seat_clients(running, stack, players, humans)
        await sessions[0].start()
        seen: dict[int, list[object]] = {seat: [] for seat in humans}
        async with asyncio.timeout(20):
            trackers = await asyncio.gather(
                *(
                    play_randomly(
                        session, seat, random.Random(rng.randrange(2**32)), seen=seen[seat]
                    )
                    for session, seat in zip(sessions, humans, strict=True)
                )
            )
            for session, tracker in zip(sessions, trackers, strict=True):
                snapshot = await finish_and_check(session, tracker)
                assert snapshot.match == match_id
        scorings = [tracker.scoring for tracker in trackers]
        assert all(scoring == scorings[0] for scoring in scorings)
        scoring = scorings[0]
        assert scoring is not None
        assert [p.seat for p in scoring.players] == list(range(players))
        assert scoring.winners
        for p in scoring.players:
            assert p.total == p.keeping + p.giving + sum(p.majorities.values())
        # every seat, bots included, played its turns: each bouquet grew past the opening card
        final = trackers[0].model()
        assert all(len(seat.bouquet) >= 1 for seat in final.seats)
        assert final.deck_count == 0 and final.phase == "over"
        for seat, messages in seen.items():  # R24–R26 for the seated players
            for message in messages:
                check_message(message, seat)


async def play_one(running: Running, index: int) -> wire.Scoring:
    """One SDK client against three bots, to the end; the scoring."""
    rng = random.Random(index)
    async with connect(running.url, name=f"solo{index}", reconnect=False) as session:
        bots = bots_for(4, [index % 4])
        joined = await session.create_match(name=f"solo {index}", seats=4, bots=bots)
        assert joined.seat == index % 4
        await session.start()
        tracker = await play_randomly(session, joined.seat, rng, timeout=60)
        await finish_and_check(session, tracker)
        assert tracker.scoring is not None
        return tracker.scoring


async def test_two_dozen_matches_at_once_all_finish_in_bounded_time(running: Running) -> None:
    """24 matches of one SDK client and three bots, played at once, all finish in time."""
    started = time.monotonic()
    async with asyncio.timeout(30):
        scorings = await asyncio.gather(*(play_one(running, i) for i in range(24)))
    assert len(scorings) == 24 and all(s.winners for s in scorings)
    assert sum(room.status.value == "finished" for room in running.lobby.infos()) == 24
    assert time.monotonic() - started < 30


async def test_healthz_answers_json_with_matches_connections_uptime_and_memory(
    running: Running,
) -> None:
    """GET /healthz answers 200 with JSON: matches, connections, uptime and memory."""
    http = running.url.replace("ws://", "http://")
    async with connect(running.url, name="Ada", reconnect=False) as session:
        await session.create_match(seats=2, bots=[(1, "easy")])
        async with asyncio.timeout(10):
            status, headers, body = await asyncio.to_thread(get, f"{http}/healthz")
    assert status == 200
    assert headers["Content-Type"] == "application/json"
    health: dict[str, Any] = json.loads(body)
    assert health["matches"] == 1
    assert health["connections"] == 1
    assert isinstance(health["uptime"], int | float) and health["uptime"] >= 0
    assert isinstance(health["memory_bytes"], int) and health["memory_bytes"] > 1_000_000
    assert isinstance(health["python_blocks"], int) and health["python_blocks"] > 10_000
    async with asyncio.timeout(10):
        status, _, body = await asyncio.to_thread(get, f"{http}/")
    assert status == 404  # a plain GET that is not /healthz and not a WebSocket
