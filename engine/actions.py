"""What a seat can do: the opening choice (R11) and the three actions of a
turn (R13–R16), the last of which comes in two forms.

Actions are immutable and interned: :meth:`Action.keep` and friends return
shared instances, so legal-action lists cost no allocation. An action built
directly with ``Action(...)`` is equal to the shared one and plays the same.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .cards import Card, all_cards
from .ruleset import MAX_PLAYERS

__all__ = ["NEVER_IN_A_TURN", "Action", "ActionKind", "TurnAction"]


class ActionKind(enum.Enum):
    """The spelling of each action, shared with the wire protocol."""

    KEEP = "keep"
    GIVE = "give"
    ADD_FACE_UP = "add_face_up"
    ADD_SECRET = "add_secret"
    OPENING = "opening"

    __hash__ = object.__hash__  # singletons: see Colour.__hash__


class TurnAction(enum.Enum):
    """The three actions of R13; both forms of adding are the one ADD (R16)."""

    KEEP = "keep"
    GIVE = "give"
    ADD = "add"

    __hash__ = object.__hash__  # singletons: see Colour.__hash__


_TURN_ACTION = {
    ActionKind.KEEP: TurnAction.KEEP,
    ActionKind.GIVE: TurnAction.GIVE,
    ActionKind.ADD_FACE_UP: TurnAction.ADD,
    ActionKind.ADD_SECRET: TurnAction.ADD,
}


#: The bit of an action that is never legal during a turn (beyond every mask's bits).
NEVER_IN_A_TURN = 63
_SIMPLE_BITS = {ActionKind.KEEP: 0, ActionKind.ADD_FACE_UP: 1, ActionKind.ADD_SECRET: 2}


def _bit(kind: ActionKind, to_seat: int | None) -> int:
    if kind is ActionKind.GIVE:
        if type(to_seat) is int and 0 <= to_seat < MAX_PLAYERS:
            return 3 + to_seat
        return NEVER_IN_A_TURN
    return _SIMPLE_BITS.get(kind, NEVER_IN_A_TURN)


@dataclass(frozen=True, slots=True)
class Action:
    """One proposal of a seat. Build it with the class methods."""

    kind: ActionKind
    #: The receiver, for GIVE.
    to_seat: int | None = None
    #: The card that goes face down, for the opening choice.
    secret: Card | None = None
    #: Which of the three turn actions this uses (R13, R16); None for the opening.
    turn_action: TurnAction | None = field(init=False, repr=False, compare=False)
    #: This action's bit in a turn's legality mask (:meth:`engine.Match.refusal`):
    #: keep 0, add face up 1, add secret 2, give to seat ``s`` 3 + s; for the
    #: opening and a give to no seat of any match, :data:`NEVER_IN_A_TURN`.
    bit: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ActionKind):
            raise TypeError(f"kind must be an ActionKind, got {self.kind!r}")
        object.__setattr__(self, "turn_action", _TURN_ACTION.get(self.kind))
        object.__setattr__(self, "bit", _bit(self.kind, self.to_seat))
        if (self.kind is ActionKind.GIVE) != (self.to_seat is not None):
            raise ValueError("to_seat is given with GIVE and only with GIVE")
        if (self.kind is ActionKind.OPENING) != (self.secret is not None):
            raise ValueError("secret is given with the opening choice and only with it")
        if self.to_seat is not None and (
            isinstance(self.to_seat, bool) or not isinstance(self.to_seat, int)
        ):
            raise TypeError(f"to_seat must be an int, got {self.to_seat!r}")
        if self.secret is not None:
            if not isinstance(self.secret, Card):
                raise TypeError(f"secret must be a Card, got {self.secret!r}")
            object.__setattr__(self, "secret", Card.of(self.secret.colour, self.secret.value))

    @classmethod
    def keep(cls) -> Action:
        """KEEP the drawn card (R14)."""
        return _KEEP

    @classmethod
    def give(cls, to_seat: int) -> Action:
        """GIVE the drawn card to another seat (R15)."""
        if 0 <= to_seat < len(_GIVE):
            return _GIVE[to_seat]
        return cls(ActionKind.GIVE, to_seat=to_seat)

    @classmethod
    def add_face_up(cls) -> Action:
        """ADD the drawn card face up to the festival (R16)."""
        return _ADD_FACE_UP

    @classmethod
    def add_secret(cls) -> Action:
        """ADD the drawn card face down to the secret festival (R16)."""
        return _ADD_SECRET

    @classmethod
    def opening(cls, secret: Card) -> Action:
        """The opening choice: which of the two dealt cards goes face down (R11)."""
        interned = _OPENING.get(id(secret))  # one shared action per interned card
        return cls(ActionKind.OPENING, secret=secret) if interned is None else interned

    def __str__(self) -> str:
        if self.kind is ActionKind.GIVE:
            return f"give to seat {self.to_seat}"
        if self.kind is ActionKind.OPENING:
            return f"opening: {self.secret} to the secret festival"
        return str(self.kind.value).replace("_", " ")


_KEEP = Action(ActionKind.KEEP)
_ADD_FACE_UP = Action(ActionKind.ADD_FACE_UP)
_ADD_SECRET = Action(ActionKind.ADD_SECRET)
_GIVE = tuple(Action(ActionKind.GIVE, to_seat=seat) for seat in range(MAX_PLAYERS))
#: by the identity of the interned card (:mod:`engine.cards`), which lives as long
#: as this module does, so no other object can ever share its id
_OPENING = {id(card): Action(ActionKind.OPENING, secret=card) for card in all_cards()}
