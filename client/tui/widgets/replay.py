"""The replay panel: event n of N and the turn, the current event in words,
whether it plays and how fast, and the turn number being typed after ``t``;
once the analysis shows, its summary (``extra``) in place of the key hints."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..i18n import rich, t
from ..replay import ReplayView

__all__ = ["ReplayPanel"]


def _where(view: ReplayView) -> Text:
    text = Text(t("replay.position", n=view.position, total=view.total), style="bold")
    text.append(" · ")
    if view.phase == "opening" or view.turn == 0:
        text.append(t("table.opening"))
    else:
        text.append(t("replay.turn", turn=view.turn, turns=view.turns))
    if view.phase == "over":
        text.append(" · " + t("table.over"))
    return text


def _playing(view: ReplayView) -> Text:
    speed = f"{view.speed:g}"
    if view.typing is not None:
        return rich(
            "replay.goto", style="bold yellow", digits=Text(view.typing + "▏", style="reverse")
        )
    if view.playing:
        return Text("▶ " + t("replay.playing", speed=speed), style="bold green")
    return Text("❚❚ " + t("replay.paused", speed=speed), style="dim")


class ReplayPanel(Widget):
    """Renders a :class:`~client.tui.replay.ReplayView`, or a line while
    loading or after a failure (``message``)."""

    view: reactive[ReplayView | None] = reactive(None, layout=True)
    message: reactive[Text] = reactive(Text, layout=True)
    #: shown under the current event in place of the key hints (the analysis's summary)
    extra: reactive[RenderableType | None] = reactive(None, layout=True)

    def on_mount(self) -> None:
        self.border_title = t("replay.title")

    def render(self) -> RenderableType:
        view = self.view
        if view is None:
            return self.message
        lines: list[RenderableType] = [_where(view), view.caption, Text("")]
        lines.append(_playing(view))
        if self.extra is not None:
            if view.note:
                lines.append(Text(view.note, style="bold red"))
            lines.append(self.extra)
            return Group(*lines)
        lines.append(
            rich(
                "replay.more_keys",
                style="dim",
                home_end=t("keyname.home_end"),
                speed=t("keyname.speed"),
            )
        )
        if view.note:
            lines.append(Text(view.note, style="bold red"))
        lines.append(Text(""))
        lines.append(
            Text(t("replay.public" if view.spectator else "replay.yours"), style="dim italic")
        )
        return Group(*lines)
