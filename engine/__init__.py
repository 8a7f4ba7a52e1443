"""The rules of Gift of Tulips (docs/RULES.md) as a pure, deterministic
state machine: no I/O, no clock, no global randomness.

Start with :meth:`Match.new`, ask :meth:`Match.legal_actions`, play with
:meth:`Match.apply`, and let :func:`observe` and :func:`project_event` decide
what each seat may see; :func:`action_points` says what an action scores at
once (R14–R17).

The modules at this level are the rules and nothing else: cards and actions,
the ruleset (R30), the match, its events, the observation (the one door for
hidden information, R24–R26), scoring and the match record. Built on them,
and never imported by them: the bots in :mod:`engine.bots`, the post-game
analysis in :mod:`engine.analysis`, the command-line tools a player uses in
:mod:`engine.tools`, and the measuring and training tools in :mod:`engine.lab`.
"""

from __future__ import annotations

from .actions import Action, ActionKind, TurnAction
from .cards import COLOURS, VALUES, Card, Colour, all_cards
from .errors import (
    ActionAlreadyUsed,
    EngineError,
    GameOver,
    IllegalAction,
    NotYourTurn,
    UnknownSeat,
)
from .events import Event
from .match import Match, Phase, SecretCard
from .observation import Observation, SeatView, observe, project_event
from .ruleset import DEFAULT_RULESET, Ruleset, RulesetError, load_ruleset, ruleset_from_mapping
from .scoring import (
    FinalScoring,
    MajorityPlace,
    MajorityResult,
    PlayerScore,
    TieBreak,
    action_points,
)

__all__ = [
    "COLOURS",
    "DEFAULT_RULESET",
    "VALUES",
    "Action",
    "ActionAlreadyUsed",
    "ActionKind",
    "Card",
    "Colour",
    "EngineError",
    "Event",
    "FinalScoring",
    "GameOver",
    "IllegalAction",
    "MajorityPlace",
    "MajorityResult",
    "Match",
    "NotYourTurn",
    "Observation",
    "Phase",
    "PlayerScore",
    "Ruleset",
    "RulesetError",
    "SeatView",
    "SecretCard",
    "TieBreak",
    "TurnAction",
    "UnknownSeat",
    "action_points",
    "all_cards",
    "load_ruleset",
    "observe",
    "project_event",
    "ruleset_from_mapping",
]
