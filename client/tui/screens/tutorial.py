"""A tutorial's step on screen: a short note over the table (or the final
scores), naming its rule, that the player goes on from with Enter, space,
→, Esc or a click/tap anywhere; ``?`` opens the rules in brief over it and
``q`` quits (asking first, as at the table).

The note stands at the bottom right, over the log, so the festival and the
actions it talks about stay in sight at 80×24; from 40 to 79 columns (the
``-narrow`` layout) it takes the whole width at the bottom. It renders a
:class:`~client.tui.tutorial.Step` and holds no state of the match."""

from __future__ import annotations

from typing import Any, cast

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ..cards import card_text, colour_tag
from ..i18n import rich, t
from ..tutorial import STEPS, Field, Step
from ..widgets.touch import TouchButton

__all__ = ["TutorialScreen", "step_text"]

_CARDS = ("card", "card2")
_COLOURS = ("colour", "other")
_RANKS = ("rank", "other_rank")
_NAMES = ("name", "first", "second")


def _field(name: str, value: Field) -> Text | str:
    """A step's field as the note shows it: cards and colours in their colours,
    ranks in words, names in bold."""
    if name in _CARDS:
        return card_text(cast(Any, value))
    if name in _COLOURS:
        return colour_tag(str(value), name=True)
    if name in _RANKS:
        return t(f"rank.{int(value) + 1}")
    if name in _NAMES:
        return Text(str(value), style="bold")
    if name == "used":
        return t(f"tutorial.action.{value}")
    return str(value)


def step_text(step: Step) -> Text:
    """The step's explanation, then how to go on."""
    fields: dict[str, Any] = {name: _field(name, value) for name, value in step.fields}
    text = rich(step.message, **fields)
    text.append("\n\n")
    text.append(t("tutorial.next"), style="dim")
    return text


def step_title(step: Step) -> str:
    """``Tutorial 3/12 · R14``."""
    return t("tutorial.title", step=step.number, steps=len(STEPS), rule=step.rule)


class TutorialScreen(ModalScreen[None]):
    """The tutorial's current step. Going on runs ``app.tutorial_next``, which
    shows the next step here (:meth:`show`) or closes the note."""

    BINDINGS = [
        Binding("enter", "app.tutorial_next", show=False),
        Binding("space", "app.tutorial_next", show=False),
        Binding("right", "app.tutorial_next", show=False),
        Binding("escape", "app.tutorial_next", show=False),
        # a modal page keeps the app's keys from it: these two it lets through
        Binding("question_mark", "app.help", show=False),
        Binding("q", "app.ask_quit", show=False),
    ]

    def __init__(self, step: Step) -> None:
        super().__init__()
        self.step = step

    def compose(self) -> ComposeResult:
        with Vertical(id="tutorial-note"):
            yield Static(step_text(self.step), id="tutorial-text")
            # a phone's button; elsewhere a click anywhere goes on (on_click)
            yield TouchButton(
                t("tutorial.next_button"), action="app.tutorial_next", id="tutorial-go"
            )

    def on_mount(self) -> None:
        self.query_one("#tutorial-note").border_title = step_title(self.step)

    def show(self, step: Step) -> None:
        """Show ``step`` in place of the one shown."""
        self.step = step
        if self.is_mounted:
            self.query_one("#tutorial-text", Static).update(step_text(step))
            self.query_one("#tutorial-note").border_title = step_title(step)

    async def on_click(self, event: events.Click) -> None:
        """A click or tap on the note, or beside it, goes on, as Enter does (its
        button goes on by its own action: a button keeps its clicks)."""
        event.stop()
        await self.app.run_action("app.tutorial_next")
