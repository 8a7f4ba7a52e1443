"""The leaderboard (``b`` in the lobby): every rated player and bot strength,
best conservative rating first, a page at a time (``n`` / ``p``, or the
arrows and Page Up/Down). The player's own line is highlighted where it is,
and pinned under the list when it is on another page (``y`` goes there).
Enter opens the player's card."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

import protocol as wire

from ..i18n import t, tn
from ..ratings import rating_text
from ..session import SessionLike
from ..widgets.records import Record
from .pages import OpenCard, PageScreen

__all__ = ["PAGE_SIZE", "LeaderboardScreen"]

#: Lines on one page: at 80×24, a page fits without scrolling.
PAGE_SIZE = 15

_YOU_STYLE = "bold on #2a2440"


class LeaderboardScreen(PageScreen):
    """Pages through the leaderboard."""

    BINDINGS = [
        *PageScreen.BINDINGS,
        Binding("n,right,pagedown", "page(1)", show=False),
        Binding("p,left,pageup", "page(-1)", show=False),
        Binding("y", "yours", show=False),
    ]
    TITLE_KEY = "board.title"

    def __init__(self, session: SessionLike, me: str | None, page_size: int = PAGE_SIZE) -> None:
        super().__init__(session)
        self.me = me
        self.page_size = page_size
        self.start = 0
        self.page: wire.LeaderboardPage | None = None

    async def fetch(self) -> None:
        self.page = await self.session.leaderboard(offset=self.start, limit=self.page_size)

    def action_page(self, step: int) -> None:
        """The next (1) or the previous (−1) page, if there is one."""
        total = self.page.total if self.page is not None else 0
        offset = self.start + step * self.page_size
        if 0 <= offset < total:
            self.start = offset
            self.load()

    def action_yours(self) -> None:
        """The page with the player's own line."""
        you = self.page.you if self.page is not None else None
        if you is not None:
            self.start = (you.rank - 1) // self.page_size * self.page_size
            self.load()

    def _line(self, entry: wire.LeaderboardEntry) -> Record:
        you = entry.player == self.me
        name = Text(entry.name, style="bold" if you else "")
        if entry.kind == "bot":
            name.append(" " + t("board.bot"), style="italic cyan")
        if you:
            name.append(" " + t("players.you"), style="italic")
        cells = (
            Text(str(entry.rank), justify="right"),
            name,
            Text(rating_text(entry.rating), justify="right"),
            Text(str(entry.matches), justify="right"),
            Text(str(entry.wins), justify="right"),
        )
        if you:
            for cell in cells:
                cell.stylize(_YOU_STYLE)
        stacked = Text.assemble(f"{entry.rank}. ", name.copy(), "\n")
        stacked.append(
            t(
                "board.line",
                rating=rating_text(entry.rating),
                matches=entry.matches,
                wins=entry.wins,
            ),
            style="dim",
        )
        return Record(key=entry.player, cells=cells, stacked=stacked)

    def records(self) -> tuple[tuple[str, ...], list[Record], int]:
        headers = (
            t("board.rank"),
            t("board.player"),
            t("board.rating"),
            t("board.matches"),
            t("board.wins"),
        )
        entries = self.page.entries if self.page is not None else ()
        return headers, [self._line(entry) for entry in entries], 1

    def info(self) -> Text:
        page = self.page
        if page is None or not page.total:
            return Text(t("board.explain"), style="dim")
        pages = max(1, -(-page.total // self.page_size))
        number = page.offset // self.page_size + 1
        text = Text(
            tn("board.page", page.total, page=number, pages=pages, count=page.total) + " · ",
            style="dim",
        )
        text.append(t("board.explain"), style="dim")
        return text

    def note(self) -> Text:
        page = self.page
        if page is None:
            return Text()
        if not page.total:
            return Text(t("board.empty"), style="italic")
        you = page.you
        if you is None:
            return Text(t("board.not_on"), style="italic dim")
        if any(entry.player == you.player for entry in page.entries):
            return Text()
        text = Text(t("board.you", rank=you.rank, rating=rating_text(you.rating)), style="bold")
        text.append("  " + t("board.go_yours"), style="dim")
        return text

    def keys(self) -> tuple[tuple[str, str], ...]:
        return (
            ("keyname.enter", "keys.card"),
            ("keyname.n", "keys.next_page"),
            ("keyname.p", "keys.previous_page"),
            ("keyname.y", "keys.your_place"),
            ("keyname.escape", "keys.back"),
        )

    def picked(self, key: str) -> None:
        self.post_message(OpenCard(key))
