"""The protocol mirrors the engine's vocabulary with types of its own; these
tests keep the two from drifting apart (the server converts one to the other).

``protocol`` itself never imports ``engine`` (an import-linter contract); the
tests may, to compare them.
"""

from __future__ import annotations

import dataclasses
import re
from typing import get_args

import engine
from engine import events as engine_events
from engine.observation import Observation, SeatView
from engine.record import action_to_data
from engine.scoring import FinalScoring, MajorityPlace, MajorityResult, PlayerScore
from protocol import CARDS, COLOURS, types
from protocol import examples as ex


def snake(name: str) -> str:
    """``CardAddedFaceUp`` → ``card_added_face_up``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def fields(cls: type) -> set[str]:
    """The field names of an engine dataclass or a protocol struct."""
    if dataclasses.is_dataclass(cls):
        return {f.name for f in dataclasses.fields(cls) if f.init}
    return set(cls.__struct_fields__)  # type: ignore[attr-defined]


def test_cards_and_colours_are_spelt_as_the_engine_spells_them() -> None:
    """The twelve cards and four colours, in the engine's order and spelling."""
    assert tuple(str(card) for card in engine.all_cards()) == CARDS
    assert tuple(colour.value for colour in engine.COLOURS) == COLOURS


def test_enumerations_match() -> None:
    """Phases, turn actions and tie-breaks have the engine's values."""
    assert set(get_args(types.Phase)) == {p.value for p in engine.Phase}
    assert set(get_args(types.TurnAction)) == {a.value for a in engine.TurnAction}
    assert set(get_args(types.DecidedBy)) == {t.value for t in engine.TieBreak}


def test_actions_are_spelt_like_the_engine_record() -> None:
    """Every action kind exists in the engine, and reads as action_to_data writes it."""
    import msgspec

    assert {cls.__struct_config__.tag for cls in types.ACTION_TYPES} == {
        k.value for k in engine.ActionKind
    }
    for_engine = {
        "keep": engine.Action.keep(),
        "give": engine.Action.give(2),
        "add_face_up": engine.Action.add_face_up(),
        "add_secret": engine.Action.add_secret(),
        "opening": engine.Action.opening(engine.Card.parse("pink-4")),
    }
    for kind, action in ex.ACTION_EXAMPLES.items():
        assert msgspec.to_builtins(action) == action_to_data(for_engine[kind])


def test_events_mirror_the_engine_events() -> None:
    """Same kinds, same fields, same private fields."""
    engine_types = get_args(engine_events.Event)
    assert [snake(cls.__name__) for cls in engine_types] == [
        cls.__struct_config__.tag for cls in types.EVENT_TYPES
    ]
    for ours, theirs in zip(types.EVENT_TYPES, engine_types, strict=True):
        assert fields(ours) == fields(theirs), ours.__name__
        assert set(ours.private) == set(engine_events.PRIVATE_FIELDS.get(theirs, ())), ours


def test_state_mirrors_the_observation() -> None:
    """The snapshot's state holds the observation's fields: the viewer is the
    snapshot's `seat`, the player count is len(seats), the ruleset is `points`,
    and the moves so far are the events the client has already been sent."""
    assert fields(types.State) - {"points"} == fields(Observation) - {
        "viewer",
        "players",
        "ruleset",
        "moves",
    }
    assert fields(types.SeatState) == fields(SeatView)


def test_scoring_mirrors_the_final_scoring() -> None:
    """The breakdown has the engine's fields, plus each player's total."""
    assert fields(types.Scoring) == fields(FinalScoring)
    assert fields(types.MajorityResult) == fields(MajorityResult)
    assert fields(types.MajorityPlace) == fields(MajorityPlace)
    assert fields(types.PlayerScore) == fields(PlayerScore) | {"total"}
