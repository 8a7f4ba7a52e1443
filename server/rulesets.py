"""The rulesets a server offers, and how they go on the wire.

``tulips-server --ruleset FILE`` (repeatable) adds house rulesets to the
printed rules, which are always offered as ``standard``. :func:`offered`
turns the files into the lobby's table, refusing two files with one name or
a file called ``standard`` that is not the printed rules; :func:`ruleset_info`
is a ruleset's every number as clients see it, with the fields that differ
from the printed rules (:func:`changes`), since a client cannot know them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import protocol as wire
from engine import DEFAULT_RULESET, Ruleset, load_ruleset
from engine.ruleset import PLAYER_COUNTS
from protocol.limits import MAX_NAME_LENGTH, MAX_RULESETS

__all__ = ["STANDARD", "RulesetFileError", "changes", "load_files", "offered", "ruleset_info"]

#: The name the printed rules are offered under.
STANDARD = "standard"


class RulesetFileError(ValueError):
    """A ``--ruleset`` file that cannot be offered, as one line naming the file."""


def load_files(paths: Iterable[Path]) -> tuple[Ruleset, ...]:
    """Read every ``--ruleset`` file; the first bad one raises :class:`RulesetFileError`."""
    rulesets = []
    seen: dict[str, Path] = {}
    for path in paths:
        try:
            rules = load_ruleset(path)
        except ValueError as exc:  # RulesetError names the field, or the file's trouble
            raise RulesetFileError(f"{path}: {exc}") from None
        if len(rules.name) > MAX_NAME_LENGTH or not rules.name.isprintable():
            raise RulesetFileError(
                f"{path}: ruleset field 'name': needs 1 to {MAX_NAME_LENGTH} printable"
                f" characters, got {rules.name!r}"
            )
        if rules.name == STANDARD and rules != DEFAULT_RULESET:
            raise RulesetFileError(
                f"{path}: ruleset field 'name': {STANDARD!r} is the printed rules, and this"
                f" file differs from them in {', '.join(changes(rules))}; give it another name"
            )
        if rules.name in seen:
            raise RulesetFileError(
                f"{path}: ruleset field 'name': {rules.name!r} is also the name of"
                f" {seen[rules.name]}"
            )
        seen[rules.name] = path
        rulesets.append(rules)
    if len(seen.keys() - {STANDARD}) > MAX_RULESETS - 1:
        raise RulesetFileError(
            f"--ruleset: at most {MAX_RULESETS - 1} house rulesets, got {len(seen)}"
        )
    return tuple(rulesets)


def offered(house: Iterable[Ruleset]) -> dict[str, Ruleset]:
    """The lobby's rulesets by name: the printed rules first, then ``house``."""
    table = {STANDARD: DEFAULT_RULESET}
    for rules in house:
        table[rules.name] = rules
    return table


def _by_players(table: Mapping[int, int]) -> tuple[int, ...]:
    return tuple(table[n] for n in PLAYER_COUNTS)


def changes(rules: Ruleset) -> tuple[str, ...]:
    """The fields of ``rules`` that differ from the printed rules, as TOML paths
    (``reveal_size``, ``deck.copies``, ``removed.3``, ``points.bouquet``, …)."""
    printed = DEFAULT_RULESET
    found = [
        path
        for path, mine, theirs in (
            ("reveal_size", rules.reveal_size, printed.reveal_size),
            ("deck.copies", rules.copies, printed.copies),
            ("deck.extra_copies", rules.extra_copies, printed.extra_copies),
            ("deck.extra_from_players", rules.extra_from_players, printed.extra_from_players),
            ("points.giving_bonus", rules.giving_bonus, printed.giving_bonus),
            ("points.bouquet", rules.bouquet_points, printed.bouquet_points),
            ("points.majority", rules.majority_points, printed.majority_points),
        )
        if mine != theirs
    ]
    for table in ("removed", "majority_places"):
        mine_t, theirs_t = getattr(rules, table), getattr(printed, table)
        found += [f"{table}.{n}" for n in PLAYER_COUNTS if mine_t[n] != theirs_t[n]]
    return tuple(found)


def ruleset_info(rules: Ruleset, name: str | None = None) -> wire.RulesetInfo:
    """Every number of ``rules`` as the protocol carries it, with its changes;
    ``name``: the one it is offered under, if not its own."""
    return wire.RulesetInfo(
        name=name or rules.name,
        copies=rules.copies,
        extra_copies=rules.extra_copies,
        extra_from_players=rules.extra_from_players,
        removed=cast(Any, _by_players(rules.removed)),
        reveal_size=rules.reveal_size,
        giving_bonus=cast(Any, tuple(rules.giving_bonus)),
        bouquet=cast(Any, tuple(rules.bouquet_points)),
        majority=cast(Any, tuple(tuple(row) for row in rules.majority_points)),
        majority_places=cast(Any, _by_players(rules.majority_places)),
        changes=changes(rules),
    )
