"""The translations: every string a player reads comes from here.

Messages live in gettext catalogues under :mod:`client.tui.locales`
(``<lang>/LC_MESSAGES/tulips.mo``, compiled from ``tulips.po``), read with the
standard library's :mod:`gettext`. A message id is a stable key
(``"log.kept"``); its text has ``str.format`` fields (``"{who} kept {card}"``).
English is the source language and every other one falls back to it, message
by message. Invariants:

- Every language translates exactly English's ids, each with the same
  ``{fields}`` as the English text, and its ``.mo`` is compiled from its
  current ``.po`` (``tests/client/test_i18n.py``).
- A message that counts something has plural forms, picked by :func:`tn` (or
  :func:`rich` given ``number``) with the language's own rule; every other
  message is read with :func:`t` or :func:`rich`.
- :func:`t` returns plain text; :func:`rich` returns a :class:`rich.text.Text`
  whose fields may themselves be styled ``Text`` (a card, a player's name), so
  no name a player types is ever read as markup.
- The *pseudo* language (tests only) is English with every letter swapped for
  an accented look-alike of the same width: whatever is still plain ASCII on
  screen under it did not pass through the catalogue.
"""

from __future__ import annotations

import gettext
import string
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .locales import DOMAIN, LOCALEDIR, SOURCE, languages

if TYPE_CHECKING:  # Rich comes with Textual: only the app needs it, not ``tulips --help``
    from rich.text import Text

__all__ = [
    "LANGUAGES",
    "detect_language",
    "language",
    "rich",
    "set_language",
    "t",
    "tn",
]

#: The languages a player can pick, by ISO 639-1 code: those with a catalogue.
LANGUAGES: tuple[str, ...] = languages()

_PSEUDO_MAP = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "áƀçďéƒĝĥíĵķĺɱñóþʠŕšţúṽŵẋýžÁƁÇĎÉƑĜĤÍĴĶĹṀÑÓÞɊŔŠŢÚṼŴẊÝŽ",
)
_FORMATTER = string.Formatter()


def _load(lang: str) -> gettext.GNUTranslations:
    """``lang``'s catalogue, falling back to English for what it lacks."""
    translation = gettext.translation(DOMAIN, LOCALEDIR, languages=[lang])
    if lang != SOURCE:
        translation.add_fallback(gettext.translation(DOMAIN, LOCALEDIR, languages=[SOURCE]))
    assert isinstance(translation, gettext.GNUTranslations)
    return translation


class _Current:
    """The language in use (one per process: a terminal shows one player's screen).
    Its catalogue is read on first use, so ``tulips --help`` in English reads one file."""

    lang = SOURCE
    pseudo = False
    loaded: dict[str, gettext.GNUTranslations] = {}

    @classmethod
    def translation(cls) -> gettext.GNUTranslations:
        if cls.lang not in cls.loaded:
            cls.loaded[cls.lang] = _load(cls.lang)
        return cls.loaded[cls.lang]


def set_language(lang: str, *, pseudo: bool = False) -> None:
    """Use ``lang`` from now on; ``pseudo`` (tests) marks every translated letter."""
    if lang not in LANGUAGES:
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
            return code if code in LANGUAGES else SOURCE
    return SOURCE


def _template(key: str, number: int | None = None) -> str:
    # An id no catalogue has is a bug the tests catch: gettext shows the id, not a crash.
    translation = _Current.translation()
    template = (
        translation.gettext(key) if number is None else translation.ngettext(key, key, number)
    )
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


def tn(key: str, number: int, **fields: object) -> str:
    """The plural message ``key`` in its form for ``number`` ("1 card", "2 cards":
    the language's own plural rule), with ``fields`` filled in."""
    return _template(key, number).format(**fields)


def rich(key: str, style: str = "", *, number: int | None = None, **fields: object) -> Text:
    """Like :func:`t` (or :func:`tn` given ``number``), but a :class:`Text`: ``Text``
    fields keep their styles and string fields are inserted verbatim (never parsed
    as markup)."""
    from rich.text import Text

    result = Text(style=style)
    for literal, field, spec, conversion in _FORMATTER.parse(_template(key, number)):
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
