"""``python -m engine.lab.vectors``: the deal's test vectors, ``docs/deal-vectors.json``.

docs/DEAL.md specifies, as language-neutral steps, how a match is dealt from
its seed (R3, R4, R10–R12) and how the end-of-match reveal draws its cards
(R19), so that a client in another language can check an open-box match
(R27). This tool writes the vectors that go with it: for each case (a seed,
a player count, a ruleset and the host's pick of first seat), every
intermediate result of the deal, and a whole match played with a fixed
policy, its actions listed so that any implementation can replay it, with
the secret pile, the revealed cards and the final scores.

Every value comes from the engine: the steps of :meth:`engine.Match.new` are
taken again with the engine's own chance draws (:mod:`engine._chance`) to
record what happens in between, and each case is then checked against the
match that ``Match.new`` deals and plays, so that a vector cannot drift from
the engine; ``tests/engine/test_deal_vectors.py`` checks the written file
against both the engine and an independent implementation of DEAL.md.

``--write`` writes the file; ``--check`` exits with status 1 if it is stale;
with neither, the file is printed to standard output.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._chance import generator, randbelow, shuffle
from ..actions import Action, ActionKind
from ..cards import Card, Colour, all_cards
from ..events import CardDrawn, CardsDealt, FestivalStarted, SecretRevealed
from ..match import Match
from ..observation import observe
from ..record import action_to_data
from ..ruleset import DEFAULT_RULESET, HAND_SIZE, PLAYER_COUNTS, Ruleset, ruleset_from_mapping

__all__ = [
    "CASES",
    "FORMAT",
    "PATH",
    "RULESETS",
    "SEEDS",
    "Case",
    "VectorError",
    "case_vector",
    "key_words",
    "main",
    "render",
    "vectors",
]

#: The vector file's format version: bumped only if a field changes meaning.
FORMAT = 1

#: Where the vectors live: ``docs/deal-vectors.json`` of this working tree.
PATH = Path(__file__).resolve().parents[2] / "docs" / "deal-vectors.json"

#: The seeds every player count is dealt with: the edges of the key's word
#: count (R27's seed is an unsigned 64-bit integer) and a few arbitrary ones.
SEEDS: tuple[int, ...] = (
    0,
    1,
    42,
    2**32 - 1,
    2**32,
    2**53 + 1,
    2**63 - 1,
    2**64 - 1,
    6_148_914_691_236_517_205,
    1_234_567_890_123_456_789,
)

#: A house ruleset (R30) that changes every number the deal uses, so that an
#: implementation that hard-codes the standard numbers fails its vectors.
HOUSE = ruleset_from_mapping(
    {
        "name": "house-vectors",
        "reveal_size": 3,
        "deck": {"copies": 5, "extra_copies": 3, "extra_from_players": 4},
        "removed": {"2": 11, "3": 6, "4": 9, "5": 7, "6": 3},
    }
)

#: The rulesets the cases use, by name.
RULESETS: dict[str, Ruleset] = {DEFAULT_RULESET.name: DEFAULT_RULESET, HOUSE.name: HOUSE}

#: One case: (seed, players, ruleset name, the host's pick of first seat or None).
Case = tuple[int, int, str, int | None]

#: Every case, in the file's order.
CASES: tuple[Case, ...] = (
    *((seed, players, "standard", None) for seed in SEEDS for players in PLAYER_COUNTS),
    *((seed, players, HOUSE.name, None) for seed in (42, 2**63 - 1) for players in PLAYER_COUNTS),
    (42, 4, "standard", 1),  # R12: the chance seat is drawn even when the host picks
    (2**63 - 1, 6, "standard", 0),
)

#: Raw 32-bit outputs of the generator listed per case.
OUTPUTS = 10

POLICY = (
    "opening: the second card dealt goes face down; each draw: of the legal actions"
    " in the prompt's order (keep, give to each other seat in seat order, add_face_up,"
    " add_secret, less the kinds the turn has used), the one at index"
    " (5 * draw + seat) mod their count, counting draws from 0"
)


def key_words(seed: int) -> list[int]:
    """The seed as ``init_by_array``'s key: 32-bit words, least significant first."""
    n = abs(seed)
    words = []
    while True:
        words.append(n & 0xFFFF_FFFF)
        n >>= 32
        if not n:
            return words


