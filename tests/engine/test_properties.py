"""Property tests of the engine over random legal play for 2 to 6 players.

Hypothesis draws the player count, the seed and every choice of the match
(which undecided seat makes its opening choice next, and which legal action
each seat takes), so a failure shrinks to a short, replayable match. Tests
may read the match's internal attributes to check its invariants; players
never can (observation.py is their one door, R24–R26).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    Action,
    ActionAlreadyUsed,
    ActionKind,
    Card,
    Event,
    GameOver,
    IllegalAction,
    Match,
    NotYourTurn,
    Observation,
    Phase,
    Ruleset,
    UnknownSeat,
    action_points,
    all_cards,
    observe,
    project_event,
)
from engine.events import CardsDealt, TurnStarted
from engine.record import MatchRecord

from ..helpers_deals import (
    Deal,
    before_reveal,
    hidden_places,
    secret_place,
    snapshot,
    swap_hidden,
)

#: R4: every seat plays the same number of turns.
TURNS_PER_SEAT = {2: 12, 3: 10, 4: 7, 5: 7, 6: 6}

PROPERTY = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    report_multiple_bugs=False,
)

player_counts = st.integers(min_value=2, max_value=6)
seeds = st.integers(min_value=0, max_value=2**32 - 1)

Step = Callable[[int, Action, list[Event]], None]


# -- helpers --------------------------------------------------------------------------


def new_match(data: st.DataObject, players: int, seed: int, *, chance: bool | None = None) -> Match:
    """A seeded match; the first seat is the host's pick or chance's (R12)."""
    if chance is None:
        chance = data.draw(st.booleans(), label="first seat by chance")
    first = None if chance else data.draw(st.integers(0, players - 1), label="first seat")
    return Match.new(players, seed, first_seat=first)


def choose(data: st.DataObject, match: Match) -> tuple[int, Action]:
    """A seat that must act and one of its legal actions, both drawn by hypothesis."""
    if match.phase is Phase.OPENING:  # R11: the seats choose in any order
        seat = data.draw(st.sampled_from(match.to_act), label="seat")
    else:
        seat = match.to_act[0]
    legal = match.legal_actions(seat)
    return seat, legal[data.draw(st.integers(0, len(legal) - 1), label="action index")]


def play(
    data: st.DataObject, match: Match, on_step: Step | None = None, *, steps: int | None = None
) -> list[tuple[int, Action]]:
    """Play random legal moves to the end (or for ``steps`` moves); return them."""
    moves: list[tuple[int, Action]] = []
    while not match.is_over and (steps is None or len(moves) < steps):
        seat, action = choose(data, match)
        events = match.apply(seat, action)
        moves.append((seat, action))
        if on_step is not None:
            on_step(seat, action, events)
    return moves


def viewers(match: Match) -> list[int | None]:
    """Every seat, then the spectator."""
    return [*range(match.players), None]


def observations(match: Match) -> list[Observation]:
    """What every seat and the spectator may know now."""
    return [observe(match, viewer) for viewer in viewers(match)]


def full_deck(match: Match) -> Counter[Card]:
    """The multiset of every card of the match (R3)."""
    copies = match.ruleset.copies_for(match.players)
    return Counter({card: copies for card in all_cards()})


def card_places(match: Match) -> Counter[Card]:
    """Every card where it is now: deck, removed, festival, secret festival,
    opening hands not yet placed, the drawn card and the bouquets."""
    places: Counter[Card] = Counter()
    places.update(match._deck)
    places.update(match._removed)
    places.update(match._festival)
    places.update(entry.card for entry in match._secret)
    for bouquet in match._bouquets:
        places.update(bouquet)
    if match._drawn is not None:
        places[match._drawn] += 1
    if match.phase is Phase.OPENING:  # R11: chosen hands wait for everyone's choice
        for event in match.setup_events:
            if isinstance(event, CardsDealt) and event.cards is not None:
                places.update(event.cards)
    else:
        assert all(hand is None for hand in match._hands)
    return places


# -- R3, R4: every card in exactly one place -------------------------------------------


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r3_every_card_is_always_in_exactly_one_place(
    players: int, seed: int, data: st.DataObject
) -> None:
    """Deck, removed, festival, secret, unplaced hands, drawn card and bouquets
    always hold exactly the full deck, card for card (R3–R4, R10–R11, R19)."""
    match = new_match(data, players, seed)
    expected = full_deck(match)
    assert sum(expected.values()) == match.ruleset.deck_size(players)
    assert card_places(match) == expected
    assert len(match._removed) == match.ruleset.removed[players]

    def check(seat: int, action: Action, events: list[Event]) -> None:
        assert card_places(match) == expected, f"after seat {seat} played {action}"

    play(data, match, check)
    assert match._deck == [] and match._drawn is None


# -- R4, R13, R18: turns --------------------------------------------------------------


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r4_every_seat_plays_the_same_number_of_turns(
    players: int, seed: int, data: st.DataObject
) -> None:
    """Each seat starts 12/10/7/7/6 turns for 2/3/4/5/6 players, in seat order (R4, R5, R18)."""
    match = new_match(data, players, seed)
    started: list[TurnStarted] = []

    def collect(seat: int, action: Action, events: list[Event]) -> None:
        started.extend(event for event in events if isinstance(event, TurnStarted))

    play(data, match, collect)
    per_seat = Counter(event.seat for event in started)
    assert per_seat == {seat: TURNS_PER_SEAT[players] for seat in range(players)}
    assert [event.turn for event in started] == list(range(1, len(started) + 1))
    assert [event.seat for event in started] == [
        (match.first_seat + i) % players for i in range(len(started))
    ]


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r13_r16_each_turn_uses_two_different_actions(
    players: int, seed: int, data: st.DataObject
) -> None:
    """Every turn resolves two cards with two different actions; both forms of
    ADD are the one action, so the second card is offered neither (R13, R16)."""
    match = new_match(data, players, seed)
    turns: dict[int, list[tuple[int, Action]]] = {}
    while not match.is_over:
        seat, action = choose(data, match)
        turn = observe(match, None).turn
        match.apply(seat, action)
        if action.kind is ActionKind.OPENING:
            continue
        turns.setdefault(turn, []).append((seat, action))
        after = observe(match, seat)
        if after.turn == turn and after.phase is not Phase.OVER:  # the same turn's second card
            assert after.used is action.turn_action
            assert after.legal_actions
            assert all(a.turn_action is not action.turn_action for a in after.legal_actions)
    assert sorted(turns) == list(range(1, players * TURNS_PER_SEAT[players] + 1))
    for turn, moves in turns.items():
        assert len(moves) == 2, f"turn {turn}: {moves}"
        (seat_a, first), (seat_b, second) = moves
        assert seat_a == seat_b
        assert first.turn_action is not second.turn_action, f"turn {turn}: {first}, {second}"


# -- R14, R15, R17: scores ------------------------------------------------------------


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r17_scores_never_fall(players: int, seed: int, data: st.DataObject) -> None:
    """Keeping and giving points, as every viewer sees them, never go down (R14–R17)."""
    match = new_match(data, players, seed)
    before = [[(v.keeping, v.giving) for v in obs.seats] for obs in observations(match)]
    assert all(points == (0, 0) for row in before for points in row)

    def check(seat: int, action: Action, events: list[Event]) -> None:
        nonlocal before
        now = [[(v.keeping, v.giving) for v in obs.seats] for obs in observations(match)]
        for old_row, new_row in zip(before, now, strict=True):
            for (keep0, give0), (keep1, give1) in zip(old_row, new_row, strict=True):
                assert keep1 >= keep0 and give1 >= give0, f"after seat {seat} played {action}"
        before = now

    play(data, match, check)
    assert match.scoring is not None
    for score, view in zip(match.scoring.players, observe(match, None).seats, strict=True):
        assert (score.keeping, score.giving) == (view.keeping, view.giving)


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r14_r17_action_points_are_the_score_each_legal_action_causes(
    players: int, seed: int, data: st.DataObject
) -> None:
    """At every step, for every legal action, :func:`action_points` from the acting
    seat's observation is exactly the rise of that seat's score when the action is
    applied, and no other seat's score moves (R14–R17; the receiver of GIVE scores
    nothing, R15; the opening and ADD score nothing, R11, R16)."""
    match = new_match(data, players, seed)
    priced = Counter[ActionKind]()

    def scores(m: Match) -> list[int]:
        return [view.score for view in observe(m, None).seats]

    def check_prices() -> None:
        if match.is_over:
            return
        before = scores(match)
        for seat in match.to_act:
            view = observe(match, seat)
            for action in view.legal_actions:
                points = action_points(view.ruleset, view.ranking, view.drawn, action)
                after = match.clone()
                after.apply(seat, action)
                expected = before.copy()
                expected[seat] += points
                assert scores(after) == expected, f"seat {seat} {action} priced {points}"
                priced[action.kind] += points > 0

    check_prices()
    play(data, match, lambda *_: check_prices())
    assert priced[ActionKind.GIVE] > 0  # R15: giving always scores the card's value
    assert priced[ActionKind.ADD_FACE_UP] == priced[ActionKind.ADD_SECRET] == 0
    assert priced[ActionKind.OPENING] == 0


# -- replay and clone -----------------------------------------------------------------


def check_replay(match: Match, events: list[Event]) -> None:
    """The record of ``match`` replays to the same state and the same events."""
    record = MatchRecord.of(match)
    assert MatchRecord.from_data(record.to_data()) == record
    replayed, replay_events = record.replay_events()
    assert replay_events == events
    assert snapshot(replayed) == snapshot(match)
    assert observations(replayed) == observations(match)
    assert replayed.scoring == match.scoring


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_record_replays_to_the_same_state_and_events(
    players: int, seed: int, data: st.DataObject
) -> None:
    """MatchRecord.of(match) replays, event for event, to the same final state
    (the host picked the first seat, R12)."""
    match = new_match(data, players, seed, chance=False)
    events = list(match.setup_events)
    play(data, match, lambda seat, action, new: events.extend(new))
    check_replay(match, events)


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r12_record_replays_when_chance_picked_the_first_seat(
    players: int, seed: int, data: st.DataObject
) -> None:
    """MatchRecord.of(match) replays to the same state and events when chance
    picked the first seat (R12), as it does by default."""
    match = new_match(data, players, seed, chance=True)
    events = list(match.setup_events)
    play(data, match, lambda seat, action, new: events.extend(new))
    check_replay(match, events)


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_clone_is_independent_and_plays_identically(
    players: int, seed: int, data: st.DataObject
) -> None:
    """Playing a clone to the end leaves the original untouched, and the
    original then plays the same moves to the same events and state."""
    match = new_match(data, players, seed)
    play(data, match, steps=data.draw(st.integers(0, 90), label="moves before cloning"))
    original = snapshot(match)
    original_views = observations(match)
    clone = match.clone()
    assert snapshot(clone) == original
    clone_events: list[list[Event]] = []
    moves = play(data, clone, lambda seat, action, events: clone_events.append(events))
    assert snapshot(match) == original
    assert observations(match) == original_views
    finished = snapshot(clone)
    for (seat, action), events in zip(moves, clone_events, strict=True):
        assert match.apply(seat, action) == events
    assert snapshot(match) == finished
    assert snapshot(clone) == finished  # and the clone did not move with the original


# -- R24–R26: no peeking ----------------------------------------------------------------


def check_no_peeking(data: st.DataObject, players: int, seed: int, viewer: int | None) -> None:
    """Two matches that differ only in cards hidden from ``viewer`` look the same to it."""
    first = data.draw(st.integers(0, players - 1), label="first seat")
    deal = Deal.of(Match.new(players, seed, first_seat=first))
    reveal_seed = data.draw(seeds, label="reveal seed")
    base = deal.match(reveal_seed)
    moves = play(data, base)
    places = hidden_places(deal, moves, viewer)
    permutation = data.draw(st.permutations(range(len(places))), label="permutation")
    other_deal = swap_hidden(deal, places, permutation)
    one, two = deal.match(reveal_seed), other_deal.match(reveal_seed)
    assert snapshot(one) != snapshot(two)
    setup = [[project_event(e, viewer) for e in m.setup_events] for m in (one, two)]
    assert setup[0] == setup[1]
    assert observe(one, viewer) == observe(two, viewer)
    for index, (seat, action) in enumerate(moves):
        if action.kind is ActionKind.OPENING:  # the same choice: the card at the same place
            place = secret_place(deal, seat, action)
            other_action = Action.opening(other_deal.cards[place])
        else:
            other_action = action
        last = index == len(moves) - 1
        if last:  # the true states differ where the viewer cannot look
            hidden = (one._removed, [s.card for s in one._secret])
            assert hidden != (two._removed, [s.card for s in two._secret])
        seen = [
            [project_event(e, viewer) for e in before_reveal(m.apply(seat, a))]
            for m, a in ((one, action), (two, other_action))
        ]
        assert seen[0] == seen[1], f"move {index}: seat {seat} {action}"
        if not last:
            assert observe(one, viewer) == observe(two, viewer), f"after move {index}"
    assert one.is_over and two.is_over


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r25_r26_a_seat_cannot_tell_apart_deals_that_differ_in_cards_hidden_from_it(
    players: int, seed: int, data: st.DataObject
) -> None:
    """Permuting the removed cards, other seats' face-down opening cards and the
    cards they draw and add face down changes nothing a seat observes or is
    told, up to the reveal (R24–R26)."""
    viewer = data.draw(st.integers(0, players - 1), label="viewer")
    check_no_peeking(data, players, seed, viewer)


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r25_r26_a_spectator_cannot_tell_apart_deals_that_differ_in_private_cards(
    players: int, seed: int, data: st.DataObject
) -> None:
    """Permuting the removed cards and every card any seat put face down changes
    nothing a spectator observes or is told, up to the reveal (R24–R26)."""
    check_no_peeking(data, players, seed, None)


def test_r25_r26_after_the_reveal_a_seat_cannot_tell_whose_secret_card_was_shown() -> None:
    """After the reveal (R19) a seat still cannot tell whether a shown card was
    its own or another seat's: that would tell it another seat's face-down card
    (R25, R26: which secret cards were not revealed is hidden from everyone)."""
    rules = Ruleset(reveal_size=1)
    pink3, blue2 = Card.of("pink", 3), Card.of("blue", 2)

    def world(other_secret: Card, unused: Card, seed: int) -> Match:
        # Seat 0 puts pink-3 face down; seat 1 puts other_secret face down.
        match = Match.from_deal(
            2,
            deck=[
                Card.of(c, v) for c, v in (("purple", 3), ("purple", 4), ("orange", 3), ("blue", 4))
            ],
            festival=[Card.of("orange", 4), Card.of("blue", 3)],
            hands=[[pink3, Card.of("orange", 2)], [other_secret, Card.of("purple", 2)]],
            removed=[unused],
            seed=seed,
            ruleset=rules,
        )
        match.apply(0, Action.opening(pink3))
        match.apply(1, Action.opening(other_secret))
        for seat in (0, 1):
            match.apply(seat, Action.keep())
            match.apply(seat, Action.give(1 - seat))
        assert match.is_over and match._revealed == [pink3]
        return match

    def shows(other_secret: Card, unused: Card, owner: int) -> Match:
        """A world whose reveal shows the pink-3 that ``owner`` put face down."""
        for seed in range(1000):
            match = world(other_secret, unused, seed)
            if match._secret[0].owner != owner:  # the other seat's card stayed hidden
                return match
        raise AssertionError("no seed reveals that card")  # pragma: no cover

    # Seat 1 also put a pink-3 face down, and the reveal showed seat 1's.
    both_pink = shows(pink3, blue2, owner=1)
    # Seat 1 put a blue-2 face down, and the reveal showed seat 0's pink-3.
    one_pink = shows(blue2, pink3, owner=0)
    assert [s.card for s in both_pink._secret] != [s.card for s in one_pink._secret]
    assert observe(both_pink, 0) == observe(one_pink, 0)


# -- illegal actions: raise, and change nothing ----------------------------------------------


def everything(match: Match) -> tuple[object, ...]:
    """The true state, every viewer's observation and the record."""
    return snapshot(match), observations(match), MatchRecord.of(match)


