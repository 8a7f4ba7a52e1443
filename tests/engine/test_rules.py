"""One or more tests per rule of docs/RULES.md (R1–R23, R30), named after it.

Most scenarios are hand-worked from a deal the test chooses
(:meth:`Match.from_deal`, deck listed first drawn first); the worked examples
of R8 and R21 are played exactly as RULES.md states them.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from engine import (
    COLOURS,
    DEFAULT_RULESET,
    VALUES,
    ActionAlreadyUsed,
    Card,
    Colour,
    Event,
    Match,
    Phase,
    Ruleset,
    RulesetError,
    TieBreak,
    all_cards,
    observe,
    project_event,
)
from engine.events import (
    CardAddedFaceUp,
    CardAddedSecret,
    CardDrawn,
    CardGiven,
    CardKept,
    CardsDealt,
    FestivalStarted,
    MatchEnded,
    OpeningChosen,
    OpeningRevealed,
    SecretRevealed,
    TurnStarted,
)
from engine.scoring import FinalScoring, final_scoring

from .helpers import KEEP, SECRET, UP, card, cards, deal, give, open_all, play, play_random

PURPLE, BLUE, PINK, ORANGE = Colour.PURPLE, Colour.BLUE, Colour.PINK, Colour.ORANGE
TOTAL_CARDS = {2: 72, 3: 72, 4: 72, 5: 96, 6: 96}


def ranking(match: Match) -> tuple[Colour, ...]:
    """The public ranking, 1st first."""
    return observe(match, None).ranking


def totals(match: Match) -> dict[Colour, int]:
    """The public festival totals (R6)."""
    return dict(observe(match, None).totals)


def majority_points(scoring: FinalScoring, colour: Colour) -> dict[int, int]:
    """Seat -> majority points scored for ``colour`` (only seats that scored)."""
    for result in scoring.majorities:
        if result.colour is colour:
            return {place.seat: place.points for place in result.places}
    return {}


def score(
    bouquets: Sequence[str],
    order: Sequence[Colour],
    keeping: Sequence[int] | None = None,
    giving: Sequence[int] | None = None,
    ruleset: Ruleset = DEFAULT_RULESET,
) -> FinalScoring:
    """:func:`final_scoring` with bouquets spelt out and no points before the end."""
    zero = [0] * len(bouquets)
    return final_scoring(
        ruleset,
        order,
        [cards(bouquet) for bouquet in bouquets],
        keeping or zero,
        giving or zero,
    )


def scored(match: Match) -> FinalScoring:
    """The final scoring of a match that must be over."""
    assert match.is_over and match.scoring is not None
    return match.scoring


def reference_rerank(
    order: Sequence[Colour], new_totals: Mapping[Colour, int], risen: Colour
) -> tuple[Colour, ...]:
    """R8 stated declaratively: order by total, highest first; the colour that
    just rose goes above its ties; the others keep their relative order."""
    present = [*order] if risen in order else [*order, risen]
    return tuple(sorted(present, key=lambda c: (-new_totals[c], c is not risen)))


# -- Components (R1–R5) ------------------------------------------------------------


def test_r1_four_colours() -> None:
    """There are exactly four colours: purple, blue, pink and orange."""
    assert [c.value for c in COLOURS] == ["purple", "blue", "pink", "orange"]
    with pytest.raises(ValueError):
        Colour("red")


def test_r2_values_are_two_three_four() -> None:
    """Every card has a value of 2, 3 or 4; any other value is refused."""
    assert VALUES == (2, 3, 4)
    assert {c.value for c in all_cards()} == {2, 3, 4}
    for bad in (1, 5, 0):
        with pytest.raises(ValueError):
            Card.of(PINK, bad)
    with pytest.raises(ValueError):
        Card.parse("pink-5")


def test_r3_deck_has_72_or_96_cards() -> None:
    """72 cards (6 of each pair) for 2–4 players, 96 (8 of each) for 5–6."""
    for players, total in TOTAL_CARDS.items():
        assert DEFAULT_RULESET.deck_size(players) == total
        assert DEFAULT_RULESET.copies_for(players) == total // 12
    assert len(all_cards()) == 12


def test_r3_same_colour_and_value_are_identical() -> None:
    """Cards with the same colour and value are one and the same card."""
    assert Card.of(PINK, 3) is Card.parse("pink-3") is Card.of("pink", 3)
    assert str(Card.of(ORANGE, 4)) == "orange-4"


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_r3_every_card_is_accounted_for(players: int) -> None:
    """Through a whole game no card appears or vanishes, and no pair exceeds its copies."""
    match = Match.new(players, seed=players * 7)
    view = observe(match, None)
    assert (
        view.deck_count + view.removed_count + len(view.festival) + 2 * players
        == (TOTAL_CARDS[players])
    )
    play_random(match, random.Random(players))
    view = observe(match, None)
    placed = [c for seat in view.seats for c in seat.bouquet] + list(view.festival)
    assert len(placed) + view.secret_count + view.removed_count == TOTAL_CARDS[players]
    copies = DEFAULT_RULESET.copies_for(players)
    assert max(Counter(placed).values()) <= copies


def test_r3_from_deal_refuses_more_copies_than_the_deck_has() -> None:
    """A chosen deal cannot hold seven copies of a pair in a 4-player game."""
    with pytest.raises(RulesetError):
        deal(4, deck="pink-3 " * 7, festival="blue-2 orange-2", hands=["blue-3 blue-4"] * 4)


@pytest.mark.parametrize(
    ("players", "removed", "turns"),
    [(2, 18, 12), (3, 4, 10), (4, 6, 7), (5, 14, 7), (6, 10, 6)],
)
def test_r4_removed_cards_give_equal_turns(players: int, removed: int, turns: int) -> None:
    """R4's removed counts leave every player the same number of turns."""
    match = Match.new(players, seed=100 + players)
    view = observe(match, None)
    assert view.removed_count == removed
    assert view.deck_count == TOTAL_CARDS[players] - removed - 2 - 2 * players
    events = play_random(match, random.Random(players))
    starts = [e for e in events if isinstance(e, TurnStarted)]
    assert Counter(e.seat for e in starts) == dict.fromkeys(range(players), turns)
    # the deck holds an even number of cards when each turn starts (R18)
    for before, after in itertools.pairwise(events):
        if isinstance(before, TurnStarted):
            assert isinstance(after, CardDrawn) and (after.deck_count + 1) % 2 == 0
    assert observe(match, None).removed_count == removed


