"""What a match asks storage to keep, as plain values.

The match core says what to store (a :data:`Write`); storage
(:mod:`server.storage`) turns each into SQL and back, and never decides what
a match is. A match's state is never stored: its settings, seats, seed and
ordered actions rebuild it through the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .settings import MatchSettings

__all__ = ["AppendAction", "ForgetOpenMatch", "MatchRow", "SaveMatch", "StoredSeat", "Write"]


class StoredSeat(msgspec.Struct, frozen=True):
    """One seat as stored: a person's (by player id), a bot's (by strength), or empty."""

    player: str | None = None
    bot: str | None = None
    #: the player left the match: it is no longer where they are put back
    left: bool = False
    #: an open rematch keeps the seat for its player, who has not accepted yet
    reserved: bool = False

    def to_data(self) -> dict[str, Any]:
        """The seat as JSON values: ``{"player", "bot", "left"}``, and
        ``"reserved"`` only when true (rows stored before it read the same)."""
        data: dict[str, Any] = {"player": self.player, "bot": self.bot, "left": self.left}
        if self.reserved:
            data["reserved"] = True
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> StoredSeat:
        """A seat read back; raises ValueError if it is not one."""
        player, bot, left = data.get("player"), data.get("bot"), data.get("left", False)
        reserved = data.get("reserved", False)
        if (
            set(data) - {"player", "bot", "left", "reserved"}
            or (player is not None and bot is not None)
            or not isinstance(left, bool)
            or not isinstance(reserved, bool)
            or not isinstance(player, str | None)
            or not isinstance(bot, str | None)
        ):
            raise ValueError(f"not a seat: {dict(data)!r}")
        return cls(player=player, bot=bot, left=left, reserved=reserved)


class MatchRow(msgspec.Struct, frozen=True):
    """A stored match: its settings, host, seats, seed and status (its actions apart)."""

    id: str
    host: str
    settings: MatchSettings
    seats: tuple[StoredSeat, ...]
    #: set when the match is dealt, stored before anyone sees a card
    seed: int | None
    status: str
    created: float
    finished: float | None = None
    #: open box (R27): the salt of the seed commitment, stored with the seed
    salt: bytes | None = None


class SaveMatch(msgspec.Struct, frozen=True):
    """Store the match's row (a new match, or its changed seats or status)."""

    row: MatchRow


class AppendAction(msgspec.Struct, frozen=True):
    """Store one accepted action at its index, and who chose it if the seat's
    own player did not (``event.by``)."""

    match_id: str
    index: int
    seat: int
    action: dict[str, Any]
    by: str | None = None


class ForgetOpenMatch(msgspec.Struct, frozen=True):
    """Delete a match that never started (a started one is left alone)."""

    match_id: str


#: Everything a match may ask storage to do.
Write = SaveMatch | AppendAction | ForgetOpenMatch
