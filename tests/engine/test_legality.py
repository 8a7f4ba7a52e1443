"""Every refused action raises its own error, says why, and changes nothing.

"Nothing" is checked three ways: the match's record and every seat's (and a
spectator's) observation are equal before and after, and the match then plays
on exactly like a clone taken before the refusal, random generator included.
"""

from __future__ import annotations

import random

import pytest

from engine import (
    Action,
    ActionAlreadyUsed,
    ActionKind,
    Card,
    Colour,
    EngineError,
    GameOver,
    IllegalAction,
    Match,
    NotYourTurn,
    UnknownSeat,
    all_cards,
    observe,
)
from engine.events import CardAddedFaceUp

from .helpers import KEEP, SECRET, UP, card, deal, give, open_all, play, play_random, snapshot

BLUE, PURPLE = Colour.BLUE, Colour.PURPLE


def opening_match() -> Match:
    """3 players, nobody has chosen yet; seat 0 holds pink-2 and orange-3."""
    return deal(
        3,
        deck="blue-2 blue-3 orange-2 orange-4 pink-4 purple-2",
        festival="blue-4 purple-3",
        hands=["pink-2 orange-3", "pink-3 orange-4", "purple-2 purple-4"],
    )


def turn_match() -> Match:
    """The same match with every opening made: seat 0 to place its first card."""
    match = opening_match()
    open_all(match, "pink-2 pink-3 purple-2")
    return match


def over_match() -> Match:
    """A 3-player seeded match played to the end."""
    match = Match.new(3, seed=11)
    play_random(match, random.Random(11))
    assert match.is_over
    return match


def assert_refused(
    match: Match, seat: object, action: object, error: type[IllegalAction], *words: str
) -> IllegalAction:
    """``seat`` playing ``action`` raises exactly ``error`` naming ``words``; nothing changes.

    Plays the match (and an untouched clone) to the end afterwards.
    """
    before = snapshot(match)
    twin = match.clone()
    assert type(match.refusal(seat, action)) is error  # type: ignore[arg-type]
    with pytest.raises(error) as info:
        match.apply(seat, action)  # type: ignore[arg-type]
    exc = info.value
    assert type(exc) is error
    assert isinstance(exc, EngineError)
    assert (exc.seat, exc.action) == (seat, action)
    message = str(exc)
    for word in words:
        assert word in message, message
    assert snapshot(match) == before
    assert match.history == twin.history
    # the refused match plays on exactly like its untouched twin, to the end
    assert play_random(match, random.Random(7)) == play_random(twin, random.Random(7))
    assert snapshot(match) == snapshot(twin)
    return exc


# -- the opening (R11) ---------------------------------------------------------------


def test_r11_turn_action_during_opening_refused() -> None:
    """KEEP, GIVE or ADD before every opening is made is refused."""
    for action in (KEEP, give(1), UP, SECRET):
        assert_refused(opening_match(), 0, action, IllegalAction, "opening choice", "R11")


def test_r11_wrong_opening_card_refused() -> None:
    """An opening that names a card not dealt to the seat is refused and names the dealt cards."""
    exc = assert_refused(
        opening_match(),
        0,
        Action.opening(card("pink-3")),
        IllegalAction,
        "pink-2 and orange-3",
    )
    assert "pink-3" in str(exc)  # the action is quoted too


def test_r11_another_seats_card_refused() -> None:
    """A seat cannot choose with a card dealt to another seat."""
    assert_refused(opening_match(), 1, Action.opening(card("pink-2")), IllegalAction, "dealt")


def test_r11_opening_twice_refused() -> None:
    """A seat that has made its opening choice cannot make it again, in either form:
    it has nothing to do until every seat has chosen, so it is not its turn."""
    for secret in ("pink-2", "orange-3"):
        match = opening_match()
        match.apply(0, Action.opening(card("pink-2")))
        opening = Action.opening(card(secret))
        assert_refused(match, 0, opening, NotYourTurn, "already made")


def test_r11_opening_after_the_opening_refused() -> None:
    """Once turns have begun the opening choice is refused: over for the active seat,
    not their turn for the others."""
    opening = Action.opening(card("pink-2"))
    assert_refused(turn_match(), 0, opening, IllegalAction, "opening choice is over")
    assert_refused(turn_match(), 1, opening, NotYourTurn, "seat 0's turn")


# -- a turn (R5, R13–R16) ------------------------------------------------------------


@pytest.mark.parametrize("action", [KEEP, give(0), give(2), UP, SECRET])
def test_r5_not_your_turn_refused(action: Action) -> None:
    """A seat other than the active one cannot act, and is told whose turn it is."""
    assert_refused(turn_match(), 1, action, NotYourTurn, "seat 0's turn")
    assert_refused(turn_match(), 2, action, NotYourTurn, "seat 0's turn")


@pytest.mark.parametrize(
    ("first", "again", "used"),
    [
        (KEEP, KEEP, "keep"),
        (give(1), give(2), "give"),
        (give(1), give(1), "give"),
        (UP, UP, "add"),
        (UP, SECRET, "add"),
        (SECRET, UP, "add"),
        (SECRET, SECRET, "add"),
    ],
)
def test_r13_r16_second_card_reusing_first_action_refused(
    first: Action, again: Action, used: str
) -> None:
    """The second card cannot use the first card's action; both ADD forms are one."""
    match = turn_match()
    match.apply(0, first)
    assert_refused(match, 0, again, ActionAlreadyUsed, f"already used {used}", "R13")


