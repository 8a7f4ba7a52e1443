"""The log: what happened, in words, newest at the bottom."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from ..i18n import t

__all__ = ["EventLog"]


class EventLog(VerticalScroll, can_focus=False):
    """Renders the log lines it is given and keeps the newest in sight."""

    lines: reactive[tuple[Text, ...]] = reactive(())

    def compose(self) -> ComposeResult:
        yield Static(id="log-text")

    def on_mount(self) -> None:
        self.border_title = t("log.title")
        self._show(self.lines)

    def watch_lines(self, lines: tuple[Text, ...]) -> None:
        if self.is_mounted:
            self._show(lines)

    def _show(self, lines: tuple[Text, ...]) -> None:
        self.query_one("#log-text", Static).update(Text("\n").join(lines))
        self.call_after_refresh(self.scroll_end, animate=False)
