"""A finished rated match's ratings survive a crash, applied exactly once
(issue 31): a real server process kills itself just before its ratings are
stored, or just after, and is started again on the same data directory.

Before: the final action is on disk, the ratings are not; the restarted
server applies them, once, with openskill's numbers for the stored result.
After: they are on disk, unannounced; the restart does not apply them again.
A second restart changes nothing either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from openskill.models import PlackettLuce

from client.sdk import Session
from server.storage import FILE_NAME

from ..server.helpers import play_randomly
from .helpers import ServerProcess, Servers


def _ratings(data_dir: Path) -> tuple[int, dict[str, tuple[float, float, int]], list[Any]]:
    """(results stored, ratings by identity, the finished match's seats) read with plain sqlite3."""
    db = sqlite3.connect(data_dir / FILE_NAME)
    try:
        results = db.execute("SELECT count(*) FROM results").fetchone()[0]
        ratings = {
            row[0]: (row[1], row[2], row[3])
            for row in db.execute("SELECT player, mu, sigma, matches FROM ratings")
        }
        seats = db.execute(
            "SELECT seat, player, bot, place FROM result_seats ORDER BY seat"
        ).fetchall()
    finally:
        db.close()
    return results, ratings, seats


async def _play_until_the_server_dies(server: ServerProcess) -> str:
    """One player and two bots play a rated match to its end, when the server
    kills itself; the player's token."""
    session = Session(server.url, "Ada", reconnect=False)
    await session.open()
    assert session.token is not None
    token = session.token
    await session.create_match(seats=3, bots=[(1, "easy"), (2, "medium")])
    await session.start()
    game = asyncio.ensure_future(play_randomly(session, 0, random.Random(3), timeout=60))
    assert await server.wait_exit(60) != 0
    game.cancel()
    with contextlib.suppress(BaseException):
        await game
    with contextlib.suppress(Exception):
        await session.close()
    return token


async def _wait_applied(data_dir: Path, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while _ratings(data_dir)[0] == 0:
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("when", ["before", "after"])
async def test_ratings_are_applied_exactly_once_after_a_crash(
    servers: Servers, tmp_path: Path, when: str
) -> None:
    data = tmp_path / "data"
    first = await servers.start(data, kill_at_ratings=when)
    token = await _play_until_the_server_dies(first)
    results, ratings, _ = _ratings(data)
    assert (results, bool(ratings)) == ((0, False) if when == "before" else (1, True))

    second = await servers.start(data)
    await _wait_applied(data)
    results, ratings, seats = _ratings(data)
    assert results == 1
    assert all(matches == 1 for _, _, matches in ratings.values()), ratings
    # openskill's own numbers for the stored places (R23), from the defaults
    model = PlackettLuce()
    teams = [[model.rating()] for _ in seats]
    expected = model.rate(teams, ranks=[float(place) for _, _, _, place in seats])
    for (_, player, bot, _), team in zip(seats, expected, strict=True):
        mu, sigma, _ = ratings[f"bot_{bot}" if bot else player]
        assert (mu, sigma) == pytest.approx((team[0].mu, team[0].sigma))
    async with Session(second.url, "Ada", token=token, reconnect=False) as ada:
        await ada.open()
        card = await ada.profile()
        assert (card.matches, card.rated_matches) == (1, 1)
        assert len((await ada.history()).matches) == 1
    assert await second.stop() == 0

    third = await servers.start(data)
    # anything it would apply again it submits at start, and applies before it stops
    assert await third.stop() == 0
    assert _ratings(data)[:2] == (results, ratings)
