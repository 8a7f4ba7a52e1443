"""Helpers for looking at the app in tests: run it on a scripted session, and
read its screen as plain text."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

import protocol as wire
from client.tui.app import Plan, QuickMatch, TulipsApp

from .fakes import ScriptedSession, factory

URL = "ws://127.0.0.1:8765"


def screen_text(app: App[Any]) -> str:
    """What the terminal shows now, as text (one line per row)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


def scripted(
    script: Iterable[object] = (),
    *,
    matches: Sequence[wire.MatchSummary] = (),
    quick: bool = False,
    **answers: Any,
) -> tuple[TulipsApp, ScriptedSession]:
    """An app on a scripted session, with a frozen clock and no reveal pause."""
    session = ScriptedSession(script, matches=matches, answers=answers)
    plan = Plan(name="Ada", url=URL, quick=QuickMatch(3, "easy") if quick else None)
    app = TulipsApp(plan, sessions=factory(session), reveal_delay=0, clock=lambda: 1000.0)
    return app, session


async def settle(pilot: Pilot[Any], session: ScriptedSession) -> None:
    """Until the app has taken in every scripted message and redrawn."""
    async with asyncio.timeout(5):
        await session.drained.wait()
    await pilot.pause()
    await pilot.pause()


@contextlib.asynccontextmanager
async def running(
    script: Iterable[object] = (),
    *,
    size: tuple[int, int] = (80, 24),
    matches: Sequence[wire.MatchSummary] = (),
    **answers: Any,
) -> AsyncIterator[tuple[TulipsApp, Pilot[Any], ScriptedSession]]:
    """Run the app on a script until it has settled."""
    app, session = scripted(script, matches=matches, **answers)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, session)
        yield app, pilot, session
