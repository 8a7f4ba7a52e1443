"""Events and scoring in plain English, for the demo, logs and the golden
playthroughs. Describes only what it is given: pass projected events to
describe what one seat saw."""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import Card, Colour
from ..events import (
    CardAddedFaceUp,
    CardAddedSecret,
    CardDrawn,
    CardGiven,
    CardKept,
    CardsDealt,
    Event,
    FestivalStarted,
    MatchEnded,
    OpeningChosen,
    OpeningRevealed,
    SecretRevealed,
    TurnStarted,
)
from ..scoring import FinalScoring

__all__ = ["describe_event", "describe_scoring"]

_RANKS = ("1st", "2nd", "3rd", "4th")


def _card(card: Card | None) -> str:
    return "a hidden card" if card is None else str(card)


def _cards(cards: Sequence[Card] | None) -> str:
    return "hidden cards" if cards is None else ", ".join(map(str, cards))


def _ranking(ranking: Sequence[Colour]) -> str:
    return " > ".join(colour.value for colour in ranking)


def describe_event(event: Event) -> str:
    """One line about one event."""
    match event:
        case FestivalStarted(cards, ranking, first_seat):
            return (
                f"festival starts with {_cards(cards)}; ranking {_ranking(ranking)};"
                f" seat {first_seat} plays first"
            )
        case CardsDealt(seat, cards):
            return f"seat {seat} is dealt {_cards(cards)}"
        case OpeningChosen(seat, bouquet, secret):
            if bouquet is None:
                return f"seat {seat} has made its opening choice"
            return f"seat {seat} chooses {bouquet} for the bouquet and {secret} secretly"
        case OpeningRevealed(bouquets, secret_count):
            shown = ", ".join(f"seat {s}: {card}" for s, card in enumerate(bouquets))
            return f"opening revealed ({shown}); secret festival holds {secret_count}"
        case TurnStarted(seat, turn):
            return f"turn {turn}: seat {seat}"
        case CardDrawn(seat, card, deck_count):
            return f"seat {seat} draws {_card(card)} ({deck_count} left in the deck)"
        case CardKept(seat, card, points):
            return f"seat {seat} keeps {card} for {points} points"
        case CardGiven(seat, to_seat, card, points):
            return f"seat {seat} gives {card} to seat {to_seat} for {points} points"
        case CardAddedFaceUp(seat, card, ranking):
            return f"seat {seat} adds {card} to the festival; ranking {_ranking(ranking)}"
        case CardAddedSecret(seat, card, secret_count):
            return f"seat {seat} adds {_card(card)} to the secret festival ({secret_count} there)"
        case SecretRevealed(card, ranking):
            return f"revealed from the secret festival: {card}; ranking {_ranking(ranking)}"
        case MatchEnded(scoring):
            winners = ", ".join(f"seat {s}" for s in scoring.winners)
            return f"game over: {winners} win(s), decided by {scoring.decided_by.value}"
    raise TypeError(f"not an event: {event!r}")  # pragma: no cover


def describe_scoring(scoring: FinalScoring) -> str:
    """A table of the final scoring, one row per seat, then the majorities."""
    colours = [colour for colour, _ in scoring.players[0].majorities]
    head = "seat  keep  give  " + "  ".join(f"{c.value:>6}" for c in colours) + "  total  tulips"
    lines = [head]
    for p in scoring.players:
        majors = "  ".join(f"{points:>6}" for _, points in p.majorities)
        mark = " *" if p.seat in scoring.winners else ""
        row = f"{p.seat:>4}  {p.keeping:>4}  {p.giving:>4}  {majors}  {p.total:>5}"
        lines.append(f"{row}  {p.tulips:>6}{mark}")
    for result in scoring.majorities:
        places = "; ".join(
            f"seat {pl.seat} ({pl.cards} cards, value {pl.value}) +{pl.points}"
            for pl in result.places
        )
        lines.append(f"{result.colour.value} ({_RANKS[result.rank]}): {places or 'nobody'}")
    lines.append(
        f"winner(s): {', '.join(map(str, scoring.winners))} (decided by {scoring.decided_by.value})"
    )
    return "\n".join(lines)
