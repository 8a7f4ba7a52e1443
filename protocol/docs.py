"""``python -m protocol.docs``: write PROTOCOL.md's tables from the definitions.

The message, value, action, event, error-code, close-code and limits tables
of PROTOCOL.md, and the example client it embeds, live between marker
comments::

    <!-- BEGIN GENERATED: messages -->
    ...
    <!-- END GENERATED: messages -->

:func:`render_sections` builds every section from :mod:`protocol.messages`,
:mod:`protocol.types`, :mod:`protocol.errors`, :mod:`protocol.limits`,
:mod:`protocol.examples` and ``examples/plain_client.py``. ``--write``
replaces the text between the markers; ``--check`` exits with status 1 and
names the stale sections when the document differs, so a test (and CI) keeps
the document and the code from drifting apart. Text outside the markers is
written by hand and left alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, get_args

import msgspec
from msgspec import inspect

from . import examples
from .errors import CLOSE_CODE_DOCS, ERROR_CODE_DOCS
from .generated import write_or_check
from .limits import LIMITS
from .messages import CLIENT_MESSAGES, SERVER_MESSAGES, BatchedMessage, Message, ServerLimits
from .types import (
    ACTION_TYPES,
    CARDS,
    COLOURS,
    EVENT_TYPES,
    BotSeat,
    DecidedBy,
    DecisionReview,
    FinalSeat,
    LeaderboardEntry,
    MajorityPlace,
    MajorityResult,
    Mark,
    MarkThresholds,
    MatchRecord,
    MatchStatus,
    MatchSummary,
    OptionValue,
    Phase,
    PlayerKind,
    PlayerScore,
    Points,
    Rating,
    RatingChange,
    RulesetInfo,
    Scoring,
    SeatAction,
    SeatInfo,
    SeatKind,
    SeatState,
    SeatTimer,
    State,
    Strength,
    TurnAction,
)

__all__ = [
    "CLIENT_PATH",
    "DOC_PATH",
    "check",
    "fields_table",
    "main",
    "pretty_json",
    "render_sections",
    "replace_sections",
    "type_text",
    "value_types_missing",
    "write",
]

ROOT = Path(__file__).resolve().parent.parent
#: The document this module maintains.
DOC_PATH = ROOT / "PROTOCOL.md"
#: The example client PROTOCOL.md embeds verbatim.
CLIENT_PATH = ROOT / "examples" / "plain_client.py"

_SECTION = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[a-z-]+) -->\n)"
    r"(?P<body>.*?)"
    r"(<!-- END GENERATED: (?P=name) -->)",
    re.S,
)
_VALUE_TYPES = (
    BotSeat,
    SeatInfo,
    MatchSummary,
    State,
    SeatState,
    Points,
    RulesetInfo,
    Scoring,
    PlayerScore,
    MajorityResult,
    MajorityPlace,
    ServerLimits,
    SeatAction,
    SeatTimer,
    Rating,
    RatingChange,
    FinalSeat,
    MatchRecord,
    LeaderboardEntry,
    OptionValue,
    DecisionReview,
    MarkThresholds,
)
_ENVELOPE_FIELDS = ("v", "id")
# msgspec sorts a Literal's values; these give them back in definition order.
_LITERALS = {
    frozenset(values): values
    for values in (
        CARDS,
        COLOURS,
        *(
            get_args(alias)
            for alias in (
                Phase,
                TurnAction,
                Strength,
                MatchStatus,
                SeatKind,
                DecidedBy,
                PlayerKind,
                Mark,
            )
        ),
    )
}
_WIDTH = 88


# -- types as words -----------------------------------------------------------


def _range(low: object, high: object) -> str:
    def num(x: object) -> str:
        return f"{x:g}" if isinstance(x, float) else str(x)

    if low is not None and high is not None:
        return num(low) if low == high else f"{num(low)}–{num(high)}"
    if low is not None:
        return f"≥ {num(low)}"
    return f"≤ {num(high)}" if high is not None else ""


def _with(base: str, *notes: str) -> str:
    notes = tuple(n for n in notes if n)
    return f"{base} ({', '.join(notes)})" if notes else base


def _str_text(t: inspect.StrType) -> str:
    length = _range(t.min_length, t.max_length)
    pattern = ""
    if t.pattern is not None:
        if "A-Za-z" in t.pattern:
            pattern = "A–Z a–z 0–9 _ -"
        elif "0-9a-f" in t.pattern:
            pattern = "lowercase hex"
        elif t.pattern.startswith("^[a-z][a-z0-9_]"):
            pattern = "a–z 0–9 _, from a letter"
        else:
            pattern = "printable"
    return _with("str", f"{length} chars" if length else "", pattern)


def _union_text(t: inspect.UnionType) -> str:
    types = [x for x in t.types if not isinstance(x, inspect.NoneType)]
    classes = {x.cls for x in types if isinstance(x, inspect.StructType)}
    if classes and classes == set(ACTION_TYPES):
        text = "[action](#actions)"
    elif classes and classes == set(EVENT_TYPES):
        text = "[event](#events)"
    elif classes and classes == set(get_args(BatchedMessage)):
        text = "[server message](#serverclient-messages) but `batch`"
    else:
        text = " | ".join(type_text(x) for x in types)
    return f"{text} | null" if len(types) < len(t.types) else text


def type_text(t: inspect.Type) -> str:
    """A field's type in PROTOCOL.md's words: ``int (0–5)``, ``[card] (≤ 256)``."""
    if isinstance(t, inspect.Metadata):
        return type_text(t.type)
    if isinstance(t, inspect.IntType):
        return _with("int", _range(t.ge, t.le))
    if isinstance(t, inspect.FloatType):
        return _with("float", _range(t.ge, t.le))
    if isinstance(t, inspect.StrType):
        return _str_text(t)
    if isinstance(t, inspect.BoolType):
        return "bool"
    if isinstance(t, inspect.NoneType):
        return "null"
    if isinstance(t, inspect.LiteralType):
        values = _LITERALS.get(frozenset(t.values), t.values)
        if values == CARDS:
            return "[card](#spellings)"
        if values == COLOURS:
            return "[colour](#spellings)"
        return " | ".join(json.dumps(v) for v in values)
    if isinstance(t, inspect.VarTupleType | inspect.ListType):
        return _with(f"[{type_text(t.item_type)}]", _range(t.min_length, t.max_length))
    if isinstance(t, inspect.TupleType):
        items = {type_text(x) for x in t.item_types}
        if len(items) == 1:
            return f"[{items.pop()} ×{len(t.item_types)}]"
        return "[" + ", ".join(type_text(x) for x in t.item_types) + "]"
    if isinstance(t, inspect.DictType):
        return f"{{{type_text(t.key_type)}: {type_text(t.value_type)}}}"
    if isinstance(t, inspect.StructType):
        return f"[{t.cls.__name__}](#{t.cls.__name__.lower()})"
    if isinstance(t, inspect.UnionType):
        return _union_text(t)
    raise TypeError(f"no words for {t!r}")  # pragma: no cover - a new kind of field


def _description(t: inspect.Type) -> str:
    if isinstance(t, inspect.Metadata):
        inner = _description(t.type)
        described = (t.extra_json_schema or {}).get("description", "")
        return str(described) or inner
    return ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _required(field: inspect.Field) -> str:
    if field.required:
        return "yes"
    if field.default not in (None, (), msgspec.NODEFAULT):
        return f"no, default `{json.dumps(field.default)}`"
    return "no"


def fields_table(cls: type[msgspec.Struct], *, private: Iterable[str] = ()) -> list[str]:
    """The markdown table of a struct's fields (envelope fields left out)."""
    info = inspect.type_info(cls)
    assert isinstance(info, inspect.StructType)
    hidden = set(private)
    rows = []
    for field in info.fields:
        if issubclass(cls, Message) and field.name in _ENVELOPE_FIELDS:
            continue
        meaning = _description(field.type)
        if field.name in hidden:
            meaning += " **(private)**"
        rows.append((f"`{field.encode_name}`", type_text(field.type), _required(field), meaning))
    if not rows:
        return ["No fields besides the envelope."]
    return _table(("field", "type", "required", "meaning"), rows)


