"""Learning the game in the terminal client (issue 32), against a real server:
the analysis asked for from the final scores (its progress, then the marks,
the options' values and the summary in the replay viewer), learning from
one's mistakes, and hints in a match that allows them (refused cleanly in one
that does not). The client shows what the server sends: nothing here needs
the rules."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from multiprocessing import resource_tracker
from typing import Any

import msgspec
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

from . import fakes
from .conftest import Running
from .driver import play_to_the_end, until
from .screens import URL, screen_text, scripted, settle

#: few deals: the server's tests check the values, these the screens
DEALS = 3


@pytest.fixture
async def analysing() -> AsyncIterator[Running]:
    """A server whose analyses and hints are quick (few deals, a short think).

    Its worker processes need multiprocessing's resource tracker, which is
    started here: under ``run_test`` the standard error it would hand down is
    Textual's capture, which has no file descriptor, and spawning fails with
    "bad value(s) in fds_to_keep" (Textualize/textual#3593). The real client
    never meets it: its local server is a process of its own."""
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
        timeout=300,  # the server's analysis workers run at a low priority
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
    actions: tuple[wire.Action, ...] = (wire.Keep(), wire.Give(to_seat=1), wire.AddSecret())
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


# -- on a scripted session: the viewer's keys, step by step ------------------------------------


class HeldAnalyses(fakes.ScriptedSession):
    """A session whose analysis waits, half done, until the test lets it finish."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = asyncio.Event()

    async def analyse(
        self,
        match: str,
        *,
        seat: int | None = None,
        join_code: str | None = None,
        progress: Callable[[wire.AnalysisProgress], object] | None = None,
    ) -> wire.AnalysisReport:
        self.requests.append(("analyse", (match,), {"seat": seat}))
        assert progress is not None
        progress(wire.AnalysisProgress(match=match, seat=0, queued=2))
        await asyncio.sleep(0)
        progress(wire.AnalysisProgress(match=match, seat=0, queued=0, done=1, total=3))
        await self.release.wait()
        return fakes.analysis_report(match)


def _held_app() -> tuple[TulipsApp, HeldAnalyses]:
    own = fakes.replay_pages(fakes.short_match_as_ada(), fakes.MATCH, seat=0)
    session = HeldAnalyses(fakes.ending(), answers={"replay": own})
    plan = Plan(name="Ada", url=URL)
    app = TulipsApp(plan, sessions=fakes.factory(session), reveal_delay=0, clock=lambda: 1000.0)
    return app, session


async def test_the_progress_shows_then_n_p_and_digits_jump_between_marked_decisions() -> None:
    """e on the final scores: "decision 1 of 3" while it is computed; then the
    summary, the marks on the timeline and on the event after each decision,
    n/p to the next and previous marked decision, 1 and 2 to the costliest."""
    app, session = _held_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FinalScreen), what="the scores")
        await pilot.press("e")
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, ReplayScreen)
                and app.screen.progress is not None
                and app.screen.progress.done == 1
            ),
            what="the progress",
        )
        await pilot.pause()
        assert "Analysing: decision 1 of 3" in screen_text(app)
        session.release.set()
        analysis = await _analysed(pilot, app)
        viewer = _viewer(app)
        replay = viewer.replay
        assert replay is not None
        text = screen_text(app)
        assert "You: accuracy 33% · mean loss" in text and "?! 0  ? 1  ?? 1" in text
        assert "Costliest:" in text and "T1 ??" in text
        await pilot.press("n")
        await pilot.pause()
        assert replay.position == 10  # the table Ada decided on: her first card drawn
        text = screen_text(app)
        assert "Turn 1 · you drew ▲4 · ? mistake −4.2" in text
        assert "▸  Keep it" in text and "★ Add face up" in text and "32.3" in text
        await pilot.press("right")
        await pilot.pause()
        assert "You kept ▲4 (+2). ?" in screen_text(app)  # the mark on the decision's event
        await pilot.press("n")
        await pilot.pause()
        assert replay.position == 12 and "?? blunder" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert replay.position == 12 and "No marked decision" in screen_text(app)
        await pilot.press("p")
        await pilot.pause()
        assert replay.position == 10
        await pilot.press("1")
        await pilot.pause()
        assert replay.position == analysis.costliest[0].seq == 12
        await pilot.press("2")
        await pilot.pause()
        assert replay.position == analysis.costliest[1].seq == 10


def _learning_app() -> TulipsApp:
    """Ada's match to its final scores, her replay and analysis at hand."""
    own = fakes.replay_pages(fakes.short_match_as_ada(), fakes.MATCH, seat=0)
    app, _ = scripted(fakes.ending(), replay=own, analyse=fakes.analysed())
    return app


