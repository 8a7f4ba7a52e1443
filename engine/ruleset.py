"""The ruleset table (R30): every number the rules use, with the published
game's values as defaults, loadable from a TOML file for house rules.

A :class:`Ruleset` is immutable and always playable: its constructor checks
every field, and :func:`load_ruleset` / :func:`ruleset_from_mapping` refuse a
bad file with a :class:`RulesetError` that names the field and the reason.

TOML layout (every key optional; a missing key keeps the default)::

    name = "house"
    reveal_size = 5                      # R19
    [deck]                               # R3
    copies = 6                           # of each colour-value pair
    extra_copies = 2                     # more of each pair for large games
    extra_from_players = 5               # from this many players on
    [removed]                            # R4, by player count
    2 = 18
    3 = 4
    [points]                             # R30, one entry per rank 1st..4th
    giving_bonus = [3, 2, 1, 0]
    bouquet = [0, 0, 1, 2]
    majority = [[15, 10, 5], [10, 7, 4], [5, 3, 1]]   # ranks 1st..3rd
    [majority_places]                    # R20, places that score, by player count
    2 = 1
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cards import COLOURS, VALUES

__all__ = [
    "DEFAULT_RULESET",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "PLAYER_COUNTS",
    "WHOLE_FILE",
    "Ruleset",
    "RulesetError",
    "load_ruleset",
    "ruleset_from_mapping",
]

MIN_PLAYERS = 2
MAX_PLAYERS = 6
PLAYER_COUNTS: tuple[int, ...] = tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1))
#: Cards dealt to each player at the start (R11): one to the bouquet, one secret.
HAND_SIZE = 2
#: Cards that form the starting festival (R10).
FESTIVAL_START = 2
RANKS = 4
MAJORITY_RANKS = 3


#: The :attr:`RulesetError.field` of a file that cannot be read as a ruleset at all.
WHOLE_FILE = "<file>"


class RulesetError(ValueError):
    """A ruleset that cannot be played, with the field at fault and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason)
        self.field = field
        self.reason = reason

    def __str__(self) -> str:
        if self.field == WHOLE_FILE:  # the file as a whole: its reason names it
            return self.reason
        return f"ruleset field {self.field!r}: {self.reason}"


def _by_players(values: Mapping[int, int]) -> dict[int, int]:
    return dict(values)


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Every number of the rules. The defaults are the published game's (R30)."""

    name: str = "standard"
    copies: int = 6
    extra_copies: int = 2
    extra_from_players: int = 5
    removed: Mapping[int, int] = field(
        default_factory=lambda: _by_players({2: 18, 3: 4, 4: 6, 5: 14, 6: 10})
    )
    reveal_size: int = 5
    giving_bonus: tuple[int, ...] = (3, 2, 1, 0)
    bouquet_points: tuple[int, ...] = (0, 0, 1, 2)
    majority_points: tuple[tuple[int, ...], ...] = ((15, 10, 5), (10, 7, 4), (5, 3, 1))
    majority_places: Mapping[int, int] = field(
        default_factory=lambda: _by_players({2: 1, 3: 2, 4: 2, 5: 3, 6: 3})
    )

    def __post_init__(self) -> None:
        _check_ruleset(self)

    def copies_for(self, players: int) -> int:
        """Copies of each colour-value pair in the deck for this many players (R3)."""
        self.check_players(players)
        extra = self.extra_copies if players >= self.extra_from_players else 0
        return self.copies + extra

    def deck_size(self, players: int) -> int:
        """Cards in the deck before any is removed (R3)."""
        return self.copies_for(players) * len(COLOURS) * len(VALUES)

    def check_players(self, players: int) -> None:
        """Raise :class:`RulesetError` unless 2 to 6 players can play (R5)."""
        if isinstance(players, bool) or not isinstance(players, int):
            raise RulesetError("players", f"expected int, got {type(players).__name__}")
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RulesetError(
                "players", f"must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {players!r}"
            )

    def to_mapping(self) -> dict[str, Any]:
        """The ruleset as plain data, in the TOML layout (round-trips)."""
        return {
            "name": self.name,
            "reveal_size": self.reveal_size,
            "deck": {
                "copies": self.copies,
                "extra_copies": self.extra_copies,
                "extra_from_players": self.extra_from_players,
            },
            "removed": {str(n): self.removed[n] for n in PLAYER_COUNTS},
            "points": {
                "giving_bonus": list(self.giving_bonus),
                "bouquet": list(self.bouquet_points),
                "majority": [list(row) for row in self.majority_points],
            },
            "majority_places": {str(n): self.majority_places[n] for n in PLAYER_COUNTS},
        }


