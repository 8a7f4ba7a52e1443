"""The one-line bars: the title bar (match, turn, connection) and the key bar.

On a narrow window the title bar takes a second line for the turn (the
stylesheet lets it grow there)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.reactive import reactive
from textual.widget import Widget

from ..i18n import t

__all__ = ["KeyBar", "TitleBar", "TitleView", "key_press"]


@dataclass(frozen=True, slots=True)
class TitleView:
    """What the title bar says: where we are, and whether we are online."""

    where: str = ""
    detail: str = ""
    online: bool = True
    your_turn: bool = False


class TitleBar(Widget):
    """The top line: the game, the match, the turn, and the connection."""

    view: reactive[TitleView] = reactive(TitleView, layout=True)

    def render(self) -> RenderableType:
        view = self.view
        if view.online:
            right = Text("● " + t("status.online"), style="green")
        else:
            right = Text("◌ " + t("status.reconnecting"), style="bold reverse red")
        left = self._left(view, with_title=True)
        if left.cell_len + 1 + right.cell_len > self.size.width:
            left = self._left(view, with_title=False)  # the game's name goes first
        width = self.size.width
        if left.cell_len + 1 + right.cell_len <= width:
            return self._line(left, right)
        # narrow (a phone): the turn on a line of its own, under the match, and
        # the connection beside whichever has room for it (else on its own line)
        where = self._left(TitleView(where=view.where), with_title=not view.where)
        detail = Text("  " + view.detail, style="bold yellow" if view.your_turn else "")
        lines: list[RenderableType] = [where, detail] if view.detail else [where]
        for at, line in enumerate(lines):
            assert isinstance(line, Text)
            if line.cell_len + 1 + right.cell_len <= width:
                lines[at] = self._line(line, right)
                break
        else:
            lines.append(Text(right.plain, style=right.style, justify="right"))
        return Group(*lines)

    @staticmethod
    def _line(left: Text, right: Text) -> Table:
        grid = Table.grid(expand=True)
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True)
        grid.add_row(left, right)
        return grid

    @staticmethod
    def _left(view: TitleView, *, with_title: bool) -> Text:
        """The match and the turn, after the game's name if ``with_title``."""
        pieces = [Text(t("app.title"), style="bold")] if with_title else []
        if view.where:
            pieces.append(Text(view.where))
        if view.detail:
            pieces.append(Text(view.detail, style="bold yellow" if view.your_turn else ""))
        return Text("✿ ", style="bold #ff8fc7") + Text(" · ").join(pieces)


#: The key a key cap's label stands for, where it is not the letter its id
#: ends in; a cap for two keys (``←/→``) has none (the key bar splits it in halves).
_PRESSES = {
    "keyname.escape": "escape",
    "keyname.q_esc": "escape",
    "keyname.enter": "enter",
    "keyname.tab": "tab",
    "keyname.space": "space",
    "keyname.help": "question_mark",
    "keyname.quit": "q",
    "keyname.lobby": "l",
    "keyname.scores": "r",
}


#: A cap for two keys (``←/→``): a click on its left half presses the first,
#: on its right half the second (the replay viewer's steps, by mouse).
_PAIRS = {
    "keyname.arrows": ("left", "right"),
    "keyname.updown": ("up", "down"),
    "keyname.pn": ("p", "n"),
}


def key_press(label: str) -> str | None:
    """The key that a key cap's label id (``keyname.k``) presses, if one."""
    if label in _PRESSES:
        return _PRESSES[label]
    letter = label.removeprefix("keyname.")
    return letter if len(letter) == 1 else None


class KeyBar(Widget):
    """The bottom line: the keys that work here, translated. A click on a key
    or its words presses that key, as Textual's own footer does (on either
    half of a cap for two keys, ``←/→``, the key of that half)."""

    keys: reactive[tuple[tuple[str, str], ...]] = reactive(())

    def _spans(self) -> list[tuple[int, int, str | None]]:
        """Each key's cells on the line: from, to (exclusive), the key it presses."""
        spans: list[tuple[int, int, str | None]] = []
        x = 0
        for key, description in self.keys:
            cap = Text(f" {t(key)} ").cell_len
            width = cap + Text(f" {t(description)}  ").cell_len
            if key in _PAIRS:  # each half of the cap its key; the words neither
                half = cap // 2
                first, second = _PAIRS[key]
                spans += [(x, x + half, first), (x + half, x + cap, second)]
            else:
                spans.append((x, x + width, key_press(key)))
            x += width
        return spans

    def render(self) -> RenderableType:
        text = Text(no_wrap=True, overflow="ellipsis")
        for key, description in self.keys:
            text.append(f" {t(key)} ", style="bold reverse")
            text.append(f" {t(description)}  ")
        text.rstrip()  # the last key's gap would only push it off a narrow terminal
        return text

    def on_click(self, event: events.Click) -> None:
        """Press the key whose cap or words were clicked."""
        for start, end, press in self._spans():
            if start <= event.x < end and press is not None:
                self.app.simulate_key(press)
                return
