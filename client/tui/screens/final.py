"""The final screen: each player's keeping, giving and majority points, the
total and the tulips that break a tie; how each ranked colour's majorities
went; who won and what decided it; and, for a player (not a spectator), a
rematch — or, once another player opened one, the offer to join it
(``offer``: who opened it; ``r`` or ``a`` joins). A player (or anyone,
after an open-box match) may ask for the analysis (``e``, issue 32: the
replay viewer with it) or learn from their mistakes at once (``m``). On a
phone (the narrow layout) the scores take two lines a player and every key
is a button."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Button, Static

import protocol as wire

from ..cards import cards_text, colour_tag
from ..i18n import rich, t, tn
from ..ratings import change_text
from ..viewmodel import COLOURS, FinalView, Placement, ScoreRow
from ..widgets.bars import KeyBar, TitleBar, TitleView
from ..widgets.toosmall import TooSmall
from ..widgets.touch import KeyButtons

__all__ = ["FinalScreen", "scoring_table"]


def _scores_table() -> Table:
    """An empty table of final scores, its caption saying what the colours are."""
    return Table(
        box=None,
        padding=(0, 1, 0, 0),
        show_edge=False,
        header_style="bold",
        caption=t("final.caption"),
        caption_justify="left",
        caption_style="dim",
    )


def _name(row: ScoreRow) -> Text:
    """A player's name, marked when it is the viewer's own."""
    name = Text(row.name, style="bold" if row.you else "")
    if row.you:
        name.append(" " + t("players.you"), style="italic")
    return name


def scoring_table(view: FinalView, *, narrow: bool = False) -> Table:
    """One row per player, best first: where every point came from
    (``narrow``, for a phone: see :func:`narrow_scoring_table`)."""
    if narrow:
        return narrow_scoring_table(view)
    table = _scores_table()
    table.add_column("", no_wrap=True, width=1)
    table.add_column(t("final.player"), no_wrap=True, overflow="ellipsis", max_width=18)
    table.add_column(t("final.keeping"), justify="right", no_wrap=True)
    table.add_column(t("final.giving"), justify="right", no_wrap=True)
    for colour in COLOURS:
        table.add_column(colour_tag(colour, name=True), justify="right", no_wrap=True)
    table.add_column(t("final.total"), justify="right", no_wrap=True)
    table.add_column(t("final.tulips"), justify="right", no_wrap=True)
    for row in view.rows:
        name = _name(row)
        table.add_row(
            Text("★", style="bold yellow") if row.winner else "",
            name,
            str(row.keeping),
            str(row.giving),
            *(Text(str(p), style="" if p else "dim") for p in row.majorities),
            Text(str(row.total), style="bold"),
            str(row.tulips),
            style="on #2a2440" if row.you else "",
        )
    return table


def narrow_scoring_table(view: FinalView) -> Table:
    """The scores in 36 columns: each player's total and tulips, and under
    them the keeping, giving and each colour's majority points."""
    table = _scores_table()
    table.add_column("", no_wrap=True, width=1)
    table.add_column(t("final.player"), ratio=1, overflow="fold")
    table.add_column(t("final.total"), justify="right", no_wrap=True)
    table.add_column(t("final.tulips"), justify="right", no_wrap=True)
    for row in view.rows:
        name = _name(row)
        style = "on #2a2440" if row.you else ""
        table.add_row(
            Text("★", style="bold yellow") if row.winner else "",
            name,
            Text(str(row.total), style="bold"),
            str(row.tulips),
            style=style,
        )
        split = Text(f"{t('final.keeping')} {row.keeping} · {t('final.giving')} {row.giving} ·")
        for colour, points in zip(COLOURS, row.majorities, strict=True):
            split.append(" ")
            split.append_text(colour_tag(colour))
            split.append(str(points), style="" if points else "dim")
        table.add_row("", split, "", "", style=style)
    return table


