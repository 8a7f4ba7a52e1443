"""Where analyses are kept once computed: the ``analyses`` table of the
server's SQLite file (schema version 7), or memory for a server without
storage. One row per match and seat; the first analysis stored stays.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from typing import Protocol

from ..errors import StorageError
from ..storage import Storage
from .report import StoredAnalysis

__all__ = ["AnalysisStore", "MemoryAnalyses", "SqlAnalyses"]

log = logging.getLogger(__name__)


class AnalysisStore(Protocol):
    """Analyses by match and seat."""

    def load(self, match_id: str, seat: int) -> StoredAnalysis | None:
        """The stored analysis of ``seat`` in ``match_id``, if there is one."""
        ...

    async def save(self, analysis: StoredAnalysis) -> None:
        """Keep ``analysis`` (an analysis already stored for its seat stays)."""
        ...


class MemoryAnalyses:
    """Analyses in memory: a server without storage forgets them when it stops."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, int], StoredAnalysis] = {}

    def load(self, match_id: str, seat: int) -> StoredAnalysis | None:
        """See :class:`AnalysisStore`."""
        return self._kept.get((match_id, seat))

    async def save(self, analysis: StoredAnalysis) -> None:
        """See :class:`AnalysisStore`."""
        self._kept.setdefault((analysis.match_id, analysis.seat.seat), analysis)


class SqlAnalyses:
    """Analyses in the server's SQLite file, written behind the matches' writes."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def load(self, match_id: str, seat: int) -> StoredAnalysis | None:
        """See :class:`AnalysisStore`; a row that cannot be read is logged and
        left on disk (the analysis is computed again, not stored twice)."""
        try:
            rows = self.storage.query(
                "SELECT deals, seed, analysis, moments FROM analyses"
                " WHERE match_id = ? AND seat = ?",
                (match_id, seat),
            )
        except (StorageError, sqlite3.Error) as exc:
            log.warning("analyses cannot be read now: %s", exc)
            return None
        if not rows:
            return None
        deals, seed, analysis, moments = rows[0]
        try:
            return StoredAnalysis.from_json(match_id, int(deals), int(seed), analysis, moments)
        except (TypeError, ValueError) as exc:
            log.error("the stored analysis of %s seat %d cannot be read: %s", match_id, seat, exc)
            return None

    async def save(self, analysis: StoredAnalysis) -> None:
        """See :class:`AnalysisStore`; raises StorageError if it cannot be written."""
        data, moments = analysis.to_json()
        await self.storage.write_sql(
            [
                (
                    "INSERT OR IGNORE INTO analyses"
                    " (match_id, seat, deals, seed, analysis, moments, created)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        analysis.match_id,
                        analysis.seat.seat,
                        analysis.deals,
                        analysis.seed,
                        data,
                        moments,
                        time.time(),
                    ),
                )
            ]
        )