async def _learn_from_the_scores(pilot: Pilot[Any], app: TulipsApp) -> LearnScreen:
    """From the final scores, m: learning from Ada's mistakes."""
    await until(pilot, lambda: isinstance(app.screen, FinalScreen), what="the scores")
    await pilot.press("m")
    await until(pilot, lambda: isinstance(app.screen, LearnScreen), what="learning")
    learn = app.screen
    assert isinstance(learn, LearnScreen)
    return learn


async def test_learning_asks_again_then_shows_the_verdict_and_steps_to_the_end() -> None:
    """m: the costliest decision first, at its table, its options without
    values; a choice shows the verdict with every value; n the next; then done."""
    app = _learning_app()
    async with app.run_test(size=(80, 24)) as pilot:
        learn = await _learn_from_the_scores(pilot, app)
        assert [d.seq for d in learn.lessons] == [12, 10]  # the blunder, then the mistake
        text = screen_text(app)
        assert "1 of 2 · Turn 1 · you drew ♥3" in text and "In the match: ?? blunder" in text
        assert "33.0" not in text and "Keep it" in text
        await pilot.press("1")  # keep: the best this time
        await pilot.pause()
        text = screen_text(app)
        assert (
            "The best choice!" in text and "Your choice: Keep it — 33.0 points, 41% to win" in text
        )
        assert "In the match: Give it to" in text
        await pilot.press("n")
        await pilot.pause()
        assert learn.decision is not None and learn.decision.seq == 10
        await pilot.press("2")
        await pilot.pause()
        text = screen_text(app)
        assert "Not the best: 3.3 points less." in text
        assert "The best: Add face up — 32.3 points, 36% to win" in text
        await pilot.press("n")
        await pilot.pause()
        assert "That was the last one." in screen_text(app)
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="back to the viewer")


async def test_learning_from_another_seat_does_not_show_our_secret_cards_as_its_own() -> None:
    """R25, R27: in a finished open-box match one may learn from another
    seat's analysis; the table is then shown without the cards we hid (they
    were ours, not that seat's), which our own lessons show."""
    app = _learning_app()
    async with app.run_test(size=(100, 30)) as pilot:
        mine = await _learn_from_the_scores(pilot, app)
        await pilot.pause()
        assert "Your secret cards: ♥3" in screen_text(app)
        theirs = msgspec.structs.replace(fakes.analysis_report(fakes.MATCH), seat=1)
        await app.push_screen(LearnScreen(mine.replay, Analysis(theirs), you=False))
        await pilot.pause()
        text = screen_text(app)
        assert "Your secret cards" not in text
        assert "1 of 2 · Turn 1 · Bot 2 drew ♥3" in text  # the lesson is the other seat's


async def test_a_refused_analysis_is_said_in_the_panel() -> None:
    """not_your_seat from the server: the panel says whose analyses can be shown."""
    refusal = wire.Error(code="not_your_seat", message="not yours")
    own = fakes.replay_pages(fakes.short_match_as_ada(), fakes.MATCH, seat=0)
    app, session = scripted(fakes.ending(), replay=own, analyse=lambda *a, **k: refusal)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, session)
        await until(pilot, lambda: isinstance(app.screen, FinalScreen), what="the scores")
        await pilot.press("e")
        await until(
            pilot,
            lambda: isinstance(app.screen, ReplayScreen) and app.screen.analysis_note is not None,
            what="the refusal",
        )
        await pilot.pause()
        assert "Only the players' own" in screen_text(app)


async def test_an_open_box_match_shows_every_seats_analysis_in_turn() -> None:
    """R27: a finished open-box match, opened from the lobby by a spectator:
    seat 1's analysis first (no seat of our own), s asks for the next seat's."""
    finished = msgspec.structs.replace(fakes.replayed_summary(), open_box=True)

    def answer(match: str, **kwargs: Any) -> wire.AnalysisReport:
        report = fakes.analysis_report(match)
        return msgspec.structs.replace(report, seat=kwargs["seat"])

    app, session = scripted(
        [], matches=[finished], replay=fakes.replay_pages(fakes.short_match()), analyse=answer
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, session)
        await pilot.press("v")
        await until(pilot, lambda: getattr(app.screen, "replay", None) is not None, what="replay")
        await pilot.press("e")
        analysis = await _analysed(pilot, app)
        assert analysis.seat == 0 and "Ada: accuracy 33%" in screen_text(app)
        assert "seat" in screen_text(app)  # the key bar offers the next seat
        await pilot.press("s")
        await until(
            pilot,
            lambda: _viewer(app).analysis is not None and _viewer(app).analysis.seat == 1,  # type: ignore[union-attr]
            what="the next seat",
        )
        await pilot.pause()
        assert "Bot 2: accuracy 33%" in screen_text(app)
        seats = [kw["seat"] for kind, _, kw in session.requests if kind == "analyse"]
        assert seats == [0, 1]


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
        assert "What would you choose now?" in text
        assert f"{lesson.options[lesson.best].expected_points:.1f}" not in text  # not yet
        await pilot.press("1")
        await pilot.pause()
        text = screen_text(app)
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
