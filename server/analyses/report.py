"""An analysis as it is stored and as it is sent.

:class:`StoredAnalysis` is one seat's analysis of one match: the engine's
:class:`~engine.analysis.SeatAnalysis` (kept as its ``to_data()`` JSON), the
deal count and seed it was computed with, and where each decision stands in
the match (the seq of its prompt, the card drawn) so that a client can show
it beside a replay without the rules. :func:`analysis_message` turns it into
the protocol's ``analysis``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import protocol as wire
from engine.analysis import BLUNDER, INACCURACY, MISTAKE, AnalysisDataError, SeatAnalysis

from ..match.views import option_values

__all__ = ["StoredAnalysis", "analysis_message"]


@dataclass(frozen=True, slots=True)
class StoredAnalysis:
    """One seat's analysis of one match, as computed once and kept."""

    match_id: str
    seat: SeatAnalysis
    deals: int
    seed: int
    #: per decision, in order: the seq of its prompt and the card drawn (None: opening)
    moments: tuple[tuple[int, str | None], ...]

    def to_json(self) -> tuple[str, str]:
        """The analysis's JSON (the engine's ``to_data()``) and its moments' JSON."""
        return json.dumps(self.seat.to_data()), json.dumps([list(m) for m in self.moments])

    @classmethod
    def from_json(
        cls, match_id: str, deals: int, seed: int, analysis: str, moments: str
    ) -> StoredAnalysis:
        """Read back what :meth:`to_json` wrote; raises ValueError if it is not that."""
        try:
            seat = SeatAnalysis.from_data(json.loads(analysis))
            pairs = json.loads(moments)
            read = tuple((int(seq), None if drawn is None else str(drawn)) for seq, drawn in pairs)
        except (AnalysisDataError, TypeError, ValueError) as exc:
            raise ValueError(f"stored analysis of {match_id}: {exc}") from None
        if len(read) != len(seat.decisions):
            raise ValueError(f"stored analysis of {match_id}: moments and decisions differ")
        return cls(match_id, seat, deals, seed, read)


def analysis_message(stored: StoredAnalysis, request: wire.RequestId | None) -> wire.AnalysisReport:
    """The ``analysis`` answering ``request``: every decision with its options'
    values, the choice, the best, the loss and its mark, and the summary."""
    seat = stored.seat
    decisions = []
    for decision, (seq, drawn) in zip(seat.decisions, stored.moments, strict=True):
        legal = [option.action for option in decision.options]
        decisions.append(
            wire.DecisionReview(
                index=decision.index,
                seq=seq,
                turn=decision.turn,
                drawn=cast(Any, drawn),
                options=option_values(legal, decision.values),
                chosen=legal.index(decision.chosen),
                best=legal.index(decision.best),
                loss=decision.loss,
                mark=decision.mark,
                forced=decision.forced,
                exact=decision.exact,
            )
        )
    marks = seat.marks()
    return wire.AnalysisReport(
        id=request,
        match=stored.match_id,
        seat=seat.seat,
        decisions=tuple(decisions),
        mean_loss=seat.mean_loss,
        accuracy=seat.accuracy,
        costliest=tuple(d.index for d in seat.costliest),
        inaccuracies=marks["inaccuracy"],
        mistakes=marks["mistake"],
        blunders=marks["blunder"],
        thresholds=wire.MarkThresholds(inaccuracy=INACCURACY, mistake=MISTAKE, blunder=BLUNDER),
        deals=stored.deals,
    )
