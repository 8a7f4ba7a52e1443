"""The post-game analysis (engine.analysis): it never peeks at hidden cards,
it is exact where the cards left can be enumerated, it is deterministic, its
marks follow its thresholds, and its results survive plain data and pickling.

Tests may read a match's internal attributes to build what they compare
against; the analysis never does — it reads one seat's observation (R24–R26).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import pickle
import random
from collections import Counter
from collections.abc import Callable

import pytest

from engine import (
    DEFAULT_RULESET,
    Action,
    ActionKind,
    Card,
    Match,
    Observation,
    Phase,
    Ruleset,
    all_cards,
    observe,
)
from engine.analysis import (
    BLUNDER,
    COSTLIEST,
    HINT_BUDGET_MS,
    HINT_DEALS,
    HINT_MIN_DEALS,
    INACCURACY,
    MISTAKE,
    AnalysisDataError,
    DecisionAnalysis,
    DecisionValues,
    MatchAnalysis,
    OptionValue,
    SeatAnalysis,
    analyse_decision,
    analyse_match,
    analyse_seat,
    hint,
    mark_for,
)
from engine.analysis.reveal import reveal_rankings
from engine.bots.inference import medium_choices
from engine.bots.policies import medium_policy
from engine.bots.search import DEFAULT_BUDGET_MS
from engine.bots.table import ADD_FACE_UP, ADD_SECRET, GIVE, KEEP, Table, card_index
from engine.lab.analysis import STRENGTHS, format_timing, seating, time_match
from engine.lab.analysis import main as lab_main
from engine.match import climb
from engine.record import MatchRecord
from engine.scoring import action_points, final_scoring

from .test_bots import Deal

#: few deals keep the tests quick; the figures come from engine.lab.analysis
DEALS = 6
#: a Table's code for each kind of action
HOW = {
    ActionKind.KEEP: KEEP,
    ActionKind.GIVE: GIVE,
    ActionKind.ADD_FACE_UP: ADD_FACE_UP,
    ActionKind.ADD_SECRET: ADD_SECRET,
}


# -- helpers --------------------------------------------------------------------------


def no_secret_policy(observation: Observation, rng: random.Random) -> Action:
    """Any legal action but adding face down: keeps the secret festival small,
    so that a test can enumerate every way its hidden cards could lie."""
    legal = [a for a in observation.legal_actions if a.kind is not ActionKind.ADD_SECRET]
    return rng.choice(legal)


def play_until(
    match: Match,
    rng: random.Random,
    stop: Callable[[Match], bool],
    policy: Callable[[Observation, random.Random], Action] = no_secret_policy,
) -> None:
    """Play ``policy`` for every seat until ``stop(match)`` holds."""
    while not stop(match):
        seat = match.to_act[0]
        match.apply(seat, policy(observe(match, seat), rng))


def last_decision(match: Match) -> bool:
    """The next action ends the game: the deck is empty during a turn (R18)."""
    return match.phase is Phase.TURN and observe(match, match.to_act[0]).deck_count == 0


def unseen_by(observation: Observation) -> list[Card]:
    """Every physical card the viewer has not seen, each copy once: the full
    deck (R3) less the festival, the bouquets, its own secret cards and the
    card it holds."""
    left = Counter(dict.fromkeys(all_cards(), observation.ruleset.copies_for(observation.players)))
    left.subtract(observation.festival)
    for view in observation.seats:
        left.subtract(view.bouquet)
    left.subtract(observation.my_secret)
    if observation.drawn is not None:
        left[observation.drawn] -= 1
    return sorted(left.elements(), key=str)


def brute_force(observation: Observation, action: Action) -> tuple[float, float]:
    """The viewer's exact expected final points and share of the victory if it
    plays ``action`` as the game's very last card (R18), by enumeration: every
    arrangement of the unseen cards over the secret cards others hid (each
    equally likely, R26), then every ordered draw of the reveal (R19)."""
    viewer, drawn, rules = observation.viewer, observation.drawn, observation.ruleset
    assert viewer is not None and drawn is not None
    bouquets = [list(view.bouquet) for view in observation.seats]
    keeping = [view.keeping for view in observation.seats]
    giving = [view.giving for view in observation.seats]
    totals = dict(observation.totals)
    ranking = list(observation.ranking)
    pile = list(observation.my_secret)
    points = action_points(rules, ranking, drawn, action)  # R14, R15, R17
    if action.kind is ActionKind.KEEP:
        bouquets[viewer].append(drawn)
        keeping[viewer] += points
    elif action.kind is ActionKind.GIVE:
        assert action.to_seat is not None
        bouquets[action.to_seat].append(drawn)
        giving[viewer] += points
    elif action.kind is ActionKind.ADD_FACE_UP:  # R16, R8
        totals[drawn.colour] += drawn.value
        climb(ranking, totals, drawn.colour)
    else:
        pile.append(drawn)
    hidden = observation.secret_count - len(observation.my_secret)
    outcomes = []
    for others in itertools.permutations(unseen_by(observation), hidden):
        secret = pile + list(others)
        shown = min(rules.reveal_size, len(secret))
        for order in itertools.permutations(secret, shown):
            end_totals, end_ranking = dict(totals), list(ranking)
            for card in order:
                end_totals[card.colour] += card.value
                climb(end_ranking, end_totals, card.colour)
            scoring = final_scoring(rules, end_ranking, bouquets, keeping, giving)
            share = 1 / len(scoring.winners) if viewer in scoring.winners else 0.0
            outcomes.append((scoring.players[viewer].total, share))
    return (
        sum(p for p, _ in outcomes) / len(outcomes),
        sum(s for _, s in outcomes) / len(outcomes),
    )


def medium_record(players: int, seed: int) -> MatchRecord:
    """A whole match between medium bots."""
    match = Match.new(players, seed)
    play_until(match, random.Random(seed), lambda m: m.is_over, medium_policy)
    return MatchRecord.of(match)


# -- never peeks -----------------------------------------------------------------------


def _twins(players: int, seed: int, drawn: int, viewer: int) -> tuple[Deal, Deal]:
    """Two deals ``viewer`` cannot tell apart until ``drawn`` cards are drawn: a
    removed card swapped with the next seat's second dealt card (the one it
    hides), the seat after's hidden card, if there is one, swapped with one of
    the deck not yet drawn, and the rest of the deck reordered."""
    deal = Deal.shuffled(players, seed)
    other = deal.copy()
    hands, removed, deck = other.hands, other.removed, other.deck
    nearer, further = hands[(viewer + 1) % players], hands[(viewer + 2) % players]
    i = next(i for i, c in enumerate(removed) if c != nearer[1])
    nearer[1], removed[i] = removed[i], nearer[1]
    if players > 2:
        j = next(j for j in range(len(deck) - 1, drawn - 1, -1) if deck[j] != further[1])
        further[1], deck[j] = deck[j], further[1]
    deck[drawn:] = reversed(deck[drawn:])
    assert Counter(deal.deck + deal.removed) != Counter(other.deck + other.removed)
    return deal, other


def _sees(deal: Deal, steps: int, viewer: int) -> Observation:
    """``viewer``'s observation after a scripted opening (each seat hides its
    second card) and ``steps`` scripted actions: give the first card of a turn
    on, keep the second."""
    match = deal.match(seed=1)
    if steps < 0:
        return observe(match, viewer)
    for seat, hand in enumerate(deal.hands):
        match.apply(seat, Action.opening(hand[1]))
    for _ in range(steps):
        (seat,) = match.to_act
        first = observe(match, seat).used is None
        match.apply(seat, Action.give((seat + 1) % match.players) if first else Action.keep())
    assert match.to_act == (viewer,)
    return observe(match, viewer)


@pytest.mark.parametrize(
    ("players", "steps", "viewer"), [(3, -1, 0), (3, 12, 0), (4, 8, 0), (2, 46, 1)]
)
def test_r24_r26_analysis_never_peeks(players: int, steps: int, viewer: int) -> None:
    """Two matches that differ only in cards hidden from the viewer — a removed
    card, another seat's face-down card, the deck's order — give it the same
    observation, and the analysis, seeded alike, the very same values: at the
    opening (R11), mid-game, and on the last turn (2 players, 46 actions: one
    card is left to draw after the one the viewer holds), where they are exact."""
    deal, other = _twins(players, 7, steps + 1, viewer)
    seen, seen_too = _sees(deal, steps, viewer), _sees(other, steps, viewer)
    assert seen == seen_too
    values = analyse_decision(seen, deals=DEALS, seed=3)
    assert values == analyse_decision(seen_too, deals=DEALS, seed=3)
    assert values.exact is (steps == 46)


# -- exact where it can be --------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "seed", "ruleset"),
    [
        (2, 1, DEFAULT_RULESET),
        (3, 2, DEFAULT_RULESET),
        (3, 3, dataclasses.replace(DEFAULT_RULESET, reveal_size=2)),
        (4, 4, dataclasses.replace(DEFAULT_RULESET, reveal_size=2)),
    ],
)
def test_r18_r23_last_card_values_are_the_exact_expectations(
    players: int, seed: int, ruleset: Ruleset
) -> None:
    """On the game's last card (R18) the analysis enumerates, and its values
    equal the expected final points and share of the victory worked out by
    brute force over every way the hidden secret cards could lie and every
    ordered reveal (R19–R23), a partial reveal (reveal_size 2) included."""
    match = Match.new(players, seed, ruleset)
    play_until(match, random.Random(seed), last_decision)
    observation = observe(match, match.to_act[0])
    values = analyse_decision(observation, deals=DEALS, seed=0)
    assert values.exact
    assert values.deals == 1
    assert [o.action for o in values.options] == list(observation.legal_actions)
    for option in values.options:
        points, share = brute_force(observation, option.action)
        assert option.expected_points == pytest.approx(points, abs=1e-9)
        assert option.win_chance == pytest.approx(share, abs=1e-9)


def last_turn(match: Match) -> bool:
    """The active seat holds the first card of the last turn: one card is left (R13, R18)."""
    if match.phase is not Phase.TURN:
        return False
    observation = observe(match, match.to_act[0])
    return observation.deck_count == 1 and observation.used is None


@pytest.mark.parametrize(
    ("players", "seed"), [(2, 4), (3, 5), pytest.param(4, 6, marks=pytest.mark.slow)]
)
def test_r13_r18_last_turn_values_are_the_exact_expectations(players: int, seed: int) -> None:
    """On the last turn's first card the analysis enumerates the card left to
    draw too: each option's value is the mean, over every unseen card that
    could be drawn next (each copy equally likely, R26), of the brute-force
    value of the second card placed as the medium bot places it (its ties
    shared out), the engine playing the first card (R13–R17)."""
    match = Match.new(players, seed, dataclasses.replace(DEFAULT_RULESET, reveal_size=2))
    play_until(match, random.Random(seed), last_turn)
    viewer = match.to_act[0]
    observation = observe(match, viewer)
    values = analyse_decision(observation, deals=DEALS, seed=0)
    assert values.exact
    nexts = unseen_by(observation)
    for option in values.options:
        points = share = 0.0
        for drawn in nexts:
            world = match.clone()
            world._deck[-1] = drawn  # the card left to draw, as this arrangement has it
            world.apply(viewer, option.action)
            last = observe(world, viewer)
            assert last.drawn is drawn and last.deck_count == 0
            table = Table.from_observation(last)
            chosen = medium_choices(table, viewer, card_index(drawn), last.used)
            for how, to in chosen:
                action = next(
                    a for a in last.legal_actions if (HOW[a.kind], a.to_seat) == (how, to)
                )
                p, s = brute_force(last, action)
                points += p / len(chosen) / len(nexts)
                share += s / len(chosen) / len(nexts)
        assert option.expected_points == pytest.approx(points, abs=1e-9)
        assert option.win_chance == pytest.approx(share, abs=1e-9)


def test_r8_r19_reveal_chances_by_hand() -> None:
    """R19 turns one of two secret cards over, each with chance 1/2: blue 2 lifts
    blue from 8 to purple's 10, and a colour that ties goes above (R8); pink 3
    joins the ranking 3rd. An unknown card drawn from the same two unseen ones
    gives the same chances, and with several cards the chances add up to 1."""
    blue2, pink3 = card_index(Card.parse("blue-2")), card_index(Card.parse("pink-3"))
    totals, ranking = [10, 8, 0, 0], [0, 1]  # purple 10 1st, blue 8 2nd
    known = [0] * 12
    known[blue2] = known[pink3] = 1
    assert reveal_rankings(totals, ranking, known, 0, [0] * 12, 1, 3) == {
        (1, 0): 0.5,
        (0, 1, 2): 0.5,
    }
    assert reveal_rankings(totals, ranking, [0] * 12, 1, known, 1, 3) == {
        (1, 0): 0.5,
        (0, 1, 2): 0.5,
    }
    pool = [2] * 12
    chances = reveal_rankings(totals, ranking, known, 3, pool, 4, 3)
    assert sum(chances.values()) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown secret cards"):
        reveal_rankings(totals, ranking, known, 3, [1] + [0] * 11, 4, 3)


def test_the_last_turns_are_enumerated_and_the_rest_sampled() -> None:
    """A decision is exact when every order of the cards left to draw can be
    enumerated (the last turn's two cards); every other decision, the opening
    included, is sampled with the deals asked for."""
    record = medium_record(4, 5)
    seat = record.actions[-1][0]
    analysis = analyse_seat(record, seat, deals=DEALS)
    *rest, first_of_last, last = analysis.decisions
    assert first_of_last.exact and last.exact
    assert first_of_last.values.deals > 1 and last.values.deals == 1
    assert not any(d.exact for d in rest)
    assert {d.values.deals for d in rest} == {DEALS}
    assert rest[0].turn == 0  # the opening choice (R11) is a decision too


# -- deterministic, and what it says ------------------------------------------------------


def test_same_record_same_analysis_and_every_decision_of_the_seat() -> None:
    """The same record, deals and seed give the same analysis; it judges every
    action of the seat, in order, the opening choice first (R11)."""
    record = medium_record(3, 8)
    one = analyse_seat(record, 1, deals=DEALS, seed=4)
    assert one == analyse_seat(record, 1, deals=DEALS, seed=4)
    assert one != analyse_seat(record, 1, deals=DEALS, seed=5)
    mine = [(i, a) for i, (s, a) in enumerate(record.actions) if s == 1]
    assert [(d.index, d.chosen) for d in one.decisions] == mine
    assert one.decisions[0].chosen.kind is ActionKind.OPENING
    assert all(d.seat == 1 for d in one.decisions)
    match = analyse_match(record, seats=[1], deals=DEALS, seed=4)
    assert match.seat(1) == one
    assert [s.seat for s in match.seats] == [1]


def test_marks_follow_the_thresholds() -> None:
    """Below INACCURACY no mark; from each threshold on, that mark."""
    assert 0 < INACCURACY < MISTAKE < BLUNDER
    assert mark_for(0.0) is None
    assert mark_for(INACCURACY - 1e-9) is None
    assert mark_for(INACCURACY) == "inaccuracy"
    assert mark_for(MISTAKE - 1e-9) == "inaccuracy"
    assert mark_for(MISTAKE) == "mistake"
    assert mark_for(BLUNDER - 1e-9) == "mistake"
    assert mark_for(BLUNDER) == "blunder"
    assert mark_for(100.0) == "blunder"


def _values(*points: float) -> DecisionValues:
    actions = [Action.keep(), Action.give(1), Action.add_face_up(), Action.add_secret()]
    return DecisionValues(
        tuple(OptionValue(a, p, 0.25) for a, p in zip(actions, points, strict=False)), False, 8
    )


def test_loss_is_against_the_best_and_zero_when_the_best_was_chosen() -> None:
    """The loss is the best option's expected points less the chosen one's; the
    best is the first of the highest; choosing it loses nothing."""
    values = _values(40.0, 47.5, 47.5, 30.0)
    assert values.best == Action.give(1)
    assert DecisionAnalysis(9, 0, 2, values, Action.give(1)).loss == 0.0
    assert DecisionAnalysis(9, 0, 2, values, Action.add_face_up()).loss == 0.0
    worse = DecisionAnalysis(9, 0, 2, values, Action.keep())
    assert worse.loss == pytest.approx(7.5)
    assert worse.mark == mark_for(7.5) == "mistake"
    assert DecisionAnalysis(9, 0, 2, values, Action.add_secret()).mark == "blunder"
    with pytest.raises(ValueError, match="not one of"):
        DecisionAnalysis(9, 0, 2, values, Action.give(2))


def test_a_real_analysis_is_consistent() -> None:
    """In a real analysis every decision's best is an option of most expected
    points, its loss and mark follow, a chosen best loses 0, and the summary
    (mean loss, accuracy, the three costliest) is computed from the decisions."""
    analysis = analyse_seat(medium_record(4, 6), 2, deals=DEALS)
    best_chosen = 0
    for d in analysis.decisions:
        top = max(o.expected_points for o in d.options)
        assert d.values.value_of(d.best).expected_points == top
        assert d.loss == pytest.approx(top - d.values.value_of(d.chosen).expected_points)
        assert d.mark == mark_for(d.loss)
        assert all(0.0 <= o.win_chance <= 1.0 for o in d.options)
        if d.chosen == d.best:
            best_chosen += 1
            assert d.loss == 0.0
    assert best_chosen > 0
    judged = [d for d in analysis.decisions if len(d.options) > 1]
    assert analysis.mean_loss == pytest.approx(sum(d.loss for d in judged) / len(judged))
    clean = sum(1 for d in judged if d.loss < INACCURACY)
    assert analysis.accuracy == pytest.approx(100 * clean / len(judged))
    costly = sorted((d for d in judged if d.loss > 0), key=lambda d: (-d.loss, d.index))
    assert analysis.costliest == tuple(costly[:COSTLIEST])
    assert sum(analysis.marks().values()) == sum(1 for d in judged if d.mark)


def test_plain_data_and_pickle_round_trip() -> None:
    """An analysis turns into JSON and back, and pickles, unchanged."""
    analysis = analyse_match(medium_record(2, 9), deals=DEALS, seed=2)
    data = json.loads(json.dumps(analysis.to_data()))
    again = MatchAnalysis.from_data(data)
    assert again == analysis
    assert pickle.loads(pickle.dumps(analysis)) == analysis
    seat = data["seats"][0]
    assert seat["costliest"] == [d.index for d in analysis.seats[0].costliest]
    first = seat["decisions"][0]
    assert set(first) == {
        "index", "seat", "turn", "options", "exact", "deals", "chosen", "best", "loss", "mark",
    }  # fmt: skip
    assert first["options"][0].keys() == {"action", "expected_points", "win_chance"}
    assert SeatAnalysis.from_data(seat) == analysis.seats[0]
    assert DecisionAnalysis.from_data(first) == analysis.seats[0].decisions[0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("chosen"), "missing field 'chosen'"),
        (lambda d: d.update(index="3"), "index must be an int"),
        (lambda d: d.update(exact="yes"), "exact must be true or false"),
        (lambda d: d.update(options=[]), "options must not be empty"),
        (lambda d: d.update(chosen={"kind": "fly"}), "chosen: bad action"),
        (lambda d: d["options"][0].update(win_chance=1.5), "win_chance must be from 0 to 1"),
        (lambda d: d["options"][0].update(expected_points=float("nan")), "finite number"),
        (lambda d: d.update(chosen={"kind": "give", "to_seat": 5}), "not one of"),
    ],
)
def test_bad_plain_data_is_refused_clearly(
    change: Callable[[dict[str, object]], object], message: str
) -> None:
    """Data that is not a decision's analysis raises AnalysisDataError naming the fault."""
    data = DecisionAnalysis(4, 0, 1, _values(40.0, 41.0), Action.keep()).to_data()
    change(data)
    with pytest.raises(AnalysisDataError, match=message):
        DecisionAnalysis.from_data(data)


# -- hints and refusals -----------------------------------------------------------------------


def test_hint_is_the_analysis_with_the_hint_deals() -> None:
    """A hint values the options of the current decision like the analysis,
    with HINT_DEALS deals, from the seat's own observation."""
    match = Match.new(4, 12)
    play_until(match, random.Random(12), lambda m: m.phase is Phase.TURN)
    observation = observe(match, match.to_act[0])
    given = hint(observation, seed=6)
    assert given == analyse_decision(observation, deals=HINT_DEALS, seed=6)
    assert [o.action for o in given.options] == list(observation.legal_actions)


def test_a_hint_thinks_no_longer_than_the_hard_bot() -> None:
    """Issue 32: a hint's thinking time is the hard bot's budget, by the clock
    it is given (here a fake one). Out of time, it stops after HINT_MIN_DEALS
    deals, valued as those deals value them; on the last turn (R18) it samples
    instead of enumerating what does not fit. With time to spare, or no clock,
    it is the analysis with HINT_DEALS deals."""
    assert HINT_BUDGET_MS == DEFAULT_BUDGET_MS
    ticks = itertools.count()

    def late() -> float:  # a second passes at every look
        return float(next(ticks))

    def still() -> float:
        return 0.0

    match = Match.new(4, 12)
    play_until(match, random.Random(12), lambda m: m.phase is Phase.TURN)
    observation = observe(match, match.to_act[0])
    hurried = hint(observation, seed=6, clock=late)
    assert hurried == analyse_decision(observation, deals=HINT_MIN_DEALS, seed=6)
    assert hint(observation, seed=6, clock=still) == hint(observation, seed=6)
    seen = observe(Match.new(3, 5), 0)  # the opening (R11)
    assert hint(seen, seed=1, clock=late).deals == HINT_MIN_DEALS
    assert hint(seen, seed=1, clock=still).deals == HINT_DEALS

    last = Match.new(2, 4)
    play_until(last, random.Random(4), last_turn)
    at_the_end = observe(last, last.to_act[0])
    sampled = hint(at_the_end, seed=3, clock=late)
    assert not sampled.exact and sampled.deals == HINT_MIN_DEALS
    assert hint(at_the_end, seed=3, clock=still).exact
    assert hint(at_the_end, seed=3).exact
    with pytest.raises(ValueError, match="budget_ms must be positive"):
        hint(at_the_end, clock=still, budget_ms=0)


def test_analysis_refuses_what_it_cannot_do() -> None:
    """A spectator, a seat with nothing to do, a bad deal count, a seat the
    match does not have: each refused with a clear error."""
    match = Match.new(3, 13)
    play_until(match, random.Random(13), lambda m: m.phase is Phase.TURN)
    (active,) = match.to_act
    with pytest.raises(ValueError, match="spectator"):
        analyse_decision(observe(match, None))
    with pytest.raises(ValueError, match="nothing to do"):
        analyse_decision(observe(match, (active + 1) % 3))
    with pytest.raises(ValueError, match="deals must be"):
        analyse_decision(observe(match, active), deals=0)
    with pytest.raises(ValueError, match="seat must be"):
        analyse_seat(MatchRecord.of(match), 3)


# -- the lab command ------------------------------------------------------------------------


def test_lab_seats_every_strength_against_the_others() -> None:
    """Every match seats each strength at least once; over twelve matches each
    strength sits in every seat."""
    seatings = [seating(i) for i in range(12)]
    for bots in seatings:
        assert len(bots) == 4 and set(bots) == set(STRENGTHS)
    for name in STRENGTHS:
        for seat in range(4):
            assert any(bots[seat] == name for bots in seatings)


def test_lab_times_every_decision_of_a_match() -> None:
    """The timing analyses every decision of every seat, the last turn's exactly."""
    record = medium_record(2, 3)
    timing = time_match(record, 1, hint_budget_ms=1e-6)
    assert len(timing.decisions) == len(record.actions)
    assert len(timing.exact) == 2
    assert timing.total > 0 and timing.hint_slowest > 0
    assert "decisions" in format_timing(timing, 1)


def test_lab_main_prints_the_strengths(capsys: pytest.CaptureFixture[str]) -> None:
    """The lab command prints a row per strength with its mean loss."""
    assert (
        lab_main(["--matches", "1", "--deals", "1", "--hard-simulations", "1", "--skip-timing"])
        == 0
    )
    out = capsys.readouterr().out
    assert "mean loss" in out
    for name in STRENGTHS:
        assert f"\n{name} " in out
    with pytest.raises(SystemExit):
        lab_main(["--deals", "0"])
