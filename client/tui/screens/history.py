"""Your match history (``h`` in the lobby): the player's finished matches,
latest first, a page at a time (``n`` older, ``p`` newer) — date, match and
players, place, points, and how the rating moved (or "unrated"). Enter (or
``v``) opens the match in the replay viewer."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

import protocol as wire

from ..i18n import t
from ..session import SessionLike
from ..widgets.records import Record
from .card import record_headers, record_lines
from .pages import PageScreen

__all__ = ["HISTORY_PAGE", "HistoryScreen"]

#: Matches on one page: two lines each, a page fits at 80×24.
HISTORY_PAGE = 7


class HistoryScreen(PageScreen):
    """Pages through the player's finished matches."""

    BINDINGS = [
        *PageScreen.BINDINGS,
        Binding("n,right,pagedown", "page(1)", show=False),
        Binding("p,left,pageup", "page(-1)", show=False),
        Binding("v", "replay", show=False),
    ]
    TITLE_KEY = "history.title"

    def __init__(self, session: SessionLike, page_size: int = HISTORY_PAGE) -> None:
        super().__init__(session)
        self.page_size = page_size
        #: the ``before`` of each page shown so far, the current one last (None: the latest)
        self.cursors: list[int | None] = [None]
        self.page: wire.HistoryPage | None = None

    async def fetch(self) -> None:
        self.page = await self.session.history(before=self.cursors[-1], limit=self.page_size)

    def action_page(self, step: int) -> None:
        """Older (1) or newer (−1) matches, if there are."""
        if step > 0 and self.page is not None and self.page.next is not None:
            self.cursors.append(self.page.next)
            self.load()
        elif step < 0 and len(self.cursors) > 1:
            self.cursors.pop()
            self.load()

    def records(self) -> tuple[tuple[str, ...], list[Record], int]:
        matches = self.page.matches if self.page is not None else ()
        return record_headers(), [record_lines(record) for record in matches], 1

    def info(self) -> Text:
        return Text(t("history.page", page=len(self.cursors)), style="dim")

    def note(self) -> Text:
        if self.page is not None and not self.page.matches:
            return Text(t("history.empty"), style="italic")
        return Text()

    def keys(self) -> tuple[tuple[str, str], ...]:
        return (
            ("keyname.enter", "keys.replay"),
            ("keyname.n", "keys.older"),
            ("keyname.p", "keys.newer"),
            ("keyname.escape", "keys.back"),
        )

    def picked(self, key: str) -> None:
        self.action_replay(key)

    def action_replay(self, key: str | None = None) -> None:
        """Replay the match under the cursor, if the server still keeps it."""
        self.replay_record(self.page.matches if self.page is not None else (), key)
