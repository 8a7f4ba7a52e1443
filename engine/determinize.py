"""Determinisation: whole matches that one seat cannot tell from the real one.

A bot that searches must not read the match it plays in: it sees only its
:class:`~engine.observation.Observation`. To use the engine as a forward
model it fills in what it cannot see — the deck's content and order, the
removed cards, the face-down cards others put in the secret festival, other
seats' opening hands, another seat's drawn card — with a uniform sample of
the cards it has not seen, and plays on that *determinised* match instead.

:class:`Determiniser` works out once, from an observation, which cards are
unseen and where they must go; :meth:`Determiniser.sample` then deals them
out afresh each time. It builds the :class:`~engine.match.Match` directly,
mid-game, by setting its private attributes (the constructors only build
the start of a game), and restores the match's invariants:

* every card is in exactly one place, and the places hold the full deck of
  :meth:`~engine.ruleset.Ruleset.copies_for` copies of each card (R3);
* everything the viewer may see is copied from the observation, so
  ``observe(sample, viewer) == observation`` field for field — the
  observation holds nothing the viewer could not know, so nothing differs;
* the opening hands (``_setup_events``), opening choices, the secret pile
  with its owners, the active seat, the action already used this turn and
  the legal actions agree with each other, so the match plays on from here
  exactly as a real one would;
* chance — the deck order and the end-of-game reveal (R19) — comes from the
  sampling generator only; the sample's history is empty and ``dealt`` is
  True, since no seed could rebuild it.

Unseen cards are spread uniformly (every arrangement of the unseen multiset
is equally likely); what other seats chose to hide is not modelled.
"""

from __future__ import annotations

import random
from collections import Counter

from .actions import Action
from .cards import Card, all_cards
from .events import CardsDealt, Event, FestivalStarted
from .match import Match, Phase, SecretCard
from .observation import Observation
from .ruleset import HAND_SIZE

__all__ = ["Determiniser", "determinise", "unseen_cards"]


def _seen_cards(observation: Observation) -> list[Card]:
    """Every card the viewer knows the place of, each copy once."""
    seen = list(observation.festival)
    for view in observation.seats:
        seen.extend(view.bouquet)
    if observation.phase is Phase.OPENING:
        seen.extend(observation.hand or observation.opening)  # not yet placed (R11)
    else:
        seen.extend(observation.my_secret)
    if observation.drawn is not None:
        seen.append(observation.drawn)
    return seen


def unseen_cards(observation: Observation) -> list[Card]:
    """The multiset of cards the viewer has not seen, in a canonical order.

    The order depends only on the observation, so a search seeded the same
    way samples the same determinisations from equal observations.
    """
    copies = observation.ruleset.copies_for(observation.players)
    left = Counter(dict.fromkeys(all_cards(), copies))
    left.subtract(_seen_cards(observation))
    if any(count < 0 for count in left.values()):
        raise ValueError("the observation shows more copies of a card than the deck holds")
    return [card for card in all_cards() for _ in range(left[card])]


