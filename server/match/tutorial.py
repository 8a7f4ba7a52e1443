"""The tutorial match: the server's one fixed deal, and what a ``create_match``
asking for it may say.

A tutorial (``create_match.tutorial``) teaches the rules on a deal chosen to
show them: three seats, its creator in seat 0 playing first, bots in the
others. Its seed is :data:`TUTORIAL_SEED`, written here for anyone to read —
so a tutorial is never a real contest: it has no other person in it (only
its creator may join, watch or replay it, and its seats cannot change), and
its settings say it is a tutorial (:attr:`MatchSettings.tutorial`) so that
nothing ranks or rates it. Every other match is dealt from a secret seed
(R26); no player ever picks one.

Why seed 1472 (standard rules, 3 players, seat 0 first): the festival starts
pink 3 (1st), purple 2 (2nd); seat 0 is dealt purple 2 and orange 3, and its
first draw is blue 2 — added face up it ties purple at 2 and goes above it
(R8, the very example of the rules), so the tutorial's first turn shows a
tie going above whatever the bots do. With medium bots about three tutorials
in four end with a majority decided by the tie-breaker (R21); the client
explains the tie-breaker either way.
"""

from __future__ import annotations

import protocol as wire
from protocol import ErrorCode

__all__ = [
    "TUTORIAL_FIRST_SEAT",
    "TUTORIAL_RULESET",
    "TUTORIAL_SEATS",
    "TUTORIAL_SEED",
    "check_tutorial",
]

#: The tutorial's seats: a short match (10 turns each, R4) with a second majority (R20).
TUTORIAL_SEATS = 3
#: The seat of the tutorial's creator, who plays first (R12).
TUTORIAL_FIRST_SEAT = 0
#: The fixed deal's seed (public, unlike every other match's: see the module's docstring).
TUTORIAL_SEED = 1472
#: The ruleset the fixed deal was chosen for: the printed rules.
TUTORIAL_RULESET = "standard"


def check_tutorial(message: wire.CreateMatch) -> None:
    """Refuse, with ``bad_message`` naming the field, a tutorial asked for in a
    way its fixed deal does not allow (another size, a free seat someone else
    could take, options that do not apply)."""
    path = "create_match"
    if message.seats != TUTORIAL_SEATS:
        raise _bad(f"a tutorial has {TUTORIAL_SEATS} seats, not {message.seats}", f"{path}.seats")
    bots = sorted(bot.seat for bot in message.bots)
    wanted = [seat for seat in range(TUTORIAL_SEATS) if seat != TUTORIAL_FIRST_SEAT]
    if bots != wanted:
        raise _bad(
            f"a tutorial has bots in seats {' and '.join(map(str, wanted))} and nobody else: "
            f"its creator plays seat {TUTORIAL_FIRST_SEAT} alone against them",
            f"{path}.bots",
        )
    for field in ("join_code", "turn_timer", "first_seat"):
        if getattr(message, field) is not None:
            raise _bad(f"a tutorial takes no {field}", f"{path}.{field}")
    if message.ruleset not in (None, TUTORIAL_RULESET):
        raise _bad(
            f"a tutorial plays the printed rules ({TUTORIAL_RULESET!r}), not {message.ruleset!r}",
            f"{path}.ruleset",
        )
    if message.open_box:
        raise _bad(
            "a tutorial is not an open-box match: its deal is always the same", f"{path}.open_box"
        )
    if message.rated:
        raise _bad("a tutorial is never rated: its deal is always the same", f"{path}.rated")


def _bad(message: str, path: str) -> wire.ProtocolError:
    return wire.ProtocolError(ErrorCode.BAD_MESSAGE, message, path=path)
