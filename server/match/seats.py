"""A match's seats, as its core holds them."""

from __future__ import annotations

from dataclasses import dataclass

from .bots import Bot
from .commands import Person
from .records import StoredSeat

__all__ = ["Seat"]


@dataclass(eq=False, slots=True)
class Seat:
    """One seat: empty, a bot's, or a person's (who may be away)."""

    index: int
    player: Person | None = None
    #: the seat's own bot, or the stand-in that plays for an absent player (made
    #: when first needed, dropped when the match ends)
    bot: Bot | None = None
    is_bot: bool = False
    #: a person's seat that the server plays for now (gone too long, or left)
    autopilot: bool = False
    #: the player left the match (it is no longer where they are put back)
    left: bool = False
    #: while its absent player's grace period runs: the timer, and when it ends
    grace: tuple[str, float] | None = None
    #: an open rematch keeps this seat for its player, who has not accepted yet
    reserved: bool = False

    @property
    def kind(self) -> str:
        """``"bot"``, ``"human"`` or ``"empty"``."""
        if self.is_bot:
            return "bot"
        return "human" if self.player is not None else "empty"

    @property
    def bot_plays(self) -> bool:
        """Whether a bot decides for this seat now."""
        return self.is_bot or self.autopilot

    def stored(self) -> StoredSeat:
        """The seat as storage keeps it."""
        if self.is_bot:
            return StoredSeat(bot=self.bot.strength if self.bot is not None else None)
        return StoredSeat(
            player=self.player.id if self.player is not None else None,
            left=self.left,
            reserved=self.reserved and self.player is not None,
        )

    def copy(self) -> Seat:
        """A copy to restore if a change cannot be stored."""
        return Seat(
            self.index,
            self.player,
            self.bot,
            self.is_bot,
            self.autopilot,
            self.left,
            self.grace,
            self.reserved,
        )
