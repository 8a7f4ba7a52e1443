"""``prompt_rankings``: the festival's ranking each ADD face up would make.

A prompt shows, beside the option, where the drawn card's colour would go
(R16, R8: ties go above); this holds the preview to what the match's ranking
really is once the action is applied, for every prompt of random matches of
2 to 6 players, and checks that it reads nothing a seat cannot know.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Action, ActionKind, Card, Colour, Match, Phase, observe
from engine.events import CardAddedFaceUp
from engine.observation import prompt_rankings


def check(match: Match) -> None:
    """Every seat's previews equal the ranking the add gives when applied to a copy."""
    for seat in range(match.players):
        legal = match.legal_actions(seat)
        previews = prompt_rankings(match, seat, legal)
        assert len(previews) == len(legal)
        for action, preview in zip(legal, previews, strict=True):
            if action.kind is not ActionKind.ADD_FACE_UP:
                assert preview is None, action
                continue
            # the add's own event: on the match's last card, the end's reveal
            # (R19) moves the ranking again, which no preview can know
            (added,) = (
                e for e in match.clone().apply(seat, action) if isinstance(e, CardAddedFaceUp)
            )
            assert preview == added.ranking, (seat, action)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 6), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_r8_r16_face_up_previews_are_the_ranking_after_the_add(
    players: int, seed: int, data: st.DataObject
) -> None:
    """At every step of a random match, for every seat: each ADD face up's
    preview is the ranking the match has once that add is played (before the
    end's reveal, when it is the last card)."""
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


def _card(text: str) -> Card:
    colour, value = text.split("-")
    return Card.of(Colour(colour), int(value))


def _opened(deck: list[str]) -> Match:
    """A 3-player match past the opening, festival purple-4 then blue-2, seat 0 to draw."""
    match = Match.from_deal(
        3,
        deck=[_card(c) for c in deck],
        festival=[_card("purple-4"), _card("blue-2")],
        hands=[[_card("orange-2"), _card("orange-3")]] * 3,
    )
    for seat in range(3):
        match.apply(seat, match.legal_actions(seat)[0])
    return match


def test_r8_a_colour_that_ties_goes_above() -> None:
    """R8: a pink 4 ties purple's 4 and goes above it, and so above blue."""
    match = _opened(["pink-4", "pink-2", "blue-4", "blue-3"])
    assert observe(match, 0).drawn == _card("pink-4")
    previews = prompt_rankings(match, 0, (Action.add_face_up(), Action.keep()))
    assert previews == ((Colour("pink"), Colour("purple"), Colour("blue")), None)


def test_r8_a_colour_climbs_past_a_tie_but_not_past_a_higher_total() -> None:
    """R8: a pink 2 ties blue's 2 and goes above it, but stays under purple's 4."""
    match = _opened(["pink-2", "pink-4", "blue-4", "blue-3"])
    (preview,) = prompt_rankings(match, 0, (Action.add_face_up(),))
    assert preview == (Colour("purple"), Colour("pink"), Colour("blue"))


def test_r19_secret_cards_do_not_count_toward_the_preview() -> None:
    """Face-down cards count only once revealed at the end (R19): a ranking made
    with secret cards in the pile is the one made without them."""
    match = _opened(["purple-2", "blue-3", "blue-3", "pink-4", "pink-2", "orange-3"])
    match.apply(0, Action.add_secret())  # purple-2 goes face down: purple stays at 4
    (preview,) = prompt_rankings(match, 0, (Action.add_face_up(),))  # the blue 3: 5 > 4
    assert preview == (Colour("blue"), Colour("purple"))


def test_no_preview_for_a_seat_that_has_not_drawn() -> None:
    """Only the seat that holds a drawn card gets a ranking; others get None."""
    match = _opened(["pink-4", "pink-2", "blue-4", "blue-3"])
    assert prompt_rankings(match, 1, (Action.add_face_up(),)) == (None,)
