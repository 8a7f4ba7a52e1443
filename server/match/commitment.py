"""The seed commitment of an open-box match (R27).

When an open-box match is dealt, the server publishes
``SHA-256(salt ‖ seed)`` in the match's summary; once the match is finished,
``replay`` gives the salt and the seed, and anyone can recompute the hash. The
commitment is fixed before anyone sees a card, so the server cannot pick the
seed after the fact; the salt (32 random bytes, new for every match) keeps
the seed from being found by trying every candidate against the hash while
the match is being played.

The byte layout is fixed (PROTOCOL.md, "Checking a finished match"):

====== ===================================================
bytes  what
====== ===================================================
0–31   the salt
32–39  the seed: an unsigned 64-bit integer, big-endian
====== ===================================================

Salt and commitment travel as lowercase hex.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["SALT_BYTES", "commitment", "new_salt", "preimage", "verify"]

#: Bytes of salt per match.
SALT_BYTES = 32
_SEED_BYTES = 8


def new_salt() -> bytes:
    """A fresh random salt for one match."""
    return secrets.token_bytes(SALT_BYTES)


def preimage(salt: bytes, seed: int) -> bytes:
    """The bytes that are hashed: the salt, then the seed (8 bytes, big-endian)."""
    if len(salt) != SALT_BYTES:
        raise ValueError(f"a salt is {SALT_BYTES} bytes, not {len(salt)}")
    if not 0 <= seed < 2 ** (8 * _SEED_BYTES):
        raise ValueError(f"seed {seed!r} is not an unsigned 64-bit integer")
    return salt + seed.to_bytes(_SEED_BYTES, "big")


def commitment(salt: bytes, seed: int) -> str:
    """The commitment to ``seed`` under ``salt``, as 64 lowercase hex digits."""
    return hashlib.sha256(preimage(salt, seed)).hexdigest()


def verify(published: str, salt: bytes, seed: int) -> bool:
    """Whether ``published`` is the commitment to ``seed`` under ``salt``."""
    return hmac.compare_digest(published.lower(), commitment(salt, seed))
