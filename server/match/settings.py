"""A match's settings: what its host chose when creating it.

One frozen value per match, set once. Storage saves it whole, as
:meth:`MatchSettings.to_data` gives it, and a restart rebuilds it with
:meth:`MatchSettings.from_data`: the settings have one shape in memory and
one on disk, and the lobby's summary is derived from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import Ruleset, ruleset_from_mapping

__all__ = ["MatchSettings", "SettingsError"]


class SettingsError(ValueError):
    """Stored settings that do not make a match's settings (named field, reason)."""


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """The host's choices for one match (a rematch copies them)."""

    name: str
    ruleset_name: str
    ruleset: Ruleset
    #: if set, ``join`` and ``watch`` must give it
    join_code: str | None = None
    #: seconds per decision; on timeout a bot decides for the seat
    turn_timer: float | None = None
    #: the host's pick of the first player (R12); None lets chance decide
    first_seat: int | None = None
    #: R27: once finished, the match's seed and actions are published
    open_box: bool = False
    #: a tutorial: the server's fixed deal (:mod:`.tutorial`) against bots, for its
    #: creator alone; never a contest, so never ranked nor rated
    tutorial: bool = False
    #: its final ranking changes its players' ratings (decided at creation:
    #: the host's choice, or :func:`server.ratings.model.default_rated`)
    rated: bool = False
    #: players may ask for hints (the analysis's values of their open decision);
    #: such a match is never rated
    hints: bool = False

    def to_data(self) -> dict[str, Any]:
        """The settings as plain JSON values: what storage keeps."""
        return {
            "name": self.name,
            "ruleset_name": self.ruleset_name,
            "ruleset": self.ruleset.to_mapping(),
            "join_code": self.join_code,
            "turn_timer": self.turn_timer,
            "first_seat": self.first_seat,
            "open_box": self.open_box,
            "tutorial": self.tutorial,
            # only when set, so that the settings of unrated matches read as before
            **({"rated": True} if self.rated else {}),
            **({"hints": True} if self.hints else {}),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> MatchSettings:
        """Settings read back from :meth:`to_data`'s form; raises
        :class:`SettingsError` naming the field that does not fit (the
        ruleset's own errors name theirs)."""
        unknown = set(data) - _FIELDS
        if unknown:
            raise SettingsError(f"unknown settings field {sorted(unknown)[0]!r}")
        ruleset = data.get("ruleset")
        if not isinstance(ruleset, Mapping):
            raise SettingsError("ruleset: not a table")
        return cls(
            name=_text(data, "name"),
            ruleset_name=_text(data, "ruleset_name"),
            ruleset=ruleset_from_mapping(ruleset),
            join_code=_text(data, "join_code", null=True),
            turn_timer=_number(data, "turn_timer"),
            first_seat=_whole(data, "first_seat"),
            open_box=_flag(data, "open_box"),
            tutorial=_flag(data, "tutorial"),
            rated=_flag(data, "rated"),
            hints=_flag(data, "hints"),
        )


_FIELDS = {
    "name",
    "ruleset_name",
    "ruleset",
    "join_code",
    "turn_timer",
    "first_seat",
    "open_box",
    "tutorial",
    "rated",
    "hints",
}


def _text(data: Mapping[str, Any], key: str, *, null: bool = False) -> Any:
    value = data.get(key)
    if value is None and null:
        return None
    if not isinstance(value, str):
        raise SettingsError(f"{key}: expected text, got {type(value).__name__}")
    return value


def _number(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SettingsError(f"{key}: expected a number, got {type(value).__name__}")
    return float(value)


def _whole(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(f"{key}: expected a whole number, got {type(value).__name__}")
    return value


def _flag(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise SettingsError(f"{key}: expected true or false, got {type(value).__name__}")
    return value
