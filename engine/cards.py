"""Tulip cards and colours (R1–R3).

A card is a colour and a value; cards with the same colour and value are
identical (R3), so there are exactly twelve :class:`Card` objects, and every
way of making a card returns one of them. Equality is identity, which the hot
paths of the engine and its bots rely on.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["COLOURS", "VALUES", "Card", "Colour", "all_cards"]


class Colour(enum.Enum):
    """The four tulip colours (R1), in their canonical order."""

    PURPLE = "purple"
    BLUE = "blue"
    PINK = "pink"
    ORANGE = "orange"

    # Members are singletons; identity hashing keeps dict look-ups off Enum's
    # Python-level __hash__, which dominates the engine's profile otherwise.
    __hash__ = object.__hash__

    @property
    def index(self) -> int:
        """Position of the colour in :data:`COLOURS`."""
        return _COLOUR_INDEX[self]


COLOURS: tuple[Colour, ...] = tuple(Colour)
_COLOUR_INDEX = {colour: i for i, colour in enumerate(COLOURS)}

#: Card values (R2).
VALUES: tuple[int, ...] = (2, 3, 4)


@dataclass(frozen=True, slots=True, init=False, eq=False)
class Card:
    """One tulip card: a colour and a value (R2).

    There are exactly twelve card objects: ``Card(colour, value)``,
    :meth:`Card.of`, :meth:`Card.parse`, copy and pickle all give back the one
    card of that colour and value (R3: such cards are identical). So ``==``
    and ``hash`` are identity's, done in C, which every hot path of the
    engine and its bots relies on.
    """

    colour: Colour
    value: int

    def __new__(cls, colour: Colour, value: int) -> Card:
        if type(colour) is Colour:
            card = _INTERNED.get((colour, value))
            if card is not None:
                return card
        if not isinstance(colour, Colour):
            raise TypeError(f"colour must be a Colour, got {colour!r}")
        if value not in VALUES:
            raise ValueError(f"card value must be one of {VALUES}, got {value!r}")
        key = (colour, VALUES[VALUES.index(value)])
        card = _INTERNED.get(key)
        if card is None:  # only while this module makes the twelve
            card = _INTERNED[key] = object.__new__(cls)
            object.__setattr__(card, "colour", key[0])
            object.__setattr__(card, "value", key[1])
        return card

    @classmethod
    def of(cls, colour: Colour | str, value: int) -> Card:
        """Return the one card of this colour (or colour name) and value."""
        return cls(colour if type(colour) is Colour else Colour(colour), value)

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read a card from its one spelling, ``"<colour>-<value>"`` (``"pink-3"``)."""
        if not isinstance(text, str):
            raise ValueError(f"a card is spelt like 'pink-3', got {text!r}")
        colour, sep, value = text.partition("-")
        if not sep or not value.isdigit():
            raise ValueError(f"a card is spelt like 'pink-3', got {text!r}")
        return cls.of(Colour(colour), int(value))

    def __reduce__(self) -> tuple[object, ...]:
        # copy, deepcopy and pickle give back the one card
        return (Card, (self.colour, self.value))

    def __str__(self) -> str:
        return f"{self.colour.value}-{self.value}"

    def __repr__(self) -> str:
        return f"Card({self})"


_INTERNED: dict[tuple[Colour, int], Card] = {}


def all_cards() -> tuple[Card, ...]:
    """The twelve distinct cards, in colour order then value order."""
    return _ALL_CARDS


_ALL_CARDS = tuple(Card(colour, value) for colour in COLOURS for value in VALUES)