def test_r5_two_to_six_players_in_seat_order() -> None:
    """2 to 6 players may play; turns go round in seat order from the first seat."""
    for bad in (1, 7):
        with pytest.raises(RulesetError):
            Match.new(bad, seed=0)
    match = Match.new(4, seed=3, first_seat=2)
    events: list[Event] = []
    for seat in range(4):
        events += match.apply(seat, match.legal_actions(seat)[0])
    events += play_random(match, random.Random(1), steps=16)
    seats = [e.seat for e in events if isinstance(e, TurnStarted)]
    assert seats == [2, 3, 0, 1, 2, 3, 0, 1, 2]


# -- The festival and its ranking (R6–R9) ------------------------------------------


def test_r6_totals_are_sums_of_face_up_values() -> None:
    """Each colour's total is the sum of its festival cards; 0 without any."""
    match = deal(2, deck="blue-4 pink-2", festival="blue-3 purple-2", hands=["pink-3 pink-4"] * 2)
    assert totals(match) == {PURPLE: 2, BLUE: 3, PINK: 0, ORANGE: 0}
    open_all(match, "pink-3 pink-3")
    play(match, [UP])
    assert totals(match) == {PURPLE: 2, BLUE: 7, PINK: 0, ORANGE: 0}


def test_r7_unranked_colour_scores_as_fourth_for_keep_and_give() -> None:
    """An unranked colour keeps for 2 points and gives for +0 plus its value."""
    match = deal(
        3,
        deck="orange-2 pink-4",
        festival="blue-3 purple-2",
        hands=["blue-2 blue-3", "blue-2 blue-4", "purple-3 purple-4"],
    )
    open_all(match, "blue-2 blue-2 purple-3")
    assert observe(match, 0).rank_of(ORANGE) is None
    assert match.rank_of(PINK) is None
    kept = play(match, [KEEP])[0]
    given = play(match, [give(2)])[0]
    assert kept == CardKept(0, card("orange-2"), 2)
    assert given == CardGiven(0, 2, card("pink-4"), 4)


def test_r7_ranking_is_a_strict_order() -> None:
    """Ranked colours hold distinct places even with equal totals."""
    match = deal(2, deck="pink-2 blue-2", festival="blue-2 purple-2", hands=["pink-3 pink-4"] * 2)
    open_all(match, "pink-3 pink-3")
    play(match, [UP])
    assert totals(match) == {PURPLE: 2, BLUE: 2, PINK: 2, ORANGE: 0}
    assert ranking(match) == (PINK, BLUE, PURPLE)
    assert [match.rank_of(c) for c in COLOURS] == [2, 1, 0, None]


def test_r8_worked_example_orange_takes_second() -> None:
    """RULES.md R8: purple 2 in 2nd, pink unranked; an orange 2 takes 2nd, purple drops to 3rd."""
    match = deal(2, deck="orange-2 blue-2", festival="blue-3 purple-2", hands=["pink-2 pink-3"] * 2)
    open_all(match, "pink-2 pink-2")
    assert ranking(match) == (BLUE, PURPLE)
    assert match.rank_of(PURPLE) == 1 and totals(match)[PINK] == 0
    events = play(match, [UP])
    assert events[0] == CardAddedFaceUp(0, card("orange-2"), (BLUE, ORANGE, PURPLE))
    assert match.rank_of(ORANGE) == 1
    assert match.rank_of(PURPLE) == 2
    assert match.rank_of(PINK) is None


def test_r8_tie_goes_above_and_others_keep_their_order() -> None:
    """A colour rising to tie goes above; a colour passing several keeps the rest in order."""
    match = deal(
        2,
        deck="orange-2 blue-2 purple-2 blue-2 orange-4 blue-2",
        festival="pink-4 blue-3",
        hands=["pink-2 pink-3"] * 2,
    )
    open_all(match, "pink-2 pink-2")
    events = play(match, [UP, KEEP, UP, KEEP, UP, KEEP])
    rankings = [e.ranking for e in events if isinstance(e, CardAddedFaceUp)]
    assert rankings == [
        (PINK, BLUE, ORANGE),  # orange 2 enters below blue 3
        (PINK, BLUE, PURPLE, ORANGE),  # purple 2 ties orange 2: goes above it
        (ORANGE, PINK, BLUE, PURPLE),  # orange 6 passes pink 4 and blue 3
    ]


def test_r8_tie_with_first_takes_first() -> None:
    """A colour whose total rises to equal 1st's takes 1st."""
    match = deal(2, deck="purple-2 blue-2", festival="blue-4 purple-2", hands=["pink-2 pink-3"] * 2)
    open_all(match, "pink-2 pink-2")
    assert ranking(match) == (BLUE, PURPLE)
    play(match, [UP])
    assert totals(match)[PURPLE] == totals(match)[BLUE] == 4
    assert ranking(match) == (PURPLE, BLUE)


