"""Reading and writing gettext catalogues: ``.po`` text and compiled ``.mo`` bytes.

The client reads its messages with the standard library's :mod:`gettext`
from the compiled ``.mo`` files; this module is for the tools around them
(``python -m client.tui.locales``) and the tests. It handles what GNU gettext
and Poedit write for this project: the header entry; translator (``#``),
extracted (``#.``), reference (``#:``), flag (``#,``) and previous (``#|``)
comments; ``msgid``, ``msgid_plural``, ``msgstr`` and ``msgstr[N]`` with
strings continued over several lines; obsolete entries (``#~``).
``msgctxt`` is refused: message ids here are unique keys (see README.md).

Invariants: :func:`parse` of :func:`dump` gives back the same catalogue;
:func:`compile_mo` leaves out fuzzy and untranslated entries, as ``msgfmt``
does, so a language falls back to English for them.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Catalogue", "Entry", "PoError", "compile_mo", "dump", "parse", "read"]

_MO_MAGIC = 0x950412DE
_WIDTH = 79  # as msgmerge and Poedit wrap
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_KEYWORD = re.compile(r'(msgid|msgid_plural|msgstr|msgstr\[(\d+)\]|msgctxt)\s+(".*")$')


class PoError(ValueError):
    """A ``.po`` file this module cannot read, with the file and line."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(source, line, problem)
        self.source = source
        self.line = line
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.problem}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One message: its id, its translation (one string, or one per plural form)."""

    msgid: str
    strings: tuple[str, ...]
    plural: str | None = None
    notes: tuple[str, ...] = ()
    comments: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    obsolete: bool = False

    @property
    def fuzzy(self) -> bool:
        """Marked for review: not compiled, so English shows instead."""
        return "fuzzy" in self.flags

    @property
    def translated(self) -> bool:
        """Every form has a text and none waits for review."""
        return not self.fuzzy and bool(self.strings) and all(self.strings)


@dataclass(frozen=True, slots=True)
class Catalogue:
    """A whole ``.po`` file: header fields, then the entries in file order."""

    header: dict[str, str]
    entries: tuple[Entry, ...]
    header_comments: tuple[str, ...] = ()
    _index: dict[str, Entry] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = {entry.msgid: entry for entry in self.entries if not entry.obsolete}
        object.__setattr__(self, "_index", index)

    def get(self, msgid: str) -> Entry | None:
        """The live (not obsolete) entry with this id, if any."""
        return self._index.get(msgid)

    @property
    def messages(self) -> tuple[Entry, ...]:
        """The live entries, in file order."""
        return tuple(entry for entry in self.entries if not entry.obsolete)


# -- reading -------------------------------------------------------------------


def read(path: Path) -> Catalogue:
    """The catalogue in the ``.po`` file at ``path`` (UTF-8)."""
    return parse(path.read_text(encoding="utf-8"), str(path))


def _unquote(literal: str, source: str, line: int) -> str:
    if len(literal) < 2 or literal[0] != '"' or literal[-1] != '"':
        raise PoError(source, line, f"expected a quoted string, got {literal!r}")
    body, out, i = literal[1:-1], [], 0
    while i < len(body):
        char = body[i]
        if char == '"':
            raise PoError(source, line, f"unescaped quote in {literal!r}")
        if char == "\\":
            if i + 1 >= len(body) or body[i + 1] not in _ESCAPES:
                raise PoError(source, line, f"unknown escape in {literal!r}")
            out.append(_ESCAPES[body[i + 1]])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


class _Builder:
    """The entry being read, field by field."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.comments: list[str] = []
        self.flags: list[str] = []
        self.msgid: str | None = None
        self.plural: str | None = None
        self.strings: dict[int, str] = {}
        self.obsolete = False
        self.last: tuple[str, int] | None = None  # which string a continuation extends

    @property
    def started(self) -> bool:
        return self.msgid is not None

    def has_comments(self) -> bool:
        return bool(self.notes or self.comments or self.flags)

    def append(self, text: str) -> None:
        assert self.last is not None
        kind, index = self.last
        if kind == "msgid":
            self.msgid = (self.msgid or "") + text
        elif kind == "msgid_plural":
            self.plural = (self.plural or "") + text
        else:
            self.strings[index] += text

    def build(self, source: str, line: int) -> Entry:
        if self.msgid is None:
            raise PoError(source, line, "comments without a msgid")
        if not self.strings:
            raise PoError(source, line, f"msgid {self.msgid!r} has no msgstr")
        if (self.plural is None) != (list(self.strings) == [-1]):
            raise PoError(source, line, f"msgid {self.msgid!r}: msgstr[N] goes with msgid_plural")
        if self.plural is not None and sorted(self.strings) != list(range(len(self.strings))):
            raise PoError(source, line, f"msgid {self.msgid!r}: plural forms missing or repeated")
        strings = tuple(self.strings[i] for i in sorted(self.strings))
        return Entry(
            msgid=self.msgid,
            strings=strings,
            plural=self.plural,
            notes=tuple(self.notes),
            comments=tuple(self.comments),
            flags=tuple(self.flags),
            obsolete=self.obsolete,
        )


