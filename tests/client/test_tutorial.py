"""The tutorial (``tulips learn``, and ``t`` in the lobby): a whole tutorial
match played through the app against a real server, every step shown once,
in order of need, naming its rule and pointing to ``?``, fitting the screen
at 80×24 and at 40 columns, in English, German and Spanish; the lobby's
entry, and the command line."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from textual.pilot import Pilot

from client.localserver import LocalServer
from client.tui import i18n
from client.tui.app import Plan, QuickMatch, TulipsApp
from client.tui.cli import main
from client.tui.screens.dialogs import ConfirmQuitScreen
from client.tui.screens.final import FinalScreen
from client.tui.screens.help import HelpScreen
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.tutorial import TutorialScreen
from client.tui.tutorial import STEPS, Step
from client.tui.widgets.actions import ActionsPanel

from .conftest import Running
from .driver import TURN_KEYS, until
from .screens import screen_text
from .test_touch import tap

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


#: Each language once and each size at least once; the other three pairs are a soak.
_WHOLE = pytest.mark.slow, pytest.mark.soak


@pytest.mark.parametrize(
    ("lang", "size"),
    [
        ("en", (80, 24)),
        pytest.param("de", (80, 24), marks=_WHOLE),
        ("es", (80, 24)),
        pytest.param("en", (40, 24), marks=_WHOLE),
        ("de", (40, 24)),
        pytest.param("es", (40, 24), marks=_WHOLE),
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
                i18n.t("tutorial.title", step=step.number, steps=len(STEPS), rule=step.rule) in text
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
        if size == (80, 24) and lang == "en":  # a: the tutorial again, explained again
            first = app.follow.match_id
            await pilot.press("a")
            await until(
                pilot,
                lambda: app.follow.match_id != first and isinstance(app.screen, TutorialScreen),
                what="the tutorial again",
            )
            assert app.tutorial.current is not None and app.tutorial.current.key == "opening"
            assert app.tutorial.current.field_map()["card"] == "purple-2"  # the same deal


async def test_t_in_the_lobby_starts_a_tutorial_on_the_server_connected_to(
    server: Running,
) -> None:
    """The lobby names the tutorial; t creates one there: the first note, the
    opening's (R11), over the fixed deal's table, and a click goes on."""
    app = TulipsApp(Plan(name="Bea", url=server.url), reveal_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        assert i18n.t("lobby.learn") in screen_text(app)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TutorialScreen), what="the first note")
        summary = app.follow.summary
        assert summary is not None and summary.tutorial and app.follow.seat == 0
        note = app.screen
        assert isinstance(note, TutorialScreen) and note.step.key == "opening"
        assert "R11" in _check_note(app, note)
        await pilot.press("question_mark")  # ? over the note: the rules in brief
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is note, what="the note again")
        await pilot.press("q")  # q asks, as at the table; no: the note again
        await until(pilot, lambda: isinstance(app.screen, ConfirmQuitScreen), what="the question")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is note, what="the note after the question")
        await pilot.click("#tutorial-text")  # a click goes on, as Enter does
        await until(pilot, lambda: app.screen is app.table_screen, what="the table")
        assert [step.key for step in app.tutorial.done] == ["opening"]


async def test_a_phone_taps_learn_in_the_lobby_and_goes_on_with_a_tap(server: Running) -> None:
    """At 40 columns the lobby's learn button starts it, and the note's button goes on."""
    app = TulipsApp(Plan(name="Bea", url=server.url), reveal_delay=0)
    async with app.run_test(size=(40, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        assert app.screen.has_class("-narrow")
        await tap(pilot, i18n.t("keys.tutorial"))
        await until(pilot, lambda: isinstance(app.screen, TutorialScreen), what="the first note")
        await tap(pilot, i18n.t("tutorial.next_button"))
        await until(pilot, lambda: app.screen is app.table_screen, what="the table")


async def test_an_ordinary_match_shows_no_notes(server: Running) -> None:
    """Only a match the server calls a tutorial is explained."""
    app = TulipsApp(
        Plan(name="Ada", url=server.url, quick=QuickMatch(players=3, strength="easy")),
        reveal_delay=0,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await until(
            pilot, lambda: app.table_screen.view is not None and app.follow.state is not None
        )
        await until(pilot, lambda: app.follow.last_prompt is not None, what="the opening prompt")
        await pilot.pause()
        assert app.screen is app.table_screen and app.tutorial.current is None


def test_learn_help_and_a_wrong_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """`tulips learn --help` says what it does; a flag it does not take is one clear error."""
    with pytest.raises(SystemExit) as done:
        main(["learn", "--help", "--lang", "en"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "usage: tulips learn" in out and "tutorial" in out and "--name" in out
    with pytest.raises(SystemExit) as done:
        main(["learn", "--players", "3"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --players 3" in err and "usage: tulips" in err
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert "learn" in capsys.readouterr().out


async def test_tulips_learn_starts_a_local_server_and_its_tutorial() -> None:
    """`tulips learn`'s plan: a local server of its own (a subprocess), a tutorial on it,
    the first note over the fixed deal."""
    local = LocalServer(bot_delay=0)
    app = TulipsApp(Plan(name="Ada", local=local, quick=QuickMatch(tutorial=True)), reveal_delay=0)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(
                pilot, lambda: isinstance(app.screen, TutorialScreen), 30.0, "the first note"
            )
            step = app.tutorial.current
            assert step is not None and step.key == "opening"
            assert (step.field_map()["card"], step.field_map()["card2"]) == ("purple-2", "orange-3")
    finally:
        local.stop()
