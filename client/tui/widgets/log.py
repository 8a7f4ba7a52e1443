"""The log: what happened, in words, newest at the bottom.

It draws its own rows (Textual's line API) from the lines it is given,
wrapped to its width at drawing time, so the newest line is on screen the
moment it is drawn — nothing waits for a later layout pass. Invariants:

- ``back`` is how many rows the reader has scrolled up from the newest; 0
  means it follows the log, and every new line shows at once.
- While the reader is scrolled up, new lines do not move what they read:
  ``back`` grows by the rows that arrived, and the border says how many lines
  are below (``↓ 3 newer — End to follow``).
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual import events
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from ..i18n import t

__all__ = ["ChatLog", "EventLog"]


class EventLog(Widget, can_focus=False):
    """Renders the log lines it is given, following the newest unless scrolled up."""

    lines: reactive[tuple[Text, ...]] = reactive((), layout=False)
    back: reactive[int] = reactive(0)
    #: chat lines not seen yet (the chat has its own pane): the title counts them
    unread: reactive[int] = reactive(0)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._width = -1
        #: id(line) -> (line, its rows at ``_width``): each line is wrapped once
        self._wrapped: dict[int, tuple[Text, list[Strip]]] = {}
        #: the rows of ``lines`` at ``_width``, and each line's last row
        self._layout: tuple[tuple[Text, ...], list[Strip], list[int]] | None = None

    def on_mount(self) -> None:
        self._show_title()

    def title(self) -> str:
        """The pane's title, before any count of unread chat."""
        return t("log.title")

    def watch_unread(self) -> None:
        self._show_title()

    def _show_title(self) -> None:
        title = self.title()
        if self.unread:
            title += " · " + t("chat.unread", count=self.unread)
        self.border_title = title

    # -- what is on screen ----------------------------------------------------------------

    def _rows_of(self, line: Text, console: Console, width: int) -> list[Strip]:
        cached = self._wrapped.get(id(line))
        if cached is not None and cached[0] is line:
            return cached[1]
        options = console.options.update_width(width)
        rows = [Strip(row) for row in console.render_lines(line, options, pad=False)]
        self._wrapped[id(line)] = (line, rows)
        return rows

    def rows(self) -> tuple[list[Strip], list[int]]:
        """Every line wrapped to the width: the rows, and the index of each
        line's last row."""
        width = max(1, self.content_size.width)
        if width != self._width:
            self._wrapped.clear()
            self._layout = None
            self._width = width
        if self._layout is not None and self._layout[0] is self.lines:
            return self._layout[1], self._layout[2]
        console = self.app.console
        rows: list[Strip] = []
        ends: list[int] = []
        for line in self.lines:
            rows.extend(self._rows_of(line, console, width))
            ends.append(len(rows) - 1)
        live = {id(line) for line in self.lines}
        for key in [k for k in self._wrapped if k not in live]:
            del self._wrapped[key]
        self._layout = (self.lines, rows, ends)
        return rows, ends

    def window(self) -> tuple[int, int]:
        """The rows shown: (first, end) — the newest row is ``end - 1`` when following."""
        rows, _ = self.rows()
        height = max(1, self.content_size.height)
        back = min(self.back, max(0, len(rows) - height))
        end = len(rows) - back
        return max(0, end - height), end

    def newer(self) -> int:
        """How many lines are (partly) below what is shown."""
        _, ends = self.rows()
        _, end = self.window()
        return sum(1 for last in ends if last >= end)

    def render_line(self, y: int) -> Strip:
        first, end = self.window()
        rows, _ = self.rows()
        index = first + y
        width = self.content_size.width
        style = self.rich_style  # the panel's colours under the text, not the terminal's
        if index >= end or index >= len(rows):
            return Strip.blank(width, style)
        return rows[index].apply_style(style).extend_cell_length(width, style).crop(0, width)

    # -- following and scrolling --------------------------------------------------------

    def watch_lines(self, old: tuple[Text, ...], new: tuple[Text, ...]) -> None:
        if self.back and self.is_mounted:
            # keep what the reader looks at in place: the new rows push it up
            self.back += self._height_of(new) - self._height_of(old)
        self._clamp()
        self._show_position()
        self.refresh()

    def watch_back(self) -> None:
        self._show_position()
        self.refresh()

    def on_resize(self, _event: events.Resize) -> None:
        self._clamp()
        self._show_position()

    def _height_of(self, lines: tuple[Text, ...]) -> int:
        width = max(1, self.content_size.width)
        console = self.app.console
        options = console.options.update_width(width)
        total = 0
        for line in lines:
            cached = self._wrapped.get(id(line))
            if cached is not None and cached[0] is line and width == self._width:
                total += len(cached[1])
            else:
                total += len(console.render_lines(line, options, pad=False))
        return total

    def _clamp(self) -> None:
        if not self.is_mounted:
            return
        rows, _ = self.rows()
        most = max(0, len(rows) - max(1, self.content_size.height))
        if self.back > most:
            self.back = most
        elif self.back < 0:
            self.back = 0

    def _show_position(self) -> None:
        if not self.is_mounted:
            return
        newer = self.newer() if self.back else 0
        self.border_subtitle = t("log.newer", count=newer) if newer else ""

    def scroll_rows(self, rows: int) -> None:
        """Scroll up (positive) or down (negative) by ``rows``."""
        self.back += rows
        self._clamp()

    def page(self, pages: int) -> None:
        """Scroll up (positive) or down (negative) by whole pages."""
        self.scroll_rows(pages * max(1, self.content_size.height - 1))

    def to_top(self) -> None:
        """The oldest line."""
        self.back = 1 << 30
        self._clamp()

    def follow(self) -> None:
        """Back to the newest line, and stay there."""
        self.back = 0

    @property
    def following(self) -> bool:
        """Whether the newest line is shown (and new ones will be)."""
        return self.back == 0

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.scroll_rows(3)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.scroll_rows(-3)


class ChatLog(EventLog):
    """The chat's pane: what the players said, oldest first, apart from the
    moves (so it does not scroll away with them); a hint while it is empty."""

    def title(self) -> str:
        """The chat pane's title."""
        return t("chat.title")

    def validate_lines(self, lines: tuple[Text, ...]) -> tuple[Text, ...]:
        """The chat's lines, or the hint while nobody said anything."""
        if lines:
            return lines
        if self._hint is None:
            self._hint = (Text(t("chat.empty"), style="dim italic"),)
        return self._hint

    _hint: tuple[Text, ...] | None = None
