"""A list of records (leaderboard lines, finished matches) that fits the width
it has: in columns from 80 columns, the one flexible column wrapped to the
room the others leave; on a phone (``narrow``) one column, each record a few
lines. Nothing is cut off: what does not fit on a line goes on the next."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable

__all__ = ["Record", "RecordTable", "wrapped"]


@dataclass(frozen=True, slots=True)
class Record:
    """One row: its key, its cells (in columns) and its lines (stacked, on a phone)."""

    key: str
    cells: tuple[Text, ...]
    stacked: Text


def wrapped(text: Text, width: int) -> Text:
    """``text`` broken into lines of at most ``width`` cells, between words."""
    console = Console(width=max(1, width), file=None, color_system=None, legacy_windows=False)
    lines = text.wrap(console, max(1, width))
    return Text("\n").join(lines)


def _height(text: Text) -> int:
    """The lines of a cell already wrapped to its column."""
    return text.plain.count("\n") + 1


class RecordTable(DataTable[Text]):
    """Shows :class:`Record` rows; the cursor picks one (``selected``)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._shown: tuple[Sequence[str], Sequence[Record], int] | None = None
        self._width = 0
        self._narrow = False

    def on_resize(self) -> None:
        """Another width (the window's, a scrollbar's come or gone, the narrow
        layout's): lay out anew."""
        narrow = self.screen.has_class("-narrow")
        if self._shown is not None and (self.size.width, narrow) != (self._width, self._narrow):
            headers, records, flex = self._shown
            self.show(headers, records, flex=flex)

    def show(
        self,
        headers: Sequence[str],
        records: Sequence[Record],
        *,
        flex: int,
        cursor: str | None = None,
    ) -> None:
        """Show ``records`` under ``headers``; column ``flex`` takes the room
        left (wrapped); in the narrow layout, one column of stacked lines. The
        cursor stays on the record it was on, or goes to ``cursor``'s."""
        keep = cursor if cursor is not None else self.selected
        narrow = self.screen.has_class("-narrow")
        self._shown = (headers, records, flex)
        self._width, self._narrow = self.size.width, narrow
        self.clear(columns=True)
        # not laid out yet: the window's width, less the border and a page's scrollbar
        room = self.size.width or self.app.size.width - self.styles.gutter.width - 1
        self.border_title = headers[flex] if narrow else None  # the header it has no room for
        if narrow:
            self.show_header = False
            width = max(1, room - 2 * self.cell_padding)
            self.add_column(Text(headers[flex]), key="record", width=width)
            for record in records:
                lines = wrapped(record.stacked, width)
                self.add_row(lines, key=record.key, height=_height(lines))
        else:
            self.show_header = True
            titles = [Text(h, style="bold") for h in headers]
            widths = [
                max([title.cell_len, *(r.cells[i].cell_len for r in records)])
                for i, title in enumerate(titles)
            ]
            others = sum(w for i, w in enumerate(widths) if i != flex)
            padding = 2 * self.cell_padding * len(widths)
            widths[flex] = max(8, min(widths[flex], room - others - padding))
            for i, (title, width) in enumerate(zip(titles, widths, strict=True)):
                self.add_column(title, key=str(i), width=width)
            for record in records:
                cells = list(record.cells)
                cells[flex] = wrapped(cells[flex], widths[flex])
                height = max(_height(cell) for cell in cells)
                self.add_row(*cells, key=record.key, height=height)
        if keep is not None and keep in {r.key for r in records}:
            self.move_cursor(row=self.get_row_index(keep))

    @property
    def selected(self) -> str | None:
        """The key of the record under the cursor."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        return str(key.value) if key.value is not None else None
