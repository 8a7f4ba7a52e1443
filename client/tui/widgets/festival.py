"""The festival: the four colours in rank order with their totals and what
each rank is worth now (giving bonus, keeping points, majorities), then the
deck and the secret festival — with, for you alone, the cards you put there
(after the reveal, those like a revealed card ticked). What changed since the
marks' baseline is drawn reversed: the totals that moved, the new cards'
values, the secret festival's count."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..cards import COLOUR_STYLE, card_text, cards_text, colour_legend, colour_tag
from ..i18n import t
from ..viewmodel import FestivalView, RankRow
from .bouquets import CHANGED

__all__ = ["FestivalPanel"]

WIDE = 44  # from this width on, colours are named


def _rank_label(row: RankRow) -> Text:
    if row.rank is None:
        return Text(t("rank.none"), style="dim")
    return Text(t(f"rank.{row.rank + 1}"), style="bold")


def _values(row: RankRow) -> Text:
    """The colour's festival cards' values, the new ones (at the end) reversed."""
    style = COLOUR_STYLE[row.colour]
    old = len(row.values) - row.new
    return Text(" ").join(
        Text(str(value), style=f"bold reverse {style}" if i >= old else style)
        for i, value in enumerate(row.values)
    )


def _yours(view: FestivalView) -> Text:
    """Your secret cards; once the reveal began, those like a revealed card ticked."""
    if not view.mine_revealed:
        return Text(t("festival.yours") + " ").append_text(cards_text(view.my_secret))
    text = Text(t("festival.yours") + " ")
    for i, (card, out) in enumerate(zip(view.my_secret, view.mine_revealed, strict=True)):
        if i:
            text.append(" ")
        text.append_text(card_text(card) if out else Text(card_text(card).plain, style="dim"))
        if out:
            text.append("✓", style="bold green")
    return text


def _majority(row: RankRow) -> Text:
    if not row.majority:
        return Text("–", style="dim")
    return Text("·".join(str(points) for points in row.majority))


class FestivalPanel(Widget):
    """Renders a :class:`~client.tui.viewmodel.FestivalView`."""

    view: reactive[FestivalView | None] = reactive(None, layout=True)

    def on_mount(self) -> None:
        self.border_title = t("festival.title")
        self.border_subtitle = colour_legend()  # names the shapes of the cards everywhere

    def render(self) -> RenderableType:
        view = self.view
        if view is None:
            return Text(t("festival.not_started"), style="dim")
        wide = self.content_size.width >= WIDE
        table = Table(box=None, padding=(0, 1, 0, 0), show_edge=False, pad_edge=False)
        # narrow: "1st ◆" needs no header, and the legend below names the shapes
        table.add_column(t("festival.rank") if wide else "", no_wrap=True)
        table.add_column(t("festival.colour") if wide else "", no_wrap=True)
        table.add_column(t("festival.total"), justify="right", no_wrap=True)
        if view.legend:
            table.add_column(t("festival.give"), justify="right", no_wrap=True)
            table.add_column(t("festival.keep"), justify="right", no_wrap=True)
            table.add_column(t("festival.majority"), justify="right", no_wrap=True)
        if wide:
            table.add_column(t("festival.cards"), no_wrap=True, overflow="ellipsis")
        for row in view.rows:
            cells: list[RenderableType] = [
                _rank_label(row),
                colour_tag(row.colour, name=wide),
                Text(str(row.total), style=CHANGED if row.moved else "bold"),
            ]
            if view.legend:
                cells += [f"+{row.give}", str(row.keep), _majority(row)]
            if wide:
                cells.append(_values(row))
            table.add_row(*cells)
        lines: list[RenderableType] = [table]
        lines.append(
            Text.assemble(
                (t("festival.deck", count=view.deck), "bold"),
                "  ",
                (t("festival.secret", count=view.secret), CHANGED if view.secret_moved else ""),
            )
        )
        if not view.spectator:
            lines.append(_yours(view))
        if view.revealed:
            lines.append(Text(t("festival.revealed") + " ").append_text(cards_text(view.revealed)))
        return Group(*lines)
