"""The lobby: the server's matches (open, running, finished) — create a new
one, join, or watch, or (``t``) learn the game in a tutorial match. The list
stays live: the app sets ``rows`` whenever a ``match_update`` or
``match_removed`` arrives. On a phone (the narrow layout) each match is one
row of a few lines, a tap picks it (a second one joins it), and every key is
a button."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ..i18n import t, tn
from ..viewmodel import LobbyRow
from ..widgets.bars import KeyBar, TitleBar, TitleView
from ..widgets.records import wrapped
from ..widgets.toosmall import TooSmall
from ..widgets.touch import KeyButtons, TouchButton

__all__ = ["LobbyScreen"]

_STATUS_STYLE = {"open": "bold green", "running": "yellow", "paused": "red", "finished": "dim"}


@dataclass(frozen=True, slots=True)
class LobbyInfo:
    """Who and where: the server and the player's name."""

    server: str = ""
    name: str = ""
    online: bool = True


_COLUMNS = ("lobby.name", "lobby.status", "lobby.players", "lobby.host", "lobby.code")


def _cells(row: LobbyRow) -> tuple[Text, ...]:
    if row.unavailable:  # in a cluster: its node is not answering (not gone)
        status = Text(t("status.unavailable"), style="bold red")
    elif row.status == "open" and row.full:  # every seat taken: only the host's start to come
        status = Text(t("status.full"), style="bold yellow")
    else:
        status = Text(t(f"status.{row.status}"), style=_STATUS_STYLE.get(row.status, ""))
    if row.status == "open" and row.free:
        status.append(" " + tn("lobby.free", row.free, count=row.free), style="green")
    marks = [t("lobby.code_yes")] if row.code else []
    if row.timer:
        marks.append(t("lobby.timer", seconds=round(row.timer)))
    if row.hints:  # issue 32: hints allowed (so never rated: the waiting room says so)
        marks.append(t("lobby.hints"))
    code = " ".join(marks)
    name = Text(row.name)
    if row.open_box:  # R27: chosen by the host, seen before anyone sits down
        name.append(" " + t("lobby.open_box"), style="italic cyan")
    if row.ruleset != "standard":  # house rules (R30): the name the server offers them by
        name.append(f" [{row.ruleset}]", style="italic magenta")
    if row.rated:  # its result changes the players' ratings
        name.append(" " + t("lobby.rated"), style="italic green")
    return (name, status, Text(row.players), Text(row.host), Text(code))


def _stacked(cells: tuple[Text, ...]) -> Text:
    """A match's cells as one cell of lines, for a phone's one-column list:
    the name and status, the players, the host with the code and timer."""
    name, status, players, host, code = cells
    text = Text.assemble(name.copy(), "  ", status)
    text.stylize("bold", 0, len(name))
    text.append("\n")
    text.append_text(players.copy())
    text.append("\n" + t("lobby.host") + ": ", style="dim")
    text.append_text(host)
    if code.plain:
        text.append(" · ", style="dim")
        text.append_text(code)
    return text


def _wrap_names(names: list[str], width: int) -> Text:
    """``names`` comma-separated over lines of ``width``, never breaking a name."""
    lines = [""]
    for i, name in enumerate(names):
        item = name + ("," if i < len(names) - 1 else "")
        if lines[-1] and cell_len(lines[-1]) + 1 + cell_len(item) > width:
            lines.append("")
        lines[-1] += (" " if lines[-1] else "") + item
    return Text("\n".join(lines))


