"""The server's rating updates against openskill's own numbers (issue 31),
and the rules of which matches and seats count (R23: shared places)."""

from __future__ import annotations

import dataclasses

import pytest
from openskill.models import PlackettLuce

from engine import DEFAULT_RULESET
from server.match.results import MatchResult, SeatResult, places
from server.match.settings import MatchSettings
from server.ratings.ledger import Standing, plan
from server.ratings.model import DEFAULT, Skill, counted_seats, default_rated


def _result(
    places_: list[int], *, bots: dict[int, str] | None = None, **seat_extra: dict[int, int]
) -> MatchResult:
    bots = bots or {}
    stand_in = seat_extra.get("stand_in", {})
    seats = tuple(
        SeatResult(
            seat=i,
            player=None if i in bots else f"p{i}",
            name=f"bot {i}" if i in bots else f"P{i}",
            bot=bots.get(i),
            points=60 - 5 * place,
            tulips=10,
            place=place,
            decisions=20,
            stand_in=stand_in.get(i, 0),
        )
        for i, place in enumerate(places_)
    )
    return MatchResult("m1", "a match", "standard", False, True, 1.0, seats)


#: priors of up to six players, so the numbers are not all from the defaults
_PRIORS = [(25.0, 25 / 3), (30.0, 4.0), (21.5, 6.5), (27.0, 2.5), (18.0, 8.0), (33.0, 3.3)]


@pytest.mark.parametrize(
    "ranks",
    [
        [1, 2],
        [1, 1],  # R23: a shared victory is a shared first place
        [2, 1, 4, 3],
        [1, 1, 3, 4],
        [3, 1, 2, 3, 5, 6],
        [1, 2, 2, 4, 4, 6],
    ],
)
def test_updates_match_openskill(ranks: list[int]) -> None:
    """For 2, 4 and 6 players, ties included, each seat's new μ and σ are
    openskill's PlackettLuce's for the same priors and ranks."""
    result = _result(ranks)
    priors = {f"p{i}": Standing(f"p{i}", Skill(*_PRIORS[i]), 3, 1) for i in range(len(ranks))}
    changes, new = plan(result, priors.get)
    model = PlackettLuce()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in _PRIORS[: len(ranks)]]
    expected = model.rate(teams, ranks=[float(r) for r in ranks])
    assert [c.seat for c in changes] == list(range(len(ranks)))
    for i, team in enumerate(expected):
        got = new[f"p{i}"]
        assert (got.skill.mu, got.skill.sigma) == pytest.approx((team[0].mu, team[0].sigma))
        assert got.matches == 4 and got.wins == 1 + (ranks[i] == 1)
        assert changes[i].before == Skill(*_PRIORS[i]) and changes[i].after == got.skill
        assert got.skill.ordinal == pytest.approx(team[0].ordinal())


def test_a_new_player_starts_at_openskills_defaults() -> None:
    """μ 25, σ 25/3, ordinal 0."""
    assert (DEFAULT.mu, DEFAULT.sigma) == pytest.approx((25.0, 25 / 3))
    assert DEFAULT.ordinal == pytest.approx(0.0)
    changes, _ = plan(_result([1, 2]), lambda ident: None)
    assert [c.before for c in changes] == [DEFAULT, DEFAULT]


def test_a_seat_the_stand_in_mostly_played_does_not_count() -> None:
    """More than half of its decisions by the stand-in: the seat's player keeps
    their rating, the others are rated among themselves; half is still theirs."""
    result = _result([1, 2, 3], stand_in={0: 11, 1: 10})
    assert [s.seat for s in counted_seats(result)] == [1, 2]
    changes, new = plan(result, lambda ident: None)
    assert set(new) == {"p1", "p2"} and [c.seat for c in changes] == [1, 2]
    model = PlackettLuce()
    expected = model.rate([[model.rating()], [model.rating()]], ranks=[2.0, 3.0])
    assert new["p1"].skill.mu == pytest.approx(expected[0][0].mu)
    # one counting seat left: nothing is rated
    assert plan(_result([1, 2], stand_in={1: 20}), lambda ident: None) == ([], {})


def test_bots_are_rated_per_strength() -> None:
    """A bot's seat is its strength's rating; two seats of one strength are
    rated apart from the same rating, and the strength takes their mean."""
    result = _result([1, 2, 3], bots={1: "easy", 2: "easy"})
    changes, new = plan(result, lambda ident: None)
    assert set(new) == {"p0", "bot_easy"}
    model = PlackettLuce()
    e = model.rate([[model.rating()] for _ in range(3)], ranks=[1.0, 2.0, 3.0])
    assert new["bot_easy"].skill.mu == pytest.approx((e[1][0].mu + e[2][0].mu) / 2)
    assert new["bot_easy"].matches == 1 and new["bot_easy"].wins == 0
    assert [c.ident for c in changes] == ["p0", "bot_easy", "bot_easy"]


def test_an_unrated_match_changes_nothing() -> None:
    unrated = dataclasses.replace(_result([1, 2]), rated=False)
    assert plan(unrated, lambda ident: None) == ([], {})


def test_places_follow_r23() -> None:
    """Points, then tulips; tied on both: a shared place, numbered as in sport."""

    class Score:
        def __init__(self, total: int, tulips: int) -> None:
            self.total, self.tulips = total, tulips

    class Scoring:
        players = [Score(50, 10), Score(50, 12), Score(40, 9), Score(50, 12), Score(10, 1)]

    assert places(Scoring()) == [3, 1, 4, 1, 5]  # type: ignore[arg-type]


def test_rated_by_default_with_the_printed_rules_only() -> None:
    """House rules and open box are unrated unless the host says."""
    standard = MatchSettings(name="m", ruleset_name="standard", ruleset=DEFAULT_RULESET)
    assert default_rated(standard)
    house = MatchSettings(name="m", ruleset_name="short reveal", ruleset=DEFAULT_RULESET)
    assert not default_rated(house)
    box = MatchSettings(name="m", ruleset_name="standard", ruleset=DEFAULT_RULESET, open_box=True)
    assert not default_rated(box)
