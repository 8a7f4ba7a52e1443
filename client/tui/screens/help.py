"""``?``: the rules in brief, the colour legend and the keys. On a narrow
window (a phone) each key's words are under it, and a Close button closes
the page (no room beside it to tap)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

import protocol as wire

from ..cards import card_text, colour_tag
from ..i18n import t
from ..viewmodel import COLOURS
from ..widgets.touch import TouchButton

__all__ = ["HelpScreen"]

_KEYS = (
    ("keyname.k", "help.key.keep"),
    ("keyname.g", "help.key.give"),
    ("keyname.f", "help.key.face_up"),
    ("keyname.s", "help.key.secret"),
    ("help.key.digits", "help.key.pick"),
    ("keyname.tab", "help.key.tab"),
    ("help.key.log_keys", "help.key.log"),
    ("keyname.m", "help.key.chat_pane"),
    ("keyname.escape", "keys.back"),
    ("keyname.scores", "keys.scores"),
    ("keyname.lobby", "keys.lobby"),
    ("keyname.v", "help.key.replay"),
    ("keyname.b", "help.key.leaderboard"),
    ("keyname.h", "help.key.history"),
    ("keyname.p", "help.key.profile"),
    ("keyname.help", "keys.help"),
    ("keyname.quit", "keys.quit"),
)
_REPLAY_KEYS = (
    ("keyname.arrows", "help.key.step"),
    ("keyname.updown", "help.key.turn_step"),
    ("keyname.t", "help.key.goto"),
    ("keyname.home_end", "help.key.start_end"),
    ("keyname.space", "help.key.play"),
    ("keyname.speed", "help.key.speed"),
    ("keyname.q_esc", "help.key.replay_back"),
)


def _key_table(rows: tuple[tuple[str, str], ...], *, stacked: bool = False) -> Table:
    """Each key beside what it does; ``stacked`` (a narrow page): what it does
    under the key, indented, so neither column is squeezed."""
    keys = Table.grid(padding=(0, 2))
    keys.add_column(no_wrap=not stacked)
    if not stacked:
        keys.add_column()
    for key, description in rows:
        # a span, not the cell's base style: the column's padding stays unstyled
        cap = Text.assemble((f" {t(key)} ", "bold reverse"))
        if stacked:
            keys.add_row(cap)
            keys.add_row(Text("  " + t(description)))
        else:
            keys.add_row(cap, t(description))
    return keys


#: The printed rules' numbers that the brief names (R14, R19), for a server
#: that does not say its ruleset.
_PRINTED_KEEP = (0, 0, 1, 2)
_PRINTED_REVEAL = 5


def help_text(ruleset: wire.RulesetInfo | None = None, *, narrow: bool = False) -> Group:
    """The help page, in the player's language, with the numbers of ``ruleset``
    (the match's, a house ruleset's included; None: the printed rules);
    ``narrow``: for a phone, each key's words under it."""
    keep = ruleset.bouquet if ruleset is not None else _PRINTED_KEEP
    reveal = ruleset.reveal_size if ruleset is not None else _PRINTED_REVEAL
    legend = Table.grid(padding=(0, 2))
    legend.add_column(no_wrap=True)
    legend.add_column()
    for colour in COLOURS:
        legend.add_row(colour_tag(colour, name=True), "")
    legend.add_row(Text("● / ○", style="bold"), t("help.presence"))
    legend.add_row(
        Text.assemble(
            ("◆", "bold #c192ff"), ("432", "#c192ff"), " ", ("●", "bold #5fb2ff"), ("4", "#5fb2ff")
        ),
        t("help.bouquet_cells"),
    )
    legend.add_row(Text("▶", style="bold yellow"), t("help.arrow"))
    legend.add_row(Text.assemble((" 23 ", "bold reverse #ffd75f")), t("help.changed"))
    legend.add_row(card_text("pink-4") + Text("✓", style="bold green"), t("help.revealed_mine"))
    keys = _key_table(_KEYS, stacked=narrow)
    replay_keys = _key_table(_REPLAY_KEYS, stacked=narrow)
    return Group(
        Text(t("help.rules", keep="/".join(map(str, keep)), reveal=reveal)),
        Text(""),
        Text(t("help.legend"), style="bold"),
        legend,
        Text(""),
        Text(t("help.keys"), style="bold"),
        keys,
        Text(""),
        Text(t("help.replay_keys"), style="bold"),
        replay_keys,
        Text(""),
        Text(t("help.close"), style="dim"),
    )


class HelpScreen(ModalScreen[None]):
    """A scrollable page over whatever screen was showing, told the numbers of
    the match's ruleset (None: the printed rules)."""

    BINDINGS = [("escape", "dismiss"), ("q", "dismiss"), ("question_mark", "dismiss")]

    def __init__(self, ruleset: wire.RulesetInfo | None = None) -> None:
        super().__init__()
        self.ruleset = ruleset

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(help_text(self.ruleset), classes="wide-only")
            yield Static(help_text(self.ruleset, narrow=True), classes="narrow-only")
        # a phone's page fills the screen: nothing beside it to tap
        yield TouchButton(t("help.close_button"), action="screen.dismiss", id="help-close")

    def on_mount(self) -> None:
        page = self.query_one("#help")
        page.border_title = t("help.title")
        page.focus()

    def on_click(self, event: events.Click) -> None:
        """A click beside the page closes it, as Esc does: the mouse's way out
        (a click on the page itself is for scrolling it)."""
        if event.widget is self:
            self.dismiss()
