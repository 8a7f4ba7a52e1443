"""The resume tokens this player holds, one per server URL.

A token is a password (PROTOCOL.md, "Resuming"): the file is written
atomically, readable by its owner only, and a damaged file is treated as
empty rather than as an error. By default it lives at
``user_config_dir("gift-of-tulips")/identity.json``, which every player of
that user shares; ``tulips connect --identity-file PATH`` gives a player a
file of its own (``tulips-server --web`` gives one to each browser tab).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["IdentityStore", "default_path"]

#: Servers remembered; the least recently used are forgotten first.
MAX_SERVERS = 32


def default_path() -> Path:
    """``identity.json`` in the user's configuration directory."""
    import platformdirs  # only when a token is stored or read

    return Path(platformdirs.user_config_dir("gift-of-tulips")) / "identity.json"


class IdentityStore:
    """Resume tokens keyed by server URL, kept in a small JSON file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_path()

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            return {}
        return {k: v for k, v in servers.items() if isinstance(k, str) and isinstance(v, str)}

    def _write(self, servers: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".identity-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump({"servers": servers}, file, indent=1)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def token_for(self, url: str) -> str | None:
        """The token for ``url``, if we have one."""
        return self._read().get(url)

    def remember(self, url: str, token: str) -> None:
        """Keep ``token`` for ``url`` (most recent last; old servers drop off)."""
        servers = self._read()
        servers.pop(url, None)
        servers[url] = token
        while len(servers) > MAX_SERVERS:
            servers.pop(next(iter(servers)))
        with contextlib.suppress(OSError):  # no config dir: play on, just without resuming
            self._write(servers)

    def forget(self, url: str) -> None:
        """Drop the token for ``url`` (the server no longer knows it)."""
        servers = self._read()
        if servers.pop(url, None) is not None:
            with contextlib.suppress(OSError):
                self._write(servers)
