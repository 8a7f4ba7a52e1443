"""The replay viewer: a finished match stepped through event by event, the
table drawn as it was at each step by the table screen's own widgets.

The screen loads every page of the match's ``replay`` first (asking for the
join code if the server wants one), then owns a
:class:`~client.tui.replay.Replay` — the viewer's position is its own, not
the app's: nothing the app follows changes while it is open. Keys:
←/→ one event, ↑/↓ (PgUp/PgDn) one turn, ``t`` and a number a given turn,
Home/End the first and last event, space play or pause, +/− the speed,
q or Esc back to where it was opened from. On a phone (the narrow layout) the
panels stack and buttons step, play and go back.

The analysis (issue 32): ``e`` asks the server for the player's own
(``analyse``; the panel shows its progress while it is computed), and the
analysis panel takes the log's place: the summary, the three costliest
decisions (``1``–``3`` jump to them), and the current decision's options with
their values. ``n``/``p`` jump to the next and previous marked decision, ``m``
opens "learn from your mistakes" (:class:`~client.tui.screens.learn.LearnScreen`),
and in a finished open-box match ``s`` shows the next seat's analysis.

Playing runs on a scheduler (``scheduler(interval, callback)`` returning
something with ``stop()``): Textual's ``set_interval`` unless a test hands
in its own, to drive time by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal
from textual.screen import Screen

import protocol as wire
from client.sdk import RequestError

from ..analysis import (
    Analyses,
    Analysis,
    decision_heading,
    decision_table,
    mark_text,
    progress_text,
    summary_text,
    timeline,
)
from ..i18n import rich, t
from ..replay import Replay, ReplayLoadError, ReplayPages, fetch_record
from ..widgets.analysis import AnalysisPanel
from ..widgets.bars import KeyBar, TitleBar, TitleView
from ..widgets.bouquets import PlayersPanel
from ..widgets.festival import FestivalPanel
from ..widgets.log import EventLog
from ..widgets.replay import ReplayPanel
from ..widgets.toosmall import TooSmall
from ..widgets.touch import TouchButton
from .dialogs import JoinCodeScreen

__all__ = ["ReplayScreen", "ReplaySource", "Scheduler", "Ticker"]

MAX_TURN_DIGITS = 4


class Ticker(Protocol):
    """A running repeat that can be stopped (a Textual ``Timer``)."""

    def stop(self) -> None:
        """Stop repeating."""


#: Calls ``callback`` every ``interval`` seconds until the ticker is stopped.
Scheduler = Callable[[float, Callable[[], None]], Ticker]

_KEYS = (
    ("keyname.arrows", "keys.step"),
    ("keyname.updown", "keys.turn_step"),
    ("keyname.t", "keys.goto"),
    ("keyname.space", "keys.play"),
    ("keyname.e", "keys.analysis"),
    ("keyname.quit", "keys.back"),
)
#: the keys once the analysis shows (the seat key only in an open-box match)
_ANALYSED_KEYS = (
    ("keyname.arrows", "keys.step"),
    ("keyname.pn", "keys.costly"),
    ("keyname.m", "keys.learn"),
    ("keyname.quit", "keys.back"),
)
_SEAT_KEY = ("keyname.s", "keys.seat")
#: the narrow layout's control buttons: (label id, ``action_control``'s arguments)
_CONTROLS = (
    ("replay.button.start", "('start')"),
    ("replay.button.end", "('end')"),
    ("replay.button.turn_back", "('turn', -1)"),
    ("replay.button.turn_next", "('turn', 1)"),
    ("replay.button.step_back", "('step', -1)"),
    ("replay.button.step_next", "('step', 1)"),
    ("replay.button.slower", "('speed', -1)"),
    ("replay.button.faster", "('speed', 1)"),
    ("replay.button.play", "('play')"),
    ("replay.button.analysis", "('analyse')"),
    ("replay.button.previous_costly", "('costly', -1)"),
    ("replay.button.next_costly", "('costly', 1)"),
    ("replay.button.learn", "('learn')"),
    ("replay.button.back", "('back')"),
)
_SEAT_CONTROL = ("replay.button.seat", "('seat')")
#: actions that need a loaded replay and no turn number being typed
_STEPPING = frozenset(
    {"step", "turn", "start", "end", "play", "speed", "ask_turn", "learn", "costly", "seat"}
)
#: actions only for typing a turn number
_TYPING = frozenset({"digit", "erase", "confirm"})


class ReplaySource(ReplayPages, Analyses, Protocol):
    """What the viewer needs of a session: replay pages and analyses."""


def _analysis_error(exc: RequestError) -> str:
    if exc.code in ("not_finished", "not_your_seat", "analysis_busy"):
        return t(f"analysis.error.{exc.code}")
    return t("errcode.other", code=exc.code, message=exc.error.message)


def _error_text(exc: RequestError, match: str) -> str:
    if exc.code == "no_such_match":
        return t("replay.error.no_such_match", match=match)
    if exc.code == "bad_join_code":
        return t("replay.error.bad_join_code")
    return t("errcode.other", code=exc.code, message=exc.error.message)


class ReplayScreen(Screen[None]):
    """Loads and shows the replay of one match."""

    BINDINGS = [
        Binding("right", "step(1)", show=False),
        Binding("left", "step(-1)", show=False),
        Binding("down,pagedown", "turn(1)", show=False),
        Binding("up,pageup", "turn(-1)", show=False),
        Binding("home", "start", show=False),
        Binding("end", "end", show=False),
        Binding("space", "play", show=False),
        Binding("plus,equals_sign", "speed(1)", show=False),
        Binding("minus,underscore", "speed(-1)", show=False),
        Binding("t", "ask_turn", show=False),
        Binding("e", "analyse", show=False),
        Binding("n", "costly(1)", show=False),
        Binding("p", "costly(-1)", show=False),
        Binding("m", "learn", show=False),
        Binding("s", "seat", show=False),
        *(Binding(str(d), f"digit('{d}')", show=False) for d in range(10)),
        Binding("backspace", "erase", show=False),
        Binding("enter", "confirm", show=False),
        Binding("escape,q", "back", show=False),
    ]

    def __init__(
        self,
        session: ReplaySource,
        match: str,
        *,
        summary: wire.MatchSummary | None = None,
        points: wire.Points | None = None,
        join_code: str | None = None,
        scheduler: Scheduler | None = None,
        analyse: bool = False,
        learn: bool = False,
    ) -> None:
        """``analyse``: ask for the analysis at once; ``learn``: and then open
        "learn from your mistakes"."""
        super().__init__()
        self.session = session
        self.match = match
        self.summary = summary
        self.points = points
        self.join_code = join_code
        self.scheduler: Scheduler = scheduler or self._interval
        self.replay: Replay | None = None
        self.typing: str | None = None
        self.note: str | None = None
        self._ticker: Ticker | None = None
        #: the analyses shown so far, by seat; the one on view
        self.analyses: dict[int, Analysis] = {}
        self.analysis: Analysis | None = None
        #: an analysis asked for and not answered yet, and its last progress
        self.analysing = analyse or learn
        self.progress: wire.AnalysisProgress | None = None
        self.analysis_note: str | None = None
        self._learn_when_ready = learn

    @property
    def open_box(self) -> bool:
        """A finished open-box match: every seat's analysis may be shown (R27)."""
        return self.summary is not None and self.summary.open_box

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="upper"):
            yield FestivalPanel(classes="panel")
            yield PlayersPanel(classes="panel")
        with Horizontal(id="lower"):
            yield ReplayPanel(classes="panel")
            yield EventLog(classes="panel")
            yield AnalysisPanel(classes="panel")
        with Grid(id="replay-controls"):  # a phone's: every stepping key a button
            controls = (*_CONTROLS, _SEAT_CONTROL) if self.open_box else _CONTROLS
            for label, action in controls:
                yield TouchButton(t(label), action=f"screen.control{action}")
        yield KeyBar()
        yield TooSmall()

    def on_mount(self) -> None:
        self._keys()
        self._title()
        self.load(self.join_code)
        if self.analysing:
            self.fetch_analysis(self._default_seat())

    def _keys(self) -> None:
        keys: tuple[tuple[str, str], ...] = _KEYS
        if self.analysis is not None:
            keys = _ANALYSED_KEYS
            if self.open_box:
                keys = (*keys[:-1], _SEAT_KEY, keys[-1])
        self.query_one(KeyBar).keys = keys

    def on_unmount(self) -> None:
        self._stop()

    # -- loading -------------------------------------------------------------------------------

    @property
    def _match_name(self) -> str:
        return self.summary.name if self.summary is not None else self.match

    def _title(self) -> None:
        self.query_one(TitleBar).view = TitleView(where=self._match_name, detail=t("replay.title"))

    def _say(self, text: str, style: str = "") -> None:
        panel = self.query_one(ReplayPanel)
        panel.view = None
        panel.message = Text(text, style=style)

    def _progress(self, count: int) -> None:
        self._say(t("replay.loading_count", name=self._match_name, count=count), "italic")

    @work(exclusive=True, group="replay-load", exit_on_error=False)
    async def load(self, join_code: str | None) -> None:
        """Fetch every page, then show the first event (or say what went wrong)."""
        self._say(t("replay.loading", name=self._match_name), "italic")
        try:
            record = await fetch_record(
                self.session, self.match, join_code, progress=self._progress
            )
        except RequestError as exc:
            if exc.code == "bad_join_code" and join_code is None:
                self.app.push_screen(JoinCodeScreen(), self._with_code)
                return
            self._fail(_error_text(exc, self.match))
            return
        except (ConnectionError, TimeoutError):
            self._fail(t("replay.error.lost"))
            return
        except ReplayLoadError as exc:
            self._fail(t("replay.error.pages", reason=str(exc)))
            return
        if not record.events:
            self._fail(t("replay.error.empty"))
            return
        self.replay = Replay(record, self.summary, self.points or record.points)
        self._draw()
        self._maybe_learn()

    def _with_code(self, code: str | None) -> None:
        if code is None:
            self.dismiss()
        else:
            self.load(code)

    def _fail(self, message: str) -> None:
        self._say(message + "\n\n" + t("replay.back_hint"), "bold")

    # -- drawing ---------------------------------------------------------------------------------

    def _draw(self) -> None:
        replay = self.replay
        if replay is None:
            return
        view = replay.table()
        self.query_one(FestivalPanel).view = view.festival
        self.query_one(PlayersPanel).rows = view.players
        self.query_one(EventLog).lines = view.log
        panel = self.query_one(ReplayPanel)
        shown = replay.view(self.typing, self.note)
        analysis = self.analysis
        if analysis is not None:
            taken = analysis.at(replay.position - 1)  # the event after a decision bears its mark
            if taken is not None and taken.seq == replay.position - 1 and taken.mark:
                marked = shown.caption.copy()
                marked.append(" ")
                marked.append_text(mark_text(taken.mark))
                shown = replace(shown, caption=marked)
            panel.extra = self._summary(analysis)
        else:
            panel.extra = None
        panel.view = shown
        self._draw_analysis()

    # -- the analysis ----------------------------------------------------------------------------

    def _default_seat(self) -> int | None:
        """Whose analysis to ask for first: ours (the server knows our seat);
        a spectator of an open-box match, the first seat's."""
        seat = self.replay.record.seat if self.replay is not None else None
        if seat is None and self.open_box:
            return 0
        return None

    def _names(self) -> dict[int, str]:
        return self.replay.names if self.replay is not None else {}

    def _you(self, seat: int) -> bool:
        return self.replay is not None and self.replay.record.seat == seat

    @work(group="analysis", exit_on_error=False)
    async def fetch_analysis(self, seat: int | None) -> None:
        """Ask for ``seat``'s analysis (None: ours), showing its progress."""
        self.analysing = True
        self.progress = None
        self.analysis_note = None
        self.set_class(True, "-analysed")
        self._draw_analysis()
        try:
            report = await self.session.analyse(
                self.match, seat=seat, join_code=self.join_code, progress=self._progressed
            )
        except RequestError as exc:
            self.analysis_note = _analysis_error(exc)
        except (ConnectionError, TimeoutError):
            self.analysis_note = t("analysis.error.lost")
        else:
            self.analysis = self.analyses[report.seat] = Analysis(report)
            self._keys()
        finally:
            self.analysing = False
        self._draw()  # the replay panel's summary and the analysis panel (or its refusal)
        self._draw_analysis()
        self._maybe_learn()

    def _progressed(self, progress: wire.AnalysisProgress) -> None:
        self.progress = progress
        self._draw_analysis()

    def _maybe_learn(self) -> None:
        if self._learn_when_ready and self.analysis is not None and self.replay is not None:
            self._learn_when_ready = False
            self.action_learn()

    def _draw_analysis(self) -> None:
        if not self.is_mounted:
            return
        panel = self.query_one(AnalysisPanel)
        if self.analysing:
            panel.show(progress_text(self.progress))
            return
        if self.analysis is None:
            if self.analysis_note is not None:
                panel.show(Text(self.analysis_note + "\n" + t("analysis.back_hint"), style="bold"))
            return
        panel.show(self._analysis_body(self.analysis))

    def _summary(self, analysis: Analysis) -> RenderableType:
        """The replay panel's lines about the analysis: the player's summary,
        every decision as a mark, and the three costliest (1–3 jump there)."""
        names = self._names()
        seat = analysis.seat
        name = names.get(seat, t("seat.numbered", n=seat + 1))
        position = self.replay.position if self.replay is not None else 0
        parts: list[RenderableType] = [
            summary_text(analysis.report, name, you=self._you(seat)),
            timeline(analysis, analysis.at(position)),
        ]
        costly = analysis.costliest
        if costly:
            line = Text(t("analysis.costliest"), style="dim")
            for number, item in enumerate(costly, start=1):
                line.append("  ")
                line.append(f"{number}", style="bold reverse")
                line.append(" " + t("analysis.turn_short", turn=item.turn) + " ")
                line.append_text(mark_text(item.mark))
            parts.append(line)
        if self.analysis_note:
            parts.append(Text(self.analysis_note, style="bold red"))
        return Group(*parts)

    def _analysis_body(self, analysis: Analysis) -> RenderableType:
        names = self._names()
        seat = analysis.seat
        you = self._you(seat)
        position = self.replay.position if self.replay is not None else 0
        decision = analysis.at(position)
        parts: list[RenderableType] = []
        if decision is None:
            parts.append(Text(t("analysis.none_yet"), style="dim italic"))
            return Group(*parts)
        parts.append(decision_heading(decision, names, seat, you=you))
        if decision.seq != position:
            parts.append(rich("analysis.not_here", style="dim", keys=t("keyname.pn")))
        parts.append(decision_table(decision, names))
        return Group(*parts)

    def action_analyse(self) -> None:
        """Ask for the analysis (ours, or the one shown), unless it is here or on its way."""
        if self.analysing:
            return
        if self.analysis is not None:
            self.analysis_note = None
            self._draw_analysis()
            return
        self.fetch_analysis(self._default_seat())

    def action_costly(self, direction: int) -> None:
        """To the next (or previous) decision the analysis marked."""
        if self.analysis is None or self.replay is None:
            self.action_analyse()
            return
        found = self.analysis.next_marked(self.replay.position, direction)
        if found is None:
            self.note = t("analysis.no_more" if direction > 0 else "analysis.no_earlier")
            self._draw()
            return
        self._go_to(found)

    def _go_to(self, decision: wire.DecisionReview) -> None:
        assert self.replay is not None
        self.replay.go(decision.seq)
        self.replay.playing = False
        self._restart()
        self._moved()

    def action_seat(self) -> None:
        """In a finished open-box match: the next seat's analysis (R27)."""
        if not self.open_box or self.analysing or self.replay is None:
            return
        seats = len(self.replay.states[0].seats)
        current = self.analysis.seat if self.analysis is not None else -1
        seat = (current + 1) % max(1, seats)
        if seat in self.analyses:
            self.analysis = self.analyses[seat]
            self._draw()
        else:
            self.fetch_analysis(seat)

    def action_learn(self) -> None:
        """Choose again at the costliest decisions ("learn from your mistakes")."""
        from .learn import LearnScreen

        if self.replay is None:
            return
        if self.analysis is None:
            self._learn_when_ready = True
            self.action_analyse()
            return
        self._stop()
        self.replay.playing = False
        seat = self.analysis.seat
        self.app.push_screen(
            LearnScreen(self.replay, self.analysis, you=self._you(seat)), lambda _: self._draw()
        )

    # -- keys --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Stepping keys work once loaded and while no turn number is typed;
        digits, Backspace and Enter only while one is."""
        if action in _STEPPING:
            return self.replay is not None and self.typing is None
        if action == "digit":  # a turn number, or with the analysis one of its costliest
            analysed = self.replay is not None and self.analysis is not None
            return self.typing is not None or analysed
        if action in _TYPING:
            return self.typing is not None
        return True

    def action_control(self, action: str, *arguments: int) -> None:
        """A control button (the narrow layout's): the action its key runs, when
        that key would work now."""
        if self.check_action(action, arguments):
            getattr(self, f"action_{action}")(*arguments)

    def _moved(self) -> None:
        self.note = None
        self._draw()

    def action_step(self, delta: int) -> None:
        """One event forwards or back."""
        assert self.replay is not None
        self.replay.step(delta)
        self._moved()

    def action_turn(self, delta: int) -> None:
        """To the next turn, or the start of this (or the previous) one."""
        assert self.replay is not None
        if delta > 0:
            self.replay.next_turn()
        else:
            self.replay.previous_turn()
        self._moved()

    def action_start(self) -> None:
        """To the first event."""
        assert self.replay is not None
        self.replay.go(1)
        self._moved()

    def action_end(self) -> None:
        """To the last event: the final scoring."""
        assert self.replay is not None
        self.replay.go(self.replay.total)
        self._moved()

    def action_play(self) -> None:
        """Play or pause."""
        assert self.replay is not None
        self.replay.toggle()
        self._restart()
        self._moved()

    def action_speed(self, steps: int) -> None:
        """Faster or slower."""
        assert self.replay is not None
        self.replay.faster(steps)
        self._restart()
        self._draw()

    def action_ask_turn(self) -> None:
        """Start typing a turn number."""
        self.typing = ""
        self.note = None
        self._draw()

    def action_digit(self, digit: str) -> None:
        """One more digit of the turn number; with none being typed, 1–3 jump
        to the analysis's costliest decisions."""
        if self.typing is None:
            costly = self.analysis.costliest if self.analysis is not None else ()
            if "1" <= digit <= str(len(costly)):
                self._go_to(costly[int(digit) - 1])
            return
        if len(self.typing) < MAX_TURN_DIGITS:
            self.typing += digit
            self._draw()

    def action_erase(self) -> None:
        """Take back the last digit."""
        if self.typing:
            self.typing = self.typing[:-1]
            self._draw()

    def action_confirm(self) -> None:
        """Go to the typed turn (or say there is none)."""
        assert self.replay is not None
        typed, self.typing = self.typing, None
        if typed:
            turn = int(typed)
            if self.replay.go_to_turn(turn):
                self.note = None
            else:
                self.note = t("replay.no_turn", turn=turn, turns=self.replay.turns)
        self._draw()

    def action_back(self) -> None:
        """Stop typing a turn number, or leave the viewer."""
        if self.typing is not None:
            self.typing = None
            self._draw()
            return
        self._stop()
        self.dismiss()

    # -- playing -------------------------------------------------------------------------------

    def _interval(self, interval: float, callback: Callable[[], None]) -> Ticker:
        return self.set_interval(interval, callback)

    def _stop(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _restart(self) -> None:
        """(Re)start the ticker at the current speed if playing; else stop it."""
        self._stop()
        if self.replay is not None and self.replay.playing:
            self._ticker = self.scheduler(1 / self.replay.speed, self._tick)

    def _tick(self) -> None:
        replay = self.replay
        if replay is None or not replay.playing:
            self._stop()
            return
        replay.tick()
        if not replay.playing:
            self._stop()
        self._draw()
