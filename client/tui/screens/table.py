"""The table: festival and players on top, your actions and the log below.

The app sets ``view`` (a :class:`~client.tui.viewmodel.TableView`) after
every change; the screen hands each part to its widget. Keys and buttons run
``app.choose(key)``; the app looks the key up in the view's choices. The
arrows, Page Up/Down and Home scroll the log; End follows it again. ``q``
asks before it quits a running match."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen

from ..i18n import t
from ..viewmodel import TableView
from ..widgets.actions import ActionsPanel
from ..widgets.bars import KeyBar, TitleBar, TitleView
from ..widgets.bouquets import PlayersPanel
from ..widgets.festival import FestivalPanel
from ..widgets.log import EventLog
from ..widgets.toosmall import TooSmall

__all__ = ["TableScreen"]

_CHOICE_KEYS = ("k", "g", "f", "s", "1", "2", "3", "4", "5", "6", "escape", "b", "x", "w")


def _detail(view: TableView) -> str:
    if view.phase is None:
        return t("table.not_started")
    if view.phase == "opening":
        return t("table.opening")
    if view.phase == "over":
        return t("table.over")
    turn = (
        t("table.turn_of", turn=view.turn, turns=view.turns)
        if view.turns is not None
        else t("table.turn", turn=view.turn)
    )
    return turn + " · " + t("table.your_turn") if view.your_turn else turn


class TableScreen(Screen[None]):
    """Renders a :class:`~client.tui.viewmodel.TableView`."""

    BINDINGS = [
        *(Binding(key, f"app.choose('{key}')", show=False) for key in _CHOICE_KEYS),
        Binding("r", "app.show_scores", show=False),
        Binding("c", "app.chat", show=False),
        Binding("l", "app.leave", show=False),
        Binding("q", "app.ask_quit", show=False),
        Binding("up", "log('row', 1)", show=False),
        Binding("down", "log('row', -1)", show=False),
        Binding("pageup", "log('page', 1)", show=False),
        Binding("pagedown", "log('page', -1)", show=False),
        Binding("home", "log('top', 0)", show=False),
        Binding("end", "log('end', 0)", show=False),
    ]

    view: reactive[TableView | None] = reactive(None, always_update=True)

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="upper"):
            yield FestivalPanel(classes="panel")
            yield PlayersPanel(classes="panel")
        with Horizontal(id="lower"):
            yield ActionsPanel(classes="panel")
            yield EventLog(classes="panel")
        yield KeyBar()
        yield TooSmall()

    def on_mount(self) -> None:
        self._show(self.view)

    def action_log(self, how: str, amount: int) -> None:
        """Scroll the log: by rows or pages (up is positive), to the top, or to the end."""
        log = self.query_one(EventLog)
        if how == "row":
            log.scroll_rows(amount)
        elif how == "page":
            log.page(amount)
        elif how == "top":
            log.to_top()
        else:
            log.follow()

    def watch_view(self, view: TableView | None) -> None:
        if self.is_mounted:
            self._show(view)

    def _show(self, view: TableView | None) -> None:
        if view is None:
            return
        self.query_one(TitleBar).view = TitleView(
            where=view.title, detail=_detail(view), online=view.online, your_turn=view.your_turn
        )
        self.query_one(FestivalPanel).view = view.festival
        self.query_one(PlayersPanel).rows = view.players
        actions = self.query_one(ActionsPanel)
        actions.view = view.actions
        actions.seconds_left = view.seconds_left
        self.query_one(EventLog).lines = view.log
        self.query_one(KeyBar).keys = view.keys
