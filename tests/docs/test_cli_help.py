"""Every command's ``--help`` reads as plain text: no reStructuredText or
Markdown markup leaks from a docstring into what a person reads."""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from client.tui import i18n

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"
]["scripts"]
#: ``python -m`` tools the README or PROTOCOL.md tell people to run.
MODULE_TOOLS = {
    "python -m engine.lab.analysis": "engine.lab.analysis:main",
    "python -m engine.lab.arena": "engine.lab.arena:main",
    "python -m engine.lab.bench": "engine.lab.bench:main",
    "python -m protocol.docs": "protocol.docs:main",
    "python -m server.docs": "server.docs:main",
    "python -m server.lab.web.measure": "server.lab.web.measure:main",
    "python -m server.lab.web.siege": "server.lab.web.siege:main",
    "python -m client.loadgen.reference": "client.loadgen.reference:main",
}

#: Backticks (``code``, `code`), Sphinx roles (:func:), literal-block markers
#: (::) and Markdown emphasis (**bold**).
MARKUP = re.compile(r"`|:[a-z]+:|::\s*$|\*\*", re.M)


def _entry_point(spec: str) -> Callable[[list[str]], object]:
    module, _, function = spec.partition(":")
    main: Callable[[list[str]], object] = getattr(importlib.import_module(module), function)
    return main


def _help(spec: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        _entry_point(spec)(argv)
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage:")
    return out


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    """The terminal client's help follows its language; leave it in English."""
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def test_the_five_commands_are_all_covered() -> None:
    """Every console script is checked: a new one cannot slip past this file."""
    assert set(SCRIPTS) >= {"tulips-server", "tulips", "tulips-bot", "tulips-loadtest"}
    assert "tulips-demo" in SCRIPTS


@pytest.mark.parametrize("name", sorted({**SCRIPTS, **MODULE_TOOLS}))
def test_help_is_plain_text(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--help`` of each console script and tool has no markup and says what it is for."""
    spec = {**SCRIPTS, **MODULE_TOOLS}[name]
    text = _help(spec, ["--help"], capsys)
    assert "``" not in text
    assert MARKUP.search(text) is None, MARKUP.search(text)
    description = text.split("\n\n")[1]
    assert len(description.split()) >= 4, f"{name} --help says too little: {description!r}"


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
@pytest.mark.parametrize("command", ["play", "connect", "servers", "forget"])
def test_terminal_client_subcommand_help_is_plain_text(
    lang: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tulips play --help`` and ``tulips connect --help``, in every language."""
    text = _help(SCRIPTS["tulips"], [command, "--lang", lang, "--help"], capsys)
    assert MARKUP.search(text) is None, MARKUP.search(text)
