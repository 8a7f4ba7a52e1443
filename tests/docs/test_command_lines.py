"""Issue 30, "Command lines": every console script's --version, tulips-server's
defaults in --help, tulips-bot's strengths, and a clear line (not a traceback)
for an unknown language, an out-of-range port and a missing ruleset file; a
fresh server's schema set-up is one log line."""

from __future__ import annotations

import argparse
import importlib
import logging
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import protocol as wire
from client.bots import STRATEGIES
from client.tui import i18n
from client.tui.cli import websocket_url
from protocol.version import package_version
from server.match.bots import STRENGTHS as SERVER_STRENGTHS
from server.storage import SCHEMA_VERSION, Storage

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"
]["scripts"]


def _main(spec: str) -> Callable[[list[str]], object]:
    module, _, function = spec.partition(":")
    main: Callable[[list[str]], object] = getattr(importlib.import_module(module), function)
    return main


def _exit(spec: str, argv: list[str]) -> int | str | None:
    with pytest.raises(SystemExit) as exited:
        _main(spec)(argv)
    return exited.value.code


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    """The terminal client's texts follow its language; keep them English."""
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_console_script_has_version(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30: ``PROG --version`` prints the program's name and the installed
    version, and exits 0."""
    assert _exit(SCRIPTS[name], ["--version"]) == 0
    assert capsys.readouterr().out == f"{name} {package_version()}\n"


def test_the_version_is_the_installed_distributions() -> None:
    """Issue 30: the version comes from the package's metadata (pyproject.toml's)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert package_version() == project["version"]


def test_version_from_an_installed_script() -> None:
    """Issue 30: the real entry point, in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-m", "server", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == f"tulips-server {package_version()}"


def _options_help(text: str) -> dict[str, str]:
    """Each option's help text, joined onto one line, by its flag."""
    found: dict[str, str] = {}
    flag = None
    for line in text.splitlines():
        start = re.match(r"  (--[a-z0-9-]+)", line)
        if start:
            flag = start.group(1)
            found[flag] = line
        elif flag is not None and line.startswith(" " * 10):
            found[flag] += " " + line.strip()
        else:
            flag = None
    return {flag: " ".join(help.split()) for flag, help in found.items()}


def test_server_help_shows_every_default(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30: host, port, grace period, bot delay and rate limit, and every other
    option with a default, say it in ``tulips-server --help``."""
    assert _exit(SCRIPTS["tulips-server"], ["--help"]) == 0
    helps = _options_help(capsys.readouterr().out)
    expected = {
        "--host": "(default: 0.0.0.0)",
        "--port": "(default: 8765)",
        "--grace-period": "(default: 30.0)",
        "--bot-delay": "(default: 0.0)",
        "--rate-limit": "(default: 50.0)",
    }
    for flag, default in expected.items():
        assert default in helps[flag], helps[flag]
    switches = {"--help", "--version", "--no-storage", "--no-announce", "--tls", "--check-rulesets"}
    unset = {"--parent-pid", "--tls-cert", "--tls-key", "--allow-origin"}
    unset |= {"--cluster", "--redis-password-file", "--cluster-key-file"}
    for flag, text in helps.items():
        if flag not in switches | unset:
            assert "(default" in text, f"{flag} does not say its default: {text}"
    assert not any("(default: None)" in t or "(default: False)" in t for t in helps.values())


def test_bot_strengths_are_the_servers(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30: ``tulips-bot --strategy`` offers the server's strengths, from the
    one definition in protocol/, and the kit has a strategy for each."""
    assert wire.STRENGTHS == ("easy", "medium", "hard") == SERVER_STRENGTHS
    assert set(STRATEGIES) == set(wire.STRENGTHS)
    assert _exit(SCRIPTS["tulips-bot"], ["--help"]) == 0
    assert "{easy,medium,hard}" in capsys.readouterr().out
    refused = ["ws://127.0.0.1:9", "--match", "m", "--strategy", "x"]
    assert _exit(SCRIPTS["tulips-bot"], refused) == 2
    assert "invalid choice: 'x'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["play", "connect"])
def test_an_unknown_language_lists_those_there_are(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30: ``tulips play --lang fr`` is a usage error (2) naming en, de and es."""
    assert _exit(SCRIPTS["tulips"], [command, "--lang", "fr"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: tulips {command}")
    assert "no language 'fr': choose one of en, de, es" in err
    assert set(i18n.LANGUAGES) == {"en", "de", "es"}


def test_lang_with_no_code_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30: ``--lang`` with nothing after it is the full parser's usage error."""
    assert _exit(SCRIPTS["tulips"], ["play", "--lang"]) == 2
    assert "usage: tulips" in capsys.readouterr().err


@pytest.mark.parametrize("url", ["ws://localhost:99999", "localhost:70000", "wss://h:0"])
def test_a_port_out_of_range_says_so(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30: ``tulips connect ws://localhost:99999``: exit 2, the port is out of range."""
    assert _exit(SCRIPTS["tulips"], ["connect", url]) == 2
    err = capsys.readouterr().err
    assert f"the port of {url!r} is out of range: a port is 1 to 65535" in err
    assert "Traceback" not in err


def test_other_bad_addresses_still_say_not_an_address() -> None:
    """Issue 30: a port that is not a number is a bad address, not a bad port."""
    with pytest.raises(argparse.ArgumentTypeError, match="not a server address"):
        websocket_url("ws://localhost:port")
    assert websocket_url("localhost:65535") == "ws://localhost:65535"


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )


def test_a_missing_ruleset_file_says_it_is_missing(tmp_path: Path) -> None:
    """Issue 30: ``tulips-demo --ruleset nowhere.toml``: one line, exit 2."""
    missing = tmp_path / "nowhere.toml"
    done = _run("-m", "engine.tools.demo", "--ruleset", str(missing))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"tulips-demo: error: ruleset file not found: {missing}\n" in done.stderr


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("name = [", "not valid TOML"),
        ("name = ''", "ruleset field 'name': expected a non-empty string"),
    ],
)
def test_other_bad_ruleset_files_are_one_clear_line(
    tmp_path: Path, text: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30: a file that is not TOML, or a field that is wrong, is named too."""
    path = tmp_path / "house.toml"
    path.write_text(text, encoding="utf-8")
    assert _exit(SCRIPTS["tulips-demo"], ["--ruleset", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert says in err and "<file>" not in err


def test_a_fresh_server_logs_its_schema_set_up_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 30: a new data file is one line, naming the schema version it was made at."""
    caplog.set_level(logging.DEBUG, logger="server.storage")
    storage = Storage(tmp_path)
    storage.open()
    storage.close()
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("server.storage")]
    assert lines == [f"created {storage.path} (schema version {SCHEMA_VERSION})"]
    caplog.clear()
    again = Storage(tmp_path)
    again.open()
    again.close()
    assert not [r for r in caplog.records if r.name.startswith("server.storage")]
