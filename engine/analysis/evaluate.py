"""Valuing one decision from one seat's observation: every legal option's
expected final points and chance to win, over deals of the cards that seat
cannot see (R24–R26).

How an option is valued: the cards the viewer has not seen are dealt to the
places it cannot see (the deck, the removed cards, the secret cards others
hid, others' opening hands), uniformly, as
:class:`~engine.bots.determinize.Determiniser` deals them; the option is
played, then every seat plays on to the end as the medium bot
(:mod:`engine.analysis.rollout` says why), and the viewer's final points and
share of the victory after a few random reveals (R19) are averaged.

* Every option is played on the same deals with the same tie-breaking
  generators (common random numbers), so the luck of the deal cancels out of
  the comparison between options, which is what the loss measures.
* The deals come from a generator seeded with ``seed`` only, so equal
  observations get equal values, whatever the hidden cards really are.
* When few cards are left to draw (at most :data:`EXACT_SEQUENCES` distinct
  orders of them: the last turn), every order is enumerated with its chance,
  every tie of the medium bot followed with its share, and the reveal taken
  card by card with the secret cards others hid drawn from the unseen ones
  (:mod:`engine.analysis.reveal`): the values are then the exact
  expectations under that continuation, and marked so.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from ..actions import Action
from ..bots.determinize import unseen_cards
from ..bots.table import (
    ADD_SECRET,
    CARD_TYPES,
    KEEP,
    PLACEMENT,
    Table,
    card_index,
)
from ..match import Phase
from ..observation import Observation
from .report import DecisionValues, OptionValue
from .rollout import Outcome, Scorer, expect_out, opening_choice, place, play_out

__all__ = [
    "DEFAULT_DEALS",
    "EXACT_SEQUENCES",
    "HINT_BUDGET_MS",
    "HINT_DEALS",
    "HINT_MIN_DEALS",
    "analyse_decision",
    "hint",
]

#: Deals sampled per decision of a post-game analysis, when not enumerated: with
#: 64 the noise of a loss (the standard deviation of the difference between two
#: options' values, over seeds) is about 0.7 points, a third of
#: :data:`~engine.analysis.report.INACCURACY`, and a 4-player match's 60
#: decisions take 16 to 18 CPU seconds (``python -m engine.lab.analysis``).
DEFAULT_DEALS = 64
#: Deals a hint samples at most: about the hard bot's thinking time per decision
#: early in a 4-player match, when the most cards are left to play out; less later
#: (``python -m engine.lab.analysis`` measures it).
HINT_DEALS = 24
#: A hint's thinking time: the hard bot's per decision
#: (:data:`engine.bots.search.DEFAULT_BUDGET_MS`). A hint stops sampling when it
#: has passed, and enumerates the last turn exactly only if that fits in it.
HINT_BUDGET_MS = 300.0
#: Deals a hint samples however long they take (a slow machine still gets values).
HINT_MIN_DEALS = 4
#: The most distinct orders of the cards left to draw that a decision enumerates
#: instead of sampling deals: any one card (of 12), so the last turn's two
#: decisions; two cards would cost seconds at 2 players, whose removed cards
#: (R4) make the unseen pool large for the exact reveal.
EXACT_SEQUENCES = 12
#: Random reveals (R19) averaged at the end of each sampled deal.
REVEALS = 8

_OPENING = Phase.OPENING


def analyse_decision(
    observation: Observation, *, deals: int = DEFAULT_DEALS, seed: int | str = 0
) -> DecisionValues:
    """The values of every legal option of the viewer's decision now.

    Reads nothing but ``observation`` (the viewer's knowledge, R24–R25): two
    matches the viewer cannot tell apart get the same values. The result
    depends only on ``observation``, ``deals`` and ``seed``. Raises
    ValueError for a spectator's observation or a viewer with nothing to do.
    """
    if observation.viewer is None:
        raise ValueError("a spectator has no decision to analyse")
    if not observation.legal_actions:
        raise ValueError(f"seat {observation.viewer} has nothing to do now")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be a whole number of at least 1, got {deals!r}")
    return _analyse(observation, deals, seed, None)


def hint(
    observation: Observation,
    *,
    seed: int | str = 0,
    clock: Callable[[], float] | None = None,
    budget_ms: float = HINT_BUDGET_MS,
) -> DecisionValues:
    """The values of the viewer's options now, for a player learning the game,
    in the hard bot's thinking time: :func:`analyse_decision` with up to
    :data:`HINT_DEALS` deals, stopping once ``budget_ms`` has passed by
    ``clock`` (seconds, e.g. :func:`time.perf_counter`), after
    :data:`HINT_MIN_DEALS` at least; the values say how many were dealt. The
    last turn is exact when its enumeration fits in the budget, and sampled
    otherwise. With no clock, exactly ``analyse_decision(observation,
    deals=HINT_DEALS, seed=seed)`` (the engine reads no clock of its own)."""
    if budget_ms <= 0:
        raise ValueError(f"budget_ms must be positive, got {budget_ms!r}")
    if clock is None or observation.viewer is None or not observation.legal_actions:
        return analyse_decision(observation, deals=HINT_DEALS, seed=seed)
    deadline = _Deadline(clock, clock() + budget_ms / 1000.0)
    return _analyse(observation, HINT_DEALS, seed, deadline)


class _Deadline:
    """When a hint must be done, by its clock."""

    def __init__(self, clock: Callable[[], float], at: float) -> None:
        self.clock = clock
        self.at = at

    def late(self, start: float, done: int) -> bool:
        """Whether the next of the options valued since ``start`` (``done`` so
        far) would end past the deadline, at the pace of those done."""
        now = self.clock()
        return now >= self.at or (done > 0 and now + (now - start) / done > self.at)

    def enough(self, dealt: int) -> bool:
        """Whether sampling stops after ``dealt`` deals."""
        return dealt >= HINT_MIN_DEALS and self.clock() >= self.at


def _analyse(
    observation: Observation, deals: int, seed: int | str, deadline: _Deadline | None
) -> DecisionValues:
    """The decision's values with at most ``deals`` deals, and by ``deadline``
    (None: none) if it can."""
    rng = random.Random(f"engine.analysis:{seed}")
    if observation.phase is _OPENING:
        return _opening(observation, deals, rng, deadline)
    return _turn(observation, deals, rng, deadline)


def _values(
    legal: tuple[Action, ...], sums: list[Outcome], count: float
) -> tuple[OptionValue, ...]:
    """The options' means, rounded to nine places: options whose outcomes are the
    same come out equal, not a rounding error apart, so choosing either loses 0."""
    return tuple(
        OptionValue(action, round(points / count, 9), min(1.0, max(0.0, round(share / count, 9))))
        for action, (points, share) in zip(legal, sums, strict=True)
    )


def _pool(observation: Observation) -> list[int]:
    """The unseen cards by card index (R26)."""
    counts = Counter(card_index(card) for card in unseen_cards(observation))
    return [counts[card] for card in range(CARD_TYPES)]


def _sequences(pool: list[int], length: int, limit: int) -> int:
    """How many distinct orders of ``length`` cards can be drawn from ``pool``;
    stops counting past ``limit``."""
    if length == 0:
        return 1
    count = 0
    for card in range(CARD_TYPES):
        if pool[card]:
            pool[card] -= 1
            count += _sequences(pool, length - 1, limit - count)
            pool[card] += 1
            if count > limit:
                break
    return count


def _turn(
    observation: Observation, deals: int, rng: random.Random, deadline: _Deadline | None
) -> DecisionValues:
    """A turn's decision (R13–R16): the viewer has drawn a card and places it."""
    viewer, legal, drawn = observation.viewer, observation.legal_actions, observation.drawn
    assert viewer is not None and drawn is not None
    base = Table.from_observation(observation)
    base.others = []  # in a world, the cards others put face down from now on are known
    card = card_index(drawn)
    pool = _pool(observation)
    unknown = observation.secret_count - len(observation.my_secret)
    scorer = Scorer(unknown)
    choices = [(PLACEMENT[action.kind], action.to_seat) for action in legal]
    count = _sequences(pool, observation.deck_count, EXACT_SEQUENCES)
    if count <= EXACT_SEQUENCES:
        sums: list[Outcome] = []
        start = deadline.clock() if deadline is not None else 0.0
        for how, to in choices:
            if deadline is not None and deadline.late(start, len(sums)):
                break  # it does not fit: sampled instead
            t = base.copy()
            seat, used = place(t, viewer, observation.used, card, how, to)
            sums.append(expect_out(t, pool[:], seat, used, scorer))
        else:
            return DecisionValues(_values(legal, sums, 1.0), True, count)
    cards = [c for c in range(CARD_TYPES) for _ in range(pool[c])]
    totals: list[Outcome] = [(0.0, 0.0)] * len(legal)
    d = observation.deck_count
    done = 0
    while done < deals and not (deadline is not None and deadline.enough(done)):
        dealt = rng.sample(cards, d + unknown)
        deck, hidden = dealt[d - 1 :: -1] if d else [], dealt[d:]  # deck: the next card last
        tie_seed, reveal_seed = rng.getrandbits(64), rng.getrandbits(64)
        for i, (how, to) in enumerate(choices):
            t = base.copy()
            seat, used = place(t, viewer, observation.used, card, how, to)
            play_out(t, deck[:], seat, used, random.Random(tie_seed))
            points, share = scorer.sample(t, hidden, random.Random(reveal_seed), REVEALS)
            total = totals[i]
            totals[i] = (total[0] + points, total[1] + share)
        done += 1
    return DecisionValues(_values(legal, totals, done), False, done)


def _opening(
    observation: Observation, deals: int, rng: random.Random, deadline: _Deadline | None
) -> DecisionValues:
    """The opening choice (R11): every seat keeps one dealt card and hides the
    other, all at once; the others' hands are dealt, and they choose as the
    medium bot would (whether they already chose or not: the viewer cannot
    see it)."""
    viewer, legal = observation.viewer, observation.legal_actions
    assert viewer is not None
    base = Table.from_observation(observation)
    players = observation.players
    others = [seat for seat in range(players) if seat != viewer]
    cards = [card_index(card) for card in unseen_cards(observation)]
    hand = tuple(card_index(card) for card in observation.hand)
    secrets = [card_index(action.secret) for action in legal if action.secret is not None]
    scorer = Scorer(0)
    totals: list[Outcome] = [(0.0, 0.0)] * len(legal)
    done = 0
    while done < deals and not (deadline is not None and deadline.enough(done)):
        order = cards[:]
        rng.shuffle(order)
        choice_rng = random.Random(rng.getrandbits(64))
        hidden = {}
        for seat in others:
            dealt = (order.pop(), order.pop())
            hidden[seat] = (dealt, opening_choice(base, seat, dealt, choice_rng))
        deck = order[len(order) - observation.deck_count :]  # the next card last
        tie_seed, reveal_seed = rng.getrandbits(64), rng.getrandbits(64)
        for i, secret in enumerate(secrets):
            t = base.copy()
            t.others = []
            kept = hand[1] if hand[0] == secret else hand[0]
            _open(t, viewer, kept, secret)
            for seat, ((first, second), hid) in hidden.items():
                _open(t, seat, second if first == hid else first, hid)
            play_out(t, deck[:], observation.first_seat, None, random.Random(tie_seed))
            points, share = scorer.sample(t, (), random.Random(reveal_seed), REVEALS)
            total = totals[i]
            totals[i] = (total[0] + points, total[1] + share)
        done += 1
    return DecisionValues(_values(legal, totals, done), False, done)


def _open(t: Table, seat: int, kept: int, secret: int) -> None:
    """R11: ``seat`` puts ``kept`` in its bouquet, for no points, and ``secret`` face down."""
    points = t.points[seat]
    t.place(seat, kept, KEEP)
    t.points[seat] = points
    t.place(seat, secret, ADD_SECRET)
