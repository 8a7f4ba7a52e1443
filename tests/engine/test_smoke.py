"""A whole match plays to the end through the public API."""

from __future__ import annotations

import random

from engine import Match


def test_r18_random_match_reaches_final_scoring() -> None:
    """Random legal play for every player count ends with a scoring (R18, R23)."""
    rng = random.Random(0)
    for players in range(2, 7):
        match = Match.new(players, seed=players)
        while not match.is_over:
            seat = match.to_act[0]
            match.apply(seat, rng.choice(match.legal_actions(seat)))
        assert match.scoring is not None
        assert match.scoring.winners
