"""The engine's errors. Every refused action raises one of these, and a
refused action leaves the match exactly as it was."""

from __future__ import annotations

__all__ = [
    "ActionAlreadyUsed",
    "EngineError",
    "GameOver",
    "IllegalAction",
    "NotYourTurn",
    "UnknownSeat",
]


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class IllegalAction(EngineError):
    """An action the rules do not allow here, with the reason."""

    def __init__(self, seat: int, action: object, reason: str) -> None:
        super().__init__(seat, action, reason)
        self.seat = seat
        self.action = action
        self.reason = reason

    def __str__(self) -> str:
        return f"seat {self.seat} cannot {self.action!s}: {self.reason}"


class NotYourTurn(IllegalAction):
    """The seat is not one of those who must act now."""


class ActionAlreadyUsed(IllegalAction):
    """The turn's first card already used this action (R13, R16)."""


class GameOver(IllegalAction):
    """The match has ended (R18); nothing more can be played."""


class UnknownSeat(IllegalAction):
    """A seat number outside the match."""
