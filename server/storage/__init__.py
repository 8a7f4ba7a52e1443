"""Durable storage: the SQLite database (:mod:`.database`), and how players
and matches are read back from it (:mod:`.persist`)."""

from __future__ import annotations

from ..errors import StorageError
from ..match.records import MatchRow
from .database import _MIGRATIONS, APPLICATION_ID, FILE_NAME, SCHEMA_VERSION, PlayerRow, Storage

__all__ = [
    "APPLICATION_ID",
    "FILE_NAME",
    "SCHEMA_VERSION",
    "_MIGRATIONS",
    "MatchRow",
    "PlayerRow",
    "Storage",
    "StorageError",
]