@pytest.mark.parametrize("players", [2, 4, 6])
def test_r8_every_face_up_card_reranks_by_the_rule(players: int) -> None:
    """In random games every face-up card (and every reveal) re-ranks as R8 states."""
    match = Match.new(players, seed=players)
    start = match.setup_events[0]
    assert isinstance(start, FestivalStarted)
    order: tuple[Colour, ...] = start.ranking
    running = {c: sum(x.value for x in start.cards if x.colour is c) for c in COLOURS}
    for event in play_random(match, random.Random(players)):
        if isinstance(event, CardAddedFaceUp | SecretRevealed):
            running[event.card.colour] += event.card.value
            order = reference_rerank(order, running, event.card.colour)
            assert event.ranking == order
    assert totals(match) == running


def test_r9_secret_festival_size_public_cards_private() -> None:
    """A face-down card grows the public count, adds to no total, and only its owner sees it."""
    match = deal(
        3,
        deck="pink-4 blue-2",
        festival="blue-3 purple-2",
        hands=["orange-2 orange-3", "orange-2 orange-4", "purple-3 purple-4"],
    )
    open_all(match, "orange-2 orange-2 purple-3")
    before = totals(match)
    assert observe(match, 1).secret_count == 3
    event = play(match, [SECRET])[0]
    assert event == CardAddedSecret(0, card("pink-4"), 4)
    assert totals(match) == before
    assert project_event(event, 1) == CardAddedSecret(0, None, 4)
    assert project_event(event, None) == CardAddedSecret(0, None, 4)
    assert observe(match, 0).my_secret == (card("orange-2"), card("pink-4"))
    assert observe(match, 1).my_secret == (card("orange-2"),)
    for seat in (1, 2, None):
        view = observe(match, seat)
        assert view.secret_count == 4
        assert card("pink-4") not in view.my_secret


# -- Setup (R10–R12) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("festival", "order"),
    [
        ("pink-2 blue-3", (BLUE, PINK)),  # the higher value ranks 1st
        ("blue-4 pink-2", (BLUE, PINK)),
        ("pink-3 blue-3", (PINK, BLUE)),  # equal value: the first turned over
        ("blue-3 pink-3", (BLUE, PINK)),
    ],
)
def test_r10_starting_festival_ranks_higher_then_first_turned(
    festival: str, order: tuple[Colour, ...]
) -> None:
    """The higher card ranks 1st; on equal value the first turned over does."""
    match = deal(2, deck="orange-2", festival=festival, hands=["purple-2 purple-3"] * 2)
    start = match.setup_events[0]
    assert isinstance(start, FestivalStarted)
    assert start.ranking == order == ranking(match)
    others = [c for c in COLOURS if c not in order]
    assert all(match.rank_of(c) is None for c in others)
    assert {totals(match)[c] for c in others} == {0}


def test_r10_starting_festival_needs_two_colours() -> None:
    """Two cards of one colour cannot start the festival."""
    with pytest.raises(RulesetError):
        deal(2, deck="orange-2", festival="pink-2 pink-3", hands=["purple-2 purple-3"] * 2)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_r10_seeded_setup_lays_two_colours(players: int) -> None:
    """Every seeded setup lays two colours, higher (or equal) value 1st, the rest unranked."""
    for seed in range(30):
        match = Match.new(players, seed=seed)
        view = observe(match, None)
        first, second = view.festival
        assert first.colour is not second.colour
        assert first.value >= second.value
        assert view.ranking == (first.colour, second.colour)
        assert sum(t for _, t in view.totals) == first.value + second.value
        # the cards turned over on the way went back into the deck
        assert view.deck_count == TOTAL_CARDS[players] - view.removed_count - 2 - 2 * players


def test_r11_opening_choices_hidden_until_all_have_chosen() -> None:
    """Dealt cards and choices stay private until every seat has chosen; then bouquets show."""
    match = deal(
        3,
        deck="blue-2 blue-3",
        festival="blue-4 purple-2",
        hands=["pink-2 orange-3", "pink-3 orange-4", "purple-3 purple-4"],
    )
    dealt = match.setup_events[1]
    assert dealt == CardsDealt(0, (card("pink-2"), card("orange-3")))
    assert project_event(dealt, 1) == CardsDealt(0, None)
    assert observe(match, 0).hand == (card("pink-2"), card("orange-3"))
    assert observe(match, 1).hand == (card("pink-3"), card("orange-4"))
    assert match.to_act == (0, 1, 2)

    # seat 2 chooses first: the others learn only that it has chosen
    chosen = match.apply(2, match.legal_actions(2)[0])
    assert chosen == [OpeningChosen(2, card("purple-4"), card("purple-3"))]
    for seat in (0, 1, None):
        assert project_event(chosen[0], seat) == OpeningChosen(2, None, None)
        view = observe(match, seat)
        assert view.seats[2].opening_done and view.seats[2].bouquet == ()
        assert view.secret_count == 0 and view.opening == ()
    assert observe(match, 2).opening == (card("purple-4"), card("purple-3"))
    assert observe(match, 2).hand == ()
    assert observe(match, None).to_act == (0, 1)

    match.apply(0, match.legal_actions(0)[1])  # orange-3 face down
    events = match.apply(1, match.legal_actions(1)[0])  # pink-3 face down
    revealed = events[1]
    assert revealed == OpeningRevealed((card("pink-2"), card("orange-4"), card("purple-4")), 3)
    assert project_event(revealed, None) == revealed
    for seat in (0, 1, 2, None):
        view = observe(match, seat)
        assert [s.bouquet for s in view.seats] == [
            (card("pink-2"),),
            (card("orange-4"),),
            (card("purple-4"),),
        ]
        assert all(s.keeping == s.giving == 0 for s in view.seats)  # no points for this
        assert view.secret_count == 3
    assert observe(match, 1).my_secret == (card("pink-3"),)
    assert observe(match, 0).my_secret == (card("orange-3"),)
    assert match.phase is Phase.TURN


