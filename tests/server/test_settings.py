"""One place per setting: each server setting is declared once, on its
:class:`ServerConfig` field, and ``tulips-server``'s parser, ``--help`` and the
README's table of options are built from that declaration, so they agree."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from protocol.limits import MAX_NAME_LENGTH
from server import docs
from server.cli import build_parser, parse_args
from server.config import ServerConfig
from server.ratelimit import Pacer
from server.settings import HIDDEN, Setting, command_line_default, declared

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = list(declared(ServerConfig))
#: The flags that are no one setting's value: argparse's, those that switch
#: storage or TLS or read rulesets (server/cli.py), and the cluster's secret
#: files (server/cluster/options.py).
OTHER_FLAGS = {"--help", "-h", "--version", "--no-storage", "--tls", "--ruleset"}
OTHER_FLAGS |= {"--check-rulesets", "--redis-password-file", "--cluster-key-file"}


def _shown_default(field: Any, how: Setting) -> Any:
    """The default ``--help`` shows for a setting (None: it shows none)."""
    default = how.to_flag(command_line_default(field, how))
    return None if default in (None, (), True, False) else default


def _options_help(text: str) -> dict[str, str]:
    """Each option's help text by its flag, with no whitespace (wrapping may
    break a line anywhere, even inside a hyphenated word)."""
    found: dict[str, str] = {}
    flag = None
    for line in text.splitlines():
        start = re.match(r"  (--[a-z0-9-]+)", line)
        if start:
            flag = start.group(1)
            found[flag] = line[start.end() :]
        elif flag is not None and line.startswith(" " * 10):
            found[flag] += line
        else:
            flag = None
    return {flag: "".join(help.split()) for flag, help in found.items()}


def test_every_setting_is_in_help_with_its_default() -> None:
    """``tulips-server --help`` lists each declared setting under its flag, with
    the default a server started with no flags has."""
    helps = _options_help(build_parser().format_help())
    for field, how in SETTINGS:
        if how.help == HIDDEN:  # --worker: for --workers to give its workers
            continue
        flag = how.flag_for(field.name)
        assert flag in helps, f"{flag} ({field.name}) is not in --help"
        assert "".join(how.help.split()).split("(default")[0] in helps[flag]
        shown = _shown_default(field, how)
        if shown is not None:
            said = re.search(r"\(default:([^);]*)[);]", helps[flag])
            assert said is not None and said.group(1) == str(shown).replace(" ", ""), flag


def test_parser_and_config_agree() -> None:
    """Each setting has one flag of its own, which sets its field and nothing else;
    every other flag is one of the few known ones; no flags, no changes."""
    flags = Counter(how.flag_for(field.name) for field, how in SETTINGS)
    assert [flag for flag, count in flags.items() if count > 1] == []
    assert not set(flags) & OTHER_FLAGS
    actions = {flag: action for action in build_parser()._actions for flag in action.option_strings}
    assert set(actions) - set(flags) <= OTHER_FLAGS, "a flag declared outside the settings"
    for field, how in SETTINGS:
        assert actions[how.flag_for(field.name)].dest == field.name
    config = parse_args([])
    for field, how in SETTINGS:
        assert getattr(config, field.name) == command_line_default(field, how), field.name


SHOWN = [(field, how) for field, how in SETTINGS if _shown_default(field, how) is not None]


@pytest.mark.parametrize(("field", "how"), SHOWN, ids=[field.name for field, _ in SHOWN])
def test_a_flag_given_its_shown_default_keeps_the_default(field: Any, how: Setting) -> None:
    """The default ``--help`` shows, given back to the flag, is the field's default:
    the units (minutes, days, MiB) and words (full, normal) convert both ways."""
    flag = how.flag_for(field.name)
    config = parse_args([flag, str(_shown_default(field, how))])
    assert getattr(config, field.name) == command_line_default(field, how)


def test_readme_table_is_made_from_the_settings() -> None:
    """README.md's table of server options is the one ``python -m server.docs`` makes."""
    assert docs.check(), "README.md's server options are stale: python -m server.docs --write"
    table = docs.options_table()
    for field, how in SETTINGS:
        listed = re.search(rf"`{how.flag_for(field.name)}[ `]", table) is not None
        assert listed == (how.help != HIDDEN), field.name


def test_readme_text_states_the_defaults_there_are() -> None:
    """Where the README's prose names an option's default, it is the one --help shows."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    defaults = {how.flag_for(field.name): _shown_default(field, how) for field, how in SETTINGS}
    stated = re.findall(r"`(--[a-z0-9-]+)`[^`(]{0,40}\(default:? ([0-9.]+)[);]", readme)
    assert len(stated) >= 8
    for flag, value in stated:
        if flag in defaults:
            assert float(value) == float(defaults[flag]), f"README says {flag} defaults to {value}"


def test_name_is_as_long_as_the_protocol_allows() -> None:
    """--name takes up to the protocol's MAX_NAME_LENGTH characters, not a number of its own."""
    longest = "N" * MAX_NAME_LENGTH
    assert parse_args(["--name", longest]).name == longest
    with pytest.raises(SystemExit) as exited:
        parse_args(["--name", longest + "N"])
    assert exited.value.code == 2


def test_rate_limit_help_states_the_rule_the_pacer_applies() -> None:
    """--rate-limit's help: bursts of twice the rate, rounded up, at least 10; a
    connection is closed once more than a whole burst of its frames is held back."""
    helps = _options_help(build_parser().format_help())
    assert "twicethat,roundedup(atleast10)" in helps["--rate-limit"]
    assert "morethanawholeburstofframesheldback" in helps["--rate-limit"]
    assert parse_args(["--rate-limit", "7.3"]).rate_burst == 15
    now = [0.0]
    pacer = Pacer(5, 10, clock=lambda: now[0])
    assert [pacer.charge() for _ in range(21)] == [True] * 20 + [False]
