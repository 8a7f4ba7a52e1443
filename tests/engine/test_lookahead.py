"""The hard bot's lookahead at 4 players: its light table agrees with the
engine's rules and scoring, its reading of the others' secret cards never
rules out the truth, and it decides from its seat's observation alone.

Tests may read a match's internal attributes to check its invariants; the
bots never do — they see one seat's observation only (R24–R26).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import DEFAULT_RULESET, Action, ActionKind, Match, observe
from engine.bots import lookahead
from engine.bots.inference import FLOOR, Choice, medium_choices, secret_likelihoods
from engine.bots.lookahead import REVEAL_SAMPLES, LookaheadPolicy, _Reveals, supports
from engine.bots.policies import medium_policy, random_policy, standing
from engine.bots.search import hard_policy
from engine.bots.table import (
    ADD_FACE_UP,
    ADD_SECRET,
    GIVE,
    KEEP,
    Table,
    TableRules,
    card_index,
)
from engine.bots.value import FEATURES, ValueNet, features, shipped_net
from engine.match import climb
from engine.observation import Observation
from engine.ruleset import ruleset_from_mapping
from engine.scoring import final_scoring
from tests.helpers_deals import Deal, hidden_places, mapped_moves, swap_hidden

_HOW = {
    ActionKind.KEEP: KEEP,
    ActionKind.GIVE: GIVE,
    ActionKind.ADD_FACE_UP: ADD_FACE_UP,
    ActionKind.ADD_SECRET: ADD_SECRET,
}
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same_public_table(a: Table, b: Table) -> None:
    assert a.ranking == b.ranking
    assert a.totals == b.totals
    assert a.counts == b.counts and a.values == b.values
    assert a.points == b.points
    assert a.secret_size == b.secret_size
    assert a.seen == b.seen


@PROPERTY
@given(players=st.integers(2, 6), seed=st.integers(0, 10_000))
def test_r14_r17_a_table_places_cards_as_the_engine_does(players: int, seed: int) -> None:
    """Every turn action played on the light table (R14–R17, R8) gives the
    table the engine's own next observation shows, at every player count."""
    match = Match.new(players, seed)
    rng = random.Random(seed)
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        action = random_policy(observation, rng)
        if action.kind is ActionKind.OPENING or match._deck == []:
            match.apply(seat, action)
            continue
        table = Table.from_observation(observation)
        assert observation.drawn is not None
        table.place(seat, card_index(observation.drawn), _HOW[action.kind], action.to_seat)
        match.apply(seat, action)
        _same_public_table(table, Table.from_observation(observe(match, seat)))


def _turns(players: int, seed: int) -> Iterator[tuple[Observation, random.Random]]:
    """Each turn's observation of a match of random moves, for the seat to
    act, with the generator the moves come from."""
    match = Match.new(players, seed)
    rng = random.Random(seed)
    while not match.is_over:
        observation = observe(match, match.to_act[0])
        if observation.legal_actions[0].kind is not ActionKind.OPENING:
            yield observation, rng
        match.apply(match.to_act[0], random_policy(observation, rng))


@PROPERTY
@given(players=st.integers(2, 6), seed=st.integers(0, 10_000))
def test_r20_r22_a_table_scores_majorities_as_the_engine_does(players: int, seed: int) -> None:
    """The table's majorities and the medium bot's standing match the
    engine's final scoring (R20–R22) on the ranking as it stands."""
    for observation, _ in _turns(players, seed):
        table = Table.from_observation(observation)
        scoring = final_scoring(
            observation.ruleset,
            observation.ranking,
            [view.bouquet for view in observation.seats],
            [view.keeping for view in observation.seats],
            [view.giving for view in observation.seats],
        )
        assert table.majorities() == [p.majority_total for p in scoring.players]
        assert table.standing(table.me) == standing(observation, table.me)


@PROPERTY
@given(players=st.integers(2, 6), seed=st.integers(0, 10_000))
def test_r14_r22_standings_after_a_card_are_those_of_the_table_it_leaves(
    players: int, seed: int
) -> None:
    """What the medium bot weighs without copying the table — a seat's
    standing after each way to place a card (R14–R17, R8, R20–R22) — is the
    standing of the table :meth:`Table.place` leaves; a face-down card shows
    nothing (R25)."""
    for observation, rng in _turns(players, seed):
        table = Table.from_observation(observation)
        mover = rng.randrange(players)
        choices: list[Choice] = [(KEEP, None), (ADD_FACE_UP, None), (ADD_SECRET, None)]
        choices += [(GIVE, to) for to in range(players) if to != mover]
        for card in range(12):
            expected = []
            for how, to in choices:
                after = table.copy()
                after.place(mover, card, how, to)
                expected.append(
                    table.standing(mover) if how == ADD_SECRET else after.standing(mover)
                )
            assert table.standings_after(mover, card, choices) == expected


