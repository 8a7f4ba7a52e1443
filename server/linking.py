"""One-time codes that link a second device to a player (``link_code``, then
``hello.link`` on the other device).

A code is 8 characters of an alphabet without look-alikes (no 0/O, 1/I/L, U),
shown as ``K7QM-2XPD``: 30⁸ ≈ 6.6·10¹¹ codes, of which a player holds at most
one at a time, for :data:`LINK_CODE_TTL` seconds, usable once. Guessing is
slowed per address: after :data:`WRONG_TRIES` wrong codes the address is
locked out (``rate_limited``) for :data:`LOCKOUT` seconds, so an address
tries at most a handful of codes in ten minutes.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from .ratelimit import KeyedBuckets, Lockout

__all__ = ["LINK_CODE_TTL", "LinkCodes", "normalise"]

#: seconds a code stays usable
LINK_CODE_TTL = 300.0
#: wrong codes an address may try (each within LOCKOUT of the last) before its lockout
WRONG_TRIES = 5
#: seconds of that lockout
LOCKOUT = 600.0
#: codes a player may ask for: this many at once, then one a minute
CODES_BURST = 5

_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"
_LENGTH = 8


def normalise(code: str) -> str:
    """A code as typed (any case, with or without ``-`` and spaces) as stored."""
    return "".join(code.split()).replace("-", "").upper()


@dataclass(frozen=True, slots=True)
class _Issued:
    player: str
    expires: float


class LinkCodes:
    """The codes given out and not used yet, in one server's memory."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._codes: dict[str, _Issued] = {}
        self._of_player: dict[str, str] = {}
        self._wrong = Lockout(WRONG_TRIES, LOCKOUT, clock)
        self._asked = KeyedBuckets(1 / 60, CODES_BURST, clock)

    def issue(self, player_id: str) -> tuple[str, float] | None:
        """A new code for the player (replacing theirs not used yet) and its
        seconds to live; None if they asked too often lately."""
        if not self._asked.take(player_id):
            return None
        self._prune()
        old = self._of_player.pop(player_id, None)
        if old is not None:
            self._codes.pop(old, None)
        code = "".join(secrets.choice(_ALPHABET) for _ in range(_LENGTH))
        while code in self._codes:
            code = "".join(secrets.choice(_ALPHABET) for _ in range(_LENGTH))
        self._codes[code] = _Issued(player_id, self._clock() + LINK_CODE_TTL)
        self._of_player[player_id] = code
        return f"{code[:4]}-{code[4:]}", LINK_CODE_TTL

    def locked(self, address: Hashable) -> float:
        """Seconds the address may try no code (too many wrong ones)."""
        return self._wrong.locked(("link", address))

    def redeem(self, code: str, address: Hashable, *, count: bool = True) -> str | None:
        """The player a code links to, spending it; None (counted against the
        address, unless ``count`` is False) for a code that is unknown, expired or used."""
        key = normalise(code)
        issued = self._codes.get(key)
        if issued is None or issued.expires <= self._clock():
            if count:
                self.failed(address)
            return None
        del self._codes[key]
        self._of_player.pop(issued.player, None)
        return issued.player

    def failed(self, address: Hashable) -> None:
        """Count one wrong code against the address."""
        self._wrong.failed(("link", address))

    def forget(self, player_id: str) -> None:
        """A removed player's code goes too."""
        code = self._of_player.pop(player_id, None)
        if code is not None:
            self._codes.pop(code, None)

    def _prune(self) -> None:
        now = self._clock()
        for code in [c for c, issued in self._codes.items() if issued.expires <= now]:
            issued = self._codes.pop(code)
            if self._of_player.get(issued.player) == code:
                del self._of_player[issued.player]
