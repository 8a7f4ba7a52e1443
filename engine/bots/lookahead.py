"""The *hard* bot at 4 players under the standard ruleset: one round of
lookahead, scored by a learned evaluation.

For every legal action it deals the cards its seat cannot see, many times
(the same deals for every action, so luck cancels out of the comparison):
the other seats' secret cards from what their play suggests
(:mod:`engine.bots.inference`), the rest at random. On each deal it plays the
action; on a turn's first card it draws the second and places it the way the
value network (:mod:`engine.bots.value`) likes best; then every other seat
plays its next turn as the medium bot would; the table at the bot's next turn
is scored by the network. When that next turn is the bot's last, it is played
too (each card placed as the network likes best) and the others' last turns
after it, so the match ends inside the lookahead; an end is scored by
sampling the reveal (R19) and scoring exactly (R20–R23); the tables of one
deal that would reveal the same cards share one draw. The best mean wins.

Everything it reads is in its seat's :class:`~engine.observation.Observation`;
it never sees the match. With a fixed number of deals and no time budget a
decision depends only on the observation and the generator.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from ..actions import Action, ActionKind
from ..observation import Observation
from ..ruleset import DEFAULT_RULESET
from .decision import SearchResult
from .inference import (
    TURN_ACTION,
    Choice,
    deal_secrets,
    expect_secrets,
    medium_choices,
    secret_likelihoods,
    turn_choices,
)
from .table import ADD_SECRET, KEEP, PLACEMENT, Table, card_index
from .value import ValueNet, shipped_net

__all__ = ["DEFAULT_SAMPLES", "LookaheadPolicy", "supports"]

#: Deals per decision when none is given; a time budget may stop it sooner.
#: At the default 300 ms, 128 won about 3 points more than 64 against medium bots.
DEFAULT_SAMPLES = 128
#: Random reveals averaged when the deck runs out in a lookahead.
REVEAL_SAMPLES = 24
#: The player count the network was trained for.
PLAYERS = 4

_OPENING = ActionKind.OPENING


def supports(observation: Observation) -> bool:
    """Whether the lookahead bot plays this match: 4 players, standard ruleset."""
    return observation.players == PLAYERS and observation.ruleset == DEFAULT_RULESET


@dataclass(frozen=True)
class LookaheadPolicy:
    """The lookahead bot as a policy: at most ``samples`` deals a decision,
    and no more than ``budget_ms`` of thinking when a budget is given."""

    samples: int = DEFAULT_SAMPLES
    budget_ms: float | None = None
    net: ValueNet = field(default_factory=shipped_net, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError(f"samples must be at least 1, got {self.samples!r}")
        if self.budget_ms is not None and self.budget_ms <= 0:
            raise ValueError(f"budget_ms must be positive, got {self.budget_ms!r}")

    def __call__(self, observation: Observation, rng: random.Random) -> Action:
        """Choose the viewer's action."""
        return self.search(observation, rng).action

    def search(self, observation: Observation, rng: random.Random) -> SearchResult:
        """Choose, and return each legal action's mean win share over the deals."""
        legal = observation.legal_actions
        if observation.viewer is None or not legal:
            raise ValueError("the viewer has nothing to do now")
        if len(legal) == 1:
            return SearchResult(legal[0], legal, (0.0,), 0)
        if legal[0].kind is _OPENING:
            values = self._opening(observation)
            best = max(values)
            action = legal[values.index(best)]
            return SearchResult(action, legal, tuple(values), 0)
        sums, deals = self._lookahead(observation, rng)
        best = max(sums)
        action = rng.choice([a for a, v in zip(legal, sums, strict=True) if v >= best - 1e-12])
        return SearchResult(action, legal, tuple(v / deals for v in sums), deals)

    def _opening(self, observation: Observation) -> list[float]:
        """R11: how much the network likes the table after each choice (a logit)."""
        assert observation.viewer is not None
        base = Table.from_observation(observation)
        base.next_seat = observation.first_seat
        first, second = observation.hand
        values = []
        for action in observation.legal_actions:
            assert action.secret is not None
            kept = second if action.secret is first else first
            table = base.copy()
            table.place(table.me, card_index(kept), KEEP)
            table.points[table.me] = 0
            table.place(table.me, card_index(action.secret), ADD_SECRET)
            table.secret_size = observation.players
            values.append(self.net.logit_of(table))
        return values

    def _lookahead(self, observation: Observation, rng: random.Random) -> tuple[list[float], int]:
        """Each legal action's summed win share over the deals, and how many deals."""
        deadline = None if self.budget_ms is None else time.perf_counter() + self.budget_ms / 1000.0
        legal = observation.legal_actions
        table = Table.from_observation(observation)
        me = table.me
        drawn = observation.drawn
        assert drawn is not None
        card = card_index(drawn)
        first = observation.used is None and observation.deck_count > 0
        table.seen[card] += 1
        unseen = table.unseen()
        table.seen[card] -= 1
        likelihoods = [x for seat, x in secret_likelihoods(observation) if seat != me]
        if likelihoods:
            expect_secrets(table, likelihoods, unseen)
        sums = [0.0] * len(legal)
        second: list[dict[int, Choice]] = [{} for _ in legal]
        seed = rng.getrandbits(32)
        deals = 0
        while deals < self.samples:
            deal = random.Random(seed + deals)
            deals += 1
            left = unseen[:]
            secrets = deal_secrets(likelihoods, left, deal)
            order = [c for c, n in enumerate(left) for _ in range(n)]
            deal.shuffle(order)
            reveals = _Reveals(deal.getrandbits(32))
            turn_seed = deal.getrandbits(32)
            for j, action in enumerate(legal):
                t = table.copy()
                t.others = secrets[:]
                t.place(me, card, PLACEMENT[action.kind], action.to_seat)
                pool = order[:]
                if first:
                    how = PLACEMENT[action.kind]
                    t = self._second_card(t, _draw(t, pool), how, reveals, second[j])
                sums[j] += self._others_turns(t, pool, random.Random(turn_seed), reveals)
            if deadline is not None and time.perf_counter() >= deadline:
                break
        return sums, deals

    def _second_card(
        self, t: Table, card: int, used: int, reveals: _Reveals, known: dict[int, Choice]
    ) -> Table:
        """The table after the bot places its turn's second card as the network
        likes best. While the network judges, the choice depends on the card
        alone, not on the rest of the deal: ``known`` keeps it for the next deals."""
        choice = known.get(card)
        if choice is None or t.deck <= 0:
            t, choice = self._place_best(t, card, used, reveals)
            if t.deck > 0:
                known[card] = choice
            return t
        t.place(t.me, card, *choice)
        t.next_seat = (t.me + 1) % t.players
        return t

    def _place_best(
        self, t: Table, card: int, used: int | None, reveals: _Reveals
    ) -> tuple[Table, Choice]:
        """The table after the bot places ``card`` as the network likes best, and
        how it placed it; ``used`` is how the turn's first card went (``None``
        for the first card itself)."""
        me, players = t.me, t.players
        next_seat = me if used is None else (me + 1) % players
        best: tuple[float, Table, Choice] | None = None
        for how, to in turn_choices(None if used is None else TURN_ACTION[used], me, players):
            after = t.copy()
            after.place(me, card, how, to)
            after.next_seat = next_seat
            value = self.net.logit_of(after) if after.deck > 0 else reveals.share(after)
            if best is None or value > best[0]:
                best = (value, after, (how, to))
        assert best is not None
        return best[1], best[2]

    def _others_turns(
        self, t: Table, pool: list[int], rng: random.Random, reveals: _Reveals
    ) -> float:
        """Play every other seat's next turn as the medium bot; score the bot's
        next turn, or play on to the end when that turn is the bot's last."""
        _others_round(t, pool, rng)
        if 0 < t.deck <= 2 * t.players:
            t = self._last_turn(t, pool, reveals)
            _others_round(t, pool, rng)
        if t.deck <= 0:
            return reveals.share(t)
        t.next_seat = t.me
        return self.net.win_share(t)

    def _last_turn(self, t: Table, pool: list[int], reveals: _Reveals) -> Table:
        """The table after the bot's last turn, each card placed as the network likes best."""
        t, (used, _) = self._place_best(t, _draw(t, pool), None, reveals)
        if t.deck > 0:
            t, _ = self._place_best(t, _draw(t, pool), used, reveals)
        return t


