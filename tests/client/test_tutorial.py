"""The tutorial (``tulips learn``, and ``t`` in the lobby): a whole tutorial
match played through the app against a real server, every step shown once,
in order of need, naming its rule and pointing to ``?``, fitting the screen
at 80×24 and at 40 columns, in English, German and Spanish."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from textual.pilot import Pilot

from client.tui import i18n
from client.tui.app import Plan, QuickMatch, TulipsApp
from client.tui.screens.final import FinalScreen
from client.tui.screens.tutorial import TutorialScreen
from client.tui.tutorial import STEPS, Step
from client.tui.widgets.actions import ActionsPanel

from .conftest import Running
from .driver import TURN_KEYS
from .screens import screen_text

#: Where each language's notes send the player for more: the help key.
_HELP = "?"


def _check_note(app: TulipsApp, note: TutorialScreen) -> str:
    """The note on screen fits it (nothing cut off) and leaves the actions in
    sight when the table stands side by side; returns its text."""
    box = note.query_one("#tutorial-note")
    text = note.query_one("#tutorial-text")
    width, height = app.size
    assert box.region.right <= width and box.region.bottom <= height, box.region
    assert box.region.y >= 1, "the title bar stays in sight"
    assert text.region.bottom <= box.content_region.bottom, "the note's text is cut off"
    if not note.has_class("-narrow"):
        actions = app.table_screen.query_one(ActionsPanel)
        if app.screen_stack[-2] is app.table_screen:
            assert box.region.x >= actions.region.right, "the note hides the actions"
    return screen_text(app)


async def play_tutorial(
    pilot: Pilot[Any], app: TulipsApp, rng: random.Random, timeout: float = 60.0
) -> list[tuple[Step, str]]:
    """Play the tutorial to its last note with keys: each note read and gone on
    from (Enter), each prompt answered; returns the notes with the screen's text."""
    notes: list[tuple[Step, str]] = []
    async with asyncio.timeout(timeout):
        while True:
            screen = app.screen
            if isinstance(screen, TutorialScreen):
                await pilot.pause()
                notes.append((screen.step, _check_note(app, screen)))
                await pilot.press("enter")
                await pilot.pause()
                continue
            if isinstance(screen, FinalScreen):
                if app.tutorial.current is None and any(s.key == "end" for s, _ in notes):
                    return notes
                await pilot.pause(0.01)
                continue
            view = app.table_screen.view
            mode = view.actions.mode if view is not None else None
            keys = [c.key for c in view.actions.choices] if view is not None else []
            if screen is app.table_screen and mode in ("opening", "give"):
                await pilot.press(rng.choice([k for k in keys if k.isdigit()]))
            elif screen is app.table_screen and mode == "turn":
                await pilot.press(rng.choice([k for k in TURN_KEYS if k in keys]))
            await pilot.pause(0.01)


@pytest.mark.parametrize(
    ("lang", "size"),
    [
        ("en", (80, 24)),
        ("de", (80, 24)),
        ("es", (80, 24)),
        ("en", (40, 24)),
        ("de", (40, 24)),
        ("es", (40, 24)),
    ],
)
async def test_a_whole_tutorial_shows_every_step_once_in_order(
    server: Running, lang: str, size: tuple[int, int]
) -> None:
    """`tulips learn`'s path: every rule's note once, in order of need, each
    naming its rule and pointing to ?, on the fixed deal."""
    i18n.set_language(lang)
    app = TulipsApp(
        Plan(name="Ada", url=server.url, quick=QuickMatch(tutorial=True)), reveal_delay=0
    )
    async with app.run_test(size=size) as pilot:
        notes = await play_tutorial(pilot, app, random.Random(size[0]))
        assert [step.key for step, _ in notes] == [key for key, _ in STEPS]
        for step, text in notes:
            assert (
                i18n.t("tutorial.title", number=step.number, steps=len(STEPS), rule=step.rule)
                in text
            )
            assert step.rule.split(" ")[0] in text and _HELP in text
        opening = notes[0][0].field_map()
        assert (opening["card"], opening["card2"]) == ("purple-2", "orange-3")  # the fixed deal
        tie = notes[5][0].field_map()  # R8 on the first turn: blue ties purple and goes above
        assert (tie["card"], tie["colour"], tie["other"], tie["rank"], tie["other_rank"]) == (
            "blue-2",
            "blue",
            "purple",
            1,
            2,
        )
        assert isinstance(app.screen, FinalScreen)
