"""Every player's bouquet as the cards it holds, grouped by colour
(``◆432 ●4 ♥22``: purple 4, 3 and 2, blue 4, pink 2 and 2), points so far,
connection, and whose turn it is; the title says how many watch.

The columns keep their widths from turn to turn: the name column is as wide
as the names need (with room for the longest word a seat can get beside it),
whatever the bouquets hold; the bouquets take the rest, closed up when they
would not fit spaced, and wrap only if even that is too wide. What changed
since the marks' baseline (a colour that grew, a score that moved) is drawn
reversed; under the table, a line for each absent player says when a bot
takes over, or that one plays for them — or, when their turn timer will run
out before that, says so instead: one countdown at a time, and which one it
is."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..cards import COLOUR_STYLE, GLYPH
from ..i18n import rich, t, tn
from ..viewmodel import COLOURS, PlayerRow

__all__ = ["CHANGED", "PlayersPanel", "bouquet_text"]

WIDE = 58  # from this width on, the keep/give split and the tulip count show
#: How a number that changed since the marks' baseline is drawn.
CHANGED = "bold reverse #ffd75f"
NAME_MAX = 16  # a longer name (with its dot and word) ends in an ellipsis


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
    return dot + name


def _name_width(row: PlayerRow) -> int:
    """The cells the seat's name may ever need: with the longest word it can get."""
    words = [t("players.you")] if row.you else []
    if row.kind == "human" and not row.you:
        words += [t("players.stand_in"), t("players.away")]
    return 2 + Text(row.name).cell_len + max((1 + Text(w).cell_len for w in words), default=0)


def bouquet_text(row: PlayerRow, width: int | None = None) -> Text:
    """The bouquet's cards by colour: ``◆432 ●4``, a colour that grew reversed;
    closed up (``◆432●4``, the coloured marks still part them) where the spaced
    form is wider than ``width``, so that a late-match bouquet keeps to one row."""
    cards = row.cards or ((),) * len(COLOURS)
    gained = row.gained or (False,) * len(COLOURS)
    groups = []
    for colour, values, grew in zip(COLOURS, cards, gained, strict=True):
        if not values:
            continue
        style = COLOUR_STYLE[colour]
        group = Text(GLYPH[colour], style=f"bold {style}")
        group.append("".join(map(str, values)), style=style)
        if grew:
            group.stylize(f"bold reverse {style}")
        groups.append(group)
    if not groups:
        return Text("–", style="dim")
    spaced = Text(" ").join(groups)
    if width is not None and spaced.cell_len > width:
        return Text("").join(groups)
    return spaced


def _score(row: PlayerRow) -> Text:
    return Text(str(row.score), style=CHANGED if row.score_delta else "bold")


def _note(row: PlayerRow) -> Text | None:
    """What happens to an absent player's seat, in words (not for yourself)."""
    if row.kind != "human" or row.you:
        return None
    who = Text(row.name, style="bold")
    away = Text("○ ", style="bold red")
    if row.stand_in:
        return away + rich("players.note_stand_in", who=who)
    if row.bot_in is not None and row.seconds is not None and row.seconds <= row.bot_in:
        # their turn timer runs out first: it is the countdown that applies now
        return away + rich("players.note_away_timer", who=who, seconds=row.seconds)
    if row.bot_in is not None:
        return away + rich("players.note_away", who=who, seconds=row.bot_in)
    return None


class PlayersPanel(Widget):
    """Renders the players' rows."""

    rows: reactive[tuple[PlayerRow, ...]] = reactive((), layout=True)
    #: how many watch the match: said in the title, so the players know it all match long
    spectators: reactive[int] = reactive(0)

    def on_mount(self) -> None:
        self.watch_spectators(self.spectators)
        self.border_subtitle = t("players.legend")

    def watch_spectators(self, count: int) -> None:
        title = t("players.title")
        if count:
            title += " · " + tn("actions.spectators", count, count=count)
        self.border_title = title

    def render(self) -> RenderableType:
        wide = self.content_size.width >= WIDE
        table = Table(
            box=None,
            padding=(0, 1, 0, 0),
            expand=True,
            show_edge=False,
            pad_edge=False,
            show_header=wide,  # narrow: the border's legend names the columns
        )
        names = min(NAME_MAX, max((_name_width(row) for row in self.rows), default=1))
        points = max(3, *(len(str(row.score)) for row in self.rows)) if self.rows else 3
        split_width = Text(t("players.split")).cell_len
        table.add_column(no_wrap=True, width=1)
        table.add_column("#", no_wrap=True, width=1, justify="right")
        table.add_column(t("players.player"), no_wrap=True, width=names, overflow="ellipsis")
        table.add_column(t("players.points"), justify="right", no_wrap=True, width=points)
        if wide:
            table.add_column(t("players.split"), justify="right", no_wrap=True, width=split_width)
        table.add_column(t("festival.cards"), ratio=1, overflow="fold")
        if wide:
            tulips = Text(t("players.tulips")).cell_len
            table.add_column(t("players.tulips"), justify="right", no_wrap=True, width=tulips)
        # what the fixed columns and the one-cell gaps between columns leave the cards
        fixed = sum(column.width or 0 for column in table.columns)
        cards_width = self.content_size.width - fixed - (len(table.columns) - 1)
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
            cells.append(bouquet_text(row, cards_width))
            if wide:
                cells.append(Text(str(row.tulips), style="dim"))
            table.add_row(*cells, style="on #2a2440" if row.you else "")
        notes = [note for note in map(_note, self.rows) if note is not None]
        return Group(table, *notes) if notes else table