class Determiniser:
    """Samples matches consistent with one observation (see the module docstring)."""

    __slots__ = (
        "_bouquet_cards",
        "_observation",
        "_others",
        "_others_secret",
        "_unseen",
        "_viewer_hand",
    )

    def __init__(self, observation: Observation) -> None:
        if observation.phase is Phase.OVER:
            raise ValueError("the game is over: there is nothing left to determinise")
        self._observation = obs = observation
        self._unseen = unseen_cards(obs)
        viewer = obs.viewer
        #: the seats whose dealt or face-down cards the viewer has not seen
        self._others = tuple(s for s in range(obs.players) if s != viewer)
        #: the viewer's two dealt cards, chosen from or not (R11)
        self._viewer_hand = obs.hand or obs.opening
        self._others_secret = 0
        self._bouquet_cards: tuple[Card, ...] = ()
        if obs.phase is Phase.OPENING:
            hidden = HAND_SIZE * len(self._others)
        else:
            self._others_secret = obs.secret_count - len(obs.my_secret)
            hidden = self._others_secret
            if obs.active != viewer:
                hidden += 1  # the active seat's drawn card
            # R11: each seat's first bouquet card is its opening choice.
            self._bouquet_cards = tuple(view.bouquet[0] for view in obs.seats)
            if self._others_secret < len(self._others):
                raise ValueError("fewer hidden secret cards than seats that placed one (R11)")
        hidden += obs.removed_count + obs.deck_count
        if hidden != len(self._unseen):
            raise ValueError(
                f"the observation hides {hidden} cards but {len(self._unseen)} are unseen"
            )

    @property
    def unseen(self) -> tuple[Card, ...]:
        """The cards the viewer has not seen, in canonical order."""
        return tuple(self._unseen)

    def sample(self, rng: random.Random) -> Match:
        """A match consistent with the observation, the unseen cards dealt at random."""
        obs = self._observation
        cards = self._unseen.copy()
        rng.shuffle(cards)
        match = Match(obs.ruleset, obs.players, rng.getrandbits(32), obs.first_seat)
        match.dealt = True  # its generator, seeded above, drives only the reveal (R19)
        match._phase = obs.phase
        match._turn = obs.turn
        match._festival = list(obs.festival)
        match._totals = dict(obs.totals)
        match._ranking = list(obs.ranking)
        match._revealed = list(obs.revealed)
        for view in obs.seats:
            match._bouquets[view.seat] = list(view.bouquet)
            match._keeping[view.seat] = view.keeping
            match._giving[view.seat] = view.giving
        hands: list[tuple[Card, ...]] = [()] * obs.players
        if obs.viewer is not None:
            hands[obs.viewer] = self._viewer_hand
        if obs.phase is Phase.OPENING:
            self._deal_openings(match, hands, cards, rng)
        else:
            self._deal_turn(match, hands, cards, rng)
        match._removed = [cards.pop() for _ in range(obs.removed_count)]
        match._deck = cards  # what is left: exactly deck_count cards, in random order
        start = tuple(obs.festival[:2])  # R10: laid 1st then 2nd
        events: list[Event] = [
            FestivalStarted(start, tuple(card.colour for card in start), obs.first_seat)
        ]
        events.extend(CardsDealt(seat, hand) for seat, hand in enumerate(hands))
        match._setup_events = tuple(events)
        return match

    def _deal_openings(
        self,
        match: Match,
        hands: list[tuple[Card, ...]],
        cards: list[Card],
        rng: random.Random,
    ) -> None:
        """R11: two cards for every other seat, chosen from if that seat has chosen."""
        obs = self._observation
        for seat in self._others:
            hands[seat] = (cards.pop(), cards.pop())
        for view in obs.seats:
            hand = hands[view.seat]
            if not view.opening_done:
                match._hands[view.seat] = hand
            elif view.seat == obs.viewer:
                match._openings[view.seat] = Action.opening(obs.opening[1])
            else:
                match._openings[view.seat] = Action.opening(hand[rng.randrange(HAND_SIZE)])

    def _deal_turn(
        self,
        match: Match,
        hands: list[tuple[Card, ...]],
        cards: list[Card],
        rng: random.Random,
    ) -> None:
        """The secret pile with its owners, the opening choices and the drawn card."""
        obs = self._observation
        match._hands = [None] * obs.players
        secret: list[SecretCard] = []
        if obs.viewer is not None:
            secret.extend(SecretCard(obs.viewer, card) for card in obs.my_secret)
            match._placed_secret[obs.viewer] = list(obs.my_secret)
            match._openings[obs.viewer] = Action.opening(obs.opening[1])
        # R11: every other seat put one card face down at the start; whoever
        # added the rest is public in the real game but not in an observation,
        # and does not change how the match plays on.
        owners = list(self._others)
        owners.extend(rng.choice(self._others) for _ in range(self._others_secret - len(owners)))
        for owner in owners:
            card = cards.pop()
            if not match._placed_secret[owner]:  # the first is the opening card
                hands[owner] = (self._bouquet_cards[owner], card)
                match._openings[owner] = Action.opening(card)
            match._placed_secret[owner].append(card)
            secret.append(SecretCard(owner, card))
        match._secret = secret  # in no particular order: R19 shuffles it before the reveal
        assert obs.active is not None
        match._active = obs.active
        match._used = obs.used
        match._legal = match._legal_table[obs.used][obs.active]
        match._drawn = obs.drawn if obs.active == obs.viewer else cards.pop()


def determinise(observation: Observation, rng: random.Random) -> Match:
    """One match consistent with ``observation``, the unseen cards dealt at random."""
    return Determiniser(observation).sample(rng)
