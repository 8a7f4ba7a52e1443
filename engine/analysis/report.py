"""What a post-game analysis says, as plain frozen values.

An analysis values every legal option of a seat's decision in *expected
final points* of that seat (keeping, giving and majorities, R14–R22), and its
chance to win (a shared victory counts as a share, R23), from that seat's
knowledge only (R24–R26). These classes hold the result; they compute
nothing but what follows from their fields (the loss, the mark, the means).

Every class here is immutable, pickles (into a worker process), and turns
into plain JSON-able data and back (``to_data()`` / ``from_data()``): strings,
ints, floats, bools, None, lists and maps only, with actions spelt as in a
match record (:func:`engine.record.action_to_data`). ``from_data`` refuses
anything else with an :class:`AnalysisDataError` saying what was wrong.

Invariants of a :class:`DecisionAnalysis`: its options are the seat's legal
actions in the engine's order, the chosen and the best action are among
them, the best has the highest expected points (the first such in that
order), the loss is the best's expected points less the chosen's (so never
negative, and 0 when the best was chosen), and the mark follows from the
loss by the thresholds below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..actions import Action
from ..record import RecordError, action_from_data, action_to_data

__all__ = [
    "BLUNDER",
    "COSTLIEST",
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
    "mark_for",
]

#: A loss of at least this many expected points is an *inaccuracy*: about half a
#: keeping point or a give's rank bonus, more than the analysis's own noise.
INACCURACY = 1.0
#: A loss of at least this many expected points is a *mistake*: about a give of a
#: card at a poorer rank, or a majority's second place thrown away at 3rd (R30).
MISTAKE = 3.0
#: A loss of at least this many expected points is a *blunder*: about the gap
#: between a 1st and a 2nd majority place (15 and 10, R30), or a card given away
#: for nothing.
BLUNDER = 6.0

Mark = Literal["inaccuracy", "mistake", "blunder"]
#: The marks, mildest first, with the least loss that earns each.
MARKS: tuple[tuple[Mark, float], ...] = (
    ("inaccuracy", INACCURACY),
    ("mistake", MISTAKE),
    ("blunder", BLUNDER),
)
#: How many of a seat's costliest decisions its summary names.
COSTLIEST = 3


class AnalysisDataError(ValueError):
    """Plain data that is not an analysis written by ``to_data()``."""


def mark_for(loss: float) -> Mark | None:
    """The mark a decision that lost ``loss`` expected points earns: None below
    :data:`INACCURACY`, else the gravest whose threshold the loss reaches."""
    earned: Mark | None = None
    for mark, threshold in MARKS:
        if loss >= threshold:
            earned = mark
    return earned


# -- reading plain data --------------------------------------------------------------


def _field(data: Mapping[str, Any], name: str) -> Any:
    if not isinstance(data, Mapping):
        raise AnalysisDataError(f"expected a map, got {data!r}")
    try:
        return data[name]
    except KeyError:
        raise AnalysisDataError(f"missing field {name!r} in {dict(data)!r}") from None


def _int(data: Mapping[str, Any], name: str) -> int:
    value = _field(data, name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise AnalysisDataError(f"{name} must be an int, got {value!r}")
    return value


def _float(data: Mapping[str, Any], name: str) -> float:
    value = _field(data, name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise AnalysisDataError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _bool(data: Mapping[str, Any], name: str) -> bool:
    value = _field(data, name)
    if not isinstance(value, bool):
        raise AnalysisDataError(f"{name} must be true or false, got {value!r}")
    return value


def _list(data: Mapping[str, Any], name: str) -> list[Any]:
    value = _field(data, name)
    if not isinstance(value, list | tuple):
        raise AnalysisDataError(f"{name} must be a list, got {value!r}")
    return list(value)


def _action(data: Mapping[str, Any], name: str) -> Action:
    value = _field(data, name)
    if not isinstance(value, Mapping):
        raise AnalysisDataError(f"{name} must be an action, got {value!r}")
    try:
        return action_from_data(value)
    except RecordError as exc:
        raise AnalysisDataError(f"{name}: {exc}") from None


# -- the values ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OptionValue:
    """One legal option and what the analysis expects it to be worth to the seat."""

    action: Action
    expected_points: float  #: the seat's expected final points (R14–R22) after it
    win_chance: float  #: the seat's expected share of the victory, 0 to 1 (R23)

    def to_data(self) -> dict[str, Any]:
        """``{"action": {...}, "expected_points": 41.25, "win_chance": 0.3}``."""
        return {
            "action": action_to_data(self.action),
            "expected_points": self.expected_points,
            "win_chance": self.win_chance,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> OptionValue:
        """Read what :meth:`to_data` wrote."""
        win = _float(data, "win_chance")
        if not 0.0 <= win <= 1.0:
            raise AnalysisDataError(f"win_chance must be from 0 to 1, got {win!r}")
        return cls(_action(data, "action"), _float(data, "expected_points"), win)

    def __reduce__(self) -> tuple[Any, ...]:
        # through plain data, so that the actions come back as the engine's shared ones
        return (type(self).from_data, (self.to_data(),))


def _best(options: Sequence[OptionValue]) -> OptionValue:
    """The option with the most expected points, the first such in legal order."""
    best = options[0]
    for option in options[1:]:
        if option.expected_points > best.expected_points:
            best = option
    return best


@dataclass(frozen=True, slots=True)
class DecisionValues:
    """The analysis's values for every legal option of one decision: what
    :func:`~engine.analysis.analyse_decision` and :func:`~engine.analysis.hint`
    return, before anyone chose."""

    options: tuple[OptionValue, ...]  #: one per legal action, in the engine's order
    #: True when every consistent deal was enumerated with its weight and the
    #: values are the exact expectations; False when ``deals`` deals were sampled
    exact: bool
    deals: int  #: deals sampled, or distinct deals enumerated when exact

    def __post_init__(self) -> None:
        if not self.options:
            raise ValueError("a decision has at least one option")

    @property
    def best(self) -> Action:
        """The option with the most expected points (the first such in legal order)."""
        return _best(self.options).action

    def value_of(self, action: Action) -> OptionValue:
        """The value of ``action``, one of the options."""
        for option in self.options:
            if option.action == action:
                return option
        raise ValueError(f"{action} is not one of this decision's options")

    def to_data(self) -> dict[str, Any]:
        """``{"options": [option, ...], "exact": false, "deals": 48}``."""
        return {
            "options": [option.to_data() for option in self.options],
            "exact": self.exact,
            "deals": self.deals,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> DecisionValues:
        """Read what :meth:`to_data` wrote."""
        options = tuple(OptionValue.from_data(o) for o in _list(data, "options"))
        if not options:
            raise AnalysisDataError("options must not be empty")
        return cls(options, _bool(data, "exact"), _int(data, "deals"))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self).from_data, (self.to_data(),))


@dataclass(frozen=True, slots=True)
class DecisionAnalysis:
    """One decision of a seat, judged: its options' values, the action chosen,
    the best one, what the choice cost, and the mark that cost earns."""

    index: int  #: the decision's place in the match's action list (``MatchRecord.actions``)
    seat: int
    turn: int  #: the turn it was made in; 0 for the opening choice (R11)
    values: DecisionValues
    chosen: Action

    def __post_init__(self) -> None:
        self.values.value_of(self.chosen)  # raises unless the choice was an option

    @property
    def options(self) -> tuple[OptionValue, ...]:
        """Every legal option with its value, in the engine's order."""
        return self.values.options

    @property
    def exact(self) -> bool:
        """Whether the values are exact expectations (see :class:`DecisionValues`)."""
        return self.values.exact

    @property
    def best(self) -> Action:
        """The option with the most expected points."""
        return self.values.best

    @property
    def loss(self) -> float:
        """Expected points the choice gave up against the best option; 0 if it was the best."""
        chosen = self.values.value_of(self.chosen).expected_points
        return max(0.0, _best(self.values.options).expected_points - chosen)

    @property
    def mark(self) -> Mark | None:
        """What the loss earns by the thresholds (:func:`mark_for`)."""
        return mark_for(self.loss)

    @property
    def forced(self) -> bool:
        """True when there was only one legal option: no decision to judge."""
        return len(self.values.options) == 1

    def to_data(self) -> dict[str, Any]:
        """The decision as plain data: its fields, with the values' fields
        inlined (``options``, ``exact``, ``deals``), and the derived ``best``,
        ``loss`` and ``mark`` written out for readers (ignored when read back)::

            {"index": 12, "seat": 1, "turn": 2, "options": [...], "exact": false,
             "deals": 48, "chosen": {"kind": "keep"}, "best": {"kind": "give",
             "to_seat": 2}, "loss": 3.4, "mark": "mistake"}
        """
        return {
            "index": self.index,
            "seat": self.seat,
            "turn": self.turn,
            **self.values.to_data(),
            "chosen": action_to_data(self.chosen),
            "best": action_to_data(self.best),
            "loss": self.loss,
            "mark": self.mark,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> DecisionAnalysis:
        """Read what :meth:`to_data` wrote."""
        values = DecisionValues.from_data(data)
        chosen = _action(data, "chosen")
        try:
            return cls(_int(data, "index"), _int(data, "seat"), _int(data, "turn"), values, chosen)
        except ValueError as exc:
            raise AnalysisDataError(str(exc)) from None

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self).from_data, (self.to_data(),))


