"""R30: the ruleset table, its defaults, loading it from TOML, and refusing
every kind of bad file with a RulesetError that names the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import DEFAULT_RULESET, Match, Ruleset, RulesetError, load_ruleset, ruleset_from_mapping
from engine import observe as observe_match


def write(tmp_path: Path, text: str | bytes, name: str = "house.toml") -> Path:
    """A ruleset file in the test's own directory."""
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def refused(data: dict[str, Any]) -> RulesetError:
    """The error :func:`ruleset_from_mapping` raises for ``data``."""
    with pytest.raises(RulesetError) as info:
        ruleset_from_mapping(data)
    return info.value


def test_r30_defaults_are_the_published_table() -> None:
    """The default numbers are the printed festival cards and the R3/R4/R19/R20 counts."""
    rules = DEFAULT_RULESET
    assert rules == Ruleset()
    assert rules.name == "standard"
    assert rules.giving_bonus == (3, 2, 1, 0)
    assert rules.bouquet_points == (0, 0, 1, 2)
    assert rules.majority_points == ((15, 10, 5), (10, 7, 4), (5, 3, 1))
    assert dict(rules.majority_places) == {2: 1, 3: 2, 4: 2, 5: 3, 6: 3}
    assert dict(rules.removed) == {2: 18, 3: 4, 4: 6, 5: 14, 6: 10}
    assert (rules.copies, rules.extra_copies, rules.extra_from_players) == (6, 2, 5)
    assert rules.reveal_size == 5
    assert [rules.deck_size(n) for n in range(2, 7)] == [72, 72, 72, 96, 96]


def test_r30_empty_file_is_the_default(tmp_path: Path) -> None:
    """A file with no keys is the published ruleset."""
    assert load_ruleset(write(tmp_path, "")) == DEFAULT_RULESET


def test_r30_toml_file_overrides_a_few_numbers(tmp_path: Path) -> None:
    """A real TOML file replaces the numbers it names and keeps every other default."""
    path = write(
        tmp_path,
        """
name = "house"
reveal_size = 3

[deck]
copies = 5

[removed]
2 = 10
4 = 2

[points]
giving_bonus = [4, 3, 2, 1]
majority = [[20, 10, 5], [10, 7, 4], [5, 3, 1]]

[majority_places]
2 = 2
""",
    )
    rules = load_ruleset(path)
    assert load_ruleset(str(path)) == rules
    assert rules.name == "house"
    assert rules.reveal_size == 3
    assert rules.copies == 5 and rules.extra_copies == 2
    assert dict(rules.removed) == {2: 10, 3: 4, 4: 2, 5: 14, 6: 10}
    assert rules.giving_bonus == (4, 3, 2, 1)
    assert rules.bouquet_points == DEFAULT_RULESET.bouquet_points
    assert rules.majority_points[0] == (20, 10, 5)
    assert rules.majority_places[2] == 2 and rules.majority_places[5] == 3
    match = Match.new(2, seed=1, ruleset=rules)
    view = observe_match(match, None)
    assert view.removed_count == 10
    assert view.deck_count == 5 * 12 - 10 - 2 - 4
    assert view.ruleset == rules  # the table is public (R30)


@pytest.mark.parametrize(
    "rules",
    [
        DEFAULT_RULESET,
        Ruleset(name="tiny", copies=1, removed={2: 5, 3: 3, 4: 1, 5: 14, 6: 10}, reveal_size=0),
        Ruleset(
            giving_bonus=(9, 8, 7, 6),
            bouquet_points=(1, 2, 3, 4),
            majority_points=((1, 2, 3), (4, 5, 6), (7, 8, 9)),
            majority_places={2: 0, 3: 3, 4: 1, 5: 2, 6: 3},
            extra_copies=0,
            extra_from_players=2,
        ),
    ],
)
def test_r30_mapping_round_trips(rules: Ruleset) -> None:
    """to_mapping() read back by ruleset_from_mapping() (even through JSON) is the same ruleset."""
    data = rules.to_mapping()
    assert ruleset_from_mapping(data) == rules
    assert ruleset_from_mapping(json.loads(json.dumps(data))) == rules


