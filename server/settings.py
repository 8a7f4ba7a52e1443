"""A match's settings: what its host chose when creating it.

One frozen value per room, set once; storage saves it as it is and a
restart rebuilds it, so a room's settings have exactly one owner.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import Ruleset

__all__ = ["MatchSettings"]


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """The host's choices for one match (a rematch copies them)."""

    name: str
    ruleset_name: str
    ruleset: Ruleset
    #: if set, ``join`` and ``watch`` must give it
    join_code: str | None = None
    #: seconds per decision; on timeout a bot decides for the seat
    turn_timer: float | None = None
    #: the host's pick of the first player (R12); None lets chance decide
    first_seat: int | None = None
    #: R27: once finished, the match's seed and actions are published
    open_box: bool = False
