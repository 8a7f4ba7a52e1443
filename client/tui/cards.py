"""How tulip colours and cards look on a terminal.

Every colour carries two marks, so a colour-blind player or a monochrome
terminal loses nothing: its colour and a shape (◆ ● ♥ ▲, the same in every
language). A card is its shape and value, in its colour: ``◆4``. Where a
colour is a label, it is named in the player's language (``◆Purple``), or,
where space is short, a legend names every shape (:func:`colour_legend`).

Cards and colours arrive in their wire spelling (``"purple-4"``), taken
apart by :func:`protocol.card_parts`: reading the protocol, not the rules.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

import protocol as wire

from .i18n import t

__all__ = [
    "COLOUR_STYLE",
    "GLYPH",
    "card_text",
    "cards_text",
    "colour_legend",
    "colour_name",
    "colour_tag",
]

#: A colour's terminal colour: light enough for a dark background.
COLOUR_STYLE: dict[str, str] = {
    "purple": "#c192ff",
    "blue": "#5fb2ff",
    "pink": "#ff8fc7",
    "orange": "#ffad4d",
}
#: A colour's shape, the same in every language.
GLYPH: dict[str, str] = {"purple": "◆", "blue": "●", "pink": "♥", "orange": "▲"}


def colour_name(colour: str) -> str:
    """The colour's name in the player's language."""
    return t(f"colour.{colour}")


def colour_tag(colour: str, *, name: bool = False) -> Text:
    """``◆`` in the colour's style (``◆Purple`` with ``name``)."""
    text = Text(GLYPH[colour], style=f"bold {COLOUR_STYLE[colour]}")
    if name:
        text.append(colour_name(colour), style=COLOUR_STYLE[colour])
    return text


def colour_legend() -> Text:
    """``◆Purple ●Blue ♥Pink ▲Orange``: every shape named, for where space is short."""
    return Text(" ").join(
        Text(glyph + colour_name(colour), style=COLOUR_STYLE[colour])
        for colour, glyph in GLYPH.items()
    )


def card_text(card: wire.Card, *, big: bool = False) -> Text:
    """``◆4`` in the colour's style; ``big`` draws it as a reversed tile followed
    by the colour's name (`` ◆4  Purple``), for the card in your hand."""
    colour, value = wire.card_parts(card)
    label = GLYPH[colour] + str(value)
    if big:
        tile = Text(f" {label} ", style=f"bold reverse {COLOUR_STYLE[colour]}")
        return tile.append(" " + colour_name(colour), style=f"bold {COLOUR_STYLE[colour]}")
    return Text(label, style=f"bold {COLOUR_STYLE[colour]}")


def cards_text(cards: Iterable[wire.Card], empty: str = "–") -> Text:
    """Cards separated by spaces, or ``empty``."""
    text = Text(" ").join(card_text(card) for card in cards)
    return text if text.plain else Text(empty, style="dim")