def test_r30_toml_written_from_mapping_loads_back(tmp_path: Path) -> None:
    """A TOML file written from to_mapping() loads as the same ruleset."""
    rules = Ruleset(name="house", reveal_size=2, removed={**DEFAULT_RULESET.removed, 3: 6})
    data = rules.to_mapping()
    lines = [f"name = {json.dumps(data['name'])}", f"reveal_size = {data['reveal_size']}"]
    for table in ("deck", "removed", "points", "majority_places"):
        lines.append(f"[{table}]")
        lines += [f'"{key}" = {json.dumps(value)}' for key, value in data[table].items()]
    assert load_ruleset(write(tmp_path, "\n".join(lines))) == rules


# -- bad files: each names its field -------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"colour": "red"}, "colour"),  # unknown top-level key
        ({"deck": {"copies": 6, "jokers": 2}}, "deck.jokers"),  # unknown nested keys
        ({"points": {"bonus": [1, 2, 3, 4]}}, "points.bonus"),
        ({"name": ""}, "name"),
        ({"name": 3}, "name"),
        ({"reveal_size": "5"}, "reveal_size"),  # str for int
        ({"reveal_size": True}, "reveal_size"),  # bool for int
        ({"reveal_size": 2.5}, "reveal_size"),
        ({"deck": {"copies": "6"}}, "deck.copies"),
        ({"deck": {"extra_copies": False}}, "deck.extra_copies"),
        ({"removed": {"2": "18"}}, "removed.2"),
        ({"majority_places": {"3": True}}, "majority_places.3"),
        ({"reveal_size": -1}, "reveal_size"),  # negative counts
        ({"deck": {"extra_copies": -2}}, "deck.extra_copies"),
        ({"removed": {"3": -4}}, "removed.3"),
        ({"points": {"bouquet": [0, 0, 1, -2]}}, "points.bouquet[3]"),
        ({"deck": {"copies": 0}}, "deck.copies"),
        ({"removed": {"4": 60}}, "removed.4"),  # too few cards for the players
        ({"removed": {"2": 66}}, "removed.2"),
        ({"removed": {"6": 90}}, "removed.6"),
        ({"deck": {"copies": 1}}, "removed.2"),
        ({"removed": {"7": 3}}, "removed.7"),  # bad player-count keys
        ({"removed": {"1": 3}}, "removed.1"),
        ({"removed": {"two": 18}}, "removed.two"),
        ({"majority_places": {"0": 1}}, "majority_places.0"),
        ({"majority_places": {"2": 4}}, "majority_places.2"),
        ({"points": {"giving_bonus": [3, 2, 1]}}, "points.giving_bonus"),  # wrong lengths
        ({"points": {"bouquet": [0, 0, 1, 2, 3]}}, "points.bouquet"),
        ({"points": {"giving_bonus": 3}}, "points.giving_bonus"),
        ({"points": {"majority": [[15, 10, 5], [10, 7, 4]]}}, "points.majority"),
        ({"points": {"majority": [[15, 10], [10, 7, 4], [5, 3, 1]]}}, "points.majority[0]"),
        ({"points": {"majority": [[15, 10, 5], [10, 7, 4], [5, 3, "1"]]}}, "points.majority[2]"),
        ({"deck": 6}, "deck"),  # a table that is not a table
        ({"removed": [18, 4, 6, 14, 10]}, "removed"),
    ],
)
def test_r30_bad_mapping_refused_naming_the_field(data: dict[str, Any], field: str) -> None:
    """Every unplayable or malformed table is refused with the field at fault in the message."""
    exc = refused(data)
    assert exc.field.startswith(field), (exc.field, field)
    assert f"ruleset field {exc.field!r}" in str(exc)
    assert exc.reason and exc.reason in str(exc)


