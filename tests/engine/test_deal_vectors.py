"""docs/DEAL.md and its vectors, docs/deal-vectors.json (R3, R4, R10–R13, R18, R19, R27).

Three things hold the document, the vectors and the engine together:

* the engine reproduces every vector (``python -m engine.lab.vectors`` writes
  the file from the engine, and each recorded match replays in it);
* an independent implementation of DEAL.md, written here from the text alone
  (no ``engine._chance``, no ``random``, no engine code), computes every
  field of every vector: so the text is complete;
* its generator and draws are CPython's ``random.Random`` exactly, checked
  against the standard library itself.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Match, ruleset_from_mapping
from engine.events import SecretRevealed
from engine.lab import vectors as lab
from engine.record import action_from_data

FILE = Path(__file__).resolve().parents[2] / "docs" / "deal-vectors.json"


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FILE.read_text(encoding="utf-8"))
    return data


def _cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = _data()["cases"]
    return cases


def _case_id(case: dict[str, Any]) -> str:
    host = case["host_first_seat"]
    pick = "" if host is None else f"-host{host}"
    return f"{case['ruleset']}-{case['seed']}-{case['players']}p{pick}"


# -- DEAL.md, written again from the text: no engine, no random ---------------------------

MASK = 0xFFFF_FFFF
N, M = 624, 397
MATRIX_A, UPPER, LOWER = 0x9908B0DF, 0x8000_0000, 0x7FFF_FFFF


def key_of(seed: int) -> list[int]:
    """DEAL.md §1, Key: 32-bit words, least significant first, at least one."""
    words = [seed & MASK]
    seed >>= 32
    while seed:
        words.append(seed & MASK)
        seed >>= 32
    return words


class MT19937:
    """DEAL.md §1: seeding by init_by_array, one output with tempering."""

    def __init__(self, seed: int) -> None:
        self.mt = [0] * N
        self.mti = N
        self._init_by_array(key_of(seed))

    def _init_genrand(self, s: int) -> None:
        mt = self.mt
        mt[0] = s & MASK
        for i in range(1, N):
            mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & MASK
        self.mti = N

    def _init_by_array(self, key: Sequence[int]) -> None:
        self._init_genrand(19650218)
        mt = self.mt
        i, j = 1, 0
        for _ in range(max(N, len(key))):
            mt[i] = (
                (mt[i] ^ (((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525) & MASK)) + key[j] + j
            ) & MASK
            i += 1
            j += 1
            if i >= N:
                mt[0] = mt[N - 1]
                i = 1
            if j >= len(key):
                j = 0
        for _ in range(N - 1):
            mt[i] = ((mt[i] ^ (((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941) & MASK)) - i) & MASK
            i += 1
            if i >= N:
                mt[0] = mt[N - 1]
                i = 1
        mt[0] = 0x8000_0000

    def genrand_uint32(self) -> int:
        """One raw output."""
        mt = self.mt
        if self.mti >= N:
            for k in range(N):
                y = (mt[k] & UPPER) | (mt[(k + 1) % N] & LOWER)
                mt[k] = mt[(k + M) % N] ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)
            self.mti = 0
        y = mt[self.mti]
        self.mti += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y & MASK

    def getrandbits(self, k: int) -> int:
        """DEAL.md §2: the top ``k`` bits of one output, 1 ≤ k ≤ 32."""
        assert 1 <= k <= 32
        return self.genrand_uint32() >> (32 - k)

    def randbelow(self, n: int) -> int:
        """DEAL.md §2: 0 to n − 1, by rejection."""
        k = n.bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return r

    def shuffle(self, items: list[Any]) -> None:
        """DEAL.md §2: Fisher–Yates from the end."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]


COLOURS = ("purple", "blue", "pink", "orange")


def colour(card: str) -> str:
    """The colour part of a card's spelling."""
    return card.split("-")[0]


def value(card: str) -> int:
    """The value part of a card's spelling."""
    return int(card.split("-")[1])


@dataclass
class Table:
    """What DEAL.md's steps compute for one case."""

    outputs: list[int] = field(default_factory=list)
    deck: list[str] = field(default_factory=list)
    shuffled: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    turned: list[str] = field(default_factory=list)
    festival: list[str] = field(default_factory=list)
    ranking: list[str] = field(default_factory=list)
    reshuffled: list[str] = field(default_factory=list)
    hands: list[list[str]] = field(default_factory=list)
    chance_seat: int = -1
    first_seat: int = -1
    play: dict[str, Any] = field(default_factory=dict)


def climb(ranking: list[str], totals: dict[str, int], card: str) -> None:
    """DEAL.md §6, Ranking: the colour's total rises, then it moves up."""
    c = colour(card)
    totals[c] += value(card)
    if c not in ranking:
        ranking.append(c)
    i = ranking.index(c)
    while i > 0 and totals[ranking[i - 1]] <= totals[c]:
        ranking[i - 1], ranking[i] = ranking[i], ranking[i - 1]
        i -= 1


