"""Folding events into a snapshot's state: the client's copy of the match.

:func:`apply_event` moves a :class:`protocol.State` forward by one event, the
way the server's next snapshot would show it. It decides no rule: rankings,
points and counts all come in the events, and the fold only files them (a
live test checks it against ``sync`` snapshots at every turn prompt).
"""

from __future__ import annotations

import msgspec

import protocol as wire

__all__ = ["apply_event", "with_prompt"]

_replace = msgspec.structs.replace
COLOURS: tuple[wire.Colour, ...] = wire.COLOURS


def _face_up(state: wire.State, card: wire.Card, ranking: tuple[str, ...]) -> dict[str, object]:
    """What changes when a card goes face up into the festival: its cards, the
    colour's total, and the ranking the server sent with it."""
    return {
        "festival": (*state.festival, card),
        "totals": _into_festival(state, card),
        "ranking": ranking,
    }


def _over(state: wire.State, **changes: object) -> wire.State:
    """The state once the game has ended (R18): nobody acts any more."""
    return _replace(
        state,
        phase="over",
        active=None,
        to_act=(),
        used=None,
        drawn=None,
        legal_actions=(),
        **changes,
    )


def _seat_replace(state: wire.State, seat: int, **changes: object) -> tuple[wire.SeatState, ...]:
    return tuple(_replace(s, **changes) if s.seat == seat else s for s in state.seats)


def _add_card(
    state: wire.State, seat: int, card: wire.Card, **score: int
) -> tuple[wire.SeatState, ...]:
    old = state.seats[seat]
    changes = {key: getattr(old, key) + value for key, value in score.items()}
    return _seat_replace(state, seat, bouquet=(*old.bouquet, card), **changes)


def _into_festival(state: wire.State, card: wire.Card) -> dict[wire.Colour, int]:
    totals = dict(state.totals)
    colour, value = wire.card_parts(card)
    totals[colour] = totals.get(colour, 0) + value
    return totals


def _first_use(state: wire.State, used: wire.TurnAction) -> wire.TurnAction:
    return state.used if state.used is not None else used


def apply_event(state: wire.State, event: wire.GameEvent, me: int | None) -> wire.State:
    """The state after ``event``, as seat ``me`` (None: a spectator) sees it."""
    mine = getattr(event, "seat", None) == me and me is not None
    if isinstance(event, wire.TurnStarted):
        return _replace(
            state,
            phase="turn",
            turn=event.turn,
            active=event.seat,
            to_act=(event.seat,),
            used=None,
            legal_actions=(),
        )
    if isinstance(event, wire.CardDrawn):
        drawn = event.card if mine else state.drawn
        return _replace(state, deck_count=event.deck_count, drawn=drawn)
    if isinstance(
        event, wire.CardKept | wire.CardGiven | wire.CardAddedFaceUp | wire.CardAddedSecret
    ):
        state = _apply_placement(state, event, me)
        if mine:
            state = _replace(state, drawn=None, legal_actions=())
        return state
    if isinstance(event, wire.SecretRevealed):
        return _over(
            state,
            **_face_up(state, event.card, event.ranking),
            revealed=(*state.revealed, event.card),
            secret_count=max(0, state.secret_count - 1),
        )
    if isinstance(event, wire.MatchEnded):
        return _over(
            state,
            scoring=event.scoring,
        )
    return _apply_setup(state, event, me)


def _apply_placement(
    state: wire.State,
    event: wire.CardKept | wire.CardGiven | wire.CardAddedFaceUp | wire.CardAddedSecret,
    me: int | None,
) -> wire.State:
    if isinstance(event, wire.CardKept):
        return _replace(
            state,
            seats=_add_card(state, event.seat, event.card, keeping=event.points),
            used=_first_use(state, "keep"),
        )
    if isinstance(event, wire.CardGiven):
        seats = _add_card(state, event.to_seat, event.card)
        giver = seats[event.seat]
        seats = tuple(
            _replace(s, giving=giver.giving + event.points) if s.seat == event.seat else s
            for s in seats
        )
        return _replace(state, seats=seats, used=_first_use(state, "give"))
    if isinstance(event, wire.CardAddedFaceUp):
        return _replace(
            state,
            **_face_up(state, event.card, event.ranking),
            used=_first_use(state, "add"),
        )
    secret = state.my_secret
    if event.seat == me and event.card is not None:
        secret = (*secret, event.card)
    return _replace(
        state, secret_count=event.secret_count, my_secret=secret, used=_first_use(state, "add")
    )


def _apply_setup(state: wire.State, event: wire.GameEvent, me: int | None) -> wire.State:
    if isinstance(event, wire.FestivalStarted):
        totals = {colour: 0 for colour in COLOURS}
        for card in event.cards:
            colour, value = wire.card_parts(card)
            totals[colour] += value
        return _replace(
            state,
            festival=event.cards,
            totals=totals,
            ranking=event.ranking,
            first_seat=event.first_seat,
        )
    if isinstance(event, wire.CardsDealt):
        if event.seat == me and event.cards is not None:
            return _replace(state, hand=event.cards)
        return state
    if isinstance(event, wire.OpeningChosen):
        state = _replace(
            state,
            seats=_seat_replace(state, event.seat, opening_done=True),
            to_act=tuple(s for s in state.to_act if s != event.seat),
        )
        if event.seat == me and event.bouquet is not None and event.secret is not None:
            state = _replace(
                state, hand=(), opening=(event.bouquet, event.secret), legal_actions=()
            )
        return state
    if isinstance(event, wire.OpeningRevealed):
        seats = tuple(
            _replace(s, bouquet=(*s.bouquet, event.bouquets[s.seat]), opening_done=True)
            if s.seat < len(event.bouquets)
            else s
            for s in state.seats
        )
        secret = state.my_secret
        if me is not None and len(state.opening) == 2:
            secret = (*secret, state.opening[1])
        return _replace(
            state,
            phase="turn",
            seats=seats,
            secret_count=event.secret_count,
            my_secret=secret,
            to_act=(),
        )
    return state  # an event kind this client does not know: it only informs


def with_prompt(state: wire.State, prompt: wire.Prompt) -> wire.State:
    """The state with the prompt's legal actions (they are the receiver's own)."""
    return _replace(state, legal_actions=prompt.actions)
