"""The table: on the left the festival and, under it, your actions; on the
right the players and, under them, the log — as tall as the rest of the
screen, so a whole round stays on it at 80×24.

The app sets ``view`` (a :class:`~client.tui.viewmodel.TableView`) after
every change; the screen hands each part to its widget. Keys and buttons run
``app.choose(key)``; the app looks the key up in the view's choices. The
arrows, Page Up/Down and Home scroll the log; End follows it again. ``q``
asks before it quits a running match.

The chat has a pane of its own in the log's place: ``m`` shows the chat or
the moves, and ``c`` (say something) shows the chat. In a match that allows
hints, ``h`` asks for the analysis's values of the decision open now; they
show beside the choices until it is taken. While the moves show,
the log's title counts the chat lines not seen yet.

In the narrow layout (a phone: the ``-narrow`` breakpoint class) the panels
stack: your move first, its options full-width buttons a finger can hit, then
the festival and the players; the log and the chat are a tap away on tab-like
buttons (Table / Log / Chat, ``tab``), and the key bar's keys are buttons."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen

from ..i18n import t
from ..viewmodel import TableView
from ..widgets.actions import ActionsPanel
from ..widgets.bars import KeyBar, TitleBar, TitleView
from ..widgets.bouquets import PlayersPanel
from ..widgets.festival import FestivalPanel
from ..widgets.log import ChatLog, EventLog
from ..widgets.toosmall import TooSmall
from ..widgets.touch import KeyButtons, TabButtons, TouchButton

__all__ = ["TableScreen"]

#: the narrow layout's tabs: (name, label id)
TABS = (("table", "tab.table"), ("log", "tab.log"), ("chat", "tab.chat"))
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
        Binding("p", "app.player_cards", show=False),
        Binding("h", "app.hint", show=False),
        Binding("c", "chat", show=False),
        Binding("m", "toggle_chat", show=False),
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
    #: the chat shows in the log's pane (else the moves do)
    chatting: reactive[bool] = reactive(False)
    #: the narrow layout's tab: the table, the log or the chat
    tab: reactive[str] = reactive("table")

    def __init__(self) -> None:
        super().__init__()
        #: the newest chat line the player has seen (in the chat pane)
        self._seen: Text | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="table"):
            with Vertical(id="table-left"):
                # the actions first: the narrow layout stacks them over the
                # festival; side by side the festival is docked above them
                yield ActionsPanel(classes="panel")
                yield FestivalPanel(classes="panel")
            with Vertical(id="table-right"):
                yield PlayersPanel(classes="panel")
                yield EventLog(id="moves", classes="panel")
                yield ChatLog(id="chat", classes="panel")  # the stylesheet shows one of the two
                yield TouchButton(t("chat.say"), action="screen.chat", id="say")
        yield TabButtons(TABS, "screen.tab", id="table-tabs")  # under the table, as on a phone
        yield KeyButtons(skip=("keyname.tab", "keyname.m"), id="table-keys")
        yield KeyBar()
        yield TooSmall()

    def on_mount(self) -> None:
        self.watch_tab(self.tab)
        self.query_one(TabButtons).current = self.tab
        self._show(self.view)

    async def action_chat(self) -> None:
        """Say something to the table: the chat pane shows, then the line to type."""
        self.chatting = True
        self.tab = "chat"
        await self.app.run_action("app.chat")

    def action_toggle_chat(self) -> None:
        """Show the chat in the log's pane, or the moves again."""
        self.chatting = not self.chatting

    def action_tab(self, tab: str) -> None:
        """Open a tab of the narrow layout: the table, the log or the chat."""
        if tab != "table":
            self.chatting = tab == "chat"
        self.tab = tab

    def watch_chatting(self, chatting: bool) -> None:
        self.set_class(chatting, "-chatting")
        if self.tab != "table":
            self.tab = "chat" if chatting else "log"
        if self.is_mounted:
            self._show(self.view)

    def watch_tab(self, tab: str) -> None:
        for name, _label in TABS:
            self.set_class(name == tab, f"-tab-{name}")
        if self.is_mounted:
            self.query_one(TabButtons).current = tab

    def _pane(self) -> EventLog:
        return self.query_one("#chat" if self.chatting else "#moves", EventLog)

    def action_log(self, how: str, amount: int) -> None:
        """Scroll the log (or the chat, when it shows): by rows or pages (up is
        positive), to the top, or to the end."""
        log = self._pane()
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
        players = self.query_one(PlayersPanel)
        players.rows = view.players
        players.spectators = view.spectators
        actions = self.query_one(ActionsPanel)
        actions.view = view.actions
        actions.seconds_left = view.seconds_left
        moves = self.query_one("#moves", EventLog)
        moves.lines = view.log
        chat = self.query_one("#chat", ChatLog)
        chat.lines = view.chat
        if self.chatting and view.chat:
            self._seen = view.chat[-1]
        moves.unread = self._unread(view.chat)
        chat_tab = t("tab.chat") + (f" · {moves.unread}" if moves.unread else "")
        self.query_one("#tab-chat", TouchButton).label = chat_tab  # a phone's unread count
        keys = self._keys(view.keys)
        self.query_one(KeyBar).keys = keys
        self.query_one(KeyButtons).keys = keys

    def _unread(self, chat: tuple[Text, ...]) -> int:
        """How many chat lines came after the last one seen."""
        for back, line in enumerate(reversed(chat)):
            if line is self._seen:
                return back
        return len(chat)

    def _keys(self, keys: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        """The view's keys, with the key for the log's pane after the chat's."""
        pane = ("keyname.m", "keys.show_moves" if self.chatting else "keys.show_chat")
        at = next((i + 1 for i, (key, _) in enumerate(keys) if key == "keyname.c"), None)
        if at is None:
            return keys
        return (*keys[:at], pane, *keys[at:])
