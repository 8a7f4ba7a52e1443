"""The bot kit and the prompt's options: the points come from the server."""

from __future__ import annotations

import random

import msgspec

import protocol as wire
from client.bots import Option, medium_strategy, random_strategy
from client.options import options, points_by_action
from protocol import examples

STATE = examples.SNAPSHOT_4P.state  # seat 1, pink-4 drawn, pink 4th
PROMPT = examples.PROMPT_4P


def test_options_pair_each_action_with_its_points() -> None:
    """points[i] belongs to actions[i], in the prompt's order."""
    assert options(PROMPT) == (
        Option(wire.Keep(), 2),
        Option(wire.AddFaceUp(), 0),
        Option(wire.AddSecret(), 0),
    )
    assert points_by_action(PROMPT)[wire.Keep()] == 2
    assert points_by_action(None) == {}


def test_points_that_do_not_line_up_are_not_trusted() -> None:
    """None sent (an older server) or a different count: every option says None."""
    for points in ((), (2, 0)):
        prompt = msgspec.structs.replace(PROMPT, points=points)
        assert [o.points for o in options(prompt)] == [None, None, None]
        assert points_by_action(prompt) == {}


def test_medium_takes_what_the_prompt_says_scores_most() -> None:
    """The strategy weighs the server's points: change them and its choice follows."""
    rng = random.Random(1)
    keep_best = options(PROMPT)
    assert medium_strategy(STATE, keep_best, rng) == wire.Keep()
    add_best = options(msgspec.structs.replace(PROMPT, points=(0, 0, 9)))
    assert medium_strategy(STATE, add_best, rng) == wire.AddSecret()


def test_medium_opening_hides_the_lower_card() -> None:
    """R11: of two openings, the lower card goes face down."""
    openings = (Option(wire.Opening(secret="pink-4"), 0), Option(wire.Opening(secret="blue-2"), 0))
    state = msgspec.structs.replace(STATE, phase="opening", drawn=None)
    assert medium_strategy(state, openings, random.Random(0)) == wire.Opening(secret="blue-2")


def test_random_plays_one_of_the_options() -> None:
    """Any legal action, and only those."""
    rng = random.Random(2)
    picks = {random_strategy(STATE, options(PROMPT), rng) for _ in range(50)}
    assert picks == set(PROMPT.actions)
