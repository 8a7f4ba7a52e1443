"""The match: a deterministic state machine of one game (R4–R23).

Invariants:

* Every random choice comes from ``self._rng``, a ``random.Random(seed)``;
  ``(ruleset, players, seed, first_seat, actions)`` rebuilds a match exactly.
* Every card is in exactly one place: the deck, the removed pile, the
  festival, the secret festival, an opening hand, the drawn card, or a bouquet.
* :meth:`Match.apply` is the only way to change a match after setup. It checks
  legality in :meth:`Match.refusal` first and, on refusal, raises without
  touching anything.
* The deck's top card is the *last* element of ``self._deck``.
"""

from __future__ import annotations

import enum
import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from ._chance import generator, randbelow, shuffle
from ._values import maker, value_class
from .actions import Action, ActionKind, TurnAction
from .cards import COLOURS, Card, Colour, all_cards
from .errors import ActionAlreadyUsed, GameOver, IllegalAction, NotYourTurn, UnknownSeat
from .events import (
    CardAddedFaceUp,
    CardAddedSecret,
    CardDrawn,
    CardGiven,
    CardKept,
    CardsDealt,
    Event,
    FestivalStarted,
    MatchEnded,
    OpeningChosen,
    OpeningRevealed,
    SecretRevealed,
    TurnStarted,
)
from .ruleset import (
    DEFAULT_RULESET,
    HAND_SIZE,
    MAX_PLAYERS,
    PLAYER_COUNTS,
    Ruleset,
    RulesetError,
)
from .scoring import UNRANKED, FinalScoring, final_scoring

__all__ = ["Match", "Phase", "SecretCard"]


class Phase(enum.Enum):
    """Who must act: every seat at once, the active seat, or nobody."""

    OPENING = "opening"  #: R11: every seat chooses at the same time
    TURN = "turn"  #: R13: the active seat resolves its drawn card
    OVER = "over"  #: R18: the game has ended

    __hash__ = object.__hash__  # singletons: see Colour.__hash__


@value_class
class SecretCard:
    """A card in the secret festival and the seat that put it there (R9)."""

    owner: int
    card: Card


_SIMPLE = {
    ActionKind.KEEP: Action.keep(),
    ActionKind.ADD_FACE_UP: Action.add_face_up(),
    ActionKind.ADD_SECRET: Action.add_secret(),
}

# R13/R16: which kinds of action the second card may still use.
_TURN_KINDS: dict[TurnAction | None, tuple[ActionKind, ...]] = {
    None: (ActionKind.KEEP, ActionKind.GIVE, ActionKind.ADD_FACE_UP, ActionKind.ADD_SECRET),
    TurnAction.KEEP: (ActionKind.GIVE, ActionKind.ADD_FACE_UP, ActionKind.ADD_SECRET),
    TurnAction.GIVE: (ActionKind.KEEP, ActionKind.ADD_FACE_UP, ActionKind.ADD_SECRET),
    TurnAction.ADD: (ActionKind.KEEP, ActionKind.GIVE),
}


def _turn_actions(used: TurnAction | None, seat: int, players: int) -> tuple[Action, ...]:
    built: list[Action] = []
    for kind in _TURN_KINDS[used]:
        if kind is ActionKind.GIVE:
            built.extend(Action.give(other) for other in range(players) if other != seat)
        else:
            built.append(_SIMPLE[kind])
    return tuple(built)


def _turn_entry(used: TurnAction | None, seat: int, players: int) -> tuple[tuple[Action, ...], int]:
    legal = _turn_actions(used, seat, players)
    return legal, sum(1 << action.bit for action in legal)


#: The legality of a turn (R13, R15, R16) by player count, then by the first
#: card's action, then by seat: the legal actions, and the mask of their
#: :attr:`~engine.actions.Action.bit`\ s that :meth:`Match.refusal` tests.
_TURN_TABLE: dict[int, dict[TurnAction | None, tuple[tuple[tuple[Action, ...], int], ...]]] = {
    players: {
        used: tuple(_turn_entry(used, seat, players) for seat in range(players))
        for used in _TURN_KINDS
    }
    for players in PLAYER_COUNTS
}

