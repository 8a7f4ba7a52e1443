"""Each browser key's home: its resume-token file and the tab client's own files.

A key is the page's secret (a random id the page keeps in the tab's
``sessionStorage``): whoever holds it plays as that tab's player. Each key
has a directory of its own in the front's private directory, named by a
hash of the key (never the key itself), holding the token file
(``identity.json``) and the client's configuration (:func:`~server.web.session.tab_environment`).

A key is remembered for ``keep_for`` seconds after its last use (a session
started or ended), so a disconnected player's reload finds their token. To
bound the disk, each address (as the per-address limits count it) keeps at
most ``per_address`` keys: a visitor who opens tab after tab pushes out only
their own oldest keys, never someone else's. ``total`` bounds them all (it
is reached only by many addresses at once). A key in use is never forgotten.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KEEP_FOR", "TOKEN_FILE", "TokenShelf"]

#: Seconds a key's token is remembered after its last use.
KEEP_FOR = 12 * 3600.0
#: The token file's name in a key's home.
TOKEN_FILE = "identity.json"


@dataclass(slots=True)
class _Entry:
    address: str
    used: float


class TokenShelf:
    """The homes of the browser keys in one private directory, and when each
    goes. ``clock`` gives the time in seconds (monotonic)."""

    def __init__(
        self,
        directory: Path,
        *,
        per_address: int,
        total: int,
        keep_for: float = KEEP_FOR,
        clock: Callable[[], float],
    ) -> None:
        self.directory = directory
        self.per_address = per_address
        self.total = total
        self.keep_for = keep_for
        self._clock = clock
        self._entries: dict[str, _Entry] = {}  # by digest, least recently used first

    @staticmethod
    def digest(key: str) -> str:
        """The name of ``key``'s home (a hash: the key itself is a secret)."""
        return hashlib.sha256(key.encode()).hexdigest()[:32]

    def home_for(self, key: str, address: str, in_use: Iterable[str] = ()) -> Path:
        """``key``'s home (made if new), used now from ``address``; the address's
        oldest keys beyond ``per_address`` are forgotten, except ``key`` and the
        keys ``in_use``."""
        digest = self.digest(key)
        self._entries.pop(digest, None)
        self._entries[digest] = _Entry(address, self._clock())
        home = self.directory / digest
        home.mkdir(mode=0o700, exist_ok=True)
        self.forget_old({key, *in_use})
        return home

    def touch(self, key: str) -> None:
        """``key`` was used now (its session ended, say)."""
        entry = self._entries.pop(self.digest(key), None)
        if entry is not None:
            entry.used = self._clock()
            self._entries[self.digest(key)] = entry

    def token_file(self, key: str) -> Path:
        """The token file in ``key``'s home."""
        return self.directory / self.digest(key) / TOKEN_FILE

    def remembered(self) -> int:
        """How many keys are remembered."""
        return len(self._entries)

    def forget_old(self, in_use: Iterable[str] = ()) -> None:
        """Forget (delete the homes of) the keys unused for ``keep_for``, each
        address's oldest beyond ``per_address``, and the oldest beyond
        ``total`` — never the keys ``in_use``."""
        busy = {self.digest(key) for key in in_use}
        now = self._clock()
        per_address: dict[str, int] = {}
        for entry in self._entries.values():
            per_address[entry.address] = per_address.get(entry.address, 0) + 1
        count = len(self._entries)
        for digest, entry in list(self._entries.items()):  # oldest first
            if digest in busy:
                continue
            stale = now - entry.used >= self.keep_for
            if stale or per_address[entry.address] > self.per_address or count > self.total:
                per_address[entry.address] -= 1
                count -= 1
                self._forget(digest)

    def _forget(self, digest: str) -> None:
        del self._entries[digest]
        with contextlib.suppress(OSError):
            shutil.rmtree(self.directory / digest)
