"""MatchRecord: a match saved as ``(ruleset, players, seed, first seat,
actions)`` and written as JSON text reads back equal and replays the same
history, events, views and final scoring; a corrupted record raises
RecordError."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from engine import Action, Event, Match, Ruleset, observe
from engine.events import MatchEnded
from engine.record import MatchRecord, RecordError, action_from_data, action_to_data

from .helpers import KEEP, SECRET, UP, card, give, play_random


def played(
    players: int, seed: int, steps: int | None = None, first_seat: int | None = None
) -> tuple[Match, list[Event]]:
    """A seeded match played at random to the end (or for ``steps`` actions), and its
    events, setup included. The first seat is left to chance unless given (R12)."""
    match = Match.new(players, seed, first_seat=first_seat)
    events = list(match.setup_events)
    events += play_random(match, random.Random(seed), steps)
    return match, events


def through_json(record: MatchRecord) -> MatchRecord:
    """The record written as JSON text and read back."""
    text = json.dumps(record.to_data(), sort_keys=True)
    return MatchRecord.from_data(json.loads(text))


@pytest.mark.parametrize("first_seat", [None, 1], ids=["chance", "host"])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_record_round_trip_replays_history_and_scoring(
    players: int, first_seat: int | None
) -> None:
    """A finished match's record survives JSON and replays to the same events and scoring,
    whether the host or chance picked the first seat (R12)."""
    match, events = played(players, seed=40 + players, first_seat=first_seat)
    record = MatchRecord.of(match)
    loaded = through_json(record)
    assert loaded == record
    replayed, replay_events = loaded.replay_events()
    assert replayed.history == match.history
    assert replay_events == events
    assert replayed.is_over and replayed.scoring == match.scoring
    assert isinstance(replay_events[-1], MatchEnded)
    for seat in [*range(players), None]:
        assert observe(replayed, seat) == observe(match, seat)
    assert MatchRecord.of(replayed).to_data() == record.to_data()


def test_record_of_unfinished_match_replays_to_the_same_point() -> None:
    """A record taken mid-turn replays to the same state, and both play on identically."""
    match, _ = played(4, seed=3, steps=4 + 9)  # first seat left to chance
    record = through_json(MatchRecord.of(match))
    replayed = record.replay()
    assert not replayed.is_over
    for seat in [*range(4), None]:
        assert observe(replayed, seat) == observe(match, seat)
    assert play_random(replayed, random.Random(1)) == play_random(match, random.Random(1))
    assert replayed.scoring == match.scoring


def test_record_keeps_the_first_seat_and_a_custom_ruleset() -> None:
    """The host's first-seat pick and a house ruleset are stored and used by the replay."""
    house = Ruleset(name="house", reveal_size=2, giving_bonus=(5, 4, 3, 2))
    match = Match.new(3, seed=8, ruleset=house, first_seat=2)
    play_random(match, random.Random(8))
    record = through_json(MatchRecord.of(match))
    assert record.ruleset == house and record.first_seat == 2
    replayed = record.replay()
    assert replayed.first_seat == 2 and replayed.ruleset == house
    assert replayed.scoring == match.scoring


def test_record_of_a_new_match_has_no_actions() -> None:
    """A record taken before anyone acts replays to the setup alone."""
    match = Match.new(2, seed=1)
    record = through_json(MatchRecord.of(match))
    assert record.actions == ()
    replayed, events = record.replay_events()
    assert events == list(match.setup_events)
    assert observe(replayed, 0) == observe(match, 0)


@pytest.mark.parametrize(
    "action", [KEEP, UP, SECRET, give(0), give(5), Action.opening(card("orange-4"))]
)
def test_action_data_round_trips(action: Action) -> None:
    """Every kind of action is written as plain data and read back equal."""
    data = action_to_data(action)
    assert json.loads(json.dumps(data)) == data
    assert action_from_data(data) == action