def _check_count(name: str, value: object, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesetError(name, f"expected int, got {type(value).__name__}")
    if value < minimum:
        raise RulesetError(name, f"must be at least {minimum}, got {value}")
    return value


def _check_row(name: str, row: object, length: int) -> tuple[int, ...]:
    if not isinstance(row, tuple | list):
        raise RulesetError(name, f"expected a list of {length} ints, got {type(row).__name__}")
    if len(row) != length:
        raise RulesetError(name, f"expected {length} entries, got {len(row)}")
    return tuple(_check_count(f"{name}[{i}]", v) for i, v in enumerate(row))


def _check_ruleset(rules: Ruleset) -> None:
    if not isinstance(rules.name, str) or not rules.name:
        raise RulesetError("name", "expected a non-empty string")
    _check_count("deck.copies", rules.copies, 1)
    _check_count("deck.extra_copies", rules.extra_copies)
    _check_count("deck.extra_from_players", rules.extra_from_players)
    _check_count("reveal_size", rules.reveal_size)
    _check_row("points.giving_bonus", rules.giving_bonus, RANKS)
    _check_row("points.bouquet", rules.bouquet_points, RANKS)
    if len(rules.majority_points) != MAJORITY_RANKS:
        raise RulesetError(
            "points.majority", f"expected {MAJORITY_RANKS} rows, got {len(rules.majority_points)}"
        )
    for i, row in enumerate(rules.majority_points):
        _check_row(f"points.majority[{i}]", row, MAJORITY_RANKS)
    for table in ("removed", "majority_places"):
        mapping = getattr(rules, table)
        missing = [n for n in PLAYER_COUNTS if n not in mapping]
        if missing:
            raise RulesetError(table, f"no entry for {missing[0]} players")
        extra = sorted(set(mapping) - set(PLAYER_COUNTS))
        if extra:
            raise RulesetError(f"{table}.{extra[0]}", "player counts go from 2 to 6")
    for n in PLAYER_COUNTS:
        places = _check_count(f"majority_places.{n}", rules.majority_places[n])
        if places > MAJORITY_RANKS:
            raise RulesetError(f"majority_places.{n}", f"at most {MAJORITY_RANKS}, got {places}")
        removed = _check_count(f"removed.{n}", rules.removed[n])
        size = rules.deck_size(n)
        one_colour = rules.copies_for(n) * len(VALUES)
        left = size - removed
        if left <= one_colour:
            raise RulesetError(
                f"removed.{n}",
                f"removing {removed} of {size} cards may leave a single colour,"
                " so the starting festival (R10) could not be laid",
            )
        to_draw = left - 2 - HAND_SIZE * n
        if to_draw < 1:
            raise RulesetError(
                f"removed.{n}",
                f"too few cards for {n} players: {size} in the deck, {removed} removed,"
                f" {2 + HAND_SIZE * n} for the festival and hands leaves {to_draw} to draw",
            )


DEFAULT_RULESET = Ruleset()

_TOP_KEYS = {"name", "reveal_size", "deck", "removed", "points", "majority_places"}
_DECK_KEYS = {
    "copies": "copies",
    "extra_copies": "extra_copies",
    "extra_from_players": "extra_from_players",
}
_POINT_KEYS = {
    "giving_bonus": "giving_bonus",
    "bouquet": "bouquet_points",
    "majority": "majority_points",
}


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise RulesetError(key, f"expected a table, got {type(value).__name__}")
    return value


def _unknown(prefix: str, keys: Mapping[str, Any], known: set[str] | dict[str, str]) -> None:
    for key in keys:
        if key not in known:
            raise RulesetError(f"{prefix}{key}", "unknown key")


def _player_table(data: Mapping[str, Any], key: str, default: Mapping[int, int]) -> dict[int, int]:
    table = dict(default)
    for raw, value in _table(data, key).items():
        try:
            players = int(raw)
        except ValueError:
            raise RulesetError(f"{key}.{raw}", "keys are player counts 2 to 6") from None
        if players not in PLAYER_COUNTS:
            raise RulesetError(f"{key}.{raw}", "player counts go from 2 to 6")
        table[players] = _check_count(f"{key}.{raw}", value)
    return table


def ruleset_from_mapping(data: Mapping[str, Any]) -> Ruleset:
    """Build a ruleset from parsed TOML (or equivalent plain data)."""
    if not isinstance(data, Mapping):
        raise RulesetError("<root>", f"expected a table, got {type(data).__name__}")
    _unknown("", data, _TOP_KEYS)
    base = DEFAULT_RULESET
    kwargs: dict[str, Any] = {}
    if "name" in data:
        if not isinstance(data["name"], str) or not data["name"]:
            raise RulesetError("name", "expected a non-empty string")
        kwargs["name"] = data["name"]
    if "reveal_size" in data:
        kwargs["reveal_size"] = _check_count("reveal_size", data["reveal_size"])
    deck = _table(data, "deck")
    _unknown("deck.", deck, _DECK_KEYS)
    for key, attr in _DECK_KEYS.items():
        if key in deck:
            kwargs[attr] = _check_count(f"deck.{key}", deck[key])
    points = _table(data, "points")
    _unknown("points.", points, _POINT_KEYS)
    if "giving_bonus" in points:
        kwargs["giving_bonus"] = _check_row("points.giving_bonus", points["giving_bonus"], RANKS)
    if "bouquet" in points:
        kwargs["bouquet_points"] = _check_row("points.bouquet", points["bouquet"], RANKS)
    if "majority" in points:
        rows = points["majority"]
        if not isinstance(rows, list) or len(rows) != MAJORITY_RANKS:
            raise RulesetError("points.majority", f"expected {MAJORITY_RANKS} rows of 3 ints")
        kwargs["majority_points"] = tuple(
            _check_row(f"points.majority[{i}]", row, MAJORITY_RANKS) for i, row in enumerate(rows)
        )
    kwargs["removed"] = _player_table(data, "removed", base.removed)
    kwargs["majority_places"] = _player_table(data, "majority_places", base.majority_places)
    return Ruleset(**kwargs)


def load_ruleset(path: str | Path) -> Ruleset:
    """Read and validate a ruleset TOML file."""
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except FileNotFoundError:
        raise RulesetError(WHOLE_FILE, f"ruleset file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RulesetError(WHOLE_FILE, f"ruleset file {path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise RulesetError(WHOLE_FILE, f"ruleset file {path}: not UTF-8 text") from None
    except OSError as exc:
        raise RulesetError(WHOLE_FILE, f"ruleset file {path}: {exc.strerror or exc}") from None
    return ruleset_from_mapping(data)