def majority_lines(view: FinalView) -> Group:
    """For each colour ranked 1st–3rd: who scored its majorities."""
    lines = []
    for line in view.majorities:
        text = Text.assemble((t(f"rank.{line.rank + 1}") + " ", "bold"))
        text.append_text(colour_tag(line.colour, name=True))
        text.append(": ")
        if not line.places:
            text.append(t("final.nobody"), style="dim")
        for i, (name, cards, value, points) in enumerate(line.places):
            if i:
                text.append(", ")
            text.append_text(
                rich(
                    "final.place",
                    number=cards,
                    name=Text(name, style="bold"),
                    cards=cards,
                    value=value,
                    points=points,
                )
            )
        lines.append(text)
    return Group(*lines)


def verdict(view: FinalView) -> Text:
    """Who won, and what decided it (R23)."""
    winners = Text(", ").join(Text(name, style="bold") for name in view.winners)
    key = {"points": "final.won_points", "tulips": "final.won_tulips", "shared": "final.shared"}
    text = rich(key[view.decided_by], winners=winners)
    if view.you_won:
        text.append("  " + t("final.you_won"), style="bold yellow")
    if view.placement is not None:
        text.append("\n")
        text.append_text(place_line(view.placement))
    return text


def place_line(place: Placement) -> Text:
    """Where the player finished, in a sentence ("You finished 2nd of 4, 3
    points behind Bot 2")."""
    fields = {
        "place": t(f"rank.{place.place}"),
        "players": place.players,
        "other": place.other,
        "points": place.margin,
    }
    if place.how == "ahead":
        line = tn("final.finished_ahead", place.margin, **fields)
    elif place.how == "behind":
        line = tn("final.finished_behind", place.margin, **fields)
    elif place.how == "ahead_tulips":
        line = t("final.finished_ahead_tulips", **fields)
    elif place.how == "behind_tulips":
        line = t("final.finished_behind_tulips", **fields)
    else:
        line = t("final.finished_shared", **fields)
    return Text(line, style="bold")


def ratings_text(
    view: FinalView, rated: bool, changes: tuple[wire.RatingChange, ...] | None
) -> Text:
    """How the match moved each player's rating ("+1.8, now 27.4"), in the
    order of the scores; "unrated" for an unrated match; a note while a rated
    match's changes are still to come."""
    if not rated:
        return Text(t("final.unrated"), style="italic dim")
    if changes is None:
        return Text(t("final.rating_pending"), style="italic dim")
    by_seat = {change.seat: change for change in changes}
    text = Text(t("final.ratings"), style="bold underline")
    for row in view.rows:
        text.append("\n")
        text.append_text(_name(row))
        text.append("  ")
        change = by_seat.get(row.seat)
        if change is None:
            text.append(t("rating.not_counted"), style="dim")
        else:
            text.append_text(change_text(change))
    return text


def own_rating_text(
    view: FinalView, rated: bool, changes: tuple[wire.RatingChange, ...] | None
) -> Text | None:
    """The viewer's own rating change in one line, under the scores ("Your
    rating: +1.8, now 27.4"); None for a spectator, or while it is to come."""
    mine = next((row for row in view.rows if row.you), None)
    if mine is None or not rated or changes is None:
        return None
    change = next((c for c in changes if c.seat == mine.seat), None)
    if change is None:
        return Text(t("final.your_rating_not_counted"), style="dim")
    return rich("final.your_rating", style="bold", change=change_text(change))