def _medium_match(seed: int) -> tuple[Match, list[tuple[int, list[float]]]]:
    """A 4-medium match played to its last turn, and seat 0's reading of the
    others' secret cards there."""
    match = Match.new(4, seed)
    rngs = [random.Random(f"{seed}:{s}") for s in range(4)]
    reading: list[tuple[int, list[float]]] = []
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        if seat == 0 and observation.legal_actions[0].kind is not ActionKind.OPENING:
            reading = secret_likelihoods(observation)
        match.apply(seat, medium_policy(observation, rngs[seat]))
    return match, reading


@pytest.mark.parametrize("seed", range(6))
def test_r25_reading_a_medium_player_never_rules_out_its_secret_card(seed: int) -> None:
    """Against medium players, every card another seat put face down (R11,
    R16) is one the reading finds likely, above the floor kept for any card;
    the reading has one entry per such card, each seat's in the order they went down."""
    match, reading = _medium_match(seed)
    by_seat: dict[int, list[list[float]]] = {1: [], 2: [], 3: []}
    for seat, likelihood in reading:
        assert len(likelihood) == 12 and min(likelihood) >= FLOOR
        by_seat[seat].append(likelihood)
    for seat, read in by_seat.items():
        hidden = match._placed_secret[seat]
        assert 1 <= len(read) <= len(hidden)  # seat 0 read them at its last decision
        for likelihood, card in zip(read, hidden, strict=False):
            assert likelihood[card_index(card)] > FLOOR


def test_medium_choices_model_the_medium_bot() -> None:
    """What the medium bot does is always among the choices the model finds
    best for it, card by card, until the last card of the match."""
    match = Match.new(4, 3)
    rngs = [random.Random(f"m:{s}") for s in range(4)]
    checked = 0
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        action = medium_policy(observation, rngs[seat])
        if action.kind is not ActionKind.OPENING and observation.deck_count > 0:
            assert observation.drawn is not None
            chosen = medium_choices(
                Table.from_observation(observation),
                seat,
                card_index(observation.drawn),
                observation.used,
            )
            assert (_HOW[action.kind], action.to_seat) in chosen
            checked += 1
        match.apply(seat, action)
    assert checked > 40


def test_moves_are_the_turn_actions_without_the_openings() -> None:
    """An observation lists every turn action with its seat (R24), never an
    opening choice, which names a secret card (R25)."""
    match = Match.new(4, 11)
    rng = random.Random(0)
    while not match.is_over:
        seat = match.to_act[0]
        match.apply(seat, random_policy(observe(match, seat), rng))
    moves = observe(match, None).moves
    assert list(moves) == [m for m in match.history if m[1].kind is not ActionKind.OPENING]
    assert len(moves) == 56 and observe(match, 2).moves == moves


def _decide(deal: Deal, moves: list[tuple[int, Action]]) -> tuple[object, ...]:
    match = deal.match(seed=1)
    for seat, action in moves:
        match.apply(seat, action)
    observation = observe(match, match.to_act[0])
    result = LookaheadPolicy(samples=6).search(observation, random.Random(5))
    return observation, result


def test_r26_the_lookahead_cannot_see_hidden_cards() -> None:
    """Two deals that differ only in cards hidden from the seat to move — the
    removed cards, the others' face-down cards, the deck — give it the same
    observation and the lookahead, seeded alike, the same values (R26)."""
    deal = Deal.of(Match.new(4, 21))
    match = deal.match(seed=1)
    rngs = [random.Random(f"h:{s}") for s in range(4)]
    moves: list[tuple[int, Action]] = []
    while len(moves) < 4 + 20:
        seat = match.to_act[0]
        action = medium_policy(observe(match, seat), rngs[seat])
        match.apply(seat, action)
        moves.append((seat, action))
    viewer = match.to_act[0]
    drawn = sum(1 for _, action in moves if action.kind is not ActionKind.OPENING)
    places = hidden_places(deal, moves, viewer) + [
        place for place in deal.cards if place[0] == "deck" and place[1] > drawn
    ]
    other = swap_hidden(deal, places, list(reversed(range(len(places)))))
    seen, chosen = _decide(deal, moves)
    seen_too, chosen_too = _decide(other, mapped_moves(deal, other, moves))
    assert seen == seen_too
    assert chosen == chosen_too


