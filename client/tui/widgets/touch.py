"""Buttons for a finger: the narrow layout's stand-ins for keys.

A phone's browser runs the client in a terminal about 40 columns wide, where
a key bar is too small to hit and a keyboard is rarely at hand. The narrow
layout (the ``-narrow`` breakpoint class, :class:`~client.tui.app.TulipsApp`)
shows these instead: :class:`KeyButtons` puts each key of a screen's key bar
on a button of its own, and :class:`TabButtons` a row of tab-like buttons.
Both render only what they are given; a press presses the key (or runs the
action) the button stands for, so a tap and a key take one path."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.containers import Grid, Horizontal
from textual.reactive import reactive
from textual.widgets import Button
from textual.widgets.button import ButtonVariant

from ..i18n import t
from .bars import key_press

__all__ = ["KeyButtons", "TabButtons", "TouchButton"]


class TouchButton(Button):
    """A button a tap presses without taking the focus, so the key it stands
    for goes where it would have gone (the lobby's Enter to its list); taps in
    quick succession all count, as presses of its key would (a replay stepped
    through tap by tap)."""

    def __init__(
        self,
        label: str,
        *,
        press: str = "",
        action: str | None = None,
        id: str | None = None,
        classes: str = "",
        variant: ButtonVariant = "default",
    ) -> None:
        super().__init__(
            label, compact=True, id=id, classes=f"touch {classes}".strip(), action=action
        )
        self.variant = variant
        self.can_focus = False
        self.active_effect_duration = 0  # no "pressed" flash, during which a tap is dropped
        #: the key this button presses (or the tab it opens)
        self.press_key = press


class KeyButtons(Grid):
    """A screen's keys (``(key label id, description id)``, as its key bar has
    them) as buttons, two to a row; keys in ``skip`` and keys a tap could not
    name (``←/→``) have none."""

    keys: reactive[tuple[tuple[str, str], ...]] = reactive((), recompose=True)

    def __init__(self, skip: Iterable[str] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.skip = frozenset(skip)

    def compose(self) -> ComposeResult:
        for key, description in self.keys:
            press = key_press(key)
            if press is not None and key not in self.skip:
                yield TouchButton(t(description), press=press)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Press the key the tapped button stands for."""
        event.stop()
        if isinstance(event.button, TouchButton):
            self.app.simulate_key(event.button.press_key)


class TabButtons(Horizontal):
    """A row of tab-like buttons: ``tabs`` are (name, label id); the one named
    ``current`` is marked. A tap runs ``action`` (``screen.tab``) with the tab's name."""

    current: reactive[str] = reactive("")

    def __init__(
        self, tabs: Iterable[tuple[str, str]], action: str, *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.tabs = tuple(tabs)
        self.action = action

    def compose(self) -> ComposeResult:
        for name, label in self.tabs:
            yield TouchButton(
                t(label), press=name, action=f"{self.action}('{name}')", id=f"tab-{name}"
            )

    def watch_current(self, current: str) -> None:
        for button in self.query(TouchButton):
            button.set_class(button.press_key == current, "-current")