# -- examples ---------------------------------------------------------------


def _ordered(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(message)
    first: dict[str, Any] = {k: data.pop(k) for k in ("v", "type", "id") if k in data}
    return {**first, **data}


def _breakable(value: Any) -> bool:
    """Maps break; lists break unless all their items are scalars (cards, seats)."""
    if isinstance(value, dict):
        return bool(value)
    return isinstance(value, list | tuple) and any(
        isinstance(v, dict | list | tuple) for v in value
    )


def pretty_json(value: Any, indent: int = 0, used: int | None = None, width: int = _WIDTH) -> str:
    """JSON that stays on one line while it fits in ``width``, else breaks.

    ``indent`` is the indentation of the current line and ``used`` the
    characters already on it (default: ``indent``).
    """
    flat = json.dumps(value, ensure_ascii=False)
    used = indent if used is None else used
    if used + len(flat) <= width or not _breakable(value):
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = json.dumps(k, ensure_ascii=False) + ": "
            items.append(pad + key + pretty_json(v, indent + 2, indent + 2 + len(key), width))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + pretty_json(v, indent + 2, None, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def _example(value: Any, info: str) -> list[str]:
    return [f"```json {info}", pretty_json(value), "```"]


# -- sections ---------------------------------------------------------------


def _first_line(cls: type) -> str:
    return " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split()).replace("``", "`")


def _doc(cls: type) -> str:
    return " ".join((cls.__doc__ or "").split()).replace("``", "`")


def _messages(registry: Mapping[str, type[Message]], examples_: Mapping[str, Message]) -> str:
    client = registry is CLIENT_MESSAGES
    prefix, info = ("c2s", "c2s") if client else ("s2c", "s2c")
    how = "answered by" if client else "sent to"
    lines = _table(
        ("type", how, "purpose"),
        (
            (
                f"[`{tag}`](#{prefix}-{tag})",
                getattr(cls, "answer" if client else "sent_to"),
                _first_line(cls),
            )
            for tag, cls in registry.items()
        ),
    )
    for tag, cls in registry.items():
        lines += ["", f'<a id="{prefix}-{tag}"></a>', "", f"### `{tag}`", "", _doc(cls), ""]
        if client:
            lines += [f"*Answered by:* {cls.answer}.", ""]  # type: ignore[attr-defined]
        else:
            lines += [f"*Sent to:* {cls.sent_to}.", ""]  # type: ignore[attr-defined]
        lines += fields_table(cls)
        lines += ["", *_example(_ordered(examples_[tag]), info)]
    return "\n".join(lines)


def _actions() -> str:
    rows = []
    for cls in ACTION_TYPES:
        tag = cls.__struct_config__.tag
        example = json.dumps(msgspec.to_builtins(examples.ACTION_EXAMPLES[str(tag)]))
        rows.append((f"`{tag}`", _doc(cls), f"`{example}`"))
    return "\n".join(_table(("kind", "meaning", "spelling"), rows))


def _structs_in(t: inspect.Type, found: dict[type, None]) -> None:
    """Collect, in order of first use, every struct type ``t`` holds."""
    if isinstance(t, inspect.StructType):
        if t.cls in found:
            return
        found[t.cls] = None
        for field in t.fields:
            _structs_in(field.type, found)
        return
    for attr in ("type", "item_type", "key_type", "value_type"):
        inner = getattr(t, attr, None)
        if isinstance(inner, inspect.Type):
            _structs_in(inner, found)
    for inner in getattr(t, "types", ()) + getattr(t, "item_types", ()):
        _structs_in(inner, found)


def value_types_missing() -> list[str]:
    """The value types some message holds that the values section leaves out.

    Every struct a message can carry, other than the messages, actions and
    events that have sections of their own, needs a table under *Values*, or
    the links to it lead nowhere.
    """
    found: dict[type, None] = {}
    for registry in (CLIENT_MESSAGES, SERVER_MESSAGES):
        for info in inspect.multi_type_info(list(registry.values())):
            _structs_in(info, found)
    own_section = {*ACTION_TYPES, *EVENT_TYPES, *_VALUE_TYPES}
    return [
        cls.__name__ for cls in found if cls not in own_section and not issubclass(cls, Message)
    ]


def _values() -> str:
    missing = value_types_missing()
    if missing:
        raise ValueError(f"protocol.docs._VALUE_TYPES lacks: {', '.join(missing)}")
    lines: list[str] = []
    for cls in _VALUE_TYPES:
        lines += [f"### {cls.__name__}", "", _doc(cls), "", *fields_table(cls), ""]
    return "\n".join(lines).rstrip("\n")


def _events() -> str:
    lines = _table(
        ("kind", "private fields", "what happened"),
        (
            (
                f"[`{cls.__struct_config__.tag}`](#event-{cls.__struct_config__.tag})",
                ", ".join(f"`{name}`" for name in cls.private) or "—",
                _first_line(cls),
            )
            for cls in EVENT_TYPES
        ),
    )
    for cls in EVENT_TYPES:
        tag = str(cls.__struct_config__.tag)
        lines += ["", f'<a id="event-{tag}"></a>', "", f"### `{tag}`", "", _doc(cls), ""]
        if cls.private:
            names = ", ".join(f"`{name}`" for name in cls.private)
            lines += [f"Private: {names} — `null` for everyone but `seat`.", ""]
        lines += fields_table(cls, private=cls.private)
        for who, event in examples.EVENT_EXAMPLES[tag]:
            lines += [
                "",
                f"As {who} receives it:",
                "",
                *_example(msgspec.to_builtins(event), "event"),
            ]
    return "\n".join(lines)


def _errors() -> str:
    return "\n".join(
        _table(
            ("code", "when"), ((f"`{code.value}`", text) for code, text in ERROR_CODE_DOCS.items())
        )
    )


def _close_codes() -> str:
    return "\n".join(
        _table(
            ("code", "name", "when"),
            ((str(int(code)), f"`{code.name}`", text) for code, text in CLOSE_CODE_DOCS.items()),
        )
    )


def _limits() -> str:
    return "\n".join(
        _table(
            ("limit", "value", "meaning"),
            ((f"`{n}`", f"{v:,}" if isinstance(v, int) else str(v), m) for n, v, m in LIMITS),
        )
    )


def _spellings() -> str:
    colours = ", ".join(f'`"{c}"`' for c in COLOURS)
    cards = ", ".join(f'`"{c}"`' for c in CARDS)
    return f"- colour: {colours}\n- card: {cards}"


def _client(client_path: Path) -> str:
    return "```python\n" + client_path.read_text(encoding="utf-8") + "```"


def render_sections(client_path: Path = CLIENT_PATH) -> dict[str, str]:
    """Every generated section's text, by the name in its markers."""
    return {
        "spellings": _spellings(),
        "client-messages": _messages(CLIENT_MESSAGES, examples.CLIENT_EXAMPLES),
        "server-messages": _messages(SERVER_MESSAGES, examples.SERVER_EXAMPLES),
        "actions": _actions(),
        "values": _values(),
        "events": _events(),
        "errors": _errors(),
        "close-codes": _close_codes(),
        "limits": _limits(),
        "example-client": _client(client_path),
    }


def replace_sections(document: str, sections: Mapping[str, str]) -> str:
    """``document`` with the body of every marked section replaced."""
    missing = set(sections) - {m.group("name") for m in _SECTION.finditer(document)}
    if missing:
        raise ValueError(f"PROTOCOL.md lacks the markers of: {', '.join(sorted(missing))}")

    def body(match: re.Match[str]) -> str:
        name = match.group("name")
        text = sections.get(name, match.group("body").rstrip("\n"))
        return f"{match.group(1)}{text}\n{match.group(4)}"

    return _SECTION.sub(body, document)


def check(doc_path: Path = DOC_PATH, client_path: Path = CLIENT_PATH) -> list[str]:
    """The names of the sections of ``doc_path`` that differ from the definitions."""
    document = doc_path.read_text(encoding="utf-8")
    sections = render_sections(client_path)
    fresh = replace_sections(document, sections)
    found = {m.group("name"): m.group("body") for m in _SECTION.finditer(document)}
    stale = [name for name, text in sections.items() if found.get(name) != text + "\n"]
    assert stale or fresh == document
    return stale


def write(doc_path: Path = DOC_PATH, client_path: Path = CLIENT_PATH) -> None:
    """Rewrite the generated sections of ``doc_path`` in place."""
    document = doc_path.read_text(encoding="utf-8")
    doc_path.write_text(replace_sections(document, render_sections(client_path)), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Check (``--check``) or rewrite (``--write``) PROTOCOL.md's generated sections."""

    def write_doc(path: Path) -> list[Path]:
        write(path)
        return [path]

    return write_or_check(
        argv,
        prog="python -m protocol.docs",
        description="Write or check PROTOCOL.md's generated tables (between its"
        " BEGIN/END GENERATED markers) from the definitions in protocol/.",
        default=DOC_PATH,
        write=write_doc,
        stale=check,
    )


if __name__ == "__main__":
    raise SystemExit(main())
