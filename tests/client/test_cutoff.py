"""No text is cut off at 80×24, the smallest terminal the client supports, in
any language: every screen a player meets, in English, German and Spanish.

For each widget on the screen, its whole text (a button's label, a table's
headers and cells, a panel's title …) must be on what the widget draws, word
for word and in order (wrapped over lines is fine, an ellipsis or a cut is
not); no widget may stick out sideways from the container that shows it, or
below one that cannot scroll. Scrolling content (the log, the rules) counts
as shown: it is all there to scroll to."""

from __future__ import annotations

import asyncio
import io
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import msgspec
import pytest
from rich.console import Console, RenderableType
from rich.text import Text
from textual.app import App
from textual.content import Content
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, DataTable, Input, Static
from textual.widgets._toggle_button import ToggleButton

import protocol as wire
from client.sdk import ConnectionLost
from client.tui import i18n
from client.tui.app import TulipsApp
from client.tui.i18n import LANGUAGES

from . import fakes
from .fakes import MATCH
from .screens import running

SIZE = (80, 24)
Step = Callable[[Pilot[Any], fakes.ScriptedSession], Awaitable[None]]


def _plain(renderable: object) -> str:
    """Everything a renderable says, on a console too wide to cut anything."""
    if isinstance(renderable, str):
        return renderable
    if isinstance(renderable, Content | Text):
        return renderable.plain
    console = Console(width=2000, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def _full_text(widget: Widget) -> str | None:
    """The widget's whole text, or None for a widget that draws none of its own."""
    if isinstance(widget, Button | ToggleButton):
        return _plain(widget.label)
    if isinstance(widget, Input):
        return widget.value or _plain(widget.placeholder)
    if isinstance(widget, DataTable):
        header = " ".join(_plain(column.label) for column in widget.columns.values())
        rows = (" ".join(map(_plain, widget.get_row_at(i))) for i in range(widget.row_count))
        return "\n".join([header, *rows])
    if isinstance(widget, Static):
        return _plain(widget.content)
    if type(widget).render is not Widget.render:
        rendered: RenderableType = widget.render()  # type: ignore[assignment]
        return _plain(rendered)
    return None


def _drawn(widget: Widget) -> list[str]:
    """The lines the widget draws at its laid-out size, border included."""
    strips = widget.render_lines(Region(0, 0, widget.outer_size.width, widget.outer_size.height))
    return [strip.text for strip in strips]


def _words(text: str) -> list[str]:
    return re.findall(r"\S+", text)


def _missing(expected: list[str], shown: list[str], *, ordered: bool = True) -> list[str]:
    """The words of ``expected`` not found (in order, if ``ordered``) among ``shown``."""
    if not ordered:  # a table's cells wrap beside each other: their words interleave
        left = Counter(shown)
        left.subtract(expected)
        return [word for word, count in left.items() if count < 0]
    found = iter(shown)
    return [word for word in expected if word not in found]


def _in_scrolling(widget: Widget) -> bool:
    """Whether a container around the widget scrolls up and down."""
    return any(isinstance(node, Widget) and node.allow_vertical_scroll for node in widget.ancestors)


def cut_off(app: App[Any]) -> Iterator[str]:
    """Every cut in what the app shows now, described."""
    screen = app.screen
    for widget in screen.walk_children(Widget, with_self=False):
        if not widget.display or not widget.visible or widget.outer_size.area == 0:
            continue
        name = f"{type(widget).__name__}#{widget.id or '?'}"
        geometry = screen.find_widget(widget)
        region, clip = geometry.region, geometry.clip
        if region.x < clip.x or region.right > clip.right:
            yield f"{name} sticks out sideways: {region} in {clip}"
        if region.bottom > clip.bottom and not _in_scrolling(widget):
            yield f"{name} is cut off at the bottom: {region} in {clip}"
        drawn = _drawn(widget)
        for title, line in ((widget.border_title, 0), (widget.border_subtitle, -1)):
            plain = Content.from_markup(title).plain if title else ""
            if plain and _missing(_words(plain), _words(drawn[line] if drawn else "")):
                yield f"{name}: border title {plain!r} drawn as {drawn[line]!r}"
        text = _full_text(widget)
        if text is None:
            continue
        if isinstance(widget, DataTable) and widget.virtual_size.width > widget.size.width:
            yield f"{name}: {widget.virtual_size.width} columns of table in {widget.size.width}"
        ordered = not isinstance(widget, DataTable)
        missing = _missing(_words(text), _words("\n".join(drawn)), ordered=ordered)
        if missing:
            yield f"{name}: {text!r} drawn as {drawn!r}; missing {missing}"


# -- the screens ---------------------------------------------------------------------


def _press(*keys: str) -> Step:
    async def step(pilot: Pilot[Any], session: fakes.ScriptedSession) -> None:
        for key in keys:
            await pilot.press(key)
            await pilot.pause()

    return step


def _feed(*messages: object) -> Step:
    async def step(pilot: Pilot[Any], session: fakes.ScriptedSession) -> None:
        session.feed(*messages)
        for _ in range(3):
            await pilot.pause()

    return step


def _join_code(code: str) -> Step:
    """The host created the match with this join code (as the new-match form does)."""

    async def step(pilot: Pilot[Any], session: fakes.ScriptedSession) -> None:
        app = pilot.app
        assert isinstance(app, TulipsApp)
        app._join_codes[MATCH] = code
        app._render_table()
        await pilot.pause()

    return step


def _offer_rulesets(*then: Step) -> Step:
    """The server's welcome offered a house ruleset besides the printed rules."""

    async def step(pilot: Pilot[Any], session: fakes.ScriptedSession) -> None:
        app = pilot.app
        assert isinstance(app, TulipsApp)
        app.rulesets = dict(fakes.RULESETS)
        for next_step in then:
            await next_step(pilot, session)

    return step


def _open(*keys: str) -> Step:
    """Press the keys, then wait for the page they open to have its answer."""

    async def step(pilot: Pilot[Any], session: fakes.ScriptedSession) -> None:
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        async with asyncio.timeout(5):
            while not getattr(pilot.app.screen, "loaded", True):
                await pilot.pause(0.01)
        await pilot.pause()

    return step


def _rated(summary: wire.MatchSummary) -> wire.MatchSummary:
    """The match, rated (the lobby marks it)."""
    return msgspec.structs.replace(summary, rated=True)


def _event(seq: int, event: wire.GameEvent) -> wire.Event:
    return wire.Event(match=MATCH, seq=seq, event=event)


SECOND_CARD = _feed(
    _event(98, wire.CardKept(seat=1, card="orange-4", points=1)),
    _event(99, wire.CardDrawn(seat=1, card="blue-3", deck_count=20)),
    wire.Prompt(
        match=MATCH,
        seq=99,
        seat=1,
        actions=(
            wire.Give(to_seat=0),
            wire.Give(to_seat=2),
            wire.Give(to_seat=3),
            wire.AddFaceUp(),
        ),
        points=(5, 5, 5, 0),
        rankings=(None, None, None, ("blue", "purple", "orange", "pink")),  # 2nd → 1st (R8)
    ),
)
#: the second card a pink 2: face up, pink 3 + 2 = 5 stays under orange's 6 (R8)
SECOND_CARD_STAYS = _feed(
    _event(98, wire.CardKept(seat=1, card="orange-4", points=1)),
    _event(99, wire.CardDrawn(seat=1, card="pink-2", deck_count=20)),
    wire.Prompt(
        match=MATCH,
        seq=99,
        seat=1,
        actions=(
            wire.Give(to_seat=0),
            wire.Give(to_seat=2),
            wire.Give(to_seat=3),
            wire.AddFaceUp(),
        ),
        points=(2, 2, 2, 0),
        rankings=(None, None, None, ("purple", "blue", "orange", "pink")),
    ),
)
CHAT_LINE = wire.ChatLine(
    match=MATCH, seat=0, name="Cy", text="well played, that give was a good one"
)


def _analysed(*keys: str) -> Step:
    """e on the final scores, until the viewer shows the analysis; then ``keys``."""

    async def step(pilot: Pilot[Any], session: fakes.ScriptedSession) -> None:
        from client.tui.screens.replay import ReplayScreen

        await pilot.press("e")
        async with asyncio.timeout(5):
            while not (
                isinstance(pilot.app.screen, ReplayScreen)
                and pilot.app.screen.analysis is not None
                and pilot.app.screen.replay is not None
            ):
                await pilot.pause(0.01)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause()

    return step


#: the analysis of Ada's seat, with her own view of the match to replay (issue 32)
ANALYSIS = {
    "replay": fakes.replay_pages(fakes.short_match_as_ada(), fakes.MATCH, seat=0),
    "analyse": fakes.analysed(),
}
OPENING_DONE = _feed(_event(6, wire.OpeningChosen(seat=0, bouquet="pink-4", secret="blue-3")))

#: a server that keeps profiles, ratings and history (and the lobby's matches)
PROFILES: dict[str, Any] = {"matches": fakes.lobby_matches(), **fakes.PROFILE_ANSWERS}

#: name: (script, keyword arguments of the app, steps after it settled)
SCREENS: dict[str, tuple[Callable[[], list[object]], dict[str, Any], tuple[Step, ...]]] = {
    "lobby": (list, {"matches": fakes.lobby_matches()}, ()),
    "new-match": (list, {"matches": fakes.lobby_matches()}, (_press("n"),)),
    "join-code": (list, {"matches": fakes.lobby_matches()}, (_press("j"),)),
    "waiting-room": (fakes.waiting_room, {}, ()),
    "waiting-room-code": (fakes.waiting_room, {}, (_join_code("tulip-garden-2026"),)),
    "rematch-waiting-room": (fakes.rematch_waiting_room, {}, ()),
    "add-bot": (fakes.waiting_room, {}, (_press("b"),)),
    "remove-seat": (fakes.rematch_waiting_room, {}, (_press("x"),)),
    "new-match-ruleset": (
        list,
        {"matches": fakes.lobby_matches()},
        (_offer_rulesets(_press("n")),),
    ),
    "waiting-room-house-rules": (
        fakes.house_waiting_room,
        {},
        (_offer_rulesets(_feed(fakes.house_waiting_room()[1])),),
    ),
    "opening": (fakes.opening, {}, ()),
    "opening-done": (fakes.opening, {}, (OPENING_DONE,)),
    "others-turn": (lambda: fakes.mid_game()[:-3], {}, ()),
    "first-card": (fakes.mid_game, {}, ()),
    "give": (fakes.mid_game, {}, (_press("g"),)),
    "second-card": (fakes.mid_game, {}, (_press("k"), SECOND_CARD)),
    "second-card-stays": (fakes.mid_game, {}, (_press("k"), SECOND_CARD_STAYS)),
    "chat": (fakes.mid_game, {}, (_press("c"),)),
    "chat-unread": (fakes.mid_game, {}, (_feed(CHAT_LINE),)),
    "chat-pane": (fakes.mid_game, {}, (_feed(CHAT_LINE), _press("m"))),
    "chat-pane-empty": (fakes.mid_game, {}, (_press("m"),)),
    "help": (fakes.mid_game, {}, (_press("question_mark"),)),
    "watching": (fakes.spectator, {}, ()),
    "final": (fakes.ending, {}, ()),
    "over": (fakes.ending, {}, (_press("t"),)),
    "player-away": (fakes.away, {}, ()),
    "offline": (fakes.mid_game, {}, (_feed(ConnectionLost("1006")),)),
    "timed-out": (fakes.timed_out, {}, ()),
    "quit": (fakes.mid_game, {}, (_press("q"),)),
    "analysis": (fakes.ending, ANALYSIS, (_analysed("n"),)),
    "analysis-summary": (fakes.ending, ANALYSIS, (_analysed(),)),
    "learn": (fakes.ending, ANALYSIS, (_analysed("m"),)),
    "learn-verdict": (fakes.ending, ANALYSIS, (_analysed("m", "3"),)),
    "learn-done": (fakes.ending, ANALYSIS, (_analysed("m", "1", "n", "1", "n"),)),
    "hint": (
        lambda: fakes.with_hints(fakes.mid_game()),
        {"hint": fakes.hint_for(fakes.mid_game())},
        (_press("h"),),
    ),
    "hint-give": (
        lambda: fakes.with_hints(fakes.mid_game()),
        {"hint": fakes.hint_for(fakes.mid_game())},
        (_press("h"), _press("g")),
    ),
    "lobby-hints": (
        list,
        {
            "matches": [
                *fakes.lobby_matches(),
                fakes.summary("open", name="Learners", match="h1", hints=True),
            ]
        },
        (),
    ),
    "waiting-room-hints": (lambda: fakes.with_hints(fakes.waiting_room()), {}, ()),
    "rematch-offer": (
        fakes.ending,
        {},
        (_feed(wire.RematchOffer(match=MATCH, rematch="m9", host="Bea")),),
    ),
    "lobby-rated": (list, {"matches": [_rated(m) for m in fakes.lobby_matches()]}, ()),
    "leaderboard": (list, PROFILES, (_open("b"),)),
    "leaderboard-page-2": (list, PROFILES, (_open("b"), _open("n"))),
    "player-card": (list, PROFILES, (_open("b"), _open("down", "down", "enter"))),
    "profile": (list, PROFILES, (_open("p"),)),
    "history": (list, PROFILES, (_open("h"),)),
    "rename": (list, PROFILES, (_open("p"), _press("e"))),
    "link-code": (list, PROFILES, (_open("p"), _press("k"))),
    "use-link": (list, PROFILES, (_open("p"), _press("u"))),
    "waiting-room-cards": (fakes.rated_waiting_room, PROFILES, (_press("p"),)),
    "final-rated": (fakes.rated_ending, {}, ()),
    "final-ratings": (fakes.rated_ending, {}, (_feed(fakes.ratings_changed()),)),
}


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("screen", list(SCREENS))
async def test_nothing_is_cut_off_at_80x24(screen: str, lang: str) -> None:
    """Every label, option, button, header and title of the screen is whole."""
    script, kwargs, steps = SCREENS[screen]
    i18n.set_language(lang)
    async with running(script(), size=SIZE, **kwargs) as (app, pilot, session):
        for step in steps:
            await step(pilot, session)
        assert list(cut_off(app)) == []


async def test_the_check_finds_a_cut() -> None:
    """A label too long for its button is reported (the check can fail)."""
    i18n.set_language("en")
    async with running(fakes.mid_game(), size=SIZE) as (app, pilot, _):
        button = app.screen.query(Button).first()
        button.label = "k  " + "a very long label that cannot possibly fit " * 2
        await pilot.pause()
        problems = list(cut_off(app))
    assert any("Button" in problem and "missing" in problem for problem in problems), problems


async def test_the_check_finds_buttons_below_the_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal too short for the action panel, its last buttons are
    reported (the app's "make the window bigger" notice switched off, so the
    table is drawn cut off for the check to find)."""
    monkeypatch.setattr(TulipsApp, "VERTICAL_BREAKPOINTS", [])
    async with running(fakes.mid_game(), size=(80, 18)) as (app, _, _):
        problems = list(cut_off(app))
    assert any("cut off at the bottom" in problem for problem in problems), problems
