"""PROTOCOL.md agrees with the definitions, and its example client is real."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from protocol import CLIENT_MESSAGES, SERVER_MESSAGES, docs
from protocol.types import EVENT_TYPES

from .doc_examples import blocks, document

CLIENT = Path(__file__).resolve().parents[2] / "examples" / "plain_client.py"


def test_generated_sections_are_up_to_date() -> None:
    """Every generated table matches the definitions (`python -m protocol.docs --check`)."""
    assert docs.check() == []
    assert docs.main(["--check"]) == 0


def test_embedded_client_is_the_example_file() -> None:
    """PROTOCOL.md embeds examples/plain_client.py verbatim."""
    assert blocks("python") == [CLIENT.read_text(encoding="utf-8")]


def test_example_client_compiles_and_uses_only_public_packages() -> None:
    """The client compiles, is at most ~60 lines, and imports only websockets,
    msgpack and the standard library — nothing of this project."""
    source = CLIENT.read_text(encoding="utf-8")
    tree = ast.parse(source)
    compile(tree, str(CLIENT), "exec")
    assert len(source.splitlines()) <= 60
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.module is not None and node.level == 0
            imported.add(node.module.split(".")[0])
    assert imported == {"asyncio", "random", "sys", "msgpack", "websockets"}


def test_every_message_and_event_is_documented() -> None:
    """Each message type and event kind has its own section."""
    text = document()
    for tag in CLIENT_MESSAGES:
        assert f'<a id="c2s-{tag}"></a>' in text
    for tag in SERVER_MESSAGES:
        assert f'<a id="s2c-{tag}"></a>' in text
    for cls in EVENT_TYPES:
        assert f'<a id="event-{cls.__struct_config__.tag}"></a>' in text


def test_every_value_type_a_message_holds_has_a_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each struct a message carries is defined under Values, or writing the document fails."""
    assert docs.value_types_missing() == []
    text = document()
    for cls in docs._VALUE_TYPES:
        assert f"\n### {cls.__name__}\n" in text
    shorter = tuple(cls for cls in docs._VALUE_TYPES if cls.__name__ != "SeatAction")
    monkeypatch.setattr(docs, "_VALUE_TYPES", shorter)
    assert docs.value_types_missing() == ["SeatAction"]
    with pytest.raises(ValueError, match="SeatAction"):
        docs.render_sections()


def test_check_names_stale_sections(tmp_path: Path) -> None:
    """A hand edit inside a generated section is caught, and --write repairs it."""
    stale = tmp_path / "PROTOCOL.md"
    stale.write_text(document().replace("| `bad_frame` |", "| `bad_frames` |"), encoding="utf-8")
    assert docs.check(stale) == ["errors"]
    assert docs.main(["--check", "--path", str(stale)]) == 1
    assert docs.main(["--write", "--path", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == document()


def test_missing_markers_are_an_error() -> None:
    """A document without a section's markers cannot be silently half-written."""
    with pytest.raises(ValueError, match="limits"):
        docs.replace_sections("no markers here", {"limits": "x"})


def test_type_words() -> None:
    """Field types read as PROTOCOL.md writes them."""
    from msgspec import inspect

    from protocol.types import Card, Seat

    assert docs.type_text(inspect.type_info(Seat)) == "int (0–5)"
    assert docs.type_text(inspect.type_info(Card)) == "[card](#spellings)"
    assert (
        docs.type_text(inspect.type_info(tuple[Card, ...] | None)) == "[[card](#spellings)] | null"
    )