def test_r11_identical_dealt_cards_give_one_choice() -> None:
    """A seat dealt two identical cards has a single opening choice."""
    match = deal(2, deck="blue-2", festival="blue-4 purple-2", hands=["pink-2 pink-2"] * 2)
    assert len(match.legal_actions(0)) == 1


def test_r12_host_picks_first_player() -> None:
    """The host's pick plays the first turn."""
    for first in range(4):
        match = Match.new(4, seed=9, first_seat=first)
        start = match.setup_events[0]
        assert isinstance(start, FestivalStarted) and start.first_seat == first
        events: list[Event] = []
        for seat in range(4):
            events += match.apply(seat, match.legal_actions(seat)[0])
        assert TurnStarted(first, 1) in events
        assert match.to_act == (first,)
    with pytest.raises(RulesetError):
        Match.new(4, seed=9, first_seat=4)


def test_r12_chance_picks_first_player_reproducibly() -> None:
    """Without a pick the seed decides the first player: any seat, the same for the same seed."""
    picks = {Match.new(4, seed=seed).first_seat for seed in range(60)}
    assert picks == {0, 1, 2, 3}
    assert all(Match.new(5, seed=s).first_seat == Match.new(5, seed=s).first_seat for s in range(9))


# -- A turn (R13–R17) ----------------------------------------------------------------


def r13_match() -> Match:
    """2 players; seat 0 to draw pink-2 then blue-3, seat 1 orange-2 then orange-3."""
    match = deal(
        2,
        deck="pink-2 blue-3 orange-2 orange-3",
        festival="purple-4 blue-2",
        hands=["pink-3 pink-4", "orange-4 blue-4"],
    )
    open_all(match, "pink-3 orange-4")
    return match


def test_r13_second_card_after_first_with_another_action() -> None:
    """The second card is drawn only once the first is placed, and cannot reuse its action."""
    match = r13_match()
    view = observe(match, 0)
    assert view.drawn == card("pink-2") and view.deck_count == 3 and view.used is None
    assert set(match.legal_actions(0)) == {KEEP, give(1), UP, SECRET}
    events = match.apply(0, KEEP)  # pink is unranked: 2 points
    assert events == [CardKept(0, card("pink-2"), 2), CardDrawn(0, card("blue-3"), 2)]
    view = observe(match, 1)
    assert view.used is not None and view.used.value == "keep"
    assert observe(match, 0).drawn == card("blue-3")
    assert set(match.legal_actions(0)) == {give(1), UP, SECRET}
    with pytest.raises(ActionAlreadyUsed):
        match.apply(0, KEEP)
    events = match.apply(0, UP)
    assert events[1:] == [TurnStarted(1, 2), CardDrawn(1, card("orange-2"), 1)]


def test_r13_give_then_keep_or_add() -> None:
    """After GIVE the second card may be kept or added, but not given."""
    match = r13_match()
    match.apply(0, give(1))
    assert set(match.legal_actions(0)) == {KEEP, UP, SECRET}
    with pytest.raises(ActionAlreadyUsed):
        match.apply(0, give(1))


def test_r13_r16_add_in_either_form_is_one_action() -> None:
    """After ADD face down neither ADD form is legal; after face up neither is either."""
    match = r13_match()
    play(match, [KEEP, UP])
    match.apply(1, SECRET)
    assert set(match.legal_actions(1)) == {KEEP, give(0)}
    for action in (UP, SECRET):
        with pytest.raises(ActionAlreadyUsed):
            match.apply(1, action)
    other = r13_match()
    other.apply(0, UP)
    assert set(other.legal_actions(0)) == {KEEP, give(1)}
    with pytest.raises(ActionAlreadyUsed):
        other.apply(0, SECRET)


def test_r14_keep_scores_bouquet_points_for_rank() -> None:
    """KEEP scores 0 at 1st or 2nd, 1 at 3rd, 2 at 4th or unranked, and fills the bouquet."""
    match = deal(
        2,
        deck="pink-2 purple-3 blue-2 orange-3 pink-3 purple-2 orange-2 orange-4 pink-4 blue-4",
        festival="purple-4 blue-3",
        hands=["pink-2 blue-2", "orange-2 purple-2"],
    )
    open_all(match, "blue-2 purple-2")
    events = play(match, [UP, KEEP, KEEP, SECRET, KEEP, SECRET, KEEP, UP, KEEP, SECRET])
    kept = [(e.card, e.points) for e in events if isinstance(e, CardKept)]
    assert kept == [
        (card("purple-3"), 0),  # purple 1st
        (card("blue-2"), 0),  # blue 2nd
        (card("pink-3"), 1),  # pink 3rd
        (card("orange-2"), 2),  # orange unranked
        (card("pink-4"), 2),  # pink 4th after orange 4 went above it
    ]
    view = observe(match, None)
    assert [s.keeping for s in view.seats] == [3, 2]
    assert view.seats[0].bouquet == tuple(cards("pink-2 purple-3 pink-3 pink-4"))
    assert view.seats[1].bouquet == tuple(cards("orange-2 blue-2 orange-2"))


