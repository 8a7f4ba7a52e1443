"""The example clients and bots, and tulips-bot, play real matches against a
real server on 127.0.0.1 (PROTOCOL.md promises the example client works)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

import pytest

import protocol as wire
from client.bots import STRATEGIES, Bot, Option, medium_strategy, run_bot
from client.sdk import Session, connect

from .conftest import TIMEOUT, run


async def _open_match(url: str, seats: int, bots: list[tuple[int, str]]) -> tuple[Session, str]:
    host = Session(url, "host")
    await host.open()
    joined = await host.create_match(seats=seats, bots=bots)
    return host, joined.match


async def _wait_full(host: Session, match: str) -> None:
    async with asyncio.timeout(TIMEOUT):
        while True:
            summary = next(m for m in await host.list_matches() if m.match == match)
            if all(seat.kind != "empty" for seat in summary.seats):
                return
            await asyncio.sleep(0.05)


async def test_protocol_example_client_plays_a_match(url: str) -> None:
    """examples/plain_client.py, the client embedded in PROTOCOL.md, plays to the end."""
    code, out, err = await run(sys.executable, "examples/plain_client.py", url, "Plain")
    assert code == 0, err
    assert "winners:" in out


_REMOTE_BOTS = {
    "plain_bot": lambda url, match: ["examples/plain_bot.py", url, match],
    "sdk_bot": lambda url, match: ["examples/sdk_bot.py", url, match],
    "tulips-bot": lambda url, match: ["-m", "client.botcli", url, "--match", match],
}


@pytest.mark.parametrize("bot", sorted(_REMOTE_BOTS))
async def test_remote_bot_joins_by_match_id_and_plays(url: str, bot: str) -> None:
    """A bot in another process joins an open match by id and plays it out."""
    host, match = await _open_match(url, 3, [(1, "easy")])
    remote = asyncio.create_task(run(sys.executable, *_REMOTE_BOTS[bot](url, match)))
    await _wait_full(host, match)
    await host.start()
    scoring = await asyncio.wait_for(Bot(medium_strategy).play(host), TIMEOUT)
    code, out, err = await remote
    await host.close()
    assert scoring is not None
    assert code == 0, err
    assert "winners" in out


async def test_tulips_bot_refuses_a_bad_address_clearly() -> None:
    """A wrong address is one clear line and exit 1 or 2, not a traceback."""
    code, _, err = await run(sys.executable, "-m", "client.botcli", "http://x", "--match", "m")
    assert code == 2 and "ws://" in err
    code, _, err = await run(
        sys.executable, "-m", "client.botcli", "ws://127.0.0.1:9", "--match", "m"
    )
    assert code == 1 and "cannot reach" in err and "Traceback" not in err


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
async def test_kit_strategies_only_propose_legal_actions(
    url: str, players: int, strategy: str
) -> None:
    """Every strategy of the kit plays whole matches without one refused action."""
    host, match = await _open_match(url, players, [(s, "easy") for s in range(2, players)])
    seat1 = asyncio.create_task(run_bot(url, STRATEGIES[strategy], match=match, seed=players))
    await _wait_full(host, match)
    await host.start()
    mine = await asyncio.wait_for(Bot(STRATEGIES[strategy], seed=1).play(host), TIMEOUT)
    theirs = await asyncio.wait_for(seat1, TIMEOUT)
    await host.close()
    assert mine is not None and theirs is not None
    assert mine == theirs


async def test_bot_subclass_decides(url: str) -> None:
    """Subclassing Bot and overriding decide is enough to play."""

    class FirstAction(Bot):
        def decide(self, state: wire.State, options: Sequence[Option]) -> wire.Action:
            return options[0].action

    async with connect(url, name="sub") as session:
        await session.create_match(seats=2, bots=[(1, "medium")])
        await session.start()
        scoring = await asyncio.wait_for(FirstAction().play(session), TIMEOUT)
    assert scoring is not None and len(scoring.players) == 2
