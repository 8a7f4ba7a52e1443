"""Every player's bouquet by colour (cards · value), points so far,
connection, and whose turn it is (with the seconds left on their timer).

What changed since the marks' baseline (a bouquet that grew, a score that
moved) is drawn reversed; under the table, a line for each absent player
says when a bot takes over, or that one plays for them."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..cards import COLOUR_STYLE, colour_tag
from ..i18n import rich, t
from ..viewmodel import COLOURS, PlayerRow

__all__ = ["CHANGED", "PlayersPanel"]

WIDE = 52  # from this width on, the tulip count and the keep/give split show
#: How a number that changed since the marks' baseline is drawn.
CHANGED = "bold reverse #ffd75f"


def _name(row: PlayerRow) -> Text:
    if row.kind == "human":
        dot = Text("● ", style="green") if row.connected else Text("○ ", style="bold red")
    else:
        dot = Text("  ")
    name = Text(row.name, style="bold" if row.you else "" if row.connected else "dim")
    if row.you:
        name.append(" " + t("players.you"), style="italic")
    if row.kind == "human" and row.stand_in:
        name.append(" " + t("players.stand_in"), style="#5fb2ff")
    elif row.kind == "human" and not row.connected and not row.you:
        name.append(" " + t("players.away"), style="red")  # ours: the red dot and title bar
    # yours is in the action panel; an absent player's, beside the countdown in the notes
    if row.acting and row.seconds is not None and not row.you and row.connected:
        name.append(f" ⏱{row.seconds}", style="bold")
    return dot + name


def _bouquet_cell(colour: str, cards: int, value: int, gained: bool) -> Text:
    if not cards:
        return Text("–", style="dim")
    style = COLOUR_STYLE[colour]
    return Text(f"{cards}·{value}", style=f"bold reverse {style}" if gained else style)


def _score(row: PlayerRow) -> Text:
    return Text(str(row.score), style=CHANGED if row.score_delta else "bold")


def _note(row: PlayerRow) -> Text | None:
    """What happens to an absent player's seat, in words (not for yourself)."""
    if row.kind != "human" or row.you:
        return None
    who = Text(row.name, style="bold")
    if row.stand_in:
        return Text("○ ", style="bold red") + rich("players.note_stand_in", who=who)
    if row.bot_in is not None:
        return Text("○ ", style="bold red") + rich("players.note_away", who=who, seconds=row.bot_in)
    return None


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
                _score(row),
            ]
            if wide:
                split = f"{row.keeping}+{row.giving}"
                if row.majorities:
                    split += f"+{row.majorities}"
                cells.append(Text(split, style="dim"))
            gained = row.gained or (False,) * len(COLOURS)
            cells.extend(
                _bouquet_cell(colour, cards, value, grew)
                for colour, (cards, value), grew in zip(COLOURS, row.colours, gained, strict=True)
            )
            if wide:
                cells.append(str(row.tulips))
            table.add_row(*cells, style="on #2a2440" if row.you else "")
        notes = [note for note in map(_note, self.rows) if note is not None]
        return Group(table, *notes) if notes else table