class LobbyScreen(Screen[None]):
    """Lists ``rows``; posts :class:`LobbyScreen.Picked` for join and watch."""

    BINDINGS = [
        Binding("n", "app.new_match", show=False),
        Binding("t", "app.tutorial", show=False),
        Binding("j", "pick('join')", show=False),
        Binding("w", "pick('watch')", show=False),
        Binding("v", "pick('replay')", show=False),
        Binding("r", "app.refresh_lobby", show=False),
        Binding("b", "app.leaderboard", show=False),
        Binding("h", "app.history", show=False),
        Binding("p", "app.profile", show=False),
        Binding("q", "app.quit", show=False),
    ]

    rows: reactive[tuple[LobbyRow, ...]] = reactive(())
    info: reactive[LobbyInfo] = reactive(LobbyInfo)

    class Picked(Message):
        """The player wants to join, watch or replay a match."""

        def __init__(self, match: str, how: Literal["join", "watch", "replay"]) -> None:
            super().__init__()
            self.match = match
            self.how = how

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="lobby-info")
        yield Static(id="lobby-learn")
        with Horizontal(id="lobby-profile", classes="wide-only"):
            yield TouchButton(
                t("lobby.leaderboard"), action="app.leaderboard", id="to-board", classes="wide-only"
            )
            yield TouchButton(
                t("lobby.history"), action="app.history", id="to-history", classes="wide-only"
            )
            yield TouchButton(
                t("lobby.profile"), action="app.profile", id="to-profile", classes="wide-only"
            )
        yield DataTable(id="matches", cursor_type="row", zebra_stripes=True)
        yield Static(id="lobby-empty")
        yield KeyButtons(id="lobby-keys")
        yield KeyBar()
        yield TooSmall()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.border_title = t("lobby.matches")
        self._show_info(self.info)
        self._show_rows(self.rows)
        table.focus()

    def watch_info(self, info: LobbyInfo) -> None:
        if self.is_mounted:
            self._show_info(info)

    def watch_rows(self, rows: tuple[LobbyRow, ...]) -> None:
        if self.is_mounted:
            self._show_rows(rows)

    def _show_info(self, info: LobbyInfo) -> None:
        self.query_one(TitleBar).view = TitleView(where=t("lobby.title"), online=info.online)
        text = Text(t("lobby.server", server=info.server, name=info.name), style="dim")
        self.query_one("#lobby-info", Static).update(text)

    def _show_rows(self, rows: tuple[LobbyRow, ...]) -> None:
        if self.has_class("-narrow"):  # a phone: one column of matches, a few lines each
            self._show_stacked(rows)
            return
        table = self.query_one(DataTable)
        selected = self._selected()
        cells = [_cells(row) for row in rows]
        # Columns sized here, not measured by the table later: a table that is
        # sent no further message would go on drawing the old widths.
        table.clear(columns=True)
        table.show_header = True
        headers = [Text(t(label)) for label in _COLUMNS]
        widths = [
            max([h.cell_len, *(line[i].cell_len for line in cells)]) for i, h in enumerate(headers)
        ]
        cells = self._fit_players(table, widths, cells)
        cells = self._fit_names(table, widths, cells)
        for label, header, width in zip(_COLUMNS, headers, widths, strict=True):
            table.add_column(header, key=label, width=width)
        for row, line in zip(rows, cells, strict=True):
            table.add_row(*line, key=row.match, height=None)
        self._shown(rows, selected)

    def _show_stacked(self, rows: tuple[LobbyRow, ...]) -> None:
        """The narrow list: each match one row of a few lines, as wide as the table."""
        table = self.query_one(DataTable)
        selected = self._selected()
        table.clear(columns=True)
        table.show_header = False  # the border names the list
        room = table.size.width or self.app.size.width - table.styles.gutter.width
        width = max(1, room - 2 * table.cell_padding - 1)  # a cell for the scrollbar
        table.add_column(Text(t("lobby.matches")), key="lobby.name", width=width)
        for row in rows:
            table.add_row(_stacked(_cells(row)), key=row.match, height=None)
        self._shown(rows, selected)

    def _shown(self, rows: tuple[LobbyRow, ...], selected: str | None) -> None:
        table = self.query_one(DataTable)
        if selected is not None and selected in {row.match for row in rows}:
            table.move_cursor(row=table.get_row_index(selected))
        empty = self.query_one("#lobby-empty", Static)
        empty.display = not rows
        narrow = self.has_class("-narrow")  # a phone: its buttons are tapped, not keys pressed
        empty.update(Text(t("lobby.empty_touch" if narrow else "lobby.empty"), style="italic"))
        learn = t("lobby.learn_touch" if narrow else "lobby.learn")
        self.query_one("#lobby-learn", Static).update(Text(learn, style="dim italic"))
        self._show_keys()

    def _show_keys(self) -> None:
        """The key bar; on a finished match, v (replay) takes w's (watch) place.
        The list is live, so refreshing (r) is left to the help page; the bar
        has the leaderboard, and a phone's buttons the history and profile too
        (from 80 columns they are the buttons over the list)."""
        selected = self._selected()
        finished = any(row.match == selected and row.status == "finished" for row in self.rows)
        keys = (
            ("keyname.enter", "keys.join"),
            ("keyname.v", "keys.replay") if finished else ("keyname.w", "keys.watch"),
            ("keyname.n", "keys.new"),
            ("keyname.b", "keys.leaderboard"),
            ("keyname.help", "keys.help"),
            ("keyname.quit", "keys.quit"),
        )
        self.query_one(KeyBar).keys = keys  # t, the tutorial, has its own line (#lobby-learn)
        mine = (
            ("keyname.h", "keys.history"),
            ("keyname.p", "keys.profile"),
            ("keyname.r", "keys.refresh"),
        )
        tutorial = ("keyname.t", "keys.tutorial")
        self.query_one(KeyButtons).keys = (*keys[:4], tutorial, *mine, *keys[4:])

    def on_data_table_row_highlighted(self) -> None:
        """The cursor moved: the key bar follows the match under it."""
        self._show_keys()

    def _fit_players(
        self, table: DataTable[Text], widths: list[int], cells: list[tuple[Text, ...]]
    ) -> list[tuple[Text, ...]]:
        """Wrap the players column (it grows with the seats) so the table fits the
        screen's width, rather than cutting off the columns after it."""
        room = table.size.width or self.app.size.width - table.styles.gutter.width
        over = sum(widths) + 2 * table.cell_padding * len(widths) - room
        if over <= 0 or not cells:
            return cells
        at = _COLUMNS.index("lobby.players")
        names = [line[at].plain.split(", ") for line in cells]
        longest = max(cell_len(n) + (i < len(row) - 1) for row in names for i, n in enumerate(row))
        widths[at] = max(widths[at] - over, longest)
        return [
            (*line[:at], _wrap_names(row, widths[at]), *line[at + 1 :])
            for line, row in zip(cells, names, strict=True)
        ]

    def _fit_names(
        self, table: DataTable[Text], widths: list[int], cells: list[tuple[Text, ...]]
    ) -> list[tuple[Text, ...]]:
        """Still too wide once the players are wrapped (a long name and its
        marks: open box, house rules, rated): wrap the names column too,
        between words."""
        room = table.size.width or self.app.size.width - table.styles.gutter.width
        over = sum(widths) + 2 * table.cell_padding * len(widths) - room
        if over <= 0 or not cells:
            return cells
        at = _COLUMNS.index("lobby.name")
        longest = max(cell_len(word) for line in cells for word in line[at].plain.split())
        widths[at] = max(widths[at] - over, longest)
        return [(*line[:at], wrapped(line[at], widths[at]), *line[at + 1 :]) for line in cells]

    def on_resize(self) -> None:
        """A new width may wrap the players column differently."""
        if self.is_mounted:
            self._show_rows(self.rows)

    def _selected(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return str(key.value) if key.value is not None else None

    def action_pick(self, how: Literal["join", "watch", "replay"]) -> None:
        """Join, watch or replay the match under the cursor."""
        selected = self._selected()
        if selected is not None:
            self.post_message(self.Picked(selected, how))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row joins it."""
        if event.row_key.value is not None:
            self.post_message(self.Picked(str(event.row_key.value), "join"))
