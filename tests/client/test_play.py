"""Whole matches through the app against a real server, keys only."""

from __future__ import annotations

import random

from client.tui.app import Plan, QuickMatch, TulipsApp
from client.tui.screens.final import FinalScreen
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.table import TableScreen

from .conftest import Running
from .driver import play_to_the_end, until
from .screens import screen_text


async def test_quick_match_plays_to_the_final_scores_and_a_rematch(server: Running) -> None:
    """`tulips play`'s path: a match against bots, played with keys, scored, played again."""
    app = TulipsApp(
        Plan(name="Ada", url=server.url, quick=QuickMatch(players=2, strength="easy")),
        reveal_delay=0,
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TableScreen), what="the table")
        pressed = await play_to_the_end(pilot, app, random.Random(3))
        assert (
            pressed.count("k") + pressed.count("f") + pressed.count("s") + pressed.count("g") >= 12
        )
        text = screen_text(app)
        assert "Final scores" in text and "Majorities" in text
        state = app.follow.state
        assert state is not None and state.scoring is not None
        assert 1 <= len(state.revealed) <= 5  # R19, shown one at a time
        first_match = app.follow.match_id

        await pilot.press("a")  # play again
        await until(
            pilot,
            lambda: app.follow.match_id != first_match and app.follow.state is not None,
            what="the rematch",
        )
        assert isinstance(app.screen, TableScreen)
        assert app.follow.state is not None and app.follow.state.phase == "opening"


async def test_lobby_create_with_keys_then_play(server: Running) -> None:
    """From the lobby: n, Enter (the form's defaults: 4 seats, 3 bots), and a whole match."""
    app = TulipsApp(Plan(name="Bea", url=server.url), reveal_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        assert "No matches yet" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("enter")
        await until(pilot, lambda: app.follow.state is not None, what="the deal")
        await play_to_the_end(pilot, app, random.Random(5))
        assert isinstance(app.screen, FinalScreen)
        await pilot.press("l")  # back to the lobby: the finished match is listed
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby again")
        await until(pilot, lambda: "finished" in screen_text(app), what="the finished match")
