"""The analysis of a finished (or unfinished) match from its record: each
decision of a seat valued from that seat's observation at that moment.

The match is rebuilt from its record (:meth:`engine.record.MatchRecord.replay`
plays every action again); before each action of the seat analysed, the
seat's observation (:func:`engine.observe`) is handed to
:func:`~engine.analysis.evaluate.analyse_decision`, seeded with the
analysis's seed and the decision's index, so that the same record, deal
count and seed give the same analysis every time.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..record import MatchRecord
from .evaluate import DEFAULT_DEALS
from .report import MatchAnalysis, SeatAnalysis

__all__ = ["analyse_match", "analyse_seat"]


def analyse_seat(
    record: MatchRecord, seat: int, *, deals: int = DEFAULT_DEALS, seed: int = 0
) -> SeatAnalysis:
    """Every decision of ``seat`` in the match of ``record``, the opening
    choice (R11) included, valued from that seat's knowledge at that moment.

    Raises :class:`~engine.record.RecordError` for a record that does not
    replay, and ValueError for a seat the match does not have.
    """
    raise NotImplementedError


def analyse_match(
    record: MatchRecord,
    *,
    seats: Iterable[int] | None = None,
    deals: int = DEFAULT_DEALS,
    seed: int = 0,
) -> MatchAnalysis:
    """:func:`analyse_seat` for each of ``seats`` (every seat by default)."""
    raise NotImplementedError
