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

from ..errors import IllegalAction
from ..match import Match
from ..observation import observe
from ..record import MatchRecord, RecordError
from .evaluate import DEFAULT_DEALS, analyse_decision
from .report import DecisionAnalysis, MatchAnalysis, SeatAnalysis

__all__ = ["analyse_match", "analyse_seat"]


def analyse_seat(
    record: MatchRecord, seat: int, *, deals: int = DEFAULT_DEALS, seed: int = 0
) -> SeatAnalysis:
    """Every decision of ``seat`` in the match of ``record``, the opening
    choice (R11) included, valued from that seat's knowledge at that moment.

    Raises :class:`~engine.record.RecordError` for a record that does not
    replay, and ValueError for a seat the match does not have.
    """
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < record.players:
        raise ValueError(f"seat must be from 0 to {record.players - 1}, got {seat!r}")
    if record.dealt:
        raise RecordError("a match built from a chosen deal cannot be rebuilt from its seed")
    match = Match.new(record.players, record.seed, record.ruleset, record.first_seat)
    decisions = []
    for index, (actor, action) in enumerate(record.actions):
        if actor == seat and action in match.legal_actions(seat):
            observation = observe(match, seat)
            values = analyse_decision(observation, deals=deals, seed=f"{seed}:{index}")
            decisions.append(DecisionAnalysis(index, seat, observation.turn, values, action))
        try:
            match.apply(actor, action)
        except IllegalAction as exc:
            raise RecordError(f"action {index} does not replay: {exc}") from None
    return SeatAnalysis(seat, tuple(decisions))


def analyse_match(
    record: MatchRecord,
    *,
    seats: Iterable[int] | None = None,
    deals: int = DEFAULT_DEALS,
    seed: int = 0,
) -> MatchAnalysis:
    """:func:`analyse_seat` for each of ``seats`` (every seat by default)."""
    chosen = range(record.players) if seats is None else sorted(set(seats))
    analyses = tuple(analyse_seat(record, seat, deals=deals, seed=seed) for seat in chosen)
    return MatchAnalysis(analyses, deals, seed)
