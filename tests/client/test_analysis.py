"""Learning the game in the terminal client (issue 32), against a real server:
the analysis asked for from the final scores (its progress, then the marks,
the options' values and the summary in the replay viewer), learning from
one's mistakes, and hints in a match that allows them (refused cleanly in one
that does not). The client shows what the server sends: nothing here needs
the rules."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from multiprocessing import resource_tracker
from typing import Any

import pytest
from textual.pilot import Pilot

import protocol as wire
from client.sdk import connect
from client.tui.analysis import Analysis, hint_values, option_label, progress_text
from client.tui.app import Plan, QuickMatch, TulipsApp
from client.tui.screens.final import FinalScreen
from client.tui.screens.learn import LearnScreen
from client.tui.screens.replay import ReplayScreen
from client.tui.widgets.actions import choice_label
from server.app import TulipsServer
from server.config import ServerConfig

from .conftest import Running
from .driver import play_to_the_end, until
from .screens import screen_text

#: few deals: the server's tests check the values, these the screens
DEALS = 3


@pytest.fixture
async def analysing() -> AsyncIterator[Running]:
    """A server whose analyses and hints are quick (few deals, a short think).

    Its worker processes need multiprocessing's resource tracker, which is
    started here: under ``run_test`` the standard error it would hand down is
    Textual's capture, which has no file descriptor."""
    resource_tracker.ensure_running()
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        bot_delay=0,
        ping_interval=None,
        analysis_deals=DEALS,
        bot_think_ms=5.0,
    )
    tulips = TulipsServer(config)
    await tulips.start()
    try:
        yield Running(tulips, f"ws://127.0.0.1:{tulips.port}")
    finally:
        await tulips.stop()


def _viewer(app: TulipsApp) -> ReplayScreen:
    screen = app.screen
    assert isinstance(screen, ReplayScreen), screen
    return screen


async def _finish(pilot: Pilot[Any], app: TulipsApp, seed: int = 5) -> None:
    """A quick match against one easy bot, played to its final scores by keys."""
    await until(pilot, lambda: app.follow.state is not None, what="the deal")
    await play_to_the_end(pilot, app, random.Random(seed))
    await until(pilot, lambda: isinstance(app.screen, FinalScreen), what="the final scores")


async def _analysed(pilot: Pilot[Any], app: TulipsApp) -> Analysis:
    """Until the viewer shows the analysis (computed in the server's worker process)."""
    await until(
        pilot,
        lambda: (
            isinstance(app.screen, ReplayScreen)
            and app.screen.analysis is not None
            and app.screen.replay is not None
        ),
        timeout=120,
        what="the analysis",
    )
    analysis = _viewer(app).analysis
    assert analysis is not None
    await pilot.pause()
    return analysis


# -- without a server: what the screens make of the server's words -----------------------------


def test_progress_says_where_the_analysis_is() -> None:
    """Asked, queued behind others, computed decision by decision."""
    assert "Asking" in progress_text(None).plain
    queued = wire.AnalysisProgress(match="m", seat=0, queued=2)
    assert "2 ahead" in progress_text(queued).plain
    computing = wire.AnalysisProgress(match="m", seat=0, queued=0, done=3, total=12)
    text = progress_text(computing).plain
    assert "decision 3 of 12" in text and text.count("█") == 5


def test_an_option_is_named_from_its_action_alone() -> None:
    """Keep, give to a named seat, the adds, an opening's two cards: no rule needed."""
    names = {0: "Ada", 1: "Bob"}
    assert option_label(wire.Keep(), names).plain == "Keep it"
    assert "Bob" in option_label(wire.Give(to_seat=1), names).plain
    openings = [wire.Opening(secret="pink-3"), wire.Opening(secret="blue-4")]
    label = option_label(openings[0], names, openings).plain
    assert "3" in label and "4" in label


def test_a_hint_is_shown_only_for_its_own_prompt_and_aligned_with_its_actions() -> None:
    """``options[i]`` values ``actions[i]``; another prompt's hint shows nothing."""
    actions = (wire.Keep(), wire.Give(to_seat=1), wire.AddSecret())
    prompt = wire.Prompt(match="m", seq=9, seat=0, actions=actions)
    values = tuple(
        wire.OptionValue(action=a, expected_points=p, win_chance=c)
        for a, p, c in zip(actions, (40.0, 47.5, 41.0), (0.2, 0.4, 0.25), strict=True)
    )
    hint = wire.HintValues(match="m", seq=9, seat=0, options=values, best=1, deals=8)
    shown = hint_values(prompt, hint)
    assert shown[wire.Give(to_seat=1)].best and shown[wire.Give(to_seat=1)].points == 47.5
    assert not shown[wire.Keep()].best and shown[wire.Keep()].points == 40.0
    stale = wire.Prompt(match="m", seq=12, seat=0, actions=actions)
    assert hint_values(stale, hint) == {}


# -- on a real server ---------------------------------------------------------------------------