@st.composite
def illegal_proposals(draw: st.DrawFn, match: Match) -> tuple[Any, Any, type[IllegalAction]]:
    """A malformed proposal for the match as it stands, and the error it must raise."""
    players = match.players
    any_card = st.sampled_from(all_cards())
    turn_action = st.sampled_from(
        [Action.keep(), Action.add_face_up(), Action.add_secret()]
        + [Action.give(s) for s in range(players)]
    )
    bad_seat = st.sampled_from([-1, players, players + 1, 6, 99, True, False, None, "0", 0.0])
    choices: list[tuple[Any, Any, type[IllegalAction]]] = [
        (draw(bad_seat), draw(turn_action), UnknownSeat),
        (0, draw(st.sampled_from(["keep", None, 3, ActionKind.KEEP])), IllegalAction),
    ]
    if match.phase is Phase.OVER:
        seat = draw(st.integers(0, players - 1))
        action = draw(turn_action | any_card.map(Action.opening))
        choices.append((seat, action, GameOver))
    elif match.phase is Phase.OPENING:
        seat = draw(st.integers(0, players - 1))
        if match._hands[seat] is None:  # R11: the choice is made once; then it waits
            choices.append((seat, draw(any_card.map(Action.opening)), NotYourTurn))
        else:
            hand = match._hands[seat]
            assert hand is not None
            not_dealt = [card for card in all_cards() if card not in hand]
            choices.append((seat, Action.opening(draw(st.sampled_from(not_dealt))), IllegalAction))
            choices.append((seat, draw(turn_action), IllegalAction))  # the opening comes first
    else:
        active = match._active
        others = [s for s in range(players) if s != active]
        legal = match.legal_actions(active)
        choices.append((draw(st.sampled_from(others)), draw(st.sampled_from(legal)), NotYourTurn))
        choices.append((active, draw(any_card.map(Action.opening)), IllegalAction))
        out_of_range = st.sampled_from([-2, -1, players, players + 3, 6, 40])
        used = match._used
        if used is not None:  # R13, R16: both forms of ADD are the one action
            used_already = [
                a
                for a in (Action.keep(), Action.add_face_up(), Action.add_secret(), Action.give(0))
                if a.turn_action is used
            ]
            action = draw(st.sampled_from(used_already))
            if action.kind is ActionKind.GIVE:
                action = Action.give(draw(st.sampled_from(others)))
            choices.append((active, action, ActionAlreadyUsed))
        if used is not Action.give(0).turn_action:
            choices.append((active, Action.give(active), IllegalAction))  # R15: to another
            choices.append((active, Action.give(draw(out_of_range)), UnknownSeat))
    proposal: tuple[Any, Any, type[IllegalAction]] = draw(st.sampled_from(choices))
    return proposal


