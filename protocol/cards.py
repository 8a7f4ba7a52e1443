"""Reading a card's wire spelling: ``"<colour>-<value>"`` (R1, R2).

This is the one place outside the engine where a spelling such as
``"pink-3"`` is taken apart; clients and the server's own code ask here
instead of splitting strings themselves. It reads the protocol, not the rules:
what a card scores is the server's to say (``prompt.points``).

Invariant: :data:`CARD_PARTS` holds exactly the twelve spellings of
:data:`~protocol.types.CARDS`, each split once at import, so a lookup both
parses and validates; anything else raises :class:`ValueError` naming it.
"""

from __future__ import annotations

from typing import NamedTuple, cast

from .types import CARDS, COLOURS, Card, Colour

__all__ = ["CARD_PARTS", "CardParts", "card_colour", "card_parts", "card_value"]


class CardParts(NamedTuple):
    """A card's colour and value, as its spelling says."""

    colour: Colour
    value: int


def _split(card: Card) -> CardParts:
    colour, _, value = card.partition("-")
    assert colour in COLOURS, card  # every spelling of CARDS starts with a colour
    return CardParts(colour, int(value))


#: Every card spelling with its parts.
CARD_PARTS: dict[Card, CardParts] = {card: _split(card) for card in CARDS}


def card_parts(card: str) -> CardParts:
    """The colour and value of ``card`` (``"pink-3"`` → ``("pink", 3)``).

    Raises :class:`ValueError` if ``card`` is not one of the twelve spellings.
    """
    try:
        return CARD_PARTS[cast(Card, card)]
    except (KeyError, TypeError):
        raise ValueError(f"not a card spelling: {card!r}") from None


def card_colour(card: str) -> Colour:
    """The colour of ``card`` (``"pink-3"`` → ``"pink"``)."""
    return card_parts(card).colour


def card_value(card: str) -> int:
    """The value of ``card`` (``"pink-3"`` → ``3``)."""
    return card_parts(card).value