def parse(text: str, source: str = "<po>") -> Catalogue:
    """The catalogue written in ``text``; :class:`PoError` names the bad line."""
    entries: list[Entry] = []
    current = _Builder()
    number = 0

    def finish() -> None:
        nonlocal current
        if current.started or current.has_comments():
            entries.append(current.build(source, number))
        current = _Builder()

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        obsolete = line.startswith("#~")
        if obsolete:
            line = line[2:].strip()
            if not line or line.startswith("|"):
                continue
        if not line:
            finish()
            continue
        if line.startswith("#") and not obsolete:
            if current.started and current.strings:
                finish()
            _comment(current, line)
            continue
        if line.startswith('"'):
            if current.last is None:
                raise PoError(source, number, "a string continues nothing")
            current.append(_unquote(line, source, number))
            continue
        match = _KEYWORD.match(line)
        if match is None:
            raise PoError(source, number, f"cannot read {raw!r}")
        keyword, index, literal = match.groups()
        value = _unquote(literal, source, number)
        if keyword == "msgctxt":
            raise PoError(source, number, "msgctxt is not used: ids are unique keys")
        if keyword == "msgid" and current.strings:
            finish()
        current.obsolete = current.obsolete or obsolete
        if keyword == "msgid":
            current.msgid, current.last = value, ("msgid", 0)
        elif keyword == "msgid_plural":
            current.plural, current.last = value, ("msgid_plural", 0)
        else:
            slot = -1 if index is None else int(index)
            if slot in current.strings:
                raise PoError(source, number, f"{keyword} given twice")
            current.strings[slot] = value
            current.last = ("msgstr", slot)
    number += 1
    finish()
    return _with_header(entries, source)


def _comment(current: _Builder, line: str) -> None:
    kind, text = line[:2], line[2:].removeprefix(" ")
    if kind == "#.":
        current.notes.append(text)
    elif kind == "#,":
        current.flags.extend(flag.strip() for flag in text.split(",") if flag.strip())
    elif kind in ("#:", "#|"):
        pass  # references and previous ids: msgmerge and Poedit make them again
    else:
        current.comments.append(line[1:].removeprefix(" "))


def _with_header(entries: list[Entry], source: str) -> Catalogue:
    if not entries or entries[0].msgid != "" or entries[0].obsolete:
        raise PoError(source, 1, 'the file must start with the header (msgid "")')
    head, *rest = entries
    header: dict[str, str] = {}
    for line in head.strings[0].splitlines():
        name, colon, value = line.partition(":")
        if colon:
            header[name.strip()] = value.strip()
    return Catalogue(header=header, entries=tuple(rest), header_comments=head.comments)


# -- writing -------------------------------------------------------------------


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r") + '"'