def check_refused(match: Match, seat: Any, action: Any, expected: type[IllegalAction]) -> None:
    """``apply`` raises exactly ``expected`` and leaves everything as it was."""
    before = everything(match)
    with pytest.raises(IllegalAction) as caught:
        match.apply(seat, action)
    assert type(caught.value) is expected, f"seat {seat!r}, {action!r}: {caught.value!r}"
    assert str(caught.value)
    assert everything(match) == before


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_illegal_actions_raise_and_change_nothing(
    players: int, seed: int, data: st.DataObject
) -> None:
    """Wrong seat, used action, give to oneself or outside the match, an opening
    during a turn, a turn action during the opening, anything after the end:
    apply() raises an IllegalAction and the match, every view and the record stay
    as they were (R11, R13, R15, R16, R18)."""
    match = new_match(data, players, seed)

    def probe() -> None:
        for _ in range(data.draw(st.integers(0, 2), label="probes")):
            check_refused(match, *data.draw(illegal_proposals(match), label="proposal"))

    probe()
    play(data, match, lambda seat, action, events: probe())
    for _ in range(3):
        check_refused(match, *data.draw(illegal_proposals(match), label="after the end"))


# -- R3: equal cards are the same card -------------------------------------------------------


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_r3_an_action_equal_to_a_legal_one_plays_the_same(
    players: int, seed: int, data: st.DataObject
) -> None:
    """Cards with the same colour and value are identical (R3): a copied action
    (as pickling or a decoder may build it) plays exactly like the legal one."""
    match = new_match(data, players, seed)
    twin = match.clone()

    def mirror(seat: int, action: Action, events: list[Event]) -> None:
        copied = copy.deepcopy(action)
        assert copied == action
        assert twin.apply(seat, copied) == events, f"seat {seat} played {action}"
        assert card_places(twin) == full_deck(twin)

    play(data, match, mirror)
    assert snapshot(twin) == snapshot(match)