class FinalScreen(Screen[None]):
    """Shows a :class:`~client.tui.viewmodel.FinalView` over the table."""

    BINDINGS = [
        Binding("a", "app.play_again", show=False),
        Binding("r", "app.play_again", show=False),
        Binding("t", "app.pop_screen", show=False),
        Binding("v", "app.replay_match", show=False),
        Binding("e", "analyse", show=False),
        Binding("m", "learn", show=False),
        Binding("escape", "app.pop_screen", show=False),
        Binding("l", "app.leave", show=False),
        Binding("p", "app.player_cards", show=False),
        Binding("q", "app.quit", show=False),
    ]

    offer: reactive[str | None] = reactive(None)
    #: the rating changes of a rated match, once the ``ratings`` notice came
    ratings: reactive[tuple[wire.RatingChange, ...] | None] = reactive(None)

    def __init__(
        self,
        view: FinalView,
        offer: str | None = None,
        *,
        rated: bool = False,
        ratings: tuple[wire.RatingChange, ...] | None = None,
        analysable: bool | None = None,
    ) -> None:
        """``analysable``: whether to offer the analysis (default: to a player)."""
        super().__init__()
        self.view = view
        self.rated = rated
        self.analysable = view.seated if analysable is None else analysable
        self.set_reactive(FinalScreen.offer, offer)
        self.set_reactive(FinalScreen.ratings, ratings)

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with VerticalScroll(id="final", classes="panel"):
            yield Static(self._body(), classes="wide-only")
            yield Static(self._body(narrow=True), classes="narrow-only")
            yield Static(id="final-ratings")
        yield Static(id="final-mine")
        yield Static(id="final-offer")
        with Horizontal(classes="buttons"):
            if self.view.seated:  # a spectator is not offered a rematch
                yield Button(
                    t("final.again"), action="app.play_again", variant="primary", compact=True
                )
            yield Button(t("final.table"), action="app.pop_screen", compact=True)
            yield Button(t("final.replay"), action="app.replay_match", compact=True)
            if self.analysable:
                yield Button(t("final.analysis"), action="screen.analyse", compact=True)
            yield Button(t("final.lobby"), action="app.leave", compact=True)
            yield Button(t("final.cards"), action="app.player_cards", compact=True)
        yield KeyButtons(id="final-keys")  # a phone's buttons, in place of the row above
        yield KeyBar()
        yield TooSmall()

    def action_analyse(self) -> None:
        """The replay viewer with the analysis of this match."""
        if self.analysable:
            self.app.call_later(self.app.run_action, "app.replay_match('analyse')")

    def action_learn(self) -> None:
        """Learn from your mistakes in this match."""
        if self.analysable:
            self.app.call_later(self.app.run_action, "app.replay_match('learn')")

    def watch_offer(self) -> None:
        if self.is_mounted:
            self._show_offer()

    def watch_ratings(self) -> None:
        if self.is_mounted:
            self._show_ratings()

    def _show_ratings(self) -> None:
        text = ratings_text(self.view, self.rated, self.ratings)
        self.query_one("#final-ratings", Static).update(text)
        mine = own_rating_text(self.view, self.rated, self.ratings)
        line = self.query_one("#final-mine", Static)
        line.display = mine is not None
        line.update(mine or "")

    def _show_offer(self) -> None:
        line = self.query_one("#final-offer", Static)
        line.display = self.offer is not None and self.view.seated
        if self.offer is not None:
            line.update(t("final.rematch_offer", host=self.offer))

    def _body(self, *, narrow: bool = False) -> RenderableType:
        view = self.view
        table = scoring_table(view, narrow=narrow)
        parts: list[RenderableType] = [verdict(view), Text(""), table, Text("")]
        parts.append(Text(t("final.majorities"), style="bold underline"))
        parts.append(majority_lines(view))
        if view.revealed:
            parts.append(Text(""))
            parts.append(Text(t("festival.revealed") + " ").append_text(cards_text(view.revealed)))
        return Group(*parts)

    def on_mount(self) -> None:
        self.query_one(TitleBar).view = TitleView(where=self.view.title, detail=t("table.over"))
        self.query_one("#final").border_title = t("final.title")
        again: tuple[tuple[str, str], ...] = ()
        if self.view.seated:
            again = (("keyname.a", "keys.again"),)
        keys = (
            *again,
            ("keyname.t", "keys.table"),
            ("keyname.v", "keys.replay"),
        )
        # the analysis's keys take the place of the rules' (? still opens them)
        help_: tuple[tuple[str, str], ...] = (("keyname.help", "keys.help"),)
        if self.analysable:
            keys = (*keys, ("keyname.e", "keys.analysis"))  # m (learn) works unlisted
            help_ = ()
        keys = (*keys, ("keyname.lobby", "keys.lobby"), *help_, ("keyname.quit", "keys.quit"))
        self.query_one(KeyBar).keys = keys  # p (players' cards) is a button there
        self.query_one(KeyButtons).keys = (*keys[:-2], ("keyname.p", "keys.cards"), *keys[-2:])
        self._show_offer()
        self._show_ratings()