def _pieces(text: str, room: int) -> list[str]:
    """``text`` cut after each newline and, where a line is long, after spaces."""
    pieces: list[str] = []
    for line in re.findall(r"[^\n]*\n|[^\n]+", text):
        while len(_quote(line)) > room and " " in line[: room - 2]:
            cut = line.rfind(" ", 0, room - 2) + 1
            pieces.append(line[:cut])
            line = line[cut:]
        pieces.append(line)
    return pieces


def _field(prefix: str, keyword: str, text: str) -> list[str]:
    single = f"{prefix}{keyword} {_quote(text)}"
    if len(single) <= _WIDTH and "\n" not in text[:-1]:
        return [single]
    return [f"{prefix}{keyword} " + '""'] + [
        prefix + _quote(piece) for piece in _pieces(text, _WIDTH - len(prefix))
    ]


def _entry_lines(entry: Entry) -> list[str]:
    prefix = "#~ " if entry.obsolete else ""
    lines = [f"# {c}".rstrip() for c in entry.comments]
    lines += [f"#. {n}".rstrip() for n in entry.notes]
    if entry.flags:
        lines.append("#, " + ", ".join(entry.flags))
    lines += _field(prefix, "msgid", entry.msgid)
    if entry.plural is None:
        lines += _field(prefix, "msgstr", entry.strings[0])
    else:
        lines += _field(prefix, "msgid_plural", entry.plural)
        for index, text in enumerate(entry.strings):
            lines += _field(prefix, f"msgstr[{index}]", text)
    return lines


def dump(catalogue: Catalogue) -> str:
    """The catalogue as ``.po`` text, wrapped at 79 columns as gettext's tools do."""
    header_text = "".join(f"{name}: {value}\n" for name, value in catalogue.header.items())
    head = Entry(msgid="", strings=(header_text,), comments=catalogue.header_comments)
    blocks = [_entry_lines(head)] + [_entry_lines(entry) for entry in catalogue.entries]
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


def compile_mo(catalogue: Catalogue) -> bytes:
    """The ``.mo`` bytes for the catalogue, laid out as GNU ``msgfmt`` lays them out
    (no hash table, which readers do not need): translated entries only."""
    header = "".join(f"{name}: {value}\n" for name, value in catalogue.header.items())
    messages = {b"": header.encode()}
    for entry in catalogue.messages:
        if not entry.translated:
            continue
        msgid = entry.msgid if entry.plural is None else f"{entry.msgid}\0{entry.plural}"
        messages[msgid.encode()] = "\0".join(entry.strings).encode()
    ids = strs = b""
    spans: list[tuple[int, int, int, int]] = []
    for key in sorted(messages):
        spans.append((len(key), len(ids), len(messages[key]), len(strs)))
        ids += key + b"\0"
        strs += messages[key] + b"\0"
    count = len(messages)
    start_ids = 7 * 4 + 16 * count
    start_strs = start_ids + len(ids)
    table_ids = b"".join(struct.pack("<II", n, start_ids + at) for n, at, _, _ in spans)
    table_strs = b"".join(struct.pack("<II", n, start_strs + at) for _, _, n, at in spans)
    head = struct.pack("<7I", _MO_MAGIC, 0, count, 7 * 4, 7 * 4 + 8 * count, 0, 0)
    return head + table_ids + table_strs + ids + strs


def read_mo(data: bytes) -> dict[str, str]:
    """Every message in ``.mo`` bytes, whoever compiled them: the id (``id\\0plural``
    for a plural message) to its text (forms joined by ``\\0``); the header is ``""``."""
    magic, _revision, count, at_ids, at_strs = struct.unpack_from("<5I", data)
    if magic != _MO_MAGIC:
        raise ValueError("not a little-endian .mo file")
    messages: dict[str, str] = {}
    for index in range(count):
        id_length, id_at = struct.unpack_from("<II", data, at_ids + 8 * index)
        str_length, str_at = struct.unpack_from("<II", data, at_strs + 8 * index)
        key = data[id_at : id_at + id_length].decode()
        messages[key] = data[str_at : str_at + str_length].decode()
    return messages
