"""Post-game analysis of a seat's decisions, from that seat's knowledge only
("learn the game"): for each decision, every legal option with its expected
final points and chance to win, the option chosen, the best one, the loss in
expected points and a mark (inaccuracy, mistake, blunder); per seat, the mean
loss, the accuracy and the three costliest decisions.

* :mod:`engine.analysis.report` — the results as frozen values that turn
  into plain data and back, and the thresholds of the marks.
* :mod:`engine.analysis.evaluate` — one decision's values from one
  observation (:func:`analyse_decision`), and a hint while playing
  (:func:`hint`).
* :mod:`engine.analysis.replay` — a whole seat, or match, from its record.

It never reads what the seat could not know (R24–R26): every value comes
from the seat's :class:`~engine.observation.Observation` and a seed. It
uses the bots' determinisation and their medium policy; the rules modules
and the bots import nothing from here.
"""

from __future__ import annotations

from .evaluate import (
    DEFAULT_DEALS,
    HINT_BUDGET_MS,
    HINT_DEALS,
    HINT_MIN_DEALS,
    analyse_decision,
    hint,
)
from .replay import analyse_match, analyse_seat
from .report import (
    BLUNDER,
    COSTLIEST,
    INACCURACY,
    MARKS,
    MISTAKE,
    AnalysisDataError,
    DecisionAnalysis,
    DecisionValues,
    Mark,
    MatchAnalysis,
    OptionValue,
    SeatAnalysis,
    mark_for,
)

__all__ = [
    "BLUNDER",
    "COSTLIEST",
    "DEFAULT_DEALS",
    "HINT_BUDGET_MS",
    "HINT_DEALS",
    "HINT_MIN_DEALS",
    "INACCURACY",
    "MARKS",
    "MISTAKE",
    "AnalysisDataError",
    "DecisionAnalysis",
    "DecisionValues",
    "Mark",
    "MatchAnalysis",
    "OptionValue",
    "SeatAnalysis",
    "analyse_decision",
    "analyse_match",
    "analyse_seat",
    "hint",
    "mark_for",
]
