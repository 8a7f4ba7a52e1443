"""Learn from your mistakes: the costliest decisions of an analysis, one by
one, each at its moment of the match — the table as the seat saw it when it
decided — asking to choose again among the options, their values hidden,
then showing what the analysis thought of the new choice, of the best one and
of the one taken in the match.

Keys: ``1``…``9`` choose an option (a tap on it does the same), ``n`` or
Enter the next decision, ``q`` or Esc back to the replay viewer. The screen
moves the viewer's :class:`~client.tui.replay.Replay` to each decision, so the
viewer is left at the last one looked at."""

from __future__ import annotations

import dataclasses

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Static

import protocol as wire

from ..analysis import (
    Analysis,
    decision_heading,
    decision_table,
    drew_text,
    mark_text,
    option_label,
    verdict_text,
)
from ..i18n import t
from ..replay import Replay
from ..widgets.bars import KeyBar, TitleBar, TitleView
from ..widgets.bouquets import PlayersPanel
from ..widgets.festival import FestivalPanel
from ..widgets.toosmall import TooSmall
from ..widgets.touch import KeyButtons

__all__ = ["LearnScreen"]

MAX_OPTIONS = 9


class LearnScreen(Screen[None]):
    """Asks again at each of ``analysis``'s lessons, on ``replay``'s tables."""

    BINDINGS = [
        *(Binding(str(d), f"choose({d - 1})", show=False) for d in range(1, MAX_OPTIONS + 1)),
        Binding("n,enter", "next", show=False),
        Binding("escape,q", "back", show=False),
    ]

    def __init__(self, replay: Replay, analysis: Analysis, *, you: bool = True) -> None:
        super().__init__()
        self.replay = replay
        self.analysis = analysis
        self.you = you
        self.lessons = analysis.lessons()
        #: the lesson on view, and the option chosen in it (None: not yet)
        self.index = 0
        self.chosen: int | None = None

    @property
    def decision(self) -> wire.DecisionReview | None:
        """The decision of the lesson on view (None: there is none)."""
        return self.lessons[self.index] if self.index < len(self.lessons) else None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="upper"):
            yield FestivalPanel(classes="panel")
            yield PlayersPanel(classes="panel")
        with VerticalScroll(id="learn", classes="panel"):
            yield Static(id="learn-question")
            yield Static(id="learn-options")
            yield Horizontal(id="learn-buttons")
            yield Static(id="learn-verdict")
        yield KeyButtons(id="learn-keys")
        yield KeyBar()
        yield TooSmall()

    def on_mount(self) -> None:
        self.query_one("#learn").border_title = t("learn.title")
        self._show()

    # -- drawing ---------------------------------------------------------------------------------

    def _show(self) -> None:
        decision = self.decision
        where = self.replay.summary.name if self.replay.summary is not None else ""
        self.query_one(TitleBar).view = TitleView(where=where, detail=t("learn.title"))
        question = self.query_one("#learn-question", Static)
        options = self.query_one("#learn-options", Static)
        verdict = self.query_one("#learn-verdict", Static)
        if decision is None:
            said = "learn.none" if not self.lessons else "learn.done"
            question.update(Text(t(said), style="bold"))
            options.display = verdict.display = False
            self.query_one("#learn-buttons").remove_children()
            self._keys()
            return
        self.replay.go(decision.seq)
        view = self.replay.table()
        festival = view.festival
        if festival is not None and not self.you:  # another seat's lesson: not its cards
            festival = dataclasses.replace(festival, my_secret=(), mine_revealed=(), spectator=True)
        self.query_one(FestivalPanel).view = festival
        self.query_one(PlayersPanel).rows = view.players
        question.update(self._question(decision))
        options.display = True
        self._options(decision)
        verdict.display = self.chosen is not None
        if self.chosen is not None:
            verdict.update(self._verdict(decision, self.chosen))
        self._keys()

    def _question(self, decision: wire.DecisionReview) -> RenderableType:
        names = self.replay.names
        seat = self.analysis.seat
        head = Text(
            t("learn.count", n=self.index + 1, total=len(self.lessons)) + " · ", style="bold"
        )
        heading = decision_heading(decision, names, seat, you=self.you)
        if self.chosen is None:  # the loss would give it away: only the mark, no value yet
            heading = Text(
                t("analysis.turn", turn=decision.turn) if decision.turn else t("table.opening"),
                style="bold",
            )
            if decision.drawn is not None:
                heading.append(" · ")
                heading.append_text(drew_text(decision.drawn, names, seat, you=self.you))
        lines: list[RenderableType] = [head + heading]
        if self.chosen is None:
            line = Text(t("learn.in_match") + " ")
            line.append_text(mark_text(decision.mark, word=True))
            lines.append(line)
            lines.append(Text(t("learn.choose"), style="bold yellow"))
        return Group(*lines)

    def _options(self, decision: wire.DecisionReview) -> None:
        """The options as buttons before the answer; the table of values after."""
        box = self.query_one("#learn-options", Static)
        names = self.replay.names
        if self.chosen is not None:
            box.update(decision_table(decision, names, chosen=self.chosen))
            self.query_one("#learn-buttons").remove_children()
            self.query_one("#learn-buttons").display = False
            return
        actions = [o.action for o in decision.options]
        text = Text()
        for index, option in enumerate(decision.options[:MAX_OPTIONS]):
            if index:
                text.append("\n")
            text.append(f" {index + 1} ", style="bold reverse")
            text.append(" ")
            text.append_text(option_label(option.action, names, actions))
        box.update(text)
        self._buttons(len(decision.options))

    def _buttons(self, count: int) -> None:
        """A tappable row of option numbers (under the options' words)."""
        row = self.query_one("#learn-buttons")
        row.remove_children()
        row.display = count > 0
        row.mount(
            *(
                Button(f" {i + 1} ", action=f"screen.choose({i})", compact=True, classes="pick")
                for i in range(min(count, MAX_OPTIONS))
            )
        )

    def _verdict(self, decision: wire.DecisionReview, chosen: int) -> RenderableType:
        return verdict_text(decision, chosen, self.replay.names)

    def _keys(self) -> None:
        if self.decision is None:
            keys: tuple[tuple[str, str], ...] = (("keyname.q_esc", "keys.back"),)
        elif self.chosen is None:
            keys = (("keyname.digits", "keys.choose_again"), ("keyname.q_esc", "keys.back"))
        else:
            keys = (("keyname.n", "keys.next_lesson"), ("keyname.q_esc", "keys.back"))
        self.query_one(KeyBar).keys = keys
        self.query_one(KeyButtons).keys = keys

    # -- keys --------------------------------------------------------------------------------

    def action_choose(self, index: int) -> None:
        """Choose option ``index`` again (once per lesson)."""
        decision = self.decision
        if decision is None or self.chosen is not None or index >= len(decision.options):
            return
        self.chosen = index
        self._show()

    def action_next(self) -> None:
        """The next lesson (after this one's answer)."""
        if self.decision is None or self.chosen is None:
            return
        self.index += 1
        self.chosen = None
        self._show()

    def action_back(self) -> None:
        """Back to the replay viewer."""
        self.dismiss(None)
