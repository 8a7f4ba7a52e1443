"""The log in words: what an event means, said to the player in their language.

"You" for the player's own seat, names from the match summary, cards with
their colour marks (:mod:`client.tui.cards`), colours in a ranking by name;
who scored is always named ("Bea gave you ♥3 (+3 for Bea)"). A move the
seat's own player did not choose says so first (``event.by``): the turn
timer ran out, or a bot played for an absent player.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text

import protocol as wire

from .cards import card_text, cards_text, colour_tag
from .i18n import rich, t

__all__ = ["describe"]


def _who(seat: int, names: Mapping[int, str], me: int | None) -> Text:
    if seat == me:
        return Text(t("who.you"), style="bold")
    return Text(names.get(seat, t("seat.numbered", n=seat + 1)), style="bold")


def describe(
    event: wire.GameEvent,
    names: Mapping[int, str],
    me: int | None,
    by: wire.PlayedBy | None = None,
) -> Text | None:
    """The event in words for the log, or None if it is not worth a line;
    ``by`` (the event message's) says who chose it, if not its seat's player."""
    line = _describe(event, names, me)
    seat = getattr(event, "seat", None)
    if line is None or by is None or seat is None:
        return line
    if by == "timer":
        # words, not a stopwatch glyph: the browser front's font has none
        badge = Text(" " + t("log.by.timer") + " ", style="bold reverse #ffd75f")
    else:
        badge = rich(
            "log.by.stand_in", style="bold reverse #5fb2ff", who=_who_plain(seat, names, me)
        )
        badge = Text(" ") + badge + Text(" ")
        badge.stylize("bold reverse #5fb2ff")
    return badge + Text(" ") + line


def _who_plain(seat: int, names: Mapping[int, str], me: int | None) -> str:
    if seat == me:
        return t("who.you_object")
    return names.get(seat, t("seat.numbered", n=seat + 1))


def _describe(event: wire.GameEvent, names: Mapping[int, str], me: int | None) -> Text | None:
    seat = getattr(event, "seat", None)
    you = seat is not None and seat == me
    who = _who(seat, names, me) if seat is not None else Text()
    suffix = ".you" if you else ""
    if isinstance(event, wire.TurnStarted):
        return rich("log.turn" + suffix, style="dim", turn=event.turn, who=who)
    if isinstance(event, wire.CardDrawn):
        if you and event.card is not None:
            return rich("log.drawn.you", card=card_text(event.card))
        return None
    if isinstance(event, wire.CardKept):
        return rich("log.kept" + suffix, who=who, card=card_text(event.card), points=event.points)
    if isinstance(event, wire.CardGiven):
        to = _who(event.to_seat, names, me)
        key = "log.given.you" if you else "log.given.to_you" if event.to_seat == me else "log.given"
        return rich(key, who=who, to=to, card=card_text(event.card), points=event.points)
    if isinstance(event, wire.CardAddedFaceUp):
        return rich(
            "log.face_up" + suffix,
            who=who,
            card=card_text(event.card),
            ranking=_ranking_text(event.ranking),
        )
    if isinstance(event, wire.CardAddedSecret):
        if you and event.card is not None:
            return rich("log.secret.you", card=card_text(event.card))
        if you:  # a record seen from outside: no card
            return rich("log.secret.you_hidden")
        return rich("log.secret", who=who)
    if isinstance(event, wire.SecretRevealed):
        return rich(
            "log.revealed", card=card_text(event.card), ranking=_ranking_text(event.ranking)
        )
    if isinstance(event, wire.MatchEnded):
        winners = event.scoring.winners
        others = Text(", ").join(_who(w, names, me) for w in winners if w != me)
        if me in winners:  # "Won by You." reads badly in every language
            if len(winners) == 1:
                return rich("log.ended.you", style="bold")
            return rich("log.ended.you_shared", style="bold", others=others)
        return rich("log.ended", style="bold", winners=others)
    return _describe_setup(event, names, me, who, you)


def _describe_setup(
    event: wire.GameEvent, names: Mapping[int, str], me: int | None, who: Text, you: bool
) -> Text | None:
    if isinstance(event, wire.FestivalStarted):
        return rich("log.festival_started", cards=cards_text(event.cards))
    if isinstance(event, wire.CardsDealt):
        if you and event.cards is not None:
            return rich("log.dealt.you", cards=cards_text(event.cards))
        return None
    if isinstance(event, wire.OpeningChosen):
        if you and event.secret is not None and event.bouquet is not None:
            return rich(
                "log.opening.you",
                secret=card_text(event.secret),
                bouquet=card_text(event.bouquet),
            )
        if you:  # a record seen from outside: no cards
            return rich("log.opening.you_hidden")
        return rich("log.opening", who=who)
    if isinstance(event, wire.OpeningRevealed):
        placed = Text(", ").join(
            _who(seat, names, me) + Text(" ") + card_text(card)
            for seat, card in enumerate(event.bouquets)
        )
        return rich("log.opening_revealed", placed=placed)
    return None


def _ranking_text(ranking: Sequence[str]) -> Text:
    """``◆ > ● > ♥``: the colours' marks only, so that a face-up add fits one
    row of the log at 80×24 (the festival panel names them, in rank order)."""
    return Text(" > ").join(colour_tag(colour) for colour in ranking)
