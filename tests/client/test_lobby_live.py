"""The lobby against a real server: a match another player opens appears by
itself, Enter joins it, and the two play — one with keys in the app, the
other through the SDK."""

from __future__ import annotations

import asyncio
import contextlib
import random

import protocol as wire
from client.sdk import Session, connect
from client.tui.app import Plan, TulipsApp
from client.tui.screens.lobby import LobbyScreen

from .conftest import Running
from .driver import until
from .screens import screen_text


def _mode(app: TulipsApp) -> str | None:
    view = app.table_screen.view
    return view.actions.mode if view is not None else None


async def _play_randomly(session: Session, rng: random.Random) -> None:
    """Start when the guest is seated, then answer every prompt at random."""
    async for message in session:
        if isinstance(message, wire.MatchUpdate):
            seats = message.match.seats
            if message.match.status == "open" and all(s.kind != "empty" for s in seats):
                await session.start()
        elif isinstance(message, wire.Prompt):
            with contextlib.suppress(Exception):  # a stale prompt after the guest's move
                await session.answer(message, rng.choice(message.actions))
        elif isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
            return


async def test_a_new_match_shows_up_live_and_enter_joins_it(server: Running) -> None:
    """Bea opens a 2-seat match; Ada's lobby lists it unasked; Enter, and they play."""
    rng = random.Random(4)
    app = TulipsApp(Plan(name="Ada", url=server.url), reveal_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        async with connect(server.url, name="Bea", reconnect=False) as bea:
            await bea.create_match(name="Bea's garden", seats=2)
            await until(pilot, lambda: "Bea's garden" in screen_text(app), what="the new match")
            host = asyncio.create_task(_play_randomly(bea, random.Random(2)))
            await pilot.press("enter")
            await until(pilot, lambda: app.follow.state is not None, what="the deal")
            assert app.follow.seat == 1 and not app.follow.host
            await until(pilot, lambda: _mode(app) == "opening", what="the opening prompt")
            await pilot.press(rng.choice("12"))
            await until(pilot, lambda: _mode(app) == "turn", what="Ada's first turn")
            assert app.follow.state is not None and app.follow.state.phase == "turn"
            await pilot.press("k")
            await until(pilot, lambda: _mode(app) != "turn" or app.follow.state.used == "keep")  # type: ignore[union-attr]
            host.cancel()
