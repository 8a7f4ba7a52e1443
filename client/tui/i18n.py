"""The translation catalogue: every string a player reads comes from here.

Messages live in :mod:`client.tui.locales` — one dict per language, keyed by
message id, with ``str.format`` fields (``"{name} kept {card}"``). Invariants:

- Every language has exactly the same keys, and each message the same
  ``{fields}`` as its English original (``tests/client/test_i18n.py``).
- :func:`t` returns plain text; :func:`rich` returns a :class:`rich.text.Text`
  whose fields may themselves be styled ``Text`` (a card, a player's name), so
  no name a player types is ever read as markup.
- The *pseudo* language (tests only) is English with every letter swapped for
  an accented look-alike of the same width: whatever is still plain ASCII on
  screen under it did not pass through the catalogue.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .locales import de, en, es

if TYPE_CHECKING:  # Rich comes with Textual: only the app needs it, not ``tulips --help``
    from rich.text import Text

__all__ = [
    "CATALOGUE",
    "LANGUAGES",
    "detect_language",
    "language",
    "rich",
    "set_language",
    "t",
]

#: The languages a player can pick, by ISO 639-1 code.
LANGUAGES: tuple[str, ...] = ("en", "de", "es")
#: Every language's messages, keyed by message id.
CATALOGUE: dict[str, dict[str, str]] = {"en": en.MESSAGES, "de": de.MESSAGES, "es": es.MESSAGES}

_PSEUDO_MAP = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "áƀçďéƒĝĥíĵķĺɱñóþʠŕšţúṽŵẋýžÁƁÇĎÉƑĜĤÍĴĶĹṀÑÓÞɊŔŠŢÚṼŴẊÝŽ",
)
_FORMATTER = string.Formatter()


class _Current:
    """The language in use (one per process: a terminal shows one player's screen)."""

    lang = "en"
    pseudo = False


def set_language(lang: str, *, pseudo: bool = False) -> None:
    """Use ``lang`` from now on; ``pseudo`` (tests) marks every translated letter."""
    if lang not in CATALOGUE:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(LANGUAGES)}")
    _Current.lang = lang
    _Current.pseudo = pseudo


def language() -> str:
    """The language in use."""
    return _Current.lang


def detect_language(environ: Mapping[str, str]) -> str:
    """The player's language from the locale (LC_ALL, LC_MESSAGES, LANG — POSIX
    order); English when it names none we have."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:
            code = value.split(".")[0].split("_")[0].split("-")[0].lower()
            return code if code in CATALOGUE else "en"
    return "en"


def _template(key: str) -> str:
    messages = CATALOGUE[_Current.lang]
    template = messages.get(key)
    if template is None:  # a missing key is a bug the tests catch; show the id, not a crash
        template = CATALOGUE["en"].get(key, key)
    if _Current.pseudo:
        template = "".join(
            literal.translate(_PSEUDO_MAP).replace("{", "{{").replace("}", "}}")
            + _field(field, spec, conversion)
            for literal, field, spec, conversion in _FORMATTER.parse(template)
        )
    return template


def _field(field: str | None, spec: str | None, conversion: str | None) -> str:
    if field is None:
        return ""
    return (
        "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
    )


def t(key: str, **fields: object) -> str:
    """The message ``key`` in the current language, with ``fields`` filled in."""
    template = _template(key)
    return template.format(**fields) if fields else template


def rich(key: str, style: str = "", **fields: object) -> Text:
    """Like :func:`t`, but a :class:`Text`: ``Text`` fields keep their styles and
    string fields are inserted verbatim (never parsed as markup)."""
    from rich.text import Text

    result = Text(style=style)
    for literal, field, spec, conversion in _FORMATTER.parse(_template(key)):
        if literal:
            result.append(literal)
        if field is None:
            continue
        value = fields[field]
        if isinstance(value, Text):
            result.append_text(value)
        else:
            if conversion == "r":
                value = repr(value)
            result.append(format(value, spec or ""))
    return result
