"""What a browser tab's terminal shows, cell by cell: the frames the page
received (:class:`~server.lab.web.cdp.Page`), replayed through a terminal
emulator (pyte) at the sizes the page asked for, and where a word is on it —
so that a finger can be put on it (:func:`tap_text`)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass

import pyte

from .cdp import Page

__all__ = [
    "TOO_SMALL",
    "Cells",
    "Screen",
    "cells",
    "first_option",
    "screen_of",
    "settled",
    "tap_option",
    "tap_text",
]

#: What the client says on a screen too small for it (every screen has one)
TOO_SMALL = "This window is"
#: an option of the "Your move" panel: its key, two spaces, what it does
_OPTION = re.compile(r"│ +(\S{1,6})  \S")


class Screen:
    """The terminal's rows as the page draws them, from its frames and sizes."""

    def __init__(self, page: Page) -> None:
        self.page = page
        columns, rows = page.sizes[0][1:] if page.sizes else (80, 24)
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self._fed = 0
        self._sized = 0

    def rows(self) -> list[str]:
        """The screen now, one string per row (the frames received so far)."""
        sizes, frames = self.page.sizes, self.page.frames
        while self._fed < len(frames) or self._sized < len(sizes):
            if self._sized < len(sizes) and sizes[self._sized][0] <= self._fed:
                _, columns, rows = sizes[self._sized]
                self.screen.resize(rows, columns)
                self._sized += 1
            elif self._fed < len(frames):
                self.stream.feed(frames[self._fed])
                self._fed += 1
            else:
                break
        return list(self.screen.display)

    def text(self) -> str:
        """The screen now, as lines."""
        return "\n".join(row.rstrip() for row in self.rows())

    def find(self, words: str, *, last: bool = False) -> tuple[int, int] | None:
        """Where ``words`` start on the screen (column, row): the first place from
        the top, or the ``last``; None if they are not on it."""
        found = None
        for number, row in enumerate(self.rows()):
            column = row.rfind(words) if last else row.find(words)
            if column >= 0:
                found = (column, number)
                if not last:
                    break
        return found


def screen_of(page: Page) -> Screen:
    """A :class:`Screen` of ``page`` (one per page: it remembers what it has read)."""
    screen = getattr(page, "_screen", None)
    if screen is None or screen.page is not page:
        screen = Screen(page)
        page._screen = screen  # type: ignore[attr-defined]
    return screen


@dataclass(frozen=True, slots=True)
class Cells:
    """Where the terminal's cells are on the page, in CSS pixels."""

    left: float
    top: float
    width: float  #: of one cell
    height: float  #: of one cell
    columns: int
    rows: int

    def centre(self, column: float, row: float) -> tuple[float, float]:
        """The page coordinates of the middle of cell ``(column, row)``."""
        return self.left + (column + 0.5) * self.width, self.top + (row + 0.5) * self.height


async def cells(page: Page) -> Cells:
    """The terminal's cell grid on the page: its ``.xterm-screen`` box divided by
    the size the page last asked for."""
    box = await page.evaluate(
        "(() => { const r = document.querySelector('.xterm-screen').getBoundingClientRect();"
        " return [r.left, r.top, r.width, r.height]; })()"
    )
    columns, rows = page.size or (80, 24)
    left, top, width, height = (float(v) for v in box)
    return Cells(left, top, width / columns, height / rows, columns, rows)


async def tap_text(
    page: Page, words: str, *, offset: int = 0, last: bool = False, timeout: float = 20.0
) -> tuple[int, int]:
    """Wait until ``words`` are on the terminal, then tap them (their first
    character, or ``offset`` characters on); the cell tapped (column, row)."""
    screen = screen_of(page)
    async with asyncio.timeout(timeout):
        while (where := screen.find(words, last=last)) is None:
            await asyncio.sleep(0.05)
    grid = await cells(page)
    column, row = where[0] + offset, where[1]
    await page.tap(*grid.centre(column, row))
    return column, row


def first_option(screen: Screen) -> tuple[int, int] | None:
    """The key cap of the first option in the "Your move" panel (column, row), if any."""
    rows = screen.rows()
    top = next((n for n, row in enumerate(rows) if "Your move" in row), None)
    if top is None:
        return None
    border = rows[top].rfind("╭", 0, rows[top].index("Your move"))
    for number in range(top + 1, len(rows)):
        segment = rows[number][max(0, border) :]
        if segment.startswith("╰"):
            return None
        found = _OPTION.match(segment)
        if found:
            return max(0, border) + found.start(1), number
    return None


async def settled(page: Page, quiet: float = 0.3, timeout: float = 10.0) -> None:
    """Wait until the page has received no frame for ``quiet`` seconds (at most
    ``timeout`` seconds: a page that never stops drawing is left as it is)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            while True:
                count = len(page.frames)
                await asyncio.sleep(quiet)
                if len(page.frames) == count:
                    return


async def tap_option(page: Page) -> bool:
    """Once the page has settled, tap the first option of "Your move", if there
    is one, and wait for the page to answer (a frame); whether it tapped."""
    await settled(page)
    where = first_option(screen_of(page))
    if where is None:
        return False
    grid = await cells(page)
    mark = len(page.frames)
    await page.tap(*grid.centre(*where))
    async with asyncio.timeout(10):
        while len(page.frames) == mark:
            await asyncio.sleep(0.05)
    return True