def test_r15_give_scores_bonus_plus_value() -> None:
    """GIVE scores the giver +3/+2/+1/+0 by rank plus the value; the receiver scores nothing."""
    match = deal(
        3,
        deck="orange-3 pink-2 purple-2 orange-2 blue-4 purple-3 orange-4 pink-3 pink-4 blue-2",
        festival="purple-4 blue-3",
        hands=["purple-2 blue-2", "orange-2 purple-3", "pink-2 blue-3"],
    )
    open_all(match, "blue-2 purple-3 blue-3")
    events = play(
        match,
        [give(1), UP, give(2), UP, give(0), SECRET, give(2), KEEP, give(0), SECRET],
    )
    given = [e for e in events if isinstance(e, CardGiven)]
    assert given == [
        CardGiven(0, 1, card("orange-3"), 0 + 3),  # orange unranked
        CardGiven(1, 2, card("purple-2"), 3 + 2),  # purple 1st
        CardGiven(2, 0, card("blue-4"), 2 + 4),  # blue 2nd
        CardGiven(0, 2, card("orange-4"), 1 + 4),  # orange 3rd
        CardGiven(1, 0, card("pink-4"), 0 + 4),  # pink 4th
    ]
    view = observe(match, None)
    assert [(s.giving, s.keeping) for s in view.seats] == [(8, 2), (9, 0), (6, 0)]
    assert view.seats[0].bouquet == tuple(cards("purple-2 blue-4 pink-3 pink-4"))
    assert view.seats[1].bouquet == tuple(cards("orange-2 orange-3"))
    assert view.seats[2].bouquet == tuple(cards("pink-2 purple-2 orange-4"))


def test_r16_add_face_up_raises_total_and_reranks() -> None:
    """ADD face up puts the card in the festival, raises its total and re-ranks."""
    match = r13_match()
    events = match.apply(0, UP)
    assert events[0] == CardAddedFaceUp(0, card("pink-2"), (PURPLE, PINK, BLUE))
    assert totals(match)[PINK] == 2
    assert observe(match, 1).festival[-1] == card("pink-2")
    assert observe(match, 1).secret_count == 2


def test_r17_points_use_the_ranking_at_that_moment() -> None:
    """KEEP/GIVE score from the ranking as it stands, after an earlier ADD, and never change it."""
    match = deal(
        2,
        deck="pink-3 blue-2 blue-3 orange-2 orange-3 orange-4",
        festival="purple-4 blue-2",
        hands=["purple-2 purple-3"] * 2,
    )
    open_all(match, "purple-2 purple-2")
    play(match, [UP])  # pink 3 passes blue 2: blue drops to 3rd
    assert ranking(match) == (PURPLE, PINK, BLUE)
    before = observe(match, None)
    assert play(match, [KEEP])[0] == CardKept(0, card("blue-2"), 1)  # 3rd, not 2nd
    assert play(match, [give(0)])[0] == CardGiven(1, 0, card("blue-3"), 1 + 3)
    after = observe(match, None)
    assert (after.ranking, after.totals, after.festival) == (
        before.ranking,
        before.totals,
        before.festival,
    )


# -- End of the game (R18–R23) ------------------------------------------------------


def test_r18_game_ends_when_a_turn_ends_with_an_empty_deck() -> None:
    """After the last turn the game is over: nobody acts and the scoring is final."""
    match = r13_match()
    events = play(match, [KEEP, UP, SECRET])
    assert not match.is_over
    events = play(match, [give(0)])
    assert isinstance(events[-1], MatchEnded)
    assert match.is_over and match.phase is Phase.OVER
    assert match.to_act == ()
    assert all(match.legal_actions(seat) == () for seat in range(2))
    view = observe(match, 0)
    assert view.deck_count == 0 and view.drawn is None and view.scoring == match.scoring


def test_r18_single_last_card_ends_turn_and_game() -> None:
    """With an odd deck the last turn has one card, after which the game ends."""
    match = deal(
        2,
        deck="pink-2 blue-3 orange-2",
        festival="purple-4 blue-2",
        hands=["pink-3 pink-4"] * 2,
    )
    open_all(match, "pink-3 pink-3")
    play(match, [KEEP, UP])
    assert observe(match, 1).drawn == card("orange-2")
    events = play(match, [KEEP])
    assert not any(isinstance(e, CardDrawn | TurnStarted) for e in events)
    assert isinstance(events[-1], MatchEnded) and match.is_over


def test_r18_custom_ruleset_leaving_a_single_card() -> None:
    """A ruleset leaving one card to draw: the first turn ends after it, and the game too."""
    tiny = Ruleset(copies=1, removed={2: 5, 3: 3, 4: 1, 5: 14, 6: 10})
    match = Match.new(2, seed=4, ruleset=tiny)
    view = observe(match, None)
    assert (view.removed_count, view.deck_count) == (5, 1)
    for seat in range(2):
        match.apply(seat, match.legal_actions(seat)[0])
    (seat,) = match.to_act
    assert observe(match, seat).drawn is not None and observe(match, None).deck_count == 0
    events = match.apply(seat, KEEP)
    assert isinstance(events[-1], MatchEnded) and match.is_over


