"""Determinisation: whole matches that one seat cannot tell from the real one.

A bot that searches must not read the match it plays in: it sees only its
:class:`~engine.observation.Observation`. To use the engine as a forward
model it fills in what it cannot see — the deck's content and order, the
removed cards, the face-down cards others put in the secret festival, other
seats' opening hands, another seat's drawn card — with a uniform sample of
the cards it has not seen, and plays on that *determinised* match instead.

:class:`Determiniser` works out once, from an observation, which cards are
unseen and where they must go; :meth:`Determiniser.sample` then deals them
out afresh each time, and builds the :class:`~engine.match.Match` mid-game
with :meth:`~engine.match.Match.assemble`, which checks the parts agree. The
sample keeps the match's invariants:

* every card is in exactly one place, and the places hold the full deck of
  :meth:`~engine.ruleset.Ruleset.copies_for` copies of each card (R3);
* everything the viewer may see is copied from the observation, so
  ``observe(sample, viewer) == observation`` field for field — the
  observation holds nothing the viewer could not know, so nothing differs;
* the opening hands, opening choices, the secret pile with its owners, the
  active seat and the action already used this turn agree with each other,
  so the match plays on from here exactly as a real one would;
* chance — the deck order and the end-of-game reveal (R19) — comes from the
  sampling generator only; the sample's history is empty and ``dealt`` is
  True, since no seed could rebuild it.

Unseen cards are spread uniformly (every arrangement of the unseen multiset
is equally likely); what other seats chose to hide is not modelled.
"""

from __future__ import annotations

import random
from collections import Counter

from ..cards import Card, all_cards
from ..match import Match, Phase, SecretCard
from ..observation import Observation
from ..ruleset import HAND_SIZE

__all__ = ["Determiniser", "determinise", "unseen_cards"]

# module globals: EnumType.__getattr__ makes Phase.OPENING slow on a hot path (3.11)
_OPENING, _OVER = Phase.OPENING, Phase.OVER


def _seen_cards(observation: Observation) -> list[Card]:
    """Every card the viewer knows the place of, each copy once."""
    seen = list(observation.festival)
    for view in observation.seats:
        seen.extend(view.bouquet)
    if observation.phase is _OPENING:
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
        if observation.phase is _OVER:
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
        if obs.phase is _OPENING:
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
        seed = rng.getrandbits(32)  # the sample's own generator drives only the reveal (R19)
        hands: list[tuple[Card, ...]] = [()] * obs.players
        openings: list[Card | None] = [None] * obs.players
        if obs.viewer is not None:
            hands[obs.viewer] = self._viewer_hand
        secret: list[SecretCard] = []
        drawn = None
        if obs.phase is _OPENING:
            self._deal_openings(hands, openings, cards, rng)
        else:
            drawn = self._deal_turn(hands, openings, secret, cards, rng)
        removed = [cards.pop() for _ in range(obs.removed_count)]
        cards.reverse()  # what is left: exactly deck_count cards, first drawn first
        return Match.assemble(
            ruleset=obs.ruleset,
            players=obs.players,
            seed=seed,
            first_seat=obs.first_seat,
            phase=obs.phase,
            turn=obs.turn,
            festival=obs.festival,
            ranking=obs.ranking,
            bouquets=[view.bouquet for view in obs.seats],
            keeping=[view.keeping for view in obs.seats],
            giving=[view.giving for view in obs.seats],
            hands=hands,
            openings=openings,
            secret=secret,
            deck=cards,
            removed=removed,
            active=obs.active,
            used=obs.used,
            drawn=drawn,
            moves=obs.moves,
        )

    def _deal_openings(
        self,
        hands: list[tuple[Card, ...]],
        openings: list[Card | None],
        cards: list[Card],
        rng: random.Random,
    ) -> None:
        """R11: two cards for every other seat, chosen from if that seat has chosen."""
        obs = self._observation
        for seat in self._others:
            hands[seat] = (cards.pop(), cards.pop())
        for view in obs.seats:
            if not view.opening_done:
                continue
            if view.seat == obs.viewer:
                openings[view.seat] = obs.opening[1]
            else:
                openings[view.seat] = hands[view.seat][rng.randrange(HAND_SIZE)]

    def _deal_turn(
        self,
        hands: list[tuple[Card, ...]],
        openings: list[Card | None],
        secret: list[SecretCard],
        cards: list[Card],
        rng: random.Random,
    ) -> Card:
        """The secret pile with its owners and the opening choices; returns the drawn card."""
        obs = self._observation
        if obs.viewer is not None:
            secret.extend(SecretCard(obs.viewer, card) for card in obs.my_secret)
            openings[obs.viewer] = obs.opening[1]
        # R11: every other seat put one card face down at the start; whoever
        # added the rest is public in the real game but not in an observation,
        # and does not change how the match plays on.
        owners = list(self._others)
        owners.extend(rng.choice(self._others) for _ in range(self._others_secret - len(owners)))
        for owner in owners:
            card = cards.pop()
            if openings[owner] is None:  # the first is the opening card
                hands[owner] = (self._bouquet_cards[owner], card)
                openings[owner] = card
            secret.append(SecretCard(owner, card))
        # the pile in no particular order: R19 shuffles it before the reveal
        if obs.active == obs.viewer:
            assert obs.drawn is not None
            return obs.drawn
        return cards.pop()


def determinise(observation: Observation, rng: random.Random) -> Match:
    """One match consistent with ``observation``, the unseen cards dealt at random."""
    return Determiniser(observation).sample(rng)