@pytest.mark.slow
async def test_the_analysis_from_the_final_scores_marks_and_values_the_decisions(
    analysing: Running,
) -> None:
    """Issue 32: e on the final scores opens the replay viewer and asks for the
    analysis; its progress shows while it is computed; then the panel shows the
    summary; n jumps to a marked decision, whose options show with their
    values, the chosen and the best; 1 jumps to the costliest."""
    app = TulipsApp(
        Plan(name="Ada", url=analysing.url, quick=QuickMatch(players=2, strength="easy")),
        reveal_delay=0,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await _finish(pilot, app)
        assert "analysis" in screen_text(app)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the viewer")
        viewer = _viewer(app)
        assert viewer.analysing or viewer.analysis is not None
        analysis = await _analysed(pilot, app)
        # the progress heard: every decision of the seat, done
        assert viewer.progress is not None and viewer.progress.done == viewer.progress.total
        assert viewer.progress.total == len(analysis.decisions)
        text = screen_text(app)
        open("/tmp/atui/analysed.txt", "w").write(text)
        assert "accuracy" in text and "Analysis" in text
        marked = analysis.marked()
        assert marked, "random play against a bot makes some marked decisions"
        await pilot.press("n")
        await pilot.pause()
        replay = viewer.replay
        assert replay is not None
        first = marked[0]
        assert replay.position == first.seq
        text = screen_text(app)
        open("/tmp/atui/marked.txt", "w").write(text)
        sign = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}[first.mark or "mistake"]
        assert sign in text and "Points" in text and "★" in text
        best = first.options[first.best]
        assert f"{best.expected_points:.1f}" in text
        await pilot.press("1")
        await pilot.pause()
        assert replay.position == analysis.costliest[0].seq
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, LearnScreen), what="learning")
        learn = app.screen
        assert isinstance(learn, LearnScreen)
        lesson = learn.decision
        assert lesson is not None and lesson == analysis.lessons()[0]
        text = screen_text(app)
        open("/tmp/atui/learn.txt", "w").write(text)
        assert "What would you choose now?" in text
        assert f"{lesson.options[lesson.best].expected_points:.1f}" not in text  # not yet
        await pilot.press("1")
        await pilot.pause()
        text = screen_text(app)
        open("/tmp/atui/verdict.txt", "w").write(text)
        assert "The best" in text or "The best choice!" in text
        assert f"{lesson.options[lesson.best].expected_points:.1f}" in text
        await pilot.press("n")
        await pilot.pause()
        assert learn.index == 1 and learn.chosen is None
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="back")


@pytest.mark.slow
async def test_hints_show_values_beside_the_choices_only_where_the_host_allows_them(
    analysing: Running,
) -> None:
    """In a match with hints, h shows the analysis's values beside the options,
    the best starred, until the decision is taken; in one without, h says hints
    are off and nothing is asked."""
    app = TulipsApp(Plan(name="Ada", url=analysing.url), reveal_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.session is not None, what="connected")
        assert app.session is not None
        await app.session.create_match(name="Hinted", seats=2, bots=[(1, "easy")], hints=True)
        await until(pilot, lambda: app.follow.summary is not None, what="joined")
        assert app.follow.summary is not None and app.follow.summary.hints
        await until(pilot, lambda: app.follow.last_prompt is not None, timeout=20, what="a prompt")
        assert "hint" in screen_text(app)  # the key bar offers it
        prompt = app.follow.last_prompt
        assert prompt is not None
        await pilot.press("h")
        await until(pilot, lambda: app.hint is not None, timeout=30, what="the hint")
        await pilot.pause()
        view = app.table_screen.view
        assert view is not None
        hinted = [c for c in view.actions.choices if c.hint is not None]
        assert hinted and sum(c.hint.best for c in hinted if c.hint) >= 1
        hint = app.hint
        assert hint is not None and hint.seq == prompt.seq
        for choice in hinted:
            if choice.action is not None:
                index = prompt.actions.index(choice.action)
                assert choice.hint is not None
                assert choice.hint.points == hint.options[index].expected_points
                assert f"≈{choice.hint.points:.1f}" in choice_label(choice).plain
        text = screen_text(app)
        open("/tmp/atui/hint.txt", "w").write(text)
        assert "≈" in text and "★" in text

    async with connect(analysing.url, name="Bob", reconnect=False) as bob:
        joined = await bob.create_match(name="Plain", seats=2, bots=[(1, "easy")])
        await bob.start()
        assert joined.match
    app = TulipsApp(Plan(name="Cy", url=analysing.url), reveal_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.session is not None, what="connected")
        assert app.session is not None
        await app.session.create_match(name="No hints", seats=2, bots=[(1, "easy")])
        await until(pilot, lambda: app.follow.last_prompt is not None, timeout=20, what="a prompt")
        await pilot.press("h")
        await pilot.pause()
        assert app.hint is None and app.hint_asked is None
        assert any("allows no hints" in str(n.message) for n in app._notifications)
