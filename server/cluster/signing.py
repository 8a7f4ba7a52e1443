"""The key the nodes of a cluster share, and the seal every value in Redis carries.

Redis is not trusted: anyone who can write to it could otherwise point a
match at their own listener and collect the hello (token included) of every
player sent there, or register a token of theirs for somebody else's player.
So every value a node writes to Redis, and every message it publishes there,
is sealed: ``HMAC-SHA256(key, kind || 0 || body) || body``, with a key only
the nodes hold (``--cluster-key-file``). A node reads back only what a node
of its cluster sealed; the rest is ignored, with one warning per bad value.
``kind`` names what the body is (a heartbeat, a directory entry, …), so a
value sealed as one kind is never taken for another.

A seal proves who wrote a value, not when: someone who can read Redis can
write an old sealed value again. That is bounded elsewhere: a heartbeat
carries its own expiry (:attr:`~.entries.NodeInfo.expires`); directory
entries and presence messages carry a stamp (:class:`~.entries.Stamp`), so a
message sent again is refused (:mod:`.freshness`) and an older entry does not
replace a newer one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from .credentials import SecretFileError, read_private

__all__ = [
    "KEY_ENV",
    "KEY_HEX_DIGITS",
    "MAC_BYTES",
    "BadSeal",
    "KeyFileError",
    "Sealer",
    "load_key",
    "make_key",
    "parse_key",
]

#: The environment variable through which ``--workers`` gives its workers the
#: key it made for them (never the command line, which every local user can read).
KEY_ENV = "TULIPS_CLUSTER_KEY"
#: A key file holds at least 32 random bytes, as hex (``openssl rand -hex 32``).
KEY_HEX_DIGITS = 64
MAC_BYTES = hashlib.sha256().digest_size

_HOW = f"make one with: openssl rand -hex 32 > FILE && chmod 600 FILE ({KEY_HEX_DIGITS} hex digits)"


class KeyFileError(Exception):
    """A cluster key file that cannot be used (the message says why and what to do)."""


class BadSeal(Exception):
    """A value whose seal does not prove that a node of this cluster wrote it."""


def parse_key(text: str, source: str) -> bytes:
    """The key written as hex in ``text`` (from ``source``, named in errors)."""
    digits = "".join(text.split())
    try:
        key = bytes.fromhex(digits)
    except ValueError:
        raise KeyFileError(f"{source} does not hold a key written as hex; {_HOW}") from None
    if len(digits) < KEY_HEX_DIGITS:
        raise KeyFileError(
            f"{source} holds {len(digits)} hex digits, fewer than {KEY_HEX_DIGITS}"
            f" (32 random bytes); {_HOW}"
        )
    return key


def load_key(path: Path) -> bytes:
    """The key kept in ``path``, or :class:`KeyFileError` saying what is wrong.

    A file others may read is refused: whoever holds the key can pose as a
    node (see PROTOCOL.md, a cluster of nodes)."""
    if not path.exists():
        raise KeyFileError(f"cluster key file {path} does not exist; {_HOW}")
    try:
        text = read_private(path, "cluster key file", "whoever holds the key can pose as a node")
    except SecretFileError as exc:
        raise KeyFileError(str(exc)) from None
    return parse_key(text, f"cluster key file {path}")


def make_key() -> bytes:
    """A fresh random key (what ``--workers`` makes when it is given none)."""
    return secrets.token_bytes(KEY_HEX_DIGITS // 2)


class Sealer:
    """Seals values under the cluster key, and opens only values sealed under it.

    Without a key (``tulips-cluster nodes`` run without one) values are opened
    unchecked, to be shown, and nothing can be sealed."""

    def __init__(self, key: bytes | None) -> None:
        self._key = key

    @property
    def checks(self) -> bool:
        """Whether this sealer has the key, so it checks what it opens."""
        return self._key is not None

    def _mac(self, kind: str, body: bytes) -> bytes:
        assert self._key is not None
        return hmac.new(self._key, kind.encode() + b"\0" + body, hashlib.sha256).digest()

    def pseudonym(self, kind: str, text: str) -> str:
        """A name for ``text`` that only holders of the key can link to it (a
        client's address in a key of Redis, say), as 32 hex digits."""
        if self._key is None:
            raise RuntimeError("no pseudonym without the cluster's key")
        return self._mac(kind, text.encode()).hex()[:32]

    def seal(self, kind: str, body: bytes) -> bytes:
        """``body`` sealed as a ``kind``."""
        if self._key is None:
            raise RuntimeError("nothing is written to the cluster without its key")
        return self._mac(kind, body) + body

    def open(self, kind: str, data: bytes) -> bytes:
        """The body of a value sealed as a ``kind`` under this key, or :class:`BadSeal`."""
        if len(data) < MAC_BYTES:
            raise BadSeal(f"too short to be sealed ({len(data)} bytes)")
        mac, body = data[:MAC_BYTES], data[MAC_BYTES:]
        if self._key is not None and not hmac.compare_digest(mac, self._mac(kind, body)):
            raise BadSeal(f"not sealed as a {kind} with this cluster's key")
        return body
