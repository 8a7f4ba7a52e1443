"""The one door for hidden information (R24–R26).

:func:`observe` builds what one seat — or a spectator, ``seat=None`` — may
know of a match, and :func:`project_event` blanks an event's private fields
for everyone but their owner. Nothing else in the project may read a match's
hidden parts for a player: the server sends only what passes through here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from .actions import Action, ActionKind, TurnAction
from .cards import COLOURS, Card, Colour
from .events import PRIVATE_FIELDS, Event
from .match import Match, Phase, climb
from .ruleset import Ruleset
from .scoring import FinalScoring, action_points

__all__ = [
    "Observation",
    "SeatView",
    "observe",
    "project_event",
    "prompt_choices",
    "prompt_rankings",
]

_TURN = Phase.TURN  # a module global: EnumType.__getattr__ makes Phase.TURN slow (3.11)
_OPENING_KIND = ActionKind.OPENING


@dataclass(frozen=True, slots=True)
class SeatView:
    """What everyone may see of one seat (R24)."""

    seat: int
    bouquet: tuple[Card, ...]
    keeping: int
    giving: int
    opening_done: bool  #: has made the opening choice (not which one)

    @property
    def score(self) -> int:
        """Points scored so far (majorities come only at the end)."""
        return self.keeping + self.giving


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything one seat (or a spectator, ``viewer=None``) may know now."""

    viewer: int | None
    players: int
    ruleset: Ruleset  #: public: the festival cards' points are face up (R30)
    phase: Phase
    turn: int
    first_seat: int
    active: int | None  #: whose turn it is, during a turn
    to_act: tuple[int, ...]
    used: TurnAction | None  #: the action the turn's first card used (R24)
    festival: tuple[Card, ...]  #: face-up festival cards, in the order placed
    totals: tuple[tuple[Colour, int], ...]  #: every colour's total value (R6)
    ranking: tuple[Colour, ...]  #: ranked colours, 1st first (R7)
    deck_count: int
    secret_count: int
    removed_count: int
    seats: tuple[SeatView, ...]
    revealed: tuple[Card, ...]  #: secret cards turned face up at the end (R19)
    scoring: FinalScoring | None
    #: every turn's actions so far, with the seat that played each, in order (R24);
    #: the opening choices (R11), which name a secret card, are not among them
    moves: tuple[tuple[int, Action], ...]
    # -- private to the viewer (R25); empty for a spectator --
    hand: tuple[Card, ...]  #: the two dealt cards until the opening choice is made
    opening: tuple[Card, ...]  #: once chosen: (bouquet card, secret card)
    drawn: Card | None  #: the card the viewer has drawn and must place
    my_secret: tuple[Card, ...]  #: every card the viewer put face down, revealed or not
    legal_actions: tuple[Action, ...]

    def rank_of(self, colour: Colour) -> int | None:
        """0 for 1st … 3 for 4th, or None while the colour is unranked (R7)."""
        return self.ranking.index(colour) if colour in self.ranking else None


def observe(match: Match, seat: int | None) -> Observation:
    """What ``seat`` may know of ``match`` (R24–R25); ``None`` for a spectator (R24)."""
    if seat is not None and not 0 <= seat < match.players:
        raise ValueError(f"seat must be None or 0 to {match.players - 1}, got {seat!r}")
    m = match
    hand: tuple[Card, ...] = ()
    opening: tuple[Card, ...] = ()
    drawn = None
    my_secret: tuple[Card, ...] = ()
    legal: tuple[Action, ...] = ()
    if seat is not None:
        dealt = m._hands[seat]
        hand = dealt if dealt is not None else ()
        choice = m._openings[seat]
        if choice is not None and choice.secret is not None:
            dealt_cards = m._setup_hand(seat)
            bouquet = dealt_cards[1] if dealt_cards[0] == choice.secret else dealt_cards[0]
            opening = (bouquet, choice.secret)
        if m._phase is _TURN and m._active == seat:
            drawn = m._drawn
        my_secret = tuple(m._placed_secret[seat])
        legal = m.legal_actions(seat)
    turn = m._phase is _TURN
    return Observation(
        viewer=seat,
        players=m.players,
        ruleset=m.ruleset,
        phase=m._phase,
        turn=m._turn,
        first_seat=m.first_seat,
        active=m._active if turn else None,
        to_act=m.to_act,
        used=m._used,
        festival=tuple(m._festival),
        totals=tuple((colour, m._totals[colour]) for colour in COLOURS),
        ranking=tuple(m._ranking),
        deck_count=len(m._deck),
        secret_count=len(m._secret),
        removed_count=len(m._removed),
        seats=tuple(
            SeatView(
                seat=s,
                bouquet=tuple(m._bouquets[s]),
                keeping=m._keeping[s],
                giving=m._giving[s],
                opening_done=m._hands[s] is None,
            )
            for s in range(m.players)
        ),
        revealed=tuple(m._revealed),
        scoring=m._scoring,
        moves=m._moves_before
        + tuple(entry for entry in m._history if entry[1].kind is not _OPENING_KIND),
        hand=hand,
        opening=opening,
        drawn=drawn,
        my_secret=my_secret,
        legal_actions=legal,
    )


def project_event(event: Event, seat: int | None) -> Event:
    """``event`` as ``seat`` may see it: private fields blanked unless it is theirs."""
    private = PRIVATE_FIELDS.get(type(event))
    if private is None or (getattr(event, "seat", None) == seat and seat is not None):
        return event
    blanked: Event = dataclasses.replace(event, **dict.fromkeys(private))  # type: ignore[arg-type]
    return blanked


def prompt_choices(match: Match, seat: int) -> tuple[tuple[Action, ...], tuple[int, ...]]:
    """``seat``'s legal actions and what each scores at once (R14–R17), as
    :func:`observe` would give them for that seat: what a prompt needs, without
    building the rest of the observation (the server prompts after every action).
    Both empty when the seat need not act."""
    m = match
    legal = m.legal_actions(seat)
    drawn = m._drawn if m._phase is Phase.TURN and m._active == seat else None
    ranking = m._ranking
    return legal, tuple(action_points(m.ruleset, ranking, drawn, action) for action in legal)


_FACE_UP = ActionKind.ADD_FACE_UP


def prompt_rankings(
    match: Match, seat: int, legal: Sequence[Action]
) -> tuple[tuple[Colour, ...] | None, ...]:
    """For each of ``legal`` (``seat``'s legal actions, in order), the festival's
    ranking, 1st first, once that action is played: for an ADD face up, the
    ranking after ``seat``'s drawn card joins the festival (R16, R8: its colour
    goes above every colour it ties with); None for every other action, whose
    effect on the ranking is none (R14, R15) or hidden (a secret card counts
    only once revealed at the end, R19).

    It reads only what ``seat`` may know (:func:`observe`): the face-up totals
    and ranking, which are public, and its own drawn card."""
    m = match
    drawn = m._drawn if m._phase is _TURN and m._active == seat else None
    after: tuple[Colour, ...] | None = None
    if drawn is not None and any(action.kind is _FACE_UP for action in legal):
        ranking = list(m._ranking)
        totals = dict(m._totals)
        totals[drawn.colour] += drawn.value
        climb(ranking, totals, drawn.colour)
        after = tuple(ranking)
    return tuple(after if action.kind is _FACE_UP else None for action in legal)