@dataclass(frozen=True, slots=True)
class SeatAnalysis:
    """Every decision of one seat in one match, judged, and its summary."""

    seat: int
    decisions: tuple[DecisionAnalysis, ...]  #: in the order they were made

    @property
    def judged(self) -> tuple[DecisionAnalysis, ...]:
        """The decisions with more than one option: the ones the summary counts."""
        return tuple(d for d in self.decisions if not d.forced)

    @property
    def mean_loss(self) -> float:
        """Mean expected points lost per judged decision; 0 with none."""
        judged = self.judged
        return sum(d.loss for d in judged) / len(judged) if judged else 0.0

    @property
    def accuracy(self) -> float:
        """Percentage of judged decisions that lost less than :data:`INACCURACY`; 100 with none."""
        judged = self.judged
        if not judged:
            return 100.0
        return 100.0 * sum(1 for d in judged if d.mark is None) / len(judged)

    @property
    def costliest(self) -> tuple[DecisionAnalysis, ...]:
        """The :data:`COSTLIEST` decisions that lost the most (earliest first
        among equals), leaving out those that lost nothing."""
        lossy = [d for d in self.judged if d.loss > 0.0]
        lossy.sort(key=lambda d: (-d.loss, d.index))
        return tuple(lossy[:COSTLIEST])

    def marks(self) -> dict[Mark, int]:
        """How many decisions earned each mark."""
        counts: dict[Mark, int] = {mark: 0 for mark, _ in MARKS}
        for decision in self.decisions:
            if decision.mark is not None:
                counts[decision.mark] += 1
        return counts

    def to_data(self) -> dict[str, Any]:
        """``{"seat": 0, "decisions": [...], "mean_loss": 1.2, "accuracy": 75.0,
        "costliest": [index, ...], "marks": {"inaccuracy": 2, "mistake": 1,
        "blunder": 0}}``; the summary fields are derived and ignored when read back."""
        return {
            "seat": self.seat,
            "decisions": [d.to_data() for d in self.decisions],
            "mean_loss": self.mean_loss,
            "accuracy": self.accuracy,
            "costliest": [d.index for d in self.costliest],
            "marks": self.marks(),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> SeatAnalysis:
        """Read what :meth:`to_data` wrote."""
        seat = _int(data, "seat")
        decisions = tuple(DecisionAnalysis.from_data(d) for d in _list(data, "decisions"))
        if any(d.seat != seat for d in decisions):
            raise AnalysisDataError(f"every decision of seat {seat}'s analysis must be its own")
        return cls(seat, decisions)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self).from_data, (self.to_data(),))


@dataclass(frozen=True, slots=True)
class MatchAnalysis:
    """The analysis of every seat of one match, with how it was made."""

    seats: tuple[SeatAnalysis, ...]  #: one per seat analysed, by seat
    deals: int  #: the deal count each decision was analysed with (when sampled)
    seed: int  #: the analysis's seed: the same record, deals and seed give the same analysis

    def seat(self, seat: int) -> SeatAnalysis:
        """The analysis of ``seat``."""
        for analysis in self.seats:
            if analysis.seat == seat:
                return analysis
        raise ValueError(f"seat {seat} was not analysed")

    def to_data(self) -> dict[str, Any]:
        """``{"seats": [seat analysis, ...], "deals": 48, "seed": 7}``."""
        return {
            "seats": [seat.to_data() for seat in self.seats],
            "deals": self.deals,
            "seed": self.seed,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> MatchAnalysis:
        """Read what :meth:`to_data` wrote."""
        seats = tuple(SeatAnalysis.from_data(s) for s in _list(data, "seats"))
        return cls(seats, _int(data, "deals"), _int(data, "seed"))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self).from_data, (self.to_data(),))