def _cards(cards: Sequence[Card]) -> list[str]:
    return [str(card) for card in cards]


def _policy(match: Match, seat: int, draw: int, hands: list[list[Card]]) -> Action:
    """The fixed policy of the played match (:data:`POLICY`)."""
    legal = match.legal_actions(seat)
    if legal[0].kind is ActionKind.OPENING:
        return Action.opening(hands[seat][1])
    return legal[(5 * draw + seat) % len(legal)]


class VectorError(RuntimeError):
    """The steps recorded for a vector disagree with what the engine did."""


def _check(holds: bool, what: str) -> None:
    if not holds:
        raise VectorError(f"the recorded steps disagree with Match.new: {what}")


def case_vector(seed: int, players: int, ruleset: Ruleset, host_first_seat: int | None) -> Any:
    """Every step of one case's deal and played match, as plain data (DEAL.md)."""
    rng = generator(seed)
    probe = generator(seed)
    outputs = [probe.getrandbits(32) for _ in range(OUTPUTS)]
    # R3: the deck in its order before shuffling
    deck = _deck(ruleset, players)
    shuffle(rng, deck)
    shuffled = list(deck)
    # R4: the top cards, top first (the top is the list's last element)
    removed = [deck.pop() for _ in range(ruleset.removed[players])]
    # R10: turn over until two colours have appeared; the others go back, reshuffled
    first = deck.pop()
    second = deck.pop()
    turned = []
    while second.colour is first.colour:
        turned.append(second)
        second = deck.pop()
    deck.extend(turned)
    shuffle(rng, deck)
    reshuffled = list(deck)
    hands = [[deck.pop() for _ in range(HAND_SIZE)] for _ in range(players)]  # R11
    chance_seat = randbelow(rng, players)  # R12
    first_seat = chance_seat if host_first_seat is None else host_first_seat

    match = Match.new(players, seed, ruleset, host_first_seat)
    _agree(match, removed, (first, second), hands, first_seat, deck)
    openings: dict[int, str] = {}  # R11: each seat's face-down card
    later: list[dict[str, Any]] = []  # R16: the cards put face down during the turns
    actions: list[dict[str, Any]] = []
    drawn: list[Card] = []  # R13: every card drawn, in order (complete events show them)
    revealed: list[Card] = []
    ranking: tuple[Colour, ...] = ()
    while not match.is_over:
        seat = match.to_act[0]
        action = _policy(match, seat, len(drawn) - 1, hands)  # the draw being resolved
        if action.kind is ActionKind.OPENING:
            openings[seat] = str(action.secret)
        elif action.kind is ActionKind.ADD_SECRET:
            later.append({"seat": seat, "card": str(drawn[-1])})
        actions.append({"seat": seat, "action": action_to_data(action)})
        for event in match.apply(seat, action):
            if isinstance(event, CardDrawn) and event.card is not None:
                drawn.append(event.card)
            elif isinstance(event, SecretRevealed):
                revealed.append(event.card)
                ranking = event.ranking
    _check(drawn == deck[::-1], "R13: the draws are the deck after the deal, top first")
    # R9, R11: the opening cards go into the secret festival in seat order, then the turns'
    pile = [{"seat": s, "card": openings[s]} for s in range(players)] + later
    # R19: nothing is drawn during play; the pile is shuffled, and its first cards revealed
    shuffled_pile = list(pile)
    shuffle(rng, shuffled_pile)
    shown = shuffled_pile[: ruleset.reveal_size]
    _check([entry["card"] for entry in shown] == _cards(revealed), "R19: the revealed cards")
    hidden = [{"seat": e.owner, "card": str(e.card)} for e in match._secret]
    _check(hidden == shuffled_pile[ruleset.reveal_size :], "R19: the cards left hidden")
    scoring = match.scoring
    if scoring is None:  # pragma: no cover - the loop above plays until the end
        raise VectorError("the match did not end")
    if not revealed:  # the final ranking is the festival's before any reveal
        ranking = observe(match, None).ranking
    return {
        "seed": str(seed),
        "key": key_words(seed),
        "players": players,
        "ruleset": ruleset.name,
        "host_first_seat": host_first_seat,
        "outputs": outputs,
        "shuffled": _cards(shuffled),
        "removed": _cards(removed),
        "turned": _cards(turned),
        "festival": _cards((first, second)),
        "ranking": [colour.value for colour in _started(match).ranking],
        "reshuffled": _cards(reshuffled),
        "hands": [_cards(hand) for hand in hands],
        "chance_seat": chance_seat,
        "first_seat": first_seat,
        "play": {
            "actions": actions,
            "secret_pile": pile,
            "shuffled_pile": shuffled_pile,
            "revealed": _cards(revealed),
            "ranking": [colour.value for colour in ranking],
            "totals": [p.total for p in scoring.players],
            "winners": list(scoring.winners),
        },
    }


