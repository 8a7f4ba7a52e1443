"""``prompt_choices``: a prompt's actions and points without a whole observation.

The server prompts after every action, so it asks for just the legal actions
and what each scores at once (R14–R17); this checks that the answer is exactly
what the seat's :func:`engine.observe` gives, for every seat at every step of
random matches of 2 to 6 players.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Match, Phase, action_points, observe
from engine.observation import prompt_choices


def check(match: Match) -> None:
    """Every seat's choices agree with its observation (empty for a seat that need not act)."""
    for seat in range(match.players):
        view = observe(match, seat)
        expected = tuple(
            action_points(view.ruleset, view.ranking, view.drawn, a) for a in view.legal_actions
        )
        assert prompt_choices(match, seat) == (view.legal_actions, expected), seat


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 6), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_r14_r17_prompt_choices_are_the_observed_actions_and_their_points(
    players: int, seed: int, data: st.DataObject
) -> None:
    """At every step of a random match, for every seat: the observation's legal
    actions, each with :func:`action_points` from the observation."""
    match = Match.new(players, seed)
    check(match)
    while not match.is_over:
        if match.phase is Phase.OPENING:  # R11: the seats choose in any order
            seat = data.draw(st.sampled_from(match.to_act), label="seat")
        else:
            seat = match.to_act[0]
        legal = match.legal_actions(seat)
        match.apply(seat, legal[data.draw(st.integers(0, len(legal) - 1), label="action")])
        check(match)
    assert prompt_choices(match, 0) == ((), ())
