"""The servers found on the LAN (``tulips connect`` with no address): pick one.

The list stays live: the app browses (:mod:`client.discovery`) and sets
``servers`` whenever one comes, goes or changes; this screen only shows them
and dismisses with the one picked (None: the player quit).

Each row is one announcement (:attr:`ServerInfo.key`), never one name: two
servers that call themselves alike are two rows, their names in yellow, told
apart by their address and, for ``wss://`` ones, the first pairs of their
certificate's fingerprint after the name (where the player compares it with
the one the server's host printed).
"""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Static

from client.discovery import ServerInfo

from ..i18n import t
from ..widgets.bars import KeyBar
from ..widgets.touch import KeyButtons

__all__ = ["ServerListScreen"]

_COLUMNS = (
    "servers.name",
    "servers.address",
    "servers.players",
    "servers.open",
    "servers.free",
)
#: Hex pairs of the fingerprint shown in the list (the trust dialog shows all 32).
_SHOWN_PAIRS = 4


def _cells(server: ServerInfo, *, alike: bool = False) -> tuple[Text, ...]:
    name = Text(server.name, style="yellow" if alike else "")
    if alike and server.fingerprint:
        pairs = server.fingerprint.removeprefix("SHA256:").split(":")[:_SHOWN_PAIRS]
        name.append(" " + ":".join(pairs) + "…", style="cyan")
    if not server.compatible:
        name.append(" " + t("servers.incompatible"), style="red")
    # The URL as `tulips connect` takes it: wss:// is encrypted (the key bar says so).
    address = Text(server.url, style="green" if server.tls else "")
    seats = Text(str(server.open_seats), style="green" if server.open_seats else "dim")
    return (name, address, Text(str(server.players)), Text(str(server.open_matches)), seats)


class ServerListScreen(Screen[ServerInfo | None]):
    """Lists ``servers``; Enter picks one, q or Escape quits."""

    BINDINGS = [
        Binding("q", "cancel", show=False),
        Binding("escape", "cancel", show=False),
    ]

    servers: reactive[tuple[ServerInfo, ...]] = reactive(())

    def compose(self) -> ComposeResult:
        yield Static(id="servers-title")
        yield DataTable(id="servers", cursor_type="row", zebra_stripes=True)
        yield Static(id="servers-empty")
        yield KeyButtons(id="servers-buttons")  # a phone's
        yield KeyBar(id="servers-keys")

    def on_mount(self) -> None:
        title = Text.assemble(("✿ ", "bold #ff8fc7"), (t("app.title"), "bold"))
        title.append(" · " + t("servers.title"))
        self.query_one("#servers-title", Static).update(title)
        self.query_one(DataTable).border_title = t("servers.found")
        keys = (("keyname.enter", "keys.connect"), ("keyname.quit", "keys.quit"))
        self.query_one(KeyBar).keys = keys
        self.query_one(KeyButtons).keys = keys
        self._show(self.servers)
        self.query_one(DataTable).focus()

    def watch_servers(self, servers: tuple[ServerInfo, ...]) -> None:
        if self.is_mounted:
            self._show(servers)

    def _show(self, servers: tuple[ServerInfo, ...]) -> None:
        table = self.query_one(DataTable)
        selected = self._selected()
        names = Counter(server.name for server in servers)
        cells = [_cells(server, alike=names[server.name] > 1) for server in servers]
        table.clear(columns=True)
        for i, label in enumerate(_COLUMNS):
            header = Text(t(label))
            width = max([header.cell_len, *(line[i].cell_len for line in cells)])
            table.add_column(header, key=label, width=width)
        for server, line in zip(servers, cells, strict=True):
            table.add_row(*line, key=_key(server))
        if selected is not None and selected in {_key(s) for s in servers}:
            table.move_cursor(row=table.get_row_index(selected))
        empty = self.query_one("#servers-empty", Static)
        empty.update(Text(t("servers.looking" if not servers else "servers.hint"), style="italic"))

    def _selected(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return str(key.value) if key.value is not None else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row connects to that server."""
        picked = next((s for s in self.servers if _key(s) == event.row_key.value), None)
        if picked is not None:
            self.dismiss(picked)

    def action_cancel(self) -> None:
        """Quit without connecting."""
        self.dismiss(None)


def _key(server: ServerInfo) -> str:
    return server.key