def _agree(
    match: Match,
    removed: list[Card],
    festival: tuple[Card, Card],
    hands: list[list[Card]],
    first_seat: int,
    deck: list[Card],
) -> None:
    """Raise :class:`VectorError` unless ``Match.new`` dealt what the recorded steps
    say. The removed cards and the deck are hidden from every observation
    (R26), so the lab reads them from the match itself."""
    _check(match._removed == removed, "R4: the removed cards")
    _check(match._deck == deck, "R11: the deck after the deal")
    dealt = [list(e.cards or ()) for e in match.setup_events if isinstance(e, CardsDealt)]
    _check(dealt == hands, "R11: the hands")
    _check(match.first_seat == first_seat, "R12: the first seat")
    first, second = festival
    order = (second, first) if second.value > first.value else (first, second)
    _check(_started(match).cards == order, "R10: the starting festival, 1st first")


def _started(match: Match) -> FestivalStarted:
    started = match.setup_events[0]
    if not isinstance(started, FestivalStarted):  # pragma: no cover - R10 comes first
        raise VectorError("the setup does not start with the festival")
    return started


def _deck(ruleset: Ruleset, players: int) -> list[Card]:
    """R3: the deck before shuffling: by colour, then value, then copy."""
    return [card for card in all_cards() for _ in range(ruleset.copies_for(players))]


def vectors() -> dict[str, Any]:
    """The whole vector file as plain data."""
    return {
        "format": FORMAT,
        "about": "Test vectors of docs/DEAL.md; written by python -m engine.lab.vectors --write",
        "policy": POLICY,
        "rulesets": {name: rules.to_mapping() for name, rules in RULESETS.items()},
        "decks": {
            name: {str(n): _cards(_deck(rules, n)) for n in PLAYER_COUNTS}
            for name, rules in RULESETS.items()
        },
        "cases": [
            case_vector(seed, players, RULESETS[name], host) for seed, players, name, host in CASES
        ],
    }


def render(data: dict[str, Any]) -> str:
    """The file's text: JSON with maps opened up and lists kept on one line, so
    that each field of a case is one line and a diff reads well."""
    return _render(data, 0) + "\n"


def _render(value: Any, depth: int) -> str:
    if depth == 1 and isinstance(value, list):  # the cases, one after another
        inner = "  " * (depth + 1)
        items = [inner + _render(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * depth + "]"
    if not isinstance(value, dict) or depth >= 4 or not value:
        return json.dumps(value, ensure_ascii=False)
    inner = "  " * (depth + 1)
    items = [f"{inner}{json.dumps(k)}: {_render(v, depth + 1)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"


def main(argv: Sequence[str] | None = None) -> int:
    """Write, check or print the vector file."""
    parser = argparse.ArgumentParser(prog="python -m engine.lab.vectors", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"write {PATH.name}")
    mode.add_argument("--check", action="store_true", help=f"exit 1 if {PATH.name} is stale")
    args = parser.parse_args(argv)
    text = render(vectors())
    if args.write:
        PATH.write_text(text, encoding="utf-8")
        return 0
    if args.check:
        current = PATH.read_text(encoding="utf-8") if PATH.exists() else ""
        if current != text:
            print(f"{PATH} is stale: run python -m engine.lab.vectors --write", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