def deal(seed: int, players: int, rules: dict[str, Any], host: int | None) -> tuple[MT19937, Table]:
    """DEAL.md §3, steps 1–6."""
    table = Table()
    probe = MT19937(seed)
    table.outputs = [probe.genrand_uint32() for _ in range(10)]
    g = MT19937(seed)
    deck_rules = rules["deck"]
    c = deck_rules["copies"]
    if players >= deck_rules["extra_from_players"]:
        c += deck_rules["extra_copies"]
    deck = [f"{col}-{v}" for col in COLOURS for v in (2, 3, 4) for _ in range(c)]
    table.deck = list(deck)
    g.shuffle(deck)
    table.shuffled = list(deck)
    table.removed = [deck.pop() for _ in range(rules["removed"][str(players)])]
    first = deck.pop()
    second = deck.pop()
    while colour(second) == colour(first):
        table.turned.append(second)
        second = deck.pop()
    deck.extend(table.turned)
    g.shuffle(deck)
    table.reshuffled = list(deck)
    table.festival = [first, second]
    if value(second) > value(first):
        table.ranking = [colour(second), colour(first)]
    else:
        table.ranking = [colour(first), colour(second)]
    for _ in range(players):
        one = deck.pop()
        two = deck.pop()
        table.hands.append([one, two])
    table.chance_seat = g.randbelow(players)
    table.first_seat = table.chance_seat if host is None else host
    table.play = {"deck": deck}
    return g, table


def play(
    g: MT19937, table: Table, players: int, rules: dict[str, Any], actions: list[dict[str, Any]]
) -> dict[str, Any]:
    """DEAL.md §4–§6: replay the actions, reveal, score."""
    deck: list[str] = table.play["deck"]
    points = rules["points"]
    totals = dict.fromkeys(COLOURS, 0)
    ranking: list[str] = []
    for card in table.festival:
        totals[colour(card)] += value(card)
    ranking = list(table.ranking)
    bouquets: list[list[str]] = [[] for _ in range(players)]
    scores = [0] * players
    pile: list[dict[str, Any]] = []
    openings = actions[:players]
    chosen: dict[int, str] = {}
    for entry in openings:
        seat, action = entry["seat"], entry["action"]
        assert action["kind"] == "opening"
        hand = table.hands[seat]
        secret = action["secret"]
        assert secret in hand
        chosen[seat] = secret
    for seat in range(players):  # step 7: seat order, whatever the order of the choices
        hand = list(table.hands[seat])
        hand.remove(chosen[seat])
        bouquets[seat].append(hand[0])
        pile.append({"seat": seat, "card": chosen[seat]})
    active = table.first_seat
    drawn = deck.pop()
    first_of_turn = True
    rest = actions[players:]
    for n, entry in enumerate(rest):
        seat, action = entry["seat"], entry["action"]
        assert seat == active
        rank = ranking.index(colour(drawn)) if colour(drawn) in ranking else 3
        kind = action["kind"]
        if kind == "keep":
            scores[seat] += points["bouquet"][rank]
            bouquets[seat].append(drawn)
        elif kind == "give":
            scores[seat] += points["giving_bonus"][rank] + value(drawn)
            bouquets[action["to_seat"]].append(drawn)
        elif kind == "add_face_up":
            climb(ranking, totals, drawn)
        else:
            assert kind == "add_secret"
            pile.append({"seat": seat, "card": drawn})
        if first_of_turn and deck:
            drawn = deck.pop()
            first_of_turn = False
        elif deck:
            active = (active + 1) % players
            drawn = deck.pop()
            first_of_turn = True
        else:
            assert n == len(rest) - 1, "R18: the game is over"
    secret_pile = list(pile)
    g.shuffle(pile)  # step 9
    revealed = [entry["card"] for entry in pile[: rules["reveal_size"]]]
    for card in revealed:  # step 10
        climb(ranking, totals, card)
    places = rules["majority_places"][str(players)]
    for r, col in enumerate(ranking[:3]):
        standing = sorted(
            (
                (
                    -sum(colour(c) == col for c in bouquet),
                    -sum(value(c) for c in bouquet if colour(c) == col),
                    seat,
                )
                for seat, bouquet in enumerate(bouquets)
                if any(colour(c) == col for c in bouquet)
            )
        )
        place = -1
        last: tuple[int, int] | None = None
        for count, worth, seat in standing:
            if (count, worth) != last:
                place += 1
                last = (count, worth)
            if place >= places:
                break
            scores[seat] += points["majority"][r][place]
    best = max(scores)
    winners = [s for s in range(players) if scores[s] == best]
    most = max(len(bouquets[s]) for s in winners)
    winners = [s for s in winners if len(bouquets[s]) == most]
    return {
        "actions": actions,
        "secret_pile": secret_pile,
        "shuffled_pile": pile,
        "revealed": revealed,
        "ranking": ranking,
        "totals": scores,
        "winners": winners,
    }