class _Reveals:
    """The end-of-match reveals of one deal: every table of the deal that ends
    the match draws them from the same seed, and tables that would draw the
    same cards (equal :meth:`~engine.bots.table.Table.reveal_key`) share one draw."""

    __slots__ = ("drawn", "seed")

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.drawn: dict[tuple[object, ...], dict[tuple[int, ...], int]] = {}

    def share(self, t: Table) -> float:
        """The bot's mean share of the victory at the end of table ``t``."""
        key = t.reveal_key()
        rankings = self.drawn.get(key)
        if rankings is None:
            rankings = t.reveal_rankings(random.Random(self.seed), REVEAL_SAMPLES)
            self.drawn[key] = rankings
        return t.share_over(rankings)


def _draw(t: Table, pool: list[int]) -> int:
    """The next card of the dealt deck, taken from the table's deck count."""
    t.deck -= 1
    return pool.pop()


def _others_round(t: Table, pool: list[int], rng: random.Random) -> None:
    """Every seat after the bot's plays its next turn as the medium bot, while cards last."""
    players, me = t.players, t.me
    seat = (me + 1) % players
    while seat != me and t.deck > 0:
        used = None
        for _ in range(2):
            if t.deck <= 0:
                break
            card = _draw(t, pool)
            chosen = medium_choices(t, seat, card, used)
            how, to = chosen[int(rng.random() * len(chosen))]
            t.place(seat, card, how, to)
            used = TURN_ACTION[how]
        seat = (seat + 1) % players