# Enum members read from module globals: in Python 3.11, EnumType.__getattr__ makes
# every ``Phase.TURN`` on a hot path cost a fifth of a microsecond.
_OPENING, _TURN, _OVER = Phase.OPENING, Phase.TURN, Phase.OVER
_OPENING_KIND, _GIVE_KIND = ActionKind.OPENING, ActionKind.GIVE
_KEEP_BIT = Action.keep().bit
_UP_BIT = Action.add_face_up().bit
_FIRST_GIVE_BIT = Action.give(0).bit

#: The hot path's builders of values (engine._values.maker): the same values as
#: calling the classes, built without type.__call__ and __init__ (1.5% of a playout).
_card_kept: Callable[[int, Card, int], CardKept] = maker(CardKept)
_card_given: Callable[[int, int, Card, int], CardGiven] = maker(CardGiven)
_card_added_face_up: Callable[[int, Card, tuple[Colour, ...]], CardAddedFaceUp] = maker(
    CardAddedFaceUp
)
_card_added_secret: Callable[[int, Card, int], CardAddedSecret] = maker(CardAddedSecret)
_card_drawn: Callable[[int, Card, int], CardDrawn] = maker(CardDrawn)
_turn_started: Callable[[int, int], TurnStarted] = maker(TurnStarted)
_secret_revealed: Callable[[Card, tuple[Colour, ...]], SecretRevealed] = maker(SecretRevealed)
_opening_chosen: Callable[[int, Card, Card], OpeningChosen] = maker(OpeningChosen)
_secret_card: Callable[[int, Card], SecretCard] = maker(SecretCard)
_opening_revealed: Callable[[tuple[Card, ...], int], OpeningRevealed] = maker(OpeningRevealed)
_match_ended: Callable[[FinalScoring], MatchEnded] = maker(MatchEnded)
_festival_started: Callable[[tuple[Card, ...], tuple[Colour, ...], int], FestivalStarted] = maker(
    FestivalStarted
)
_cards_dealt: Callable[[int, tuple[Card, ...]], CardsDealt] = maker(CardsDealt)

#: a generator without Random.__init__, which would seed it from the OS (~12 µs)
#: only for clone() to overwrite its state at once
_new_random = random.Random.__new__

#: R11: the opening choice of each card (every card is one of the twelve, engine.cards)
_OPENING_OF = {card: Action.opening(card) for card in all_cards()}

#: the value of ``to_act`` while one seat must act, by seat
_ONE_SEAT = tuple((seat,) for seat in range(MAX_PLAYERS))

#: R3: the deck of each number of copies, in canonical order
_DECKS: dict[int, tuple[Card, ...]] = {}


def _fresh_deck(copies: int) -> list[Card]:
    deck = _DECKS.get(copies)
    if deck is None:
        deck = _DECKS[copies] = tuple(card for card in all_cards() for _ in range(copies))
    return list(deck)


if TYPE_CHECKING:
    from _typeshed import SupportsGetItem

K = TypeVar("K")


def climb(ranking: list[K], totals: SupportsGetItem[K, int], colour: K) -> None:
    """R8, once ``colour``'s total has risen: it climbs from its place (or the
    bottom, if it was unranked) past every colour just above whose total is
    not higher, so it goes above those it ties with; the others keep their order.
    ``totals`` is read by colour: a mapping, or a list for colours numbered 0–3."""
    total = totals[colour]
    if colour in ranking:
        i = ranking.index(colour)
    else:
        i = len(ranking)
        ranking.append(colour)
    while i and totals[ranking[i - 1]] <= total:
        ranking[i] = ranking[i - 1]
        i -= 1
    ranking[i] = colour