def test_r18_custom_ruleset_with_odd_deck_plays_every_card() -> None:
    """With 47 cards to draw every card is resolved and the last turn has one card."""
    odd = Ruleset(removed={**DEFAULT_RULESET.removed, 2: 19})
    match = Match.new(2, seed=5, ruleset=odd)
    assert observe(match, None).deck_count == 47
    events = play_random(match, random.Random(5))
    assert len(match.history) == 2 + 47
    assert len([e for e in events if isinstance(e, TurnStarted)]) == 24


def test_r19_reveal_of_fewer_than_five_reveals_all() -> None:
    """With four secret cards all four are revealed, one at a time, re-ranking after each."""
    match, events = r20_two_player_match()
    shown = [e for e in events if isinstance(e, SecretRevealed)]
    view = observe(match, 1)
    assert view.revealed == tuple(e.card for e in shown)
    assert Counter(view.revealed) == Counter(cards("pink-4 pink-4 orange-2 orange-3"))
    order: tuple[Colour, ...] = (PINK, BLUE)  # before the reveal: pink 4, blue 2
    running = {PURPLE: 0, BLUE: 2, PINK: 4, ORANGE: 0}
    for event in shown:
        running[event.card.colour] += event.card.value
        order = reference_rerank(order, running, event.card.colour)
        assert event.ranking == order
    assert view.secret_count == 0
    assert totals(match) == {PURPLE: 0, BLUE: 2, PINK: 12, ORANGE: 5}
    assert ranking(match) == (PINK, ORANGE, BLUE)


@pytest.mark.parametrize("seed", range(6))
def test_r19_reveal_draws_five_at_random_and_rest_stay_hidden(seed: int) -> None:
    """Seven secret cards: five random ones go face up (re-ranking each), two stay hidden."""
    match = deal(
        2,
        deck="pink-2 blue-2 pink-3 blue-3 orange-2 orange-3 pink-4 blue-4 orange-4 purple-2",
        festival="purple-4 blue-3",
        hands=["purple-3 purple-4", "blue-3 orange-3"],
        seed=seed,
    )
    open_all(match, "purple-3 orange-3")
    before = observe(match, None)
    events = play(match, [SECRET, KEEP] * 5)
    secret = Counter(cards("purple-3 orange-3 pink-2 pink-3 orange-2 pink-4 orange-4"))
    shown = [e for e in events if isinstance(e, SecretRevealed)]
    assert len(shown) == 5
    assert not Counter(e.card for e in shown) - secret  # a sub-multiset of the pile
    order = before.ranking
    running = dict(before.totals)
    for event in shown:
        running[event.card.colour] += event.card.value
        order = reference_rerank(order, running, event.card.colour)
        assert event.ranking == order
    view = observe(match, None)
    assert view.revealed == tuple(e.card for e in shown)
    assert view.secret_count == 2
    placed = observe(match, 0).my_secret + observe(match, 1).my_secret
    assert Counter(placed) == secret  # R25: each seat still knows all it put face down


def test_r19_reveal_is_random_but_seeded() -> None:
    """Different seeds can reveal different cards; the same seed reveals the same."""

    def revealed(seed: int) -> tuple[Card, ...]:
        match = deal(
            2,
            deck="pink-2 blue-2 pink-3 blue-3 orange-2 orange-3 pink-4 blue-4",
            festival="purple-4 blue-3",
            hands=["purple-3 purple-4", "blue-3 orange-3"],
            seed=seed,
        )
        open_all(match, "purple-3 orange-3")
        play(match, [SECRET, KEEP] * 4)
        return observe(match, None).revealed

    assert len({revealed(seed) for seed in range(12)}) > 1
    assert revealed(3) == revealed(3)


def r20_two_player_match() -> tuple[Match, list[Event]]:
    """2 players, pink 1st at the end; seat 0 holds two pinks, seat 1 one pink and a purple.

    Seat 0 keeps pink-2 and adds orange-2 face down; seat 1 keeps purple-3 and
    adds orange-3 face down. The four secret cards (pink-4, pink-4, orange-2,
    orange-3) are all revealed: pink 12, orange 5, blue 2, purple unranked.
    """
    match = deal(
        2,
        deck="pink-2 orange-2 purple-3 orange-3",
        festival="pink-4 blue-2",
        hands=["pink-3 pink-4", "pink-2 pink-4"],
    )
    open_all(match, "pink-4 pink-4")
    return match, play(match, [KEEP, SECRET, KEEP, SECRET])


def test_r20_two_players_score_only_the_first_majority() -> None:
    """With 2 players the runner-up in a colour scores nothing (with 3 it would score 2nd)."""
    scoring = scored(r20_two_player_match()[0])
    assert majority_points(scoring, PINK) == {0: 15}
    assert [(p.seat, p.keeping, p.majority_total, p.total) for p in scoring.players] == [
        (0, 0, 15, 15),
        (1, 2, 0, 2),
    ]
    assert scoring.winners == (0,) and scoring.decided_by is TieBreak.POINTS
    three = score(["pink-3 pink-2", "pink-2 purple-3", ""], (PINK, ORANGE, BLUE))
    assert majority_points(three, PINK) == {0: 15, 1: 10}


def test_r20_unranked_colour_at_the_end_scores_no_majority() -> None:
    """Purple, never in the festival, scores no majority though seat 1 holds a purple."""
    match, _ = r20_two_player_match()
    assert match.rank_of(PURPLE) is None
    scoring = scored(match)
    assert PURPLE not in [r.colour for r in scoring.majorities]
    assert dict(scoring.players[1].majorities)[PURPLE] == 0


