"""A match as ``(ruleset, players, seed, first seat, actions)``: enough to
rebuild it event for event, and small enough to store or publish.

The plain-data form (:meth:`MatchRecord.to_data`) uses only strings, ints,
lists and maps, with cards and actions in their one spelling, so it can be
written as JSON, MessagePack or a database row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .actions import Action, ActionKind
from .cards import Card
from .errors import IllegalAction
from .events import Event
from .match import Match
from .ruleset import Ruleset, RulesetError, ruleset_from_mapping

__all__ = ["MatchRecord", "RecordError", "action_from_data", "action_to_data"]


class RecordError(ValueError):
    """A stored record that cannot be read or does not replay."""


def action_to_data(action: Action) -> dict[str, Any]:
    """An action as plain data: ``{"kind": "give", "to_seat": 2}``."""
    data: dict[str, Any] = {"kind": action.kind.value}
    if action.to_seat is not None:
        data["to_seat"] = action.to_seat
    if action.secret is not None:
        data["secret"] = str(action.secret)
    return data


def action_from_data(data: Mapping[str, Any]) -> Action:
    """Read an action written by :func:`action_to_data`."""
    try:
        kind = ActionKind(data["kind"])
        if kind is ActionKind.GIVE:
            return Action.give(_seat(data["to_seat"]))
        if kind is ActionKind.OPENING:
            return Action.opening(Card.parse(data["secret"]))
        return Action(kind)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise RecordError(f"bad action {data!r}: {exc}") from None


def _seat(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"a seat must be an int, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """Everything needed to rebuild a match."""

    ruleset: Ruleset
    players: int
    seed: int
    first_seat: int
    actions: tuple[tuple[int, Action], ...]
    #: the match was built by ``Match.from_deal``: its seed cannot rebuild it
    dealt: bool = False

    def __post_init__(self) -> None:
        try:
            self.ruleset.check_players(self.players)
        except RulesetError as exc:
            raise RecordError(str(exc)) from None
        for name in ("players", "seed", "first_seat"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise RecordError(f"{name} must be an int, got {value!r}")
        if not 0 <= self.first_seat < self.players:
            raise RecordError(f"first_seat must be a seat from 0 to {self.players - 1}")

    @classmethod
    def of(cls, match: Match) -> MatchRecord:
        """The record of a match as it stands."""
        return cls(
            match.ruleset, match.players, match.seed, match.first_seat, match.history, match.dealt
        )

    def replay(self) -> Match:
        """Rebuild the match by playing every action again."""
        match, _ = self.replay_events()
        return match

    def replay_events(self) -> tuple[Match, list[Event]]:
        """Rebuild the match and return every event, setup included, complete."""
        if self.dealt:
            raise RecordError("a match built from a chosen deal cannot be rebuilt from its seed")
        match = Match.new(self.players, self.seed, self.ruleset, self.first_seat)
        events = list(match.setup_events)
        for index, (seat, action) in enumerate(self.actions):
            try:
                events.extend(match.apply(seat, action))
            except IllegalAction as exc:
                raise RecordError(f"action {index} does not replay: {exc}") from None
        return match, events

    def to_data(self) -> dict[str, Any]:
        """The record as plain data (see the module docstring)."""
        return {
            "ruleset": self.ruleset.to_mapping(),
            "players": self.players,
            "seed": self.seed,
            "first_seat": self.first_seat,
            "actions": [[seat, action_to_data(action)] for seat, action in self.actions],
            "dealt": self.dealt,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> MatchRecord:
        """Read a record written by :meth:`to_data`."""
        try:
            ruleset = ruleset_from_mapping(data["ruleset"])
            actions: Iterable[Any] = data["actions"]
            return cls(
                ruleset=ruleset,
                players=data["players"],
                seed=data["seed"],
                first_seat=data["first_seat"],
                actions=tuple((_seat(seat), action_from_data(a)) for seat, a in actions),
                dealt=bool(data.get("dealt", False)),
            )
        except RulesetError as exc:
            raise RecordError(f"bad ruleset: {exc}") from None
        except RecordError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"bad record: {exc!r}") from None
