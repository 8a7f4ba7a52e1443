"""A core's engine match (server.match.dealt.DealtMatch) alone: no core, no
socket, no clock. The engine is deterministic from (ruleset, seed, actions)
(R1–R30), so a match let go and dealt again is the same match."""

from __future__ import annotations

import random

from engine import DEFAULT_RULESET
from engine.observation import observe
from server.match.core import deal_match
from server.match.dealt import DealtMatch


def _played(seed: int, players: int = 3) -> tuple[DealtMatch, list[object]]:
    """A match played to its end with random legal actions; every event it made."""
    dealt = DealtMatch(deal_match, players, seed, DEFAULT_RULESET, None)
    made: list[object] = list(dealt.match.setup_events)
    rng = random.Random(seed)
    while not dealt.match.is_over:
        seat = dealt.match.to_act[0]
        made.extend(dealt.apply(seat, rng.choice(dealt.match.legal_actions(seat))))
    return dealt, made


def test_the_events_dealt_again_are_the_ones_made_while_it_ran() -> None:
    """The count is the sequence number of the last event; the events dealt
    again, before and after the match is let go, are those it made (R10–R23)."""
    dealt, made = _played(7)
    assert dealt.seq == len(made)
    assert dealt.events() == made
    dealt.shelve()
    assert not dealt.in_memory
    assert dealt.events() == made
    assert not dealt.in_memory, "a replay does not bring the match back"


def test_a_match_is_let_go_only_once_over_and_comes_back_the_same() -> None:
    """Shelving a match under way keeps it; once over, it goes, and the match
    dealt again for a command has the same history, scores and views (R24)."""
    dealt = DealtMatch(deal_match, 4, 11, DEFAULT_RULESET, 2)
    dealt.shelve()
    assert dealt.in_memory, "a match under way is kept whole"
    finished, _ = _played(11, 4)
    history, scores = finished.match.history, finished.match.scoring
    views = [observe(finished.match, seat) for seat in (None, 0, 1, 2, 3)]
    finished.shelve()
    assert not finished.in_memory
    again = finished.match
    assert finished.in_memory
    assert again.history == history and again.scoring == scores
    assert [observe(again, seat) for seat in (None, 0, 1, 2, 3)] == views
    assert finished.seed == 11
