"""The bench's minimal rules loop (engine.lab.minimal) is a faithful yardstick:
the standard ruleset's numbers, and for the same seed and the same random
choices the very match the engine plays, down to every seat's final points."""

from __future__ import annotations

import random

import pytest

from engine import COLOURS, DEFAULT_RULESET, VALUES
from engine.lab import minimal
from engine.lab.bench import compare_minimal
from engine.lab.botspeed import decisions, simulations_per_budget
from engine.lab.playouts import playout
from engine.ruleset import PLAYER_COUNTS


def test_r30_minimal_loop_uses_the_standard_numbers() -> None:
    """Its written-out tables are DEFAULT_RULESET's (R3, R4, R19, R20, R30)."""
    rules = DEFAULT_RULESET
    assert rules.copies == minimal.COPIES
    assert rules.extra_copies == minimal.EXTRA_COPIES
    assert rules.extra_from_players == minimal.EXTRA_FROM
    assert dict(rules.removed) == minimal.REMOVED
    assert rules.reveal_size == minimal.REVEAL
    assert rules.giving_bonus == minimal.GIVING
    assert rules.bouquet_points == minimal.BOUQUET
    assert rules.majority_points == minimal.MAJORITY
    assert dict(rules.majority_places) == minimal.PLACES
    assert len(minimal.COLOUR) == len(COLOURS) * len(VALUES)
    assert sorted(set(minimal.VALUE)) == list(VALUES)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r4_r23_minimal_loop_plays_the_engines_matches(players: int) -> None:
    """Same seed, same choice generator: the same final points as the engine's
    match, for every seat (R4, R10–R12 deal, R13–R17 turns, R18–R22 the end)."""
    engine_rng, minimal_rng = random.Random(players), random.Random(players)
    for seed in range(150):
        scoring = playout(players, seed, engine_rng).scoring
        assert scoring is not None
        totals = [player.total for player in scoring.players]
        assert minimal.playout(players, seed, minimal_rng) == totals, seed


def test_r8_minimal_climb_goes_above_ties() -> None:
    """R8: a colour that ties goes above; the others keep their order."""
    ranking, totals = [0, 1], [2, 2, 0, 0]
    totals[3] = 2
    minimal._climb(ranking, totals, 3)
    assert ranking == [3, 0, 1]
    totals[1] = 5
    minimal._climb(ranking, totals, 1)
    assert ranking == [1, 3, 0]


def test_minimal_and_engine_rates_are_measured_side_by_side() -> None:
    """bench --minimal: a rate for each loop and each round, both positive."""
    results = compare_minimal([2], 0.05, 2)
    plain, engine = results[2]
    assert len(plain) == len(engine) == 2
    assert min(plain) > 0 and min(engine) > 0


@pytest.mark.parametrize("players", [3, 4])
def test_bot_speed_counts_simulations(players: int) -> None:
    """bench --bot: the hard bot completes at least one simulation a decision,
    the search (3 players) and the uncapped lookahead (4 players) alike."""
    found = decisions(players, 0, 2)
    assert len(found) == 2
    assert all(len(obs.legal_actions) > 1 and obs.viewer == 0 for obs in found)
    median, counts = simulations_per_budget(players, count=2, budget_ms=20)
    assert len(counts) == 2 and min(counts) >= 1 and median >= 1
