"""The server's bots as the match holds them: a strength and a seeded
generator per seat. Deciding is the :mod:`~server.match.thinker`'s job; a
bot decides from its own seat's observation only, never the match itself.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from dataclasses import dataclass

import protocol as wire

__all__ = ["STRENGTHS", "Bot"]

#: Every strength a host may ask for (protocol's, so ``tulips-bot`` offers the same):
#: *easy* plays at random, *medium* looks one action ahead, *hard* searches sampled
#: deals for a time budget.
STRENGTHS: tuple[str, ...] = wire.STRENGTHS


@dataclass(slots=True)
class Bot:
    """One bot at one seat, with its own seeded generator."""

    strength: str
    rng: random.Random

    @classmethod
    def for_seat(cls, strength: str, match_id: str, seat: int, secret: bytes) -> Bot:
        """A bot for this match and seat, its generator seeded with
        HMAC-SHA-256(``secret``, ``"<match_id>:<seat>"``).

        ``secret`` is the server's own (made at start, never sent): the same
        server gives the same bot the same generator, but nobody who knows only
        the public match id can predict its choices.
        """
        if strength not in STRENGTHS:
            raise ValueError(f"unknown bot strength {strength!r}")
        if len(secret) < 16:
            raise ValueError("a bot secret needs at least 16 bytes")
        digest = hmac.new(secret, f"{match_id}:{seat}".encode(), hashlib.sha256).digest()
        return cls(strength, random.Random(int.from_bytes(digest, "big")))
