"""Finding a server on the LAN and checking its certificate: the facts that the
server and every client share, in one place.

- A server announces itself with DNS-SD over multicast DNS (RFC 6762, 6763)
  as an instance of :data:`SERVICE_TYPE`; its SRV record gives the port, its
  A/AAAA records the addresses, and its TXT record an :class:`Announcement`.
- A server that speaks TLS (``wss://``) names its certificate by
  :func:`fingerprint`: ``SHA256:`` and the SHA-256 of the certificate's DER
  bytes as upper-case hex pairs joined by colons — the form ``openssl x509
  -fingerprint -sha256`` and browsers print, so a person can compare them.

Invariants: :meth:`Announcement.from_txt` accepts exactly what
:meth:`Announcement.to_txt` writes (plus keys it does not know, which it
skips) and raises :class:`ValueError` naming the key for anything else; every
TXT string stays within DNS's 255 bytes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "SERVICE_TYPE",
    "TXT_VERSION",
    "Announcement",
    "fingerprint",
    "parse_fingerprint",
]

#: The DNS-SD service type every Gift of Tulips server registers.
SERVICE_TYPE = "_tulips._tcp.local."
#: The ``txtvers`` this module writes; a client skips announcements of another.
TXT_VERSION = 1
#: Counts in an announcement are capped here (a TXT string is small, and no LAN needs more).
MAX_COUNT = 1_000_000

_HEX_PAIRS = re.compile(r"[0-9A-F]{64}")
_PREFIX = re.compile(r"^\s*(sha-?256(\s+fingerprint)?\s*[:=]\s*)?", re.IGNORECASE)


def fingerprint(der: bytes) -> str:
    """The fingerprint of a certificate given as DER bytes: ``SHA256:AB:CD:…``."""
    digest = hashlib.sha256(der).hexdigest().upper()
    return "SHA256:" + ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def parse_fingerprint(text: str) -> str:
    """The canonical form of a fingerprint a person typed or a peer announced.

    Accepts ``SHA256:AB:CD:…`` in any case, with or without the ``SHA256:``
    prefix and the colons (``openssl``'s ``sha256 Fingerprint=AB:…`` too);
    raises :class:`ValueError` saying what is wrong otherwise."""
    body = _PREFIX.sub("", text, count=1).strip()
    digits = re.sub(r"[\s:]", "", body).upper()
    if not _HEX_PAIRS.fullmatch(digits):
        raise ValueError(
            f"not a SHA-256 fingerprint: {text!r} (expected SHA256: and 32 hex pairs,"
            " e.g. SHA256:3F:A0:…)"
        )
    return "SHA256:" + ":".join(digits[i : i + 2] for i in range(0, 64, 2))


@dataclass(frozen=True, slots=True)
class Announcement:
    """What a server's TXT record says about it (PROTOCOL.md, "Finding a server").

    TXT keys: ``txtvers`` (1), ``v`` (protocol versions, comma-separated),
    ``tls`` (``1`` or ``0``), ``fp`` (the certificate's fingerprint, with
    ``tls=1`` only), ``seats`` (free seats in open matches anyone may join),
    ``open`` (open matches), ``matches`` (matches not finished), ``players``
    (people connected)."""

    versions: tuple[int, ...]
    tls: bool = False
    fingerprint: str | None = None
    open_seats: int = 0
    open_matches: int = 0
    matches: int = 0
    players: int = 0

    def __post_init__(self) -> None:
        if not self.versions or any(not 1 <= v <= 65535 for v in self.versions):
            raise ValueError(f"v: expected protocol versions 1-65535, got {self.versions!r}")
        if self.fingerprint is not None and not self.tls:
            raise ValueError("fp: a fingerprint without tls=1")
        for key, value in self._counts().items():
            if not 0 <= value <= MAX_COUNT:
                raise ValueError(f"{key}: expected 0 to {MAX_COUNT}, got {value}")

    def _counts(self) -> dict[str, int]:
        return {
            "seats": self.open_seats,
            "open": self.open_matches,
            "matches": self.matches,
            "players": self.players,
        }

    def to_txt(self) -> dict[str, str]:
        """The TXT record's key/value pairs, in the order they are written."""
        txt = {
            "txtvers": str(TXT_VERSION),
            "v": ",".join(str(v) for v in self.versions),
            "tls": "1" if self.tls else "0",
        }
        if self.fingerprint is not None:
            txt["fp"] = self.fingerprint
        txt.update({key: str(value) for key, value in self._counts().items()})
        return txt

    @classmethod
    def from_txt(cls, txt: Mapping[bytes, bytes | None] | Mapping[str, str | None]) -> Announcement:
        """Read a TXT record (keys compared without case, as RFC 6763 says);
        raises :class:`ValueError` naming the first key that is wrong."""
        fields: dict[str, str] = {}
        for raw_key, raw_value in txt.items():
            key = _text(raw_key, "a key").lower()
            if key in fields:  # RFC 6763 6.4: only the first of a repeated key counts
                continue
            fields[key] = "" if raw_value is None else _text(raw_value, key)
        if fields.get("txtvers") != str(TXT_VERSION):
            raise ValueError(f"txtvers: expected {TXT_VERSION}, got {fields.get('txtvers')!r}")
        tls = fields.get("tls")
        if tls not in ("0", "1"):
            raise ValueError(f"tls: expected 0 or 1, got {tls!r}")
        fp = fields.get("fp")
        return cls(
            versions=tuple(_number(part, "v") for part in fields.get("v", "").split(",")),
            tls=tls == "1",
            fingerprint=parse_fingerprint(fp) if fp else None,
            open_seats=_number(fields.get("seats", "0"), "seats"),
            open_matches=_number(fields.get("open", "0"), "open"),
            matches=_number(fields.get("matches", "0"), "matches"),
            players=_number(fields.get("players", "0"), "players"),
        )


def _text(value: bytes | str, what: str) -> str:
    if isinstance(value, str):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{what}: not UTF-8: {value[:40]!r}") from None


def _number(text: str, key: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 7:
        raise ValueError(f"{key}: expected a whole number, got {text[:40]!r}")
    return int(text)
