"""Playing the app with keys only, the way a person would: look at what the
screen offers, press a key. Every wait is bounded."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from client.tui.app import TulipsApp
from client.tui.screens.final import FinalScreen

#: The order a simple player tries the turn keys in.
TURN_KEYS = ("k", "f", "s", "g")


async def until(
    pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 10.0, what: str = ""
) -> None:
    """Let the app run until ``condition()`` holds (or fail after ``timeout``)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await pilot.pause(0.01)
    assert condition(), what


async def play_to_the_end(
    pilot: Pilot[Any], app: TulipsApp, rng: random.Random, timeout: float = 30.0
) -> list[str]:
    """Answer every prompt with a key until the final screen shows; returns the
    keys. Every turn's choices must show their points (the server's)."""
    pressed: list[str] = []
    async with asyncio.timeout(timeout):
        while not isinstance(app.screen, FinalScreen):
            view = app.table_screen.view
            mode = view.actions.mode if view is not None else None
            keys = [c.key for c in view.actions.choices] if view is not None else []
            if mode == "opening" or mode == "give":
                key = rng.choice([k for k in keys if k.isdigit()])
            elif mode == "turn":
                assert view is not None
                # the server says what each option scores; the screen shows it
                assert all(c.points is not None for c in view.actions.choices)
                options = [k for k in TURN_KEYS if k in keys]
                key = rng.choice(options)
            else:
                await pilot.pause(0.01)
                continue
            pressed.append(key)
            await pilot.press(key)
            await pilot.pause()
    return pressed