# -- the quiet path: the same rules without the events ------------------------------------------


@PROPERTY
@given(players=player_counts, seed=seeds, data=st.data())
def test_apply_quiet_reaches_the_same_states_as_apply(
    players: int, seed: int, data: st.DataObject
) -> None:
    """apply_quiet, which builds no events, leaves a twin of the match in exactly
    the state apply leaves it in, step by step, random generator and final scoring
    included; and it refuses what apply refuses, with the same error, changing
    nothing (one refusal() judges both)."""
    match = new_match(data, players, seed)
    quiet = match.clone()

    def probe() -> None:
        if data.draw(st.booleans(), label="probe"):
            seat, action, expected = data.draw(illegal_proposals(match), label="proposal")
            before = snapshot(quiet)
            with pytest.raises(IllegalAction) as caught:
                quiet.apply_quiet(seat, action)
            assert type(caught.value) is expected
            assert snapshot(quiet) == before

    def step(seat: int, action: Action, events: list[Event]) -> None:
        quiet.apply_quiet(seat, action)
        assert snapshot(quiet) == snapshot(match), f"after seat {seat} played {action}"
        probe()

    probe()
    play(data, match, step)
    assert quiet.is_over and quiet.scoring == match.scoring
    assert MatchRecord.of(quiet) == MatchRecord.of(match)
