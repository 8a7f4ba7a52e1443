"""Every player's bouquet by colour (cards · value), points so far,
connection, and whose turn it is."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..cards import COLOUR_STYLE, colour_tag
from ..i18n import t
from ..viewmodel import COLOURS, PlayerRow

__all__ = ["PlayersPanel"]

WIDE = 52  # from this width on, the tulip count and the keep/give split show


def _name(row: PlayerRow) -> Text:
    if row.kind == "human":
        dot = Text("● ", style="green") if row.connected else Text("○ ", style="bold red")
    else:
        dot = Text("  ")
    name = Text(row.name, style="bold" if row.you else "" if row.connected else "dim")
    if row.you:
        name.append(" " + t("players.you"), style="italic")
    if row.kind == "human" and not row.connected:
        name.append(" " + t("players.away"), style="red")
    return dot + name


def _bouquet_cell(colour: str, cards: int, value: int) -> Text:
    if not cards:
        return Text("–", style="dim")
    return Text(f"{cards}·{value}", style=COLOUR_STYLE[colour])


class PlayersPanel(Widget):
    """Renders the players' rows."""

    rows: reactive[tuple[PlayerRow, ...]] = reactive((), layout=True)

    def on_mount(self) -> None:
        self.border_title = t("players.title")
        self.border_subtitle = t("players.legend")

    def render(self) -> RenderableType:
        wide = self.content_size.width >= WIDE
        table = Table(box=None, padding=(0, 1, 0, 0), expand=True, show_edge=False, pad_edge=False)
        table.add_column("", no_wrap=True, width=1)
        table.add_column("#", no_wrap=True, justify="right")
        table.add_column(t("players.player"), no_wrap=True, ratio=1, overflow="ellipsis")
        table.add_column(t("players.points"), justify="right", no_wrap=True)
        if wide:
            table.add_column(t("players.split"), justify="right", no_wrap=True)
        for colour in COLOURS:
            table.add_column(colour_tag(colour), justify="right", no_wrap=True)
        if wide:
            table.add_column(t("players.tulips"), justify="right", no_wrap=True)
        for row in self.rows:
            cells: list[RenderableType] = [
                Text("▶", style="bold yellow") if row.acting else Text(" "),
                Text(str(row.seat + 1), style="dim"),
                _name(row),
                Text(str(row.score), style="bold"),
            ]
            if wide:
                cells.append(Text(f"{row.keeping}+{row.giving}", style="dim"))
            cells.extend(
                _bouquet_cell(colour, cards, value)
                for colour, (cards, value) in zip(COLOURS, row.colours, strict=True)
            )
            if wide:
                cells.append(str(row.tulips))
            table.add_row(*cells, style="on #2a2440" if row.you else "")
        return table
