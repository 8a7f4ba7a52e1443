"""Trust on first use for ``wss://`` servers, as SSH does for hosts.

A LAN server's certificate is usually self-signed (``tulips-server --tls``),
so no certificate authority vouches for it. Instead the client remembers the
certificate's fingerprint (:func:`protocol.lan.fingerprint`) the first time a
person trusts it, in a ``known_servers`` file keyed by ``host:port``, and
refuses loudly if it ever changes.

The file is plain text a person can edit: one server a line,
``HOST:PORT SHA256:AB:CD:…``; lines starting with ``#`` are comments, and a
line it cannot read is kept as it is and otherwise ignored. It lives in the
user's configuration directory (``platformdirs``) unless a path is given.
Writes replace the file whole (a temporary file renamed into place).
"""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from protocol.lan import fingerprint, parse_fingerprint

__all__ = [
    "KnownServers",
    "default_path",
    "fingerprint",
    "parse_fingerprint",
    "pinning_context",
    "server_key",
]


def default_path() -> Path:
    """``known_servers`` in the user's configuration directory."""
    import platformdirs

    return Path(platformdirs.user_config_dir("gift-of-tulips")) / "known_servers"


def server_key(url: str) -> str:
    """``host:port`` of a ``ws://`` or ``wss://`` URL: how a server is remembered
    (the host in lower case, an IPv6 address in brackets, the port always given)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if parts.scheme == "wss" else 80)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def pinning_context() -> ssl.SSLContext:
    """A client TLS context that encrypts without asking a certificate authority:
    the caller checks the peer certificate's fingerprint itself after the handshake."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class KnownServers:
    """The fingerprints this user trusts, by ``host:port``."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_path()

    def _lines(self) -> list[str]:
        try:
            return self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError):
            return []  # unreadable: as if empty; nothing is written over it (see _write)

    @staticmethod
    def _entry(line: str) -> tuple[str, str] | None:
        parts = line.split()
        if len(parts) != 2 or line.lstrip().startswith("#"):
            return None
        try:
            return parts[0].lower(), parse_fingerprint(parts[1])
        except ValueError:
            return None

    def get(self, key: str) -> str | None:
        """The fingerprint remembered for ``host:port``, if any."""
        found = self.find(key)
        return found[1] if found is not None else None

    def find(self, key: str) -> tuple[int, str] | None:
        """(line number from 1, fingerprint) of ``host:port``'s entry, if any."""
        for number, line in enumerate(self._lines(), start=1):
            entry = self._entry(line)
            if entry is not None and entry[0] == key.lower():
                return number, entry[1]
        return None

    def remember(self, key: str, fingerprint: str) -> None:
        """Trust ``fingerprint`` for ``host:port`` from now on (replacing any entry)."""
        canonical = parse_fingerprint(fingerprint)
        lines = [line for line in self._lines() if self._key_of(line) != key.lower()]
        if not lines:
            lines = [
                "# Gift of Tulips: servers whose certificate you trusted (host:port fingerprint)"
            ]
        lines.append(f"{key.lower()} {canonical}")
        self._write(lines)

    def forget(self, key: str) -> bool:
        """Drop ``host:port``'s entry; False if there was none."""
        lines = self._lines()
        kept = [line for line in lines if self._key_of(line) != key.lower()]
        if len(kept) == len(lines):
            return False
        self._write(kept)
        return True

    def _key_of(self, line: str) -> str | None:
        entry = self._entry(line)
        return entry[0] if entry is not None else None

    def _write(self, lines: list[str]) -> None:
        if self.path.exists() and not os.access(self.path, os.R_OK):
            raise PermissionError(f"{self.path} cannot be read; not writing over it")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".known_servers-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write("".join(line + "\n" for line in lines))
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