def test_r20_majority_counts_cards_not_value() -> None:
    """Two 2s beat one 4: the most cards wins the majority."""
    scoring = score(["pink-2 pink-2", "pink-4", "pink-3"], (PINK, BLUE))
    assert majority_points(scoring, PINK) == {0: 15, 1: 10}


def test_r20_ranks_use_their_rows_and_fourth_scores_nothing() -> None:
    """1st, 2nd and 3rd score their rows' majority points; the 4th colour scores none."""
    scoring = score(
        ["pink-2 blue-2 purple-2 orange-2 orange-3", "pink-2", "blue-2", "purple-2"],
        (PINK, BLUE, PURPLE, ORANGE),
    )
    assert majority_points(scoring, PINK) == {0: 15, 1: 15}
    assert majority_points(scoring, BLUE) == {0: 10, 2: 10}
    assert majority_points(scoring, PURPLE) == {0: 5, 3: 5}
    assert majority_points(scoring, ORANGE) == {}
    assert [r.colour for r in scoring.majorities] == [PINK, BLUE, PURPLE]


@pytest.mark.parametrize(
    ("players", "expected"),
    [
        (2, {0: 15}),
        (3, {0: 15, 1: 10}),
        (4, {0: 15, 1: 10}),
        (5, {0: 15, 1: 10, 2: 5}),
        (6, {0: 15, 1: 10, 2: 5}),
    ],
)
def test_r20_places_scored_by_player_count(players: int, expected: dict[int, int]) -> None:
    """2 players score the first majority, 3–4 the first two, 5–6 all three."""
    bouquets = ["pink-2 " * 4, "pink-2 " * 3, "pink-2 " * 2, "pink-2", "", ""][:players]
    assert majority_points(score(bouquets, (PINK, BLUE)), PINK) == expected


def r21_match() -> Match:
    """RULES.md R21's example: 3 players, pink 2nd at the end; pinks worth 6, 4 and one card.

    Seat 0 keeps pink-2 (with pink-4: 2 cards, 6) and adds purple-4 face up;
    seat 1 keeps pink-2 (with pink-2: 2 cards, 4) and adds pink-3 face up;
    seat 2 gives blue-3 to seat 0 and adds orange-4 face down. Reveal: blue-2,
    orange-2, blue-3, orange-4. Final: purple 8, pink 7, orange 6, blue 5.
    """
    match = deal(
        3,
        deck="pink-2 purple-4 pink-2 pink-3 blue-3 orange-4",
        festival="purple-4 pink-4",
        hands=["pink-4 blue-2", "pink-2 orange-2", "pink-3 blue-3"],
    )
    open_all(match, "blue-2 orange-2 blue-3")
    play(match, [KEEP, UP, KEEP, UP, give(0), SECRET])
    return match


def test_r21_worked_example_ranked_second() -> None:
    """RULES.md R21: two cards worth 6 score 10, two worth 4 score 7, one card scores nothing."""
    match = r21_match()
    assert ranking(match) == (PURPLE, PINK, ORANGE, BLUE)
    assert totals(match) == {PURPLE: 8, PINK: 7, ORANGE: 6, BLUE: 5}
    scoring = scored(match)
    assert majority_points(scoring, PINK) == {0: 10, 1: 7}
    (pink,) = [r for r in scoring.majorities if r.colour is PINK]
    assert [(p.seat, p.cards, p.value, p.place) for p in pink.places] == [
        (0, 2, 6, 0),
        (1, 2, 4, 1),
    ]
    assert [p.total for p in scoring.players] == [10, 7, 3]
    assert scoring.winners == (0,) and scoring.decided_by is TieBreak.POINTS


def test_r21_tie_on_cards_broken_by_value_two_players() -> None:
    """Two players with one pink each: the higher value takes the only majority."""
    scoring = score(["pink-3", "pink-4"], (PINK, BLUE))
    assert majority_points(scoring, PINK) == {1: 15}


def exact_tie_match() -> Match:
    """3 players, pink 1st: seats 0 and 1 hold pink-3 each, seat 2 pink-2; seat 0 keeps blue-2."""
    match = deal(
        3,
        deck="blue-2 orange-2",
        festival="pink-4 blue-3",
        hands=["pink-3 pink-4", "pink-3 pink-4", "pink-2 pink-4"],
    )
    open_all(match, "pink-4 pink-4 pink-4")
    play(match, [KEEP, SECRET])
    return match


def test_r21_exact_tie_shares_the_place_and_next_scores_next() -> None:
    """Seats tied on cards and value both score 1st points; the next seat scores 2nd points."""
    match = exact_tie_match()
    assert ranking(match) == (PINK, BLUE, ORANGE)
    scoring = scored(match)
    assert majority_points(scoring, PINK) == {0: 15, 1: 15, 2: 10}
    assert [p.total for p in scoring.players] == [25, 15, 10]


def test_r21_ties_are_dense_with_five_players() -> None:
    """5 players: one leader, two tied 2nd, the next scores the 3rd majority, the last none."""
    scoring = score(
        ["pink-2 pink-2 pink-2", "pink-2 pink-3", "pink-3 pink-2", "pink-2 pink-2", "pink-4"],
        (BLUE, PINK),
    )
    assert majority_points(scoring, PINK) == {0: 10, 1: 7, 2: 7, 3: 4}


def test_r21_all_tied_all_score_first() -> None:
    """Three players tied in every way all score the first majority."""
    scoring = score(["blue-3", "blue-3", "blue-3"], (PINK, ORANGE, BLUE))
    assert majority_points(scoring, BLUE) == {0: 5, 1: 5, 2: 5}