def test_the_lookahead_is_reproducible_and_plays_whole_matches() -> None:
    """With a fixed number of deals a decision depends on the observation and
    the generator only; the bot plays legal moves to the end against medium."""
    match = Match.new(4, 8)
    rngs = [random.Random(f"r:{s}") for s in range(4)]
    bot = hard_policy(None, simulations=3)
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        if seat == 1:
            action = bot(observation, random.Random(len(observation.moves)))
            assert action == bot(observation, random.Random(len(observation.moves)))
            assert action in observation.legal_actions
        else:
            action = medium_policy(observation, rngs[seat])
        match.apply(seat, action)
    assert match.scoring is not None


def test_the_hard_bot_looks_ahead_only_where_its_network_was_trained() -> None:
    """4 players under the standard ruleset look ahead; other player counts
    and house rules (R30) fall back to the Monte Carlo search."""
    house = ruleset_from_mapping({"name": "house", "reveal_size": 4})
    assert supports(observe(Match.new(4, 1), 0))
    assert not supports(observe(Match.new(3, 1), 0))
    assert not supports(observe(Match.new(4, 1, house), 0))
    assert DEFAULT_RULESET.name == "standard"


def test_the_shipped_network_reads_the_features() -> None:
    """The network ships with the package and takes the features it was trained on."""
    net = shipped_net()
    table = Table.from_observation(observe(Match.new(4, 2), 0))
    assert len(features(table)) == FEATURES
    assert len(net.hidden[0]) == FEATURES + len(net.extra_inputs)
    assert 0.0 < net.win_share(table) < 1.0


def test_the_network_computes_its_definition_with_its_extra_inputs() -> None:
    """The logit is the output bias plus each hidden unit's ReLU of its row
    times the features and the extra inputs, weighted: the numbers the
    JSON form holds, whatever arithmetic reads them."""
    rng = random.Random(5)
    width = FEATURES + 1
    net = ValueNet(
        hidden=tuple(tuple(rng.uniform(-1, 1) for _ in range(width)) for _ in range(7)),
        hidden_bias=tuple(rng.uniform(-1, 1) for _ in range(7)),
        output=tuple(rng.uniform(-1, 1) for _ in range(7)),
        output_bias=0.25,
        extra_inputs=(1.0,),
    )
    for number in range(5):
        x = features(Table.from_observation(observe(Match.new(4, number), number % 4)))
        inputs = [*x, 1.0]
        expected = net.output_bias + sum(
            w * max(0.0, b + sum(r * v for r, v in zip(row, inputs, strict=True)))
            for row, b, w in zip(net.hidden, net.hidden_bias, net.output, strict=True)
        )
        assert net.logit(x) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert ValueNet.from_mapping(net.to_mapping()).logit(x) == pytest.approx(net.logit(x))


@dataclass(frozen=True)
class _CountingNet(ValueNet):
    """The shipped network, noting the cards left in the deck at every table it scores."""

    decks: list[int] = field(default_factory=list, compare=False)

    def win_share(self, t: Table) -> float:
        self.decks.append(t.deck)
        return super().win_share(t)


def test_r18_r23_the_bots_last_turn_is_played_out_not_guessed() -> None:
    """The network scores the table at the bot's next turn only while more
    turns follow it; from the turn before its last, every deal is played to
    the end of the match and scored by the rules (R18–R23)."""
    shipped = shipped_net()
    net = _CountingNet(**{f.name: getattr(shipped, f.name) for f in fields(ValueNet)})
    bot = LookaheadPolicy(samples=4, net=net)
    match = Match.new(4, 12)
    rngs = [random.Random(f"l:{s}") for s in range(4)]
    scored: list[bool] = []
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        if seat == 2 and observation.used is None and observation.drawn is not None:
            net.decks.clear()
            bot.search(observation, random.Random(0))
            assert all(deck > 2 * 4 for deck in net.decks)
            scored.append(bool(net.decks))
        match.apply(seat, medium_policy(observation, rngs[seat]))
    assert scored == [True] * 5 + [False] * 2


@dataclass(frozen=True)
class _JudgeEverySecondCard(LookaheadPolicy):
    """The lookahead without its memory of second-card choices."""

    def _second_card(
        self, t: Table, card: int, used: int, reveals: _Reveals, known: dict[int, Choice]
    ) -> Table:
        return self._place_best(t, card, used, reveals)[0]


