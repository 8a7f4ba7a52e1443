"""What happened: the events :meth:`engine.Match.apply` returns.

An event as the engine makes it is *complete*: it may carry cards that only
one seat may see (R25). Fields that hold such cards are named in
:data:`PRIVATE_FIELDS`; :func:`engine.observation.project_event` is the one
place that blanks them (to ``None``) for everyone else. Never send a complete
event anywhere without projecting it.
"""

from __future__ import annotations

from ._values import value_class
from .cards import Card, Colour
from .scoring import FinalScoring

__all__ = [
    "PRIVATE_FIELDS",
    "CardAddedFaceUp",
    "CardAddedSecret",
    "CardDrawn",
    "CardGiven",
    "CardKept",
    "CardsDealt",
    "Event",
    "FestivalStarted",
    "MatchEnded",
    "OpeningChosen",
    "OpeningRevealed",
    "SecretRevealed",
    "TurnStarted",
]


@value_class
class FestivalStarted:
    """R10: the two cards that start the festival, and the ranking they give."""

    cards: tuple[Card, ...]
    ranking: tuple[Colour, ...]
    first_seat: int  #: R12: who plays the first turn


@value_class
class CardsDealt:
    """R11: a seat was dealt its two starting cards (private to that seat)."""

    seat: int
    cards: tuple[Card, ...] | None


@value_class
class OpeningChosen:
    """R11: a seat made its opening choice; which card went where is private
    until every seat has chosen, and the secret card stays private."""

    seat: int
    bouquet: Card | None
    secret: Card | None


@value_class
class OpeningRevealed:
    """R11: every seat has chosen; each seat's bouquet card is now face up."""

    bouquets: tuple[Card, ...]  #: by seat
    secret_count: int


@value_class
class TurnStarted:
    """A seat's turn begins (R13)."""

    seat: int
    turn: int  #: 1 for the first turn of the match


@value_class
class CardDrawn:
    """The active seat drew a card; only that seat sees which (R25)."""

    seat: int
    card: Card | None
    deck_count: int  #: cards left in the deck after the draw


@value_class
class CardKept:
    """KEEP (R14): the card went to the seat's bouquet for these points."""

    seat: int
    card: Card
    points: int


@value_class
class CardGiven:
    """GIVE (R15): the card went to ``to_seat``'s bouquet; the giver scored."""

    seat: int
    to_seat: int
    card: Card
    points: int


@value_class
class CardAddedFaceUp:
    """ADD (R16): the card went face up into the festival; the new ranking (R8)."""

    seat: int
    card: Card
    ranking: tuple[Colour, ...]


@value_class
class CardAddedSecret:
    """ADD (R16): a card went face down; only its owner knows which (R25–R26)."""

    seat: int
    card: Card | None
    secret_count: int


@value_class
class SecretRevealed:
    """R19: one card of the secret festival turned face up, and the new ranking."""

    card: Card
    ranking: tuple[Colour, ...]


@value_class
class MatchEnded:
    """R20–R23: the final scoring."""

    scoring: FinalScoring


Event = (
    FestivalStarted
    | CardsDealt
    | OpeningChosen
    | OpeningRevealed
    | TurnStarted
    | CardDrawn
    | CardKept
    | CardGiven
    | CardAddedFaceUp
    | CardAddedSecret
    | SecretRevealed
    | MatchEnded
)

#: For each event type with private content: the fields only ``event.seat`` may see.
PRIVATE_FIELDS: dict[type, tuple[str, ...]] = {
    CardsDealt: ("cards",),
    OpeningChosen: ("bouquet", "secret"),
    CardDrawn: ("card",),
    CardAddedSecret: ("card",),
}