def test_r22_no_card_no_majority() -> None:
    """A player without a card of a colour never scores its majority, even if places remain."""
    scoring = score(["pink-2", "", "blue-2"], (PINK, BLUE, PURPLE))
    assert majority_points(scoring, PINK) == {0: 15}
    assert majority_points(scoring, BLUE) == {2: 10}
    assert majority_points(scoring, PURPLE) == {}
    # in play: purple ranks 1st in R21's game, but nobody holds one
    assert majority_points(scored(r21_match()), PURPLE) == {}
    assert majority_points(scored(exact_tie_match()), BLUE) == {0: 10}


def test_r23_most_points_wins() -> None:
    """The single highest total wins outright."""
    scoring = score(["pink-2", "blue-2"], (PINK, BLUE), keeping=[0, 3])
    assert [p.total for p in scoring.players] == [15, 13]
    assert scoring.winners == (0,) and scoring.decided_by is TieBreak.POINTS


def test_r23_points_tie_broken_by_tulips_in_play() -> None:
    """Equal points: seat 0, with three tulips to seat 1's one, wins on tulips."""
    match = deal(
        2,
        deck="orange-2 purple-2 orange-2 purple-2",
        festival="purple-4 blue-3",
        hands=["pink-2 purple-3", "pink-2 blue-2"],
    )
    open_all(match, "purple-3 blue-2")
    play(match, [KEEP, UP, give(0), UP])  # keep unranked: 2; give unranked 2: 2
    scoring = scored(match)
    assert ranking(match) == (PURPLE, BLUE)
    assert [(p.total, p.tulips) for p in scoring.players] == [(2, 3), (2, 1)]
    assert scoring.winners == (0,) and scoring.decided_by is TieBreak.TULIPS


def test_r23_points_and_tulips_tied_share_the_victory_in_play() -> None:
    """Equal points and tulips: both players share the victory."""
    match = deal(
        2,
        deck="blue-3 purple-2 blue-3 purple-2",
        festival="purple-4 blue-2",
        hands=["pink-2 orange-2"] * 2,
    )
    open_all(match, "orange-2 orange-2")
    play(match, [give(1), UP, give(0), UP])  # each gives blue-3 at 2nd: 5
    assert ranking(match) == (PURPLE, ORANGE, BLUE)
    scoring = scored(match)
    assert majority_points(scoring, BLUE) == {0: 5, 1: 5}  # blue 3rd, tied
    assert [(p.total, p.tulips) for p in scoring.players] == [(10, 2), (10, 2)]
    assert scoring.winners == (0, 1) and scoring.decided_by is TieBreak.SHARED


def test_r23_tie_breakers_directly() -> None:
    """Scoring alone: tulips break a points tie among the leaders only; else shared."""
    tulips = score(
        ["pink-2", "blue-2 blue-3", "", "orange-2 orange-2 orange-2"],
        (PINK, BLUE),
        keeping=[0, 5, 15, 0],
    )
    assert [(p.total, p.tulips) for p in tulips.players] == [(15, 1), (15, 2), (15, 0), (0, 3)]
    assert tulips.winners == (1,) and tulips.decided_by is TieBreak.TULIPS
    shared = score(["pink-2", "blue-2", "", ""], (PINK, BLUE), keeping=[0, 5, 15, 15])
    assert [p.total for p in shared.players] == [15, 15, 15, 15]
    assert shared.winners == (0, 1) and shared.decided_by is TieBreak.SHARED


# -- The ruleset table (R30) ---------------------------------------------------------


def test_r30_custom_ruleset_numbers_drive_play() -> None:
    """A house ruleset's keep, give, majority and reveal numbers are the ones used."""
    house = Ruleset(
        name="house",
        giving_bonus=(9, 8, 7, 6),
        bouquet_points=(5, 4, 3, 2),
        majority_points=((30, 20, 10), (25, 15, 5), (12, 6, 3)),
        reveal_size=1,
    )
    match = deal(
        2,
        deck="pink-2 blue-2",
        festival="pink-4 blue-3",
        hands=["pink-3 orange-2", "purple-2 orange-2"],
        ruleset=house,
    )
    open_all(match, "orange-2 orange-2")
    events = play(match, [KEEP, give(1)])
    assert CardKept(0, card("pink-2"), 5) in events
    assert CardGiven(0, 1, card("blue-2"), 8 + 2) in events
    assert len([e for e in events if isinstance(e, SecretRevealed)]) == 1
    assert observe(match, None).secret_count == 1
    assert ranking(match) == (PINK, BLUE, ORANGE)
    scoring = scored(match)
    assert majority_points(scoring, PINK) == {0: 30}
    assert majority_points(scoring, BLUE) == {1: 25}
    assert [p.total for p in scoring.players] == [5 + 10 + 30, 25]


def test_r30_majority_places_and_zero_reveal() -> None:
    """A ruleset may let 2 players score two places, and reveal no secret card."""
    two = Ruleset(majority_places={**DEFAULT_RULESET.majority_places, 2: 2}, reveal_size=0)
    scoring = score(["pink-2 pink-2", "pink-3"], (PINK, BLUE), ruleset=two)
    assert majority_points(scoring, PINK) == {0: 15, 1: 10}
    match = deal(
        2,
        deck="pink-2 blue-2",
        festival="pink-4 blue-3",
        hands=["pink-3 orange-2"] * 2,
        ruleset=two,
    )
    open_all(match, "orange-2 orange-2")
    events = play(match, [KEEP, SECRET])
    assert not any(isinstance(e, SecretRevealed) for e in events)
    assert observe(match, None).secret_count == 3 and totals(match)[ORANGE] == 0