def test_r30_too_few_cards_says_why() -> None:
    """Refusing a deck too small for the players explains the card count."""
    exc = refused({"removed": {"4": 60}})
    assert exc.field == "removed.4"
    assert "60" in exc.reason and "72" in exc.reason
    assert "single colour" in exc.reason
    exc = refused({"deck": {"copies": 1}, "removed": {"2": 6, "3": 3, "4": 1}})
    assert exc.field == "removed.2"
    assert "too few cards for 2 players" in exc.reason


def test_r30_root_must_be_a_table() -> None:
    """Data that is not a table at all is refused."""
    with pytest.raises(RulesetError) as info:
        ruleset_from_mapping([1, 2, 3])  # type: ignore[arg-type]
    assert info.value.field == "<root>"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("colour = 'red'\n", "colour"),
        ("[deck]\njokers = 2\n", "deck.jokers"),
        ("[points]\nbonus = [1, 2, 3, 4]\n", "points.bonus"),
        ("reveal_size = '5'\n", "reveal_size"),
        ("reveal_size = true\n", "reveal_size"),
        ("[deck]\ncopies = -1\n", "deck.copies"),
        ("[removed]\n4 = 60\n", "removed.4"),
        ("[removed]\n7 = 3\n", "removed.7"),
        ("[majority_places]\nsix = 3\n", "majority_places.six"),
        ("[points]\ngiving_bonus = [3, 2, 1]\n", "points.giving_bonus"),
        ("[points]\nmajority = [[15, 10, 5], [10, 7, 4], [5, 3]]\n", "points.majority[2]"),
    ],
)
def test_r30_bad_toml_file_refused_naming_the_field(tmp_path: Path, text: str, field: str) -> None:
    """A bad TOML file on disk is refused with the same field names."""
    with pytest.raises(RulesetError) as info:
        load_ruleset(write(tmp_path, text))
    assert info.value.field == field
    assert field in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "reveal_size = \n",
        "[deck\ncopies = 6\n",
        "name = 'a'\nname = 'b'\n",
        "[points]\ngiving_bonus = [3, 2, 1, 0\n",
    ],
)
def test_r30_invalid_toml_refused(tmp_path: Path, text: str) -> None:
    """A file that is not TOML is refused as a whole, naming the file."""
    path = write(tmp_path, text)
    with pytest.raises(RulesetError) as info:
        load_ruleset(path)
    assert info.value.field == "<file>"
    assert "not valid TOML" in str(info.value) and str(path) in str(info.value)


def test_r30_file_that_is_not_utf8_refused(tmp_path: Path) -> None:
    """A file whose bytes are not UTF-8 (so not TOML) is refused with RulesetError too."""
    path = write(tmp_path, b'name = "house"\n\xff\xfe = 1\n')
    with pytest.raises(RulesetError) as info:
        load_ruleset(path)
    assert info.value.field == "<file>"


def test_r30_missing_file_refused(tmp_path: Path) -> None:
    """A path that does not exist, or is a directory, is refused naming the path."""
    missing = tmp_path / "nowhere.toml"
    for path in (missing, tmp_path):
        with pytest.raises(RulesetError) as info:
            load_ruleset(path)
        assert info.value.field == "<file>"
        assert str(path) in str(info.value)


def test_r30_constructor_checks_too() -> None:
    """A Ruleset built in code is checked the same way as one read from a file."""
    with pytest.raises(RulesetError, match="removed"):
        Ruleset(removed={2: 18, 3: 4, 4: 6, 5: 14})
    with pytest.raises(RulesetError, match=r"removed\.7"):
        Ruleset(removed={**DEFAULT_RULESET.removed, 7: 1})
    with pytest.raises(RulesetError, match=r"points\.majority"):
        Ruleset(majority_points=((15, 10, 5),))
    with pytest.raises(RulesetError, match=r"points\.giving_bonus"):
        Ruleset(giving_bonus=(3, 2, 1))
    with pytest.raises(RulesetError, match="name"):
        Ruleset(name="")
    with pytest.raises(RulesetError, match="players"):
        DEFAULT_RULESET.check_players(7)
    with pytest.raises(RulesetError, match="players"):
        DEFAULT_RULESET.copies_for(True)