class Match:
    """One game of Gift of Tulips for 2 to 6 seats, numbered from 0.

    Besides its methods, a match shows a few plain attributes, to be read and
    never written: ``players``, ``seed``, ``first_seat``, ``ruleset``,
    ``dealt``, and the two a player loop reads before every action, kept
    up to date by :meth:`apply` (plain attributes, not properties, because a
    property costs a Python call, twice per action of a bot's playout):

    * ``to_act`` — the seats that must act now: every undecided seat during
      the opening, the active seat during a turn, nobody once the game is over;
    * ``is_over`` — True once the game has ended (R18).
    """

    __slots__ = (
        "_active",
        "_bouquets",
        "_dealt",
        "_deck",
        "_drawn",
        "_festival",
        "_giving",
        "_hands",
        "_history",
        "_keeping",
        "_legal",
        "_legal_table",
        "_mask",
        "_moves_before",
        "_openings",
        "_phase",
        "_placed_secret",
        "_quiet",
        "_ranking",
        "_removed",
        "_revealed",
        "_rng",
        "_scoring",
        "_secret",
        "_setup_events",
        "_totals",
        "_turn",
        "_used",
        "dealt",
        "first_seat",
        "is_over",
        "players",
        "ruleset",
        "seed",
        "to_act",
    )

    # -- construction ---------------------------------------------------------------

    def __init__(
        self,
        ruleset: Ruleset,
        players: int,
        seed: int,
        first_seat: int,
        rng: random.Random | None = None,
    ) -> None:
        """Use :meth:`new`, :meth:`from_deal` or :meth:`assemble`; this sets up an
        empty table, whose generator is ``rng`` or else ``random.Random(seed)``."""
        ruleset.check_players(players)
        if not 0 <= first_seat < players:
            raise RulesetError("first_seat", f"must be a seat from 0 to {players - 1}")
        self.ruleset = ruleset
        self.players = players
        self.seed = seed
        self.first_seat = first_seat
        #: True for a match built by :meth:`from_deal` or :meth:`assemble`, which its
        #: seed cannot rebuild
        self.dealt = False
        self._rng = generator(seed) if rng is None else rng
        self._phase = _OPENING
        self._deck: list[Card] = []
        self._removed: list[Card] = []
        self._festival: list[Card] = []
        self._totals: dict[Colour, int] = dict.fromkeys(COLOURS, 0)
        self._ranking: list[Colour] = []
        self._secret: list[SecretCard] = []
        #: by seat, every card that seat put face down, revealed or not (R25)
        self._placed_secret: list[list[Card]] = []
        self._bouquets: list[list[Card]] = []
        for _ in range(players):  # a loop, not a comprehension: no call in Python 3.11
            self._placed_secret.append([])
            self._bouquets.append([])
        self._keeping = [0] * players
        self._giving = [0] * players
        self._hands: list[tuple[Card, ...] | None] = [None] * players
        self._openings: list[Action | None] = [None] * players
        self._active = first_seat
        self._turn = 0
        self._drawn: Card | None = None
        self._used: TurnAction | None = None
        #: during a turn, the active seat's legal actions and the mask of their bits;
        #: () and 0 otherwise, so that :meth:`refusal`'s fast test fails
        self._legal: tuple[Action, ...] = ()
        self._mask = 0
        self._legal_table = _TURN_TABLE[players]
        self.to_act: tuple[int, ...] = tuple(range(players))
        self.is_over = False
        self._revealed: list[Card] = []
        self._scoring: FinalScoring | None = None
        self._history: list[tuple[int, Action]] = []
        self._moves_before: tuple[tuple[int, Action], ...] = ()
        self._setup_events: tuple[Event, ...] = ()
        #: by seat, the two cards dealt (R11), kept apart from the events handed out
        self._dealt: tuple[tuple[Card, ...], ...] = ()
        #: True only while :meth:`apply_quiet` plays through :meth:`apply`
        self._quiet = False

    @classmethod
    def new(
        cls,
        players: int,
        seed: int,
        ruleset: Ruleset = DEFAULT_RULESET,
        first_seat: int | None = None,
    ) -> Match:
        """Shuffle, remove, lay the festival and deal, all from ``seed`` (R4, R10–R12).

        ``first_seat`` is the host's pick of the first player; ``None`` lets
        chance decide (R12).
        """
        copies = ruleset.copies_for(players)  # checks the player count first (R5)
        rng = generator(seed)
        deck = _fresh_deck(copies)
        shuffle(rng, deck)
        count = ruleset.removed[players]  # R4: the top cards, top first
        removed = deck[: -count - 1 : -1]
        del deck[len(deck) - count :]
        first = deck.pop()  # R10: turn over until two colours have appeared
        turned: list[Card] = []
        second = deck.pop()
        while second.colour is first.colour:
            turned.append(second)
            second = deck.pop()
        deck.extend(turned)
        shuffle(rng, deck)
        hands = []
        for _ in range(players):  # R11: two cards each
            hands.append((deck.pop(), deck.pop()))
        # R12: drawn even when the host picks, so a replay's generator stays in step.
        chance_seat = randbelow(rng, players)
        if first_seat is None:
            first_seat = chance_seat
        match = cls(ruleset, players, seed, first_seat, rng)
        match._lay_table(deck, removed, (first, second), hands)
        return match

    @classmethod
    def from_deal(
        cls,
        players: int,
        *,
        deck: Sequence[Card],
        festival: Sequence[Card],
        hands: Sequence[Sequence[Card]],
        removed: Sequence[Card] = (),
        first_seat: int = 0,
        seed: int = 0,
        ruleset: Ruleset = DEFAULT_RULESET,
    ) -> Match:
        """A match from a deal a caller chooses, for tests and worked examples.

        ``deck`` lists the cards to be drawn, first drawn first; ``festival``
        the two starting cards in the order they were turned over. ``seed``
        then only drives the end-of-game reveal (R19).
        """
        match = cls(ruleset, players, seed, first_seat)
        match.dealt = True
        if len(festival) != 2 or festival[0].colour is festival[1].colour:
            raise RulesetError("festival", "needs two cards of different colours (R10)")
        if len(hands) != players or any(len(hand) != HAND_SIZE for hand in hands):
            raise RulesetError("hands", f"needs {HAND_SIZE} cards for each of {players} seats")
        if not deck:
            raise RulesetError("deck", "needs at least one card to draw")
        cards = [*deck, *festival, *removed, *(card for hand in hands for card in hand)]
        limit = ruleset.copies_for(players)
        for card in set(cards):
            if cards.count(card) > limit:
                raise RulesetError("deck", f"more than {limit} copies of {card}")
        match._lay_table(
            list(reversed(deck)),
            list(removed),
            (festival[0], festival[1]),
            [tuple(hand) for hand in hands],
        )
        return match

    @classmethod
    def assemble(
        cls,
        *,
        ruleset: Ruleset,
        players: int,
        seed: int,
        first_seat: int,
        phase: Phase,
        turn: int,
        festival: Sequence[Card],
        ranking: Sequence[Colour],
        bouquets: Sequence[Sequence[Card]],
        keeping: Sequence[int],
        giving: Sequence[int],
        hands: Sequence[Sequence[Card]],
        openings: Sequence[Card | None],
        secret: Sequence[SecretCard],
        deck: Sequence[Card],
        removed: Sequence[Card],
        active: int | None = None,
        used: TurnAction | None = None,
        drawn: Card | None = None,
        moves: Sequence[tuple[int, Action]] = (),
    ) -> Match:
        """A match in the middle of its game, from every part of its state: what a
        bot's determinisation builds (``engine.bots.determinize``), and tests.

        ``festival`` lists the face-up cards in the order placed, the two
        starting cards first, 1st then 2nd (R10); ``ranking`` the ranked
        colours, 1st first (R7). ``hands`` are the two cards dealt to each seat
        and ``openings`` the one each put face down, None while undecided
        (R11). ``secret`` is the secret festival with each card's owner, the
        opening cards included (R9). ``deck`` lists the cards to be drawn,
        first drawn first. During a turn, ``active`` is the seat that must act,
        ``used`` the action its first card used (None before it) and ``drawn``
        the card it must place (R13). ``moves`` are the turn actions played
        so far, which observations list (R24).

        The colours' totals (R6) and the cards each seat put face down are
        worked out from these; the rest is checked against the rules that tie
        the parts together, and a part that breaks one raises
        :class:`~engine.ruleset.RulesetError` naming it. The match has no
        history and ``dealt`` is True, since no seed rebuilds it; ``seed``
        drives only the end-of-game reveal (R19).
        """
        match = cls(ruleset, players, seed, first_seat)
        match.dealt = True
        for name, part in (
            ("bouquets", bouquets),
            ("keeping", keeping),
            ("giving", giving),
            ("hands", hands),
            ("openings", openings),
        ):
            if len(part) != players:
                raise RulesetError(name, f"needs one entry for each of {players} seats")
        if any(len(hand) != HAND_SIZE for hand in hands):
            raise RulesetError("hands", f"needs {HAND_SIZE} cards for each seat (R11)")
        for hand, hidden in zip(hands, openings, strict=True):
            if hidden is not None and hidden not in hand:
                raise RulesetError("openings", f"{hidden} is not one of the cards dealt (R11)")
        if min(keeping) < 0 or min(giving) < 0:
            raise RulesetError("keeping", "points are never negative (R17)")
        match._lay_festival(festival, ranking)
        match._phase = phase
        match._turn = turn
        match._bouquets = [list(bouquet) for bouquet in bouquets]
        match._keeping = list(keeping)
        match._giving = list(giving)
        match._openings = [None if c is None else Action.opening(c) for c in openings]
        match._secret = list(secret)
        placed = match._placed_secret
        for entry in secret:
            if not 0 <= entry.owner < players:
                raise RulesetError("secret", f"owner {entry.owner!r} is not a seat")
            placed[entry.owner].append(entry.card)
        match._deck = list(reversed(deck))
        match._removed = list(removed)
        if phase is _OPENING:
            match._assemble_opening(hands, turn, active, used, drawn)
        elif phase is _TURN:
            match._assemble_turn(hands, turn, active, used, drawn)
        else:
            raise RulesetError("phase", "a match is assembled before its end: OPENING or TURN")
        events: list[Event] = [
            FestivalStarted(tuple(festival[:2]), tuple(c.colour for c in festival[:2]), first_seat)
        ]
        match._dealt = tuple(tuple(hand) for hand in hands)
        events.extend(CardsDealt(seat, hand) for seat, hand in enumerate(match._dealt))
        match._setup_events = tuple(events)
        match._check_copies(hands if phase is _OPENING else ())
        match._moves_before = tuple(moves)
        return match

    def _lay_festival(self, festival: Sequence[Card], ranking: Sequence[Colour]) -> None:
        """:meth:`assemble`'s festival: the totals, and a ranking that agrees with them."""
        if len(festival) < 2 or festival[0].colour is festival[1].colour:
            raise RulesetError("festival", "starts with two cards of different colours (R10)")
        totals = self._totals
        for card in festival:
            totals[card.colour] += card.value
        if len(set(ranking)) != len(ranking) or set(ranking) != {c.colour for c in festival}:
            raise RulesetError("ranking", "ranks every colour in the festival once (R7)")
        for higher, lower in itertools.pairwise(ranking):
            if totals[higher] < totals[lower]:
                raise RulesetError("ranking", f"{higher.value} ranks above a higher total (R8)")
        self._festival = list(festival)
        self._ranking = list(ranking)

    def _assemble_opening(
        self,
        hands: Sequence[Sequence[Card]],
        turn: int,
        active: int | None,
        used: TurnAction | None,
        drawn: Card | None,
    ) -> None:
        """:meth:`assemble` during the opening choice (R11)."""
        if turn != 0 or active is not None or used is not None or drawn is not None:
            raise RulesetError("phase", "no turn has started during the opening choice (R11)")
        if all(choice is not None for choice in self._openings):
            raise RulesetError("openings", "every seat has chosen: the opening is over (R11)")
        if self._secret or any(self._bouquets) or any(self._keeping) or any(self._giving):
            raise RulesetError("bouquets", "nothing is placed or scored before the reveal (R11)")
        if not self._deck:
            raise RulesetError("deck", "needs at least one card to draw")
        self._hands = [
            tuple(hand) if choice is None else None
            for hand, choice in zip(hands, self._openings, strict=True)
        ]
        self.to_act = tuple(s for s, hand in enumerate(self._hands) if hand is not None)

    def _assemble_turn(
        self,
        hands: Sequence[Sequence[Card]],
        turn: int,
        active: int | None,
        used: TurnAction | None,
        drawn: Card | None,
    ) -> None:
        """:meth:`assemble` during a turn (R13): the opening choices are revealed."""
        if turn < 1:
            raise RulesetError("turn", "turns are counted from 1")
        if active is None or not 0 <= active < self.players:
            raise RulesetError("active", f"must be a seat from 0 to {self.players - 1}")
        if used not in _TURN_KINDS:
            raise RulesetError("used", f"expected a TurnAction or None, got {used!r}")
        if drawn is None:
            raise RulesetError("drawn", "the active seat has drawn a card to place (R13)")
        for seat, (hand, choice) in enumerate(zip(hands, self._openings, strict=True)):
            if choice is None:
                raise RulesetError("openings", "every seat has chosen before the turns (R11)")
            bouquet_card = hand[1] if hand[0] == choice.secret else hand[0]
            placed = self._placed_secret[seat]
            if not placed or placed[0] != choice.secret:
                raise RulesetError("secret", f"seat {seat}'s first face-down card is its opening")
            if not self._bouquets[seat] or self._bouquets[seat][0] != bouquet_card:
                raise RulesetError("bouquets", f"seat {seat}'s bouquet starts with its opening")
        self._active = active
        self.to_act = (active,)
        self._used = used
        self._legal, self._mask = self._legal_table[used][active]
        self._drawn = drawn

    def _check_copies(self, hands: Sequence[Sequence[Card]]) -> None:
        """R3: no card in more copies than the deck holds, wherever they are.

        Cards are interned (:mod:`engine.cards`), so they are counted by
        identity, which spares their hashing on a bot's hot path."""
        places = itertools.chain(
            self._deck,
            self._removed,
            self._festival,
            [entry.card for entry in self._secret],
            *self._bouquets,
            *hands,
            () if self._drawn is None else (self._drawn,),
        )
        counts = Counter(map(id, places))
        limit = self.ruleset.copies_for(self.players)
        for card in all_cards():
            if counts[id(card)] > limit:
                raise RulesetError("deck", f"more than {limit} copies of {card}")

    def _lay_table(
        self,
        deck: list[Card],
        removed: list[Card],
        festival: tuple[Card, Card],
        hands: Sequence[tuple[Card, ...]],
    ) -> None:
        self._deck = deck
        self._removed = removed
        first, second = festival
        # R10: the higher value ranks 1st; on equal value the first turned over.
        order = (second, first) if second.value > first.value else (first, second)
        for card in order:
            self._festival.append(card)
            self._totals[card.colour] += card.value
            self._ranking.append(card.colour)
        self._hands = list(hands)
        self._dealt = tuple(hands)
        events: list[Event] = [_festival_started(order, tuple(self._ranking), self.first_seat)]
        for seat, hand in enumerate(hands):
            events.append(_cards_dealt(seat, hand))
        self._setup_events = tuple(events)

    def clone(self) -> Match:
        """An independent copy, random generator included."""
        other = Match.__new__(Match)
        other.ruleset = self.ruleset
        other.players = self.players
        other.seed = self.seed
        other.first_seat = self.first_seat
        other.dealt = self.dealt
        other._rng = rng = _new_random(random.Random)
        rng.setstate(self._rng.getstate())
        other._phase = self._phase
        other.is_over = self.is_over
        other._deck = self._deck.copy()
        other._removed = self._removed.copy()
        other._festival = self._festival.copy()
        other._totals = self._totals.copy()
        other._ranking = self._ranking.copy()
        other._secret = self._secret.copy()
        other._placed_secret = list(map(list.copy, self._placed_secret))
        other._bouquets = list(map(list.copy, self._bouquets))
        other._keeping = self._keeping.copy()
        other._giving = self._giving.copy()
        other._hands = self._hands.copy()
        other._openings = self._openings.copy()
        other._active = self._active
        other._turn = self._turn
        other._drawn = self._drawn
        other._used = self._used
        other._legal = self._legal
        other._mask = self._mask
        other._legal_table = self._legal_table
        other.to_act = self.to_act
        other._revealed = self._revealed.copy()
        other._scoring = self._scoring
        other._history = self._history.copy()
        other._moves_before = self._moves_before
        other._setup_events = self._setup_events
        other._dealt = self._dealt
        other._quiet = False
        return other

    # -- reading the state (public parts; the observation module reads the rest) ------

    @property
    def phase(self) -> Phase:
        """The current phase."""
        return self._phase

    @property
    def scoring(self) -> FinalScoring | None:
        """The final scoring once the game is over."""
        return self._scoring

    @property
    def history(self) -> tuple[tuple[int, Action], ...]:
        """Every accepted ``(seat, action)``, in order."""
        return tuple(self._history)

    @property
    def setup_events(self) -> tuple[Event, ...]:
        """The events of the setup (R10–R11), complete (project before sending)."""
        return self._setup_events

    def rank_of(self, colour: Colour) -> int | None:
        """0 for 1st … 3 for 4th, or None while the colour is unranked (R7)."""
        return self._ranking.index(colour) if colour in self._ranking else None

    # -- legality ---------------------------------------------------------------------

    def legal_actions(self, seat: int) -> tuple[Action, ...]:
        """Everything ``seat`` may do now; empty if it need not act."""
        if seat == self._active and self._legal:  # a turn's active seat (empty otherwise)
            return self._legal
        if self._phase is _OPENING and 0 <= seat < self.players:
            hand = self._hands[seat]
            if hand is not None:
                first, second = hand
                if first is second:
                    return (_OPENING_OF[first],)
                return (_OPENING_OF[first], _OPENING_OF[second])
        return ()

    def refusal(self, seat: int, action: Action) -> IllegalAction | None:
        """Why ``seat`` may not play ``action`` now, or None if it may.

        The one judge of legality: :meth:`apply` and :meth:`apply_quiet` both
        ask it first (apply runs its fast test inline, the same expression, and
        asks it whenever that test fails). During a turn an action is legal exactly when its bit is
        in the active seat's mask (R13, R15, R16), which is 0 in every other
        phase; everything else, and the reason for a refusal, is worked out
        the long way.
        """
        if (
            type(action) is Action
            and (self._mask >> action.bit) & 1
            and seat == self._active
            and type(seat) is int
        ):  # the common case, checked first and fast
            return None
        return self._full_refusal(seat, action)

    def _full_refusal(self, seat: int, action: Action) -> IllegalAction | None:
        if not isinstance(action, Action):
            return IllegalAction(seat, action, "not an action")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            return UnknownSeat(seat, action, f"seats go from 0 to {self.players - 1}")
        phase = self._phase
        if phase is _OVER:
            return GameOver(seat, action, "the game is over")
        if phase is _OPENING:
            if action.kind is not _OPENING_KIND:
                return IllegalAction(
                    seat, action, "every seat first makes its opening choice (R11)"
                )
            hand = self._hands[seat]
            if hand is None:  # the seat has nothing to do until every seat has chosen
                return NotYourTurn(seat, action, "the opening choice is already made")
            if action.secret not in hand:
                cards = " and ".join(map(str, hand))
                return IllegalAction(seat, action, f"the two cards dealt are {cards}")
            return None
        if seat != self._active:
            return NotYourTurn(seat, action, f"it is seat {self._active}'s turn")
        if action.kind is _OPENING_KIND:
            return IllegalAction(seat, action, "the opening choice is over")
        if action.turn_action is self._used:
            assert self._used is not None
            return ActionAlreadyUsed(
                seat, action, f"this turn's first card already used {self._used.value} (R13)"
            )
        if action.kind is _GIVE_KIND:
            to = action.to_seat
            if isinstance(to, bool) or not isinstance(to, int) or not 0 <= to < self.players:
                return UnknownSeat(seat, action, f"seats go from 0 to {self.players - 1}")
            if to == seat:
                return IllegalAction(seat, action, "a card is given to another player (R15)")
        return IllegalAction(seat, action, "not a legal action now")  # pragma: no cover

    # -- playing ----------------------------------------------------------------------

    def apply(self, seat: int, action: Action) -> list[Event]:
        """Play ``action`` for ``seat`` and return the events it caused, complete.

        Raises an :class:`~engine.errors.IllegalAction` and changes nothing if
        the rules do not allow it.
        """
        # One body for both paths: apply_quiet plays through here with _quiet set,
        # and then no event is made (events is None).
        events: list[Event] | None = None if self._quiet else []
        if not (
            type(action) is Action
            and (self._mask >> action.bit) & 1
            and seat == self._active
            and type(seat) is int
        ):  # refusal()'s fast test, inline: anything but a legal turn action asks it
            refusal = self._full_refusal(seat, action)
            if refusal is not None:
                raise refusal
            # the fast test passes every legal turn action, so this is the opening (R11)
            self._history.append((seat, action))
            self._play_opening(seat, action, events)
            return [] if events is None else events
        self._history.append((seat, action))
        card = self._drawn
        assert card is not None
        bit = action.bit
        if bit == _KEEP_BIT:  # R14, R17
            colour = card.colour
            ranking = self._ranking
            points = self.ruleset.bouquet_points[
                ranking.index(colour) if colour in ranking else UNRANKED  # R7
            ]
            self._keeping[seat] += points
            self._bouquets[seat].append(card)
            if events is not None:
                events.append(_card_kept(seat, card, points))
        elif bit >= _FIRST_GIVE_BIT:  # R15, R17
            to = action.to_seat
            assert to is not None
            colour = card.colour
            ranking = self._ranking
            points = (
                card.value
                + self.ruleset.giving_bonus[
                    ranking.index(colour) if colour in ranking else UNRANKED  # R7
                ]
            )
            self._giving[seat] += points
            self._bouquets[to].append(card)
            if events is not None:
                events.append(_card_given(seat, to, card, points))
        elif bit == _UP_BIT:  # R16, R8
            self._add_to_festival(card)
            if events is not None:
                events.append(_card_added_face_up(seat, card, tuple(self._ranking)))
        else:  # R16: face down
            self._secret.append(_secret_card(seat, card))
            self._placed_secret[seat].append(card)
            if events is not None:
                events.append(_card_added_secret(seat, card, len(self._secret)))
        deck = self._deck
        if self._used is None and deck:  # R13: the second card
            used = self._used = action.turn_action
            self._legal, self._mask = self._legal_table[used][seat]
            card = self._drawn = deck.pop()
            if events is not None:
                events.append(_card_drawn(seat, card, len(deck)))
        elif deck:  # the next seat's turn: _start_turn, inline on this hot path
            seat = self._active = (seat + 1) % self.players
            self.to_act = _ONE_SEAT[seat]
            self._used = None
            self._legal, self._mask = self._legal_table[None][seat]
            turn = self._turn = self._turn + 1
            card = self._drawn = deck.pop()
            if events is not None:
                events.append(_turn_started(seat, turn))
                events.append(_card_drawn(seat, card, len(deck)))
        else:  # R18: a turn ended and the deck is empty
            self._drawn = None
            self._end_game(events)
        return [] if events is None else events

    def apply_quiet(self, seat: int, action: Action) -> None:
        """:meth:`apply` without making its events, for a bot's search.

        It *is* :meth:`apply`, run with a flag that skips making the event
        objects: the same judge (:meth:`refusal`), the same raise on refusal,
        and the same state afterwards.
        """
        self._quiet = True
        try:
            self.apply(seat, action)
        finally:
            self._quiet = False

    def _play_opening(self, seat: int, action: Action, events: list[Event] | None) -> None:
        secret = action.secret
        hand = self._hands[seat]
        assert hand is not None and secret is not None
        bouquet = hand[1] if hand[0] is secret else hand[0]
        self._hands[seat] = None
        self._openings[seat] = action
        waiting = self.to_act
        i = waiting.index(seat)
        self.to_act = waiting[:i] + waiting[i + 1 :]
        if events is not None:
            events.append(_opening_chosen(seat, bouquet, secret))
        if self.to_act:
            return
        # R11: choices are revealed when every seat has chosen.
        placed = []
        for owner, choice in enumerate(self._openings):
            assert choice is not None and choice.secret is not None
            dealt = self._dealt[owner]
            card = dealt[1] if dealt[0] == choice.secret else dealt[0]
            self._bouquets[owner].append(card)
            self._secret.append(_secret_card(owner, choice.secret))
            self._placed_secret[owner].append(choice.secret)
            placed.append(card)
        if events is not None:
            events.append(_opening_revealed(tuple(placed), len(self._secret)))
        self._phase = _TURN
        self._start_turn(self.first_seat, events)

    def _setup_hand(self, seat: int) -> tuple[Card, ...]:
        return self._dealt[seat]

    def _start_turn(self, seat: int, events: list[Event] | None) -> None:
        """The first turn (R12, R13); apply starts every later one inline, the same way."""
        self._active = seat
        self.to_act = _ONE_SEAT[seat]
        self._used = None
        self._legal, self._mask = self._legal_table[None][seat]
        self._turn += 1
        card = self._drawn = self._deck.pop()
        if events is not None:
            events.append(_turn_started(seat, self._turn))
            events.append(_card_drawn(seat, card, len(self._deck)))

    def _add_to_festival(self, card: Card) -> None:
        """R8: the colour's total rises; it goes above every colour it now ties
        with or passes, and the others keep their relative order.

        The ranking is always ordered by total, highest first, so the colour
        only climbs: from its place (or the bottom, if it was unranked) past
        every colour just above whose total is not higher than its new one.
        """
        colour = card.colour
        self._totals[colour] += card.value
        self._festival.append(card)
        climb(self._ranking, self._totals, colour)

    def _end_game(self, events: list[Event] | None) -> None:
        """R19: reveal up to five secret cards at random; then R20–R23."""
        self._phase = _OVER
        self.is_over = True
        self._active = -1
        self.to_act = ()
        self._used = None
        self._legal = ()
        self._mask = 0
        pile = self._secret
        shuffle(self._rng, pile)
        shown = self.ruleset.reveal_size
        self._secret = pile[shown:]
        for entry in pile[:shown]:
            self._revealed.append(entry.card)
            self._add_to_festival(entry.card)
            if events is not None:
                events.append(_secret_revealed(entry.card, tuple(self._ranking)))
        self._scoring = final_scoring(
            self.ruleset, self._ranking, self._bouquets, self._keeping, self._giving
        )
        if events is not None:
            events.append(_match_ended(self._scoring))
