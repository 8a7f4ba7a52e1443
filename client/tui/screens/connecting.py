"""The first screen: the game's name and what is happening (starting a local
server, connecting) — drawn before any network work begins."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget

from ..i18n import t
from ..widgets.bars import KeyBar
from ..widgets.toosmall import TooSmall
from ..widgets.touch import KeyButtons

__all__ = ["ConnectingScreen"]

_FLOWERS = "✿ ❀ ✿ ❀ ✿"


class Splash(Widget):
    """The title and the status line under it."""

    status: reactive[str] = reactive("")

    def render(self) -> RenderableType:
        splash = Text(justify="center")
        splash.append(_FLOWERS + "\n", style="#ff8fc7")
        splash.append(t("app.title") + "\n", style="bold")
        splash.append(_FLOWERS + "\n\n", style="#c192ff")
        splash.append(self.status, style="italic")
        return splash


class ConnectingScreen(Screen[None]):
    """Shows ``status`` under the title."""

    BINDINGS = [("q", "app.quit")]

    status: reactive[str] = reactive("")

    def compose(self) -> ComposeResult:
        with Middle(), Center():
            yield Splash(id="splash").data_bind(ConnectingScreen.status)
        yield KeyButtons().data_bind(keys=_KEYS)  # a phone's
        yield KeyBar().data_bind(keys=_KEYS)
        yield TooSmall()


_KEYS = (("keyname.help", "keys.help"), ("keyname.quit", "keys.quit"))