def test_r13_remembering_second_card_choices_changes_no_decision() -> None:
    """The bot places a turn's second card (R13) the same way whatever else
    a deal holds, so judging it once per card gives every action the same
    value as judging it on every deal, until the last turn."""
    bot, plain = LookaheadPolicy(samples=12), _JudgeEverySecondCard(samples=12)
    match = Match.new(4, 21)
    rngs = [random.Random(f"s:{s}") for s in range(4)]
    compared = 0
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        if seat == 1 and observation.used is None and len(observation.legal_actions) > 1:
            ours, theirs = (
                bot.search(observation, random.Random(3)),
                plain.search(observation, random.Random(3)),
            )
            assert ours == theirs
            compared += 1
        match.apply(seat, medium_policy(observation, rngs[seat]))
    assert compared == 8


def _exact_reveals(t: Table) -> Counter[tuple[int, ...]]:
    """Every equally likely end of the reveal (R19) from table ``t``: each way
    to fill the secret festival's unknown places from the unseen cards, each
    order of its places, and the ranking the first five leave (R8)."""
    known = t.mine + (t.others or [])
    unseen = t.unseen()
    pool = [card for card, n in enumerate(unseen) for _ in range(n)]
    reveal = t.rules.reveal_size
    ends: Counter[tuple[int, ...]] = Counter()
    for strangers in itertools.permutations(pool, t.secret_size - len(known)):
        pile = known + list(strangers)
        for places in itertools.permutations(range(len(pile)), min(reveal, len(pile))):
            totals, ranking = t.totals[:], t.ranking[:]
            for at in places:
                colour, value = divmod(pile[at], 3)
                totals[colour] += value + 2
                climb(ranking, totals, colour)
            ends[tuple(ranking[:3])] += 1
    return ends


@pytest.mark.parametrize(("mine", "unknown"), [((0, 4, 8, 11), 1), ((5, 10), 4)])
def test_r8_r19_a_table_draws_the_reveal_as_the_rules_do(
    mine: tuple[int, ...], unknown: int
) -> None:
    """The lookahead's reveals come out of the secret festival, its own cards
    and unseen ones alike, five at random, in the proportions an exact count
    of every reveal gives (R19), re-ranked card by card (R8)."""
    t = Table.empty(TableRules.of(DEFAULT_RULESET, 4), 0)
    t.totals, t.ranking = [4, 3, 0, 2], [0, 1, 3]
    t.seen = [6] * 12
    for card in (1, 3, 6, 9, 10):  # a small pool of unseen cards: purple 3, blue 2, …
        t.seen[card] = 5
    for card in mine:
        t.place(0, card, ADD_SECRET)
        t.seen[card] -= 1  # the pile's own cards were not seen elsewhere
    t.secret_size = len(mine) + unknown
    exact = _exact_reveals(t)
    drawn = t.reveal_rankings(random.Random(4), 20_000)
    assert len(exact) > 3
    assert set(drawn) <= set(exact)
    total = sum(exact.values())
    for ranking, n in exact.items():
        assert abs(drawn.get(ranking, 0) / 20_000 - n / total) < 0.015, ranking


def test_r19_sharing_a_deals_reveals_between_tables_changes_no_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tables of one deal with the same :meth:`Table.reveal_key` share one draw
    of the reveal; drawing it again for every table gives the same values."""
    bot = LookaheadPolicy(samples=8)
    match = Match.new(4, 33)
    rngs = [random.Random(f"v:{s}") for s in range(4)]
    late: list[Observation] = []
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        if seat == 3 and observation.deck_count <= 16 and len(observation.legal_actions) > 1:
            late.append(observation)
        match.apply(seat, medium_policy(observation, rngs[seat]))
    draws = Counter[str]()
    reveal_rankings = Table.reveal_rankings

    def counted(t: Table, rng: random.Random, samples: int) -> dict[tuple[int, ...], int]:
        draws[phase] += 1
        return reveal_rankings(t, rng, samples)

    monkeypatch.setattr(Table, "reveal_rankings", counted)
    phase = "shared"
    shared = [bot.search(observation, random.Random(9)) for observation in late]

    def draw_every_time(self: _Reveals, t: Table) -> float:
        return t.share_over(t.reveal_rankings(random.Random(self.seed), REVEAL_SAMPLES))

    monkeypatch.setattr(lookahead._Reveals, "share", draw_every_time)
    phase = "every time"
    assert [bot.search(observation, random.Random(9)) for observation in late] == shared
    assert len(late) >= 4
    assert draws["shared"] < draws["every time"] / 2
