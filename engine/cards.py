"""Tulip cards and colours (R1–R3).

A card is a colour and a value; cards with the same colour and value are
identical (R3), so there are exactly twelve distinct :class:`Card` objects and
:meth:`Card.of` always returns the same one. Identity comparison is therefore
safe and fast, which the hot paths of the engine rely on.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

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


@dataclass(frozen=True, slots=True)
class Card:
    """One tulip card: a colour and a value (R2). Use :meth:`Card.of`."""

    colour: Colour
    value: int

    _cache: ClassVar[dict[tuple[Colour, int], Card]] = {}

    def __post_init__(self) -> None:
        if not isinstance(self.colour, Colour):
            raise TypeError(f"colour must be a Colour, got {self.colour!r}")
        if self.value not in VALUES:
            raise ValueError(f"card value must be one of {VALUES}, got {self.value!r}")

    @classmethod
    def of(cls, colour: Colour | str, value: int) -> Card:
        """Return the one card of this colour and value."""
        key = (Colour(colour), value)
        card = cls._cache.get(key)
        if card is None:
            card = cls._cache[key] = cls(key[0], value)
        return card

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
        # copy, deepcopy and pickle give back the one interned card
        return (Card.of, (self.colour, self.value))

    def __str__(self) -> str:
        return f"{self.colour.value}-{self.value}"

    def __repr__(self) -> str:
        return f"Card({self})"


def all_cards() -> tuple[Card, ...]:
    """The twelve distinct cards, in colour order then value order."""
    return tuple(Card.of(colour, value) for colour in COLOURS for value in VALUES)


# Intern every card at import so Card.of never builds one on a hot path.
all_cards()
