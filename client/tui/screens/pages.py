"""What the leaderboard, a player's card and the match history share: a page
of records asked from the server in a worker, shown in a
:class:`~client.tui.widgets.records.RecordTable`, with a line above it, a
note under it, and the keys in the key bar (buttons on a phone). Esc goes
back to where the page was opened from.

A page asks the app for what it cannot do itself with messages:
:class:`OpenCard` (a player's card) and :class:`OpenRecord` (a finished
match's replay)."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

import protocol as wire
from client.sdk import RequestError

from ..i18n import t
from ..session import SessionLike
from ..widgets.bars import KeyBar, TitleBar, TitleView
from ..widgets.records import Record, RecordTable
from ..widgets.toosmall import TooSmall
from ..widgets.touch import KeyButtons

__all__ = ["OpenCard", "OpenRecord", "PageScreen"]


class OpenCard(Message):
    """Show a player's card (``player``: a player id, or a bot strength's)."""

    def __init__(self, player: str) -> None:
        super().__init__()
        self.player = player


class OpenRecord(Message):
    """Open a finished match's replay."""

    def __init__(self, record: wire.MatchRecord) -> None:
        super().__init__()
        self.record = record


class PageScreen(Screen[None]):
    """A page of records from the server; subclasses say what to ask and how
    to show it (:meth:`fetch`, :meth:`shown`)."""

    BINDINGS = [
        Binding("escape", "back", show=False),
        Binding("q", "app.quit", show=False),
    ]

    #: the page's name in the title bar (a message id)
    TITLE_KEY = ""

    def __init__(self, session: SessionLike) -> None:
        super().__init__()
        self.session = session
        #: what the server refused or why it could not answer, if it did not
        self.failure: str | None = None
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with VerticalScroll(id="page-body"):  # the page scrolls as one, the records too
            yield from self.compose_extra()
            yield Static(id="page-info")
            yield RecordTable(id="records")
            yield Static(id="page-note")
        yield KeyButtons(id="page-keys")
        yield KeyBar()
        yield TooSmall()

    def compose_extra(self) -> ComposeResult:
        """Widgets over the info line (none by default)."""
        yield from ()

    def on_mount(self) -> None:
        self.query_one(TitleBar).view = TitleView(where=t(self.TITLE_KEY))
        self.query_one(RecordTable).focus()
        self.redraw()
        self.load()

    def on_resize(self) -> None:
        """Another width lays the records out anew (columns or stacked)."""
        if self.is_mounted:
            self.redraw()

    @work(exclusive=True, group="page", exit_on_error=False)
    async def load(self) -> None:
        """Ask the server for the page, then show it (or say why not)."""
        try:
            await self.fetch()
        except RequestError as exc:
            self.failure = t("page.refused", reason=exc.error.message)
        except (ConnectionError, TimeoutError):
            self.failure = t("status.lost")
        else:
            self.failure = None
        self.loaded = True
        self.redraw()

    async def fetch(self) -> None:
        """Ask the server for what the page shows and keep it."""
        raise NotImplementedError

    def records(self) -> tuple[tuple[str, ...], list[Record], int]:
        """The headers, the records and the flexible column."""
        raise NotImplementedError

    def info(self) -> Text:
        """The line above the records."""
        return Text()

    def note(self) -> Text:
        """The line under the records."""
        return Text()

    def keys(self) -> tuple[tuple[str, str], ...]:
        """The key bar's keys."""
        return (("keyname.escape", "keys.back"),)

    def redraw(self) -> None:
        """Show what the page has now."""
        if not self.is_mounted:
            return
        headers, records, flex = self.records()
        table = self.query_one(RecordTable)
        table.show(headers, records, flex=flex)
        self.query_one("#page-info", Static).update(self.info())
        note = self.note()
        if self.failure is not None:
            note = Text(self.failure, style="bold red")
        elif not self.loaded:
            note = Text(t("page.loading"), style="italic dim")
        self.query_one("#page-note", Static).update(note)
        keys = self.keys()
        self.query_one(KeyBar).keys = keys
        self.query_one(KeyButtons).keys = keys

    def action_back(self) -> None:
        """Back to where the page was opened from."""
        self.dismiss()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor moved: the page scrolls to keep its record in view."""
        table = self.query_one(RecordTable)
        rows = table.ordered_rows
        y = sum(row.height for row in rows[: event.cursor_row])
        y += table.header_height if table.show_header else 0
        height = rows[event.cursor_row].height if event.cursor_row < len(rows) else 1
        top = table.virtual_region.y + table.styles.gutter.top + y
        self.query_one("#page-body", VerticalScroll).scroll_to_region(
            Region(0, top, 1, height), animate=False
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a record: the page's own choice (:meth:`picked`)."""
        event.stop()
        if event.row_key.value is not None:
            self.picked(str(event.row_key.value))

    def picked(self, key: str) -> None:
        """A record was chosen with Enter (or a tap)."""

    def replay_record(self, records: tuple[wire.MatchRecord, ...], key: str | None) -> None:
        """Open the finished match ``key`` (default: the one under the cursor)
        of ``records`` in the replay viewer, if the server still keeps it."""
        match = key or self.query_one(RecordTable).selected
        record = next((r for r in records if r.match == match), None)
        if record is None:
            return
        if not record.replay:
            self.notify(t("history.gone"), severity="warning")
            return
        self.post_message(OpenRecord(record))
