"""What a browser tab's terminal shows, cell by cell: the frames the page
received (:class:`~server.lab.web.cdp.Page`), replayed through a terminal
emulator (pyte) at the sizes the page asked for, and where a word is on it —
so that a finger can be put on it (:func:`tap_text`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pyte

from .cdp import Page

__all__ = ["Cells", "Screen", "cells", "screen_of", "tap_text"]


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