def test_action_data_spelling() -> None:
    """Actions use the protocol's spelling: kind, to_seat, secret as ``colour-value``."""
    assert action_to_data(give(2)) == {"kind": "give", "to_seat": 2}
    assert action_to_data(Action.opening(card("pink-3"))) == {
        "kind": "opening",
        "secret": "pink-3",
    }
    assert action_to_data(SECRET) == {"kind": "add_secret"}


# -- corrupted records ---------------------------------------------------------------


def base_data() -> dict[str, Any]:
    """The plain data of a short, legal record."""
    match, _ = played(3, seed=5, steps=3 + 4)
    return MatchRecord.of(match).to_data()


def corrupt(path: tuple[Any, ...], value: Any = None, *, delete: bool = False) -> dict[str, Any]:
    """``base_data()`` with the item at ``path`` replaced (or deleted)."""
    data = copy.deepcopy(base_data())
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    "data",
    [
        corrupt(("players",), delete=True),
        corrupt(("actions",), delete=True),
        corrupt(("ruleset",), delete=True),
        corrupt(("seed",), "forty"),
        corrupt(("players",), None),
        corrupt(("actions",), 7),
        corrupt(("actions", 0), [0]),
        corrupt(("actions", 0), [0, {"kind": "opening"}]),
        corrupt(("actions", 1, 1), {"kind": "fold"}),
        corrupt(("actions", 1, 1), {"kind": "opening", "secret": "pink-9"}),
        corrupt(("actions", 1, 1), {"kind": "opening", "secret": 3}),
        corrupt(("actions", 4, 1), {"kind": "give"}),
        corrupt(("actions", 4, 1), {"kind": "give", "to_seat": "left"}),
        corrupt(("actions", 4, 1), "keep"),
        corrupt(("actions", 0, 0), "zero"),
        corrupt(("ruleset",), "standard"),
        corrupt(("ruleset", "removed", "4"), 60),
        corrupt(("ruleset", "jokers"), 2),
    ],
)
def test_corrupted_record_refused_on_reading(data: dict[str, Any]) -> None:
    """Missing fields, wrong types, unknown kinds and bad rulesets raise RecordError."""
    with pytest.raises(RecordError):
        MatchRecord.from_data(data)


def test_not_a_mapping_refused() -> None:
    """Data that is not a record at all raises RecordError."""
    bad: tuple[object, ...] = (None, [], "record", 3)
    for data in bad:
        with pytest.raises(RecordError):
            MatchRecord.from_data(data)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "index"),
    [
        (corrupt(("actions", 0, 1), {"kind": "keep"}), 0),  # a turn action in the opening
        (corrupt(("actions", 1, 0), 0), 1),  # seat 0 chooses twice
        (corrupt(("actions", 0, 1), {"kind": "opening", "secret": "pink-2"}), 0),
        (corrupt(("actions", 5, 0), 9), 5),  # a seat the match does not have
        (corrupt(("actions", 4, 1), {"kind": "give", "to_seat": 7}), 4),
        (corrupt(("seed",), 6), None),  # another deal: the openings no longer fit
    ],
)
def test_corrupted_record_refused_on_replay(data: dict[str, Any], index: int | None) -> None:
    """A record whose actions do not replay raises RecordError naming the action."""
    record = MatchRecord.from_data(data)
    with pytest.raises(RecordError) as info:
        record.replay()
    if index is not None:
        assert f"action {index} does not replay" in str(info.value)


def test_actions_after_the_end_refused_on_replay() -> None:
    """An action recorded after the game ended does not replay."""
    match, _ = played(2, seed=2)
    data = MatchRecord.of(match).to_data()
    data["actions"].append([0, {"kind": "keep"}])
    with pytest.raises(RecordError, match="does not replay"):
        MatchRecord.from_data(data).replay()


@pytest.mark.parametrize(
    ("field", "value"), [("players", 9), ("players", 1), ("first_seat", 3), ("first_seat", -1)]
)
def test_impossible_table_refused_as_record_error(field: str, value: int) -> None:
    """A record with an impossible player count or first seat raises RecordError."""
    data = base_data()
    data[field] = value
    with pytest.raises(RecordError):
        MatchRecord.from_data(data).replay()