def test_r15_give_to_self_refused() -> None:
    """A card is given to another player, never to oneself."""
    assert_refused(turn_match(), 0, give(0), IllegalAction, "another player", "R15")
    match = turn_match()
    match.apply(0, KEEP)
    assert_refused(match, 0, give(0), IllegalAction, "another player")


@pytest.mark.parametrize("to_seat", [3, 5, 6, -1, 99])
def test_r15_give_to_unknown_seat_refused(to_seat: int) -> None:
    """Giving to a seat outside the match is refused with UnknownSeat."""
    assert_refused(turn_match(), 0, give(to_seat), UnknownSeat, "seats go from 0 to 2")


# -- seats, the end, and things that are not actions ---------------------------------


@pytest.mark.parametrize("seat", [3, 6, -1, True, "0", None])
def test_unknown_seat_refused(seat: object) -> None:
    """A seat that is not a seat of the match is refused, in every phase."""
    for match in (opening_match(), turn_match(), over_match()):
        assert_refused(match, seat, KEEP, UnknownSeat, "seats go from 0 to 2")
    assert_refused(
        opening_match(), seat, Action.opening(card("pink-2")), UnknownSeat, "seats go from 0"
    )


@pytest.mark.parametrize(
    "action", [KEEP, give(1), UP, SECRET, Action.opening(card("pink-2")), give(0)]
)
def test_r18_any_action_after_the_end_refused(action: Action) -> None:
    """Once the game is over every action from every seat is refused with GameOver."""
    match = over_match()
    for seat in range(3):
        assert match.legal_actions(seat) == ()
        assert_refused(match, seat, action, GameOver, "game is over")


@pytest.mark.parametrize("thing", ["keep", None, ActionKind.KEEP, card("pink-2")])
def test_not_an_action_refused(thing: object) -> None:
    """Anything that is not an Action is refused, during the opening and a turn."""
    assert_refused(opening_match(), 0, thing, IllegalAction, "not an action")
    assert_refused(turn_match(), 0, thing, IllegalAction, "not an action")


def test_refusals_are_engine_errors_with_fields() -> None:
    """Every refusal is an IllegalAction (an EngineError) carrying seat, action and reason."""
    for error in (NotYourTurn, ActionAlreadyUsed, GameOver, UnknownSeat):
        assert issubclass(error, IllegalAction)
    assert issubclass(IllegalAction, EngineError)
    exc = turn_match().refusal(1, KEEP)
    assert isinstance(exc, NotYourTurn)
    assert (exc.seat, exc.action, exc.reason) == (1, KEEP, "it is seat 0's turn")
    assert str(exc) == "seat 1 cannot keep: it is seat 0's turn"


def test_actions_validate_themselves() -> None:
    """An Action cannot be built with the wrong fields for its kind."""
    with pytest.raises(ValueError):
        Action(ActionKind.GIVE)
    with pytest.raises(ValueError):
        Action(ActionKind.KEEP, to_seat=1)
    with pytest.raises(ValueError):
        Action(ActionKind.OPENING)
    with pytest.raises(ValueError):
        Action(ActionKind.KEEP, secret=card("pink-2"))
    with pytest.raises(TypeError):
        Action(ActionKind.GIVE, to_seat=True)
    with pytest.raises(TypeError):
        Action(ActionKind.OPENING, secret="pink-2")  # type: ignore[arg-type]


# -- legality as a whole -------------------------------------------------------------


def candidates(players: int) -> list[Action]:
    """Every action worth proposing in a match of ``players``, legal or not."""
    actions = [KEEP, UP, SECRET, *(give(seat) for seat in range(-1, players + 1))]
    return actions + [Action.opening(c) for c in all_cards()]


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_refusal_agrees_with_legal_actions(players: int) -> None:
    """At every step of random games, exactly the listed legal actions are accepted."""
    rng = random.Random(players)
    match = Match.new(players, seed=players)
    proposals = candidates(players)
    while True:
        for seat in range(players):
            legal = set(match.legal_actions(seat))
            accepted = {a for a in proposals if match.refusal(seat, a) is None}
            assert accepted == legal, (seat, match.phase)
            assert (seat in match.to_act) == bool(legal)
        if match.is_over:
            break
        seat = match.to_act[0]
        match.apply(seat, rng.choice(match.legal_actions(seat)))


def test_refused_action_then_legal_one_is_accepted() -> None:
    """A refusal does not spoil the turn: the same seat's legal action still plays."""
    match = turn_match()
    match.apply(0, KEEP)
    with pytest.raises(ActionAlreadyUsed):
        match.apply(0, KEEP)
    (event, *_) = play(match, [UP])
    assert event == CardAddedFaceUp(0, card("blue-3"), (BLUE, PURPLE))


def test_opening_refusal_leaves_other_seats_free_to_choose() -> None:
    """After a refused opening every seat still has its opening choice."""
    match = opening_match()
    with pytest.raises(IllegalAction):
        match.apply(0, Action.opening(Card.parse("blue-4")))
    assert match.to_act == (0, 1, 2)
    open_all(match, "orange-3 orange-4 purple-4")
    assert observe(match, None).to_act == (0,)