# -- the tests ---------------------------------------------------------------------------


def test_r27_the_vector_file_is_what_the_engine_writes() -> None:
    """``python -m engine.lab.vectors --check``: the file is the engine's, up to date."""
    assert FILE.read_text(encoding="utf-8") == lab.render(lab.vectors())
    assert lab.main(["--check"]) == 0


def test_r27_the_vectors_cover_the_edges() -> None:
    """Every player count, the seed's word counts, cards turned over on the way (R10),
    a host's pick unlike chance's (R12), an odd number of draws (R18) and
    secret piles larger than the reveal (R19)."""
    cases = _cases()
    assert _data()["format"] == 1
    assert {c["players"] for c in cases} == {2, 3, 4, 5, 6}
    assert {len(c["key"]) for c in cases} == {1, 2}
    assert {int(c["seed"]) for c in cases} >= {0, 1, 42, 2**32 - 1, 2**32, 2**53 + 1, 2**63 - 1}
    assert any(c["turned"] for c in cases)
    assert any(c["host_first_seat"] not in (None, c["chance_seat"]) for c in cases)
    assert any((len(c["play"]["actions"]) - c["players"]) % 2 for c in cases)
    reveal = {name: rules["reveal_size"] for name, rules in _data()["rulesets"].items()}
    assert any(len(c["play"]["secret_pile"]) > reveal[c["ruleset"]] for c in cases)


@pytest.mark.parametrize("case", _cases(), ids=_case_id)
def test_r27_the_engine_replays_each_vector(case: dict[str, Any]) -> None:
    """Match.new deals the vector's hands and first seat, and its actions replay to
    the vector's revealed cards, ranking and scores (R10–R12, R19–R23)."""
    rules = ruleset_from_mapping(_data()["rulesets"][case["ruleset"]])
    match = Match.new(case["players"], int(case["seed"]), rules, case["host_first_seat"])
    assert match.first_seat == case["first_seat"]
    revealed = []
    for entry in case["play"]["actions"]:
        for event in match.apply(entry["seat"], action_from_data(entry["action"])):
            if isinstance(event, SecretRevealed):
                revealed.append(str(event.card))
    scoring = match.scoring
    assert match.is_over and scoring is not None
    assert revealed == case["play"]["revealed"]
    assert [p.total for p in scoring.players] == case["play"]["totals"]
    assert list(scoring.winners) == case["play"]["winners"]


@pytest.mark.parametrize("case", _cases(), ids=_case_id)
def test_r27_deal_md_alone_computes_each_vector(case: dict[str, Any]) -> None:
    """The steps of DEAL.md, implemented here without the engine, give every field."""
    rules = _data()["rulesets"][case["ruleset"]]
    seed, players = int(case["seed"]), case["players"]
    assert key_of(seed) == case["key"]
    g, table = deal(seed, players, rules, case["host_first_seat"])
    assert table.deck == _data()["decks"][case["ruleset"]][str(players)]
    got = {
        "outputs": table.outputs,
        "shuffled": table.shuffled,
        "removed": table.removed,
        "turned": table.turned,
        "festival": table.festival,
        "ranking": table.ranking,
        "reshuffled": table.reshuffled,
        "hands": table.hands,
        "chance_seat": table.chance_seat,
        "first_seat": table.first_seat,
    }
    for name, mine in got.items():
        assert mine == case[name], name
    assert play(g, table, players, rules, case["play"]["actions"]) == case["play"]


# -- DEAL.md's generator is CPython's random.Random ------------------------------------


@pytest.mark.parametrize("seed", lab.SEEDS)
def test_deal_md_generator_is_random_random(seed: int) -> None:
    """The same 32-bit outputs as ``random.Random(seed).getrandbits(32)``, past the
    first regeneration of the state (624 outputs)."""
    ours, theirs = MT19937(seed), random.Random(seed)
    assert [ours.genrand_uint32() for _ in range(700)] == [
        theirs.getrandbits(32) for _ in range(700)
    ]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), n=st.integers(1, 2**32 - 1), length=st.integers(0, 100))
def test_deal_md_draws_are_random_random(seed: int, n: int, length: int) -> None:
    """getrandbits(k ≤ 32), randbelow(n) and shuffle take the same outputs and give
    the same results as ``getrandbits``, ``randrange`` and ``shuffle``."""
    ours, theirs = MT19937(seed), random.Random(seed)
    for k in (1, 7, 31, 32):
        assert ours.getrandbits(k) == theirs.getrandbits(k)
    assert [ours.randbelow(n) for _ in range(3)] == [theirs.randrange(n) for _ in range(3)]
    mine, standard = list(range(length)), list(range(length))
    ours.shuffle(mine)
    theirs.shuffle(standard)
    assert mine == standard
    assert ours.genrand_uint32() == theirs.getrandbits(32)
