"""``Match.assemble``: a match mid-game from its parts, as determinisation builds
it. A real match taken apart and assembled again is the same match to every
viewer and plays on the same; parts that break a rule are refused, naming
the part. (Tests may read a match's internals; players never can, R24–R26.)
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Action, Card, Match, Phase, RulesetError, TurnAction, observe
from engine.match import SecretCard

from .helpers import KEEP, SECRET, UP, card, cards, deal, open_all, play, play_random

PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def parts(match: Match) -> dict[str, Any]:
    """Every part :meth:`Match.assemble` takes, read from a live match."""
    return {
        "ruleset": match.ruleset,
        "players": match.players,
        "seed": match.seed,
        "first_seat": match.first_seat,
        "phase": match._phase,
        "turn": match._turn,
        "festival": tuple(match._festival),
        "ranking": tuple(match._ranking),
        "bouquets": [tuple(b) for b in match._bouquets],
        "keeping": tuple(match._keeping),
        "giving": tuple(match._giving),
        "hands": [match._setup_hand(seat) for seat in range(match.players)],
        "openings": [None if a is None else a.secret for a in match._openings],
        "secret": tuple(match._secret),
        "deck": tuple(reversed(match._deck)),
        "removed": tuple(match._removed),
        "active": match._active if match._phase is Phase.TURN else None,
        "used": match._used,
        "drawn": match._drawn,
        "moves": observe(match, None).moves,
    }


def views(match: Match) -> list[object]:
    """What every seat and a spectator see."""
    return [observe(match, seat) for seat in [*range(match.players), None]]


@PROPERTY
@given(
    players=st.integers(2, 6),
    seed=st.integers(0, 2**32 - 1),
    steps=st.integers(0, 120),
)
def test_a_match_taken_apart_and_assembled_is_the_same_and_plays_on_the_same(
    players: int, seed: int, steps: int
) -> None:
    """Every viewer sees the same match, and the same actions cause the same
    events up to the end-of-game reveal, which the assembled seed drives (R19)."""
    match = Match.new(players, seed)
    play_random(match, random.Random(seed), steps)
    if match.is_over:
        return
    assembled = Match.assemble(**parts(match))
    assert assembled.dealt and assembled.history == ()
    assert views(assembled) == views(match)
    rng = random.Random(seed + 1)
    while True:
        seat = match.to_act[0]
        action = rng.choice(match.legal_actions(seat))
        events = match.apply(seat, action)
        if match.is_over:
            break
        assert assembled.apply(seat, action) == events
        assert views(assembled) == views(match)


def opening_match() -> Match:
    """Two seats; seat 0 has chosen its opening, seat 1 not yet."""
    match = deal(
        2,
        deck="pink-2 purple-3 blue-2 orange-3",
        festival="purple-4 blue-3",
        hands=["pink-2 blue-2", "orange-2 purple-2"],
    )
    match.apply(0, Action.opening(card("blue-2")))
    return match


def turn_match() -> Match:
    """Two seats, seat 0's turn after ADD face up."""
    match = deal(
        2,
        deck="pink-2 purple-3 blue-2 orange-3 pink-3 purple-2",
        festival="purple-4 blue-3",
        hands=["pink-2 blue-2", "orange-2 purple-2"],
    )
    open_all(match, "blue-2 purple-2")
    play(match, [UP])
    return match


def test_assemble_builds_the_opening_and_a_turn() -> None:
    """Both phases before the end assemble to the match they were taken from."""
    for match in (opening_match(), turn_match()):
        assert views(Match.assemble(**parts(match))) == views(match)
    done = turn_match()
    play(done, [KEEP, SECRET, KEEP, UP, KEEP])
    assert done.is_over
    with pytest.raises(RulesetError, match="phase"):
        Match.assemble(**parts(done))


def refused(match: Match, field: str, **changes: Any) -> None:
    """Assembling ``match`` with ``changes`` raises a RulesetError naming ``field``."""
    with pytest.raises(RulesetError) as caught:
        Match.assemble(**{**parts(match), **changes})
    assert caught.value.field == field, caught.value


def test_assemble_refuses_parts_that_break_the_rules() -> None:
    """Each broken part is refused by name (R3, R7, R8, R10, R11, R13)."""
    turn, opening = turn_match(), opening_match()
    two = list(parts(turn)["bouquets"])
    refused(turn, "bouquets", bouquets=two[:1])
    refused(turn, "hands", hands=[cards("pink-2"), cards("orange-2 purple-2")])
    refused(turn, "openings", openings=[card("pink-3"), card("purple-2")])
    refused(turn, "keeping", keeping=(-1, 0))
    refused(turn, "festival", festival=cards("purple-4 purple-3"))
    refused(turn, "ranking", ranking=parts(turn)["ranking"][::-1])  # R8: totals decide
    refused(turn, "ranking", ranking=parts(turn)["ranking"][:1])  # R7: every colour there
    refused(turn, "deck", deck=cards("pink-3") * 7)  # R3: 6 copies for 2 players
    refused(turn, "turn", turn=0)
    refused(turn, "active", active=None)
    refused(turn, "used", used="keep")
    refused(turn, "drawn", drawn=None)
    refused(turn, "openings", openings=[card("blue-2"), None])
    refused(turn, "secret", secret=(SecretCard(5, card("blue-2")),))
    late = (SecretCard(0, card("orange-3")), *parts(turn)["secret"])
    refused(turn, "secret", secret=late)  # R11: a seat's opening card is its first face down
    refused(turn, "bouquets", bouquets=[(), two[1]])
    refused(opening, "phase", used=TurnAction.KEEP)
    refused(opening, "openings", openings=[card("blue-2"), card("purple-2")])
    refused(opening, "bouquets", bouquets=[(card("pink-2"),), ()])
    refused(opening, "deck", deck=())
    refused(opening, "phase", phase=Phase.OVER)


def test_assemble_keeps_every_card_it_is_given_and_no_other() -> None:
    """The deck plays first drawn first, and the drawn card is the given one."""
    match = turn_match()
    given = parts(match)
    assembled = Match.assemble(**given)
    assert observe(assembled, 0).drawn == given["drawn"]
    drawn: list[Card] = []
    while not assembled.is_over:
        seat = assembled.to_act[0]
        view = observe(assembled, seat)
        assert view.drawn is not None
        drawn.append(view.drawn)
        assembled.apply(seat, view.legal_actions[0])
    assert drawn[1:] == list(given["deck"])
