"""The analysis panel of the replay viewer: the player's summary, the three
costliest decisions, and the current decision's options with their values —
or, while the analysis is computed, how far it has come. It shows what the
screen hands it (:meth:`AnalysisPanel.show`) and scrolls when that is taller
than the room it has."""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..i18n import t

__all__ = ["AnalysisPanel"]


class AnalysisPanel(VerticalScroll):
    """A bordered, scrolling pane for one renderable."""

    def compose(self) -> ComposeResult:
        yield Static(id="analysis-body")

    def on_mount(self) -> None:
        self.border_title = t("analysis.title")
        self.can_focus = False

    def show(self, body: RenderableType) -> None:
        """Show ``body`` in place of what was there."""
        self.query_one("#analysis-body", Static).update(body)
