"""The budget's record and its check (``python -m server.lab.budget``): a
figure beyond its tolerance above the record is a regression, one within it
or below is not, and the record in the repository names every figure the
benchmark measures. The counting itself runs in CI (``make budget``)."""

from __future__ import annotations

import json

from server.lab import budget
from server.lab.budget import Figures, compare

ENV = {"python": "3.11.7"}


def _record(**figures: float) -> dict[str, object]:
    return {"tolerance": 0.05, "environment": ENV, "figures": figures}


def test_a_figure_more_than_the_tolerance_above_its_record_is_a_regression() -> None:
    """6 % more instructions than recorded fails; the line says by how much."""
    lines, regressions = compare(Figures({"instructions": 106.0}, ENV), _record(instructions=100))
    assert regressions == ["instructions: 100.0 -> 106.0 (+6.0%)"]
    assert "REGRESSION" in lines[1]


def test_within_the_tolerance_or_below_is_no_regression() -> None:
    """4 % more, or 30 % fewer (which asks to be recorded), passes."""
    _, regressions = compare(Figures({"a": 104.0, "b": 70.0}, ENV), _record(a=100, b=100))
    assert regressions == []
    lines, _ = compare(Figures({"b": 70.0}, ENV), _record(b=100))
    assert "--record it" in lines[1]


def test_a_figure_not_gated_never_fails() -> None:
    """Resident memory is shown beside the gated figures, never held to them."""
    name = "resident memory per connected player (bytes, not gated)"
    _, regressions = compare(Figures({name: 200.0}, ENV), _record(**{name: 100}))
    assert regressions == []


def test_the_record_in_the_repository_names_every_scenario() -> None:
    """Instructions per action and per set-up for each scenario, frames and bytes
    per action for each memory-only one, and memory per player."""
    figures = json.loads(budget.RECORD.read_text())["figures"]
    for name, _, stored in (*budget.SCENARIOS, budget.STORED):
        assert f"instructions per action, {name}" in figures
        assert f"instructions per match set-up, {name}" in figures
        if not stored:
            assert f"frames per action, {name}" in figures
            assert f"bytes per action, {name}" in figures
    assert "Python memory per connected player (bytes)" in figures
