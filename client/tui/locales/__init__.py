"""The client's gettext catalogues: where they are and which languages there are.

Layout (the one :func:`gettext.translation` looks for)::

    tulips.pot                       the template, made from English
    <lang>/LC_MESSAGES/tulips.po     a language's texts, edited by translators
    <lang>/LC_MESSAGES/tulips.mo     the same compiled, read at run time

Message ids are stable keys (``"festival.title"``); English is a language like
the others, whose ``tulips.po`` is the source of every text (README.md tells
translators how to work with them). This package imports nothing but
:mod:`pathlib`: the client reads it on every start.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DOMAIN", "LOCALEDIR", "SOURCE", "languages", "mo_path", "po_path"]

#: The gettext domain: the catalogues' file name.
DOMAIN = "tulips"
#: The folder of the catalogues (this package's own).
LOCALEDIR = Path(__file__).parent
#: The language every text is first written in; the others fall back to it.
SOURCE = "en"


def po_path(lang: str, root: Path = LOCALEDIR) -> Path:
    """Where ``lang``'s editable catalogue is."""
    return root / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(lang: str, root: Path = LOCALEDIR) -> Path:
    """Where ``lang``'s compiled catalogue is."""
    return root / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"


def languages() -> tuple[str, ...]:
    """The languages with a compiled catalogue: English first, then by code."""
    found = sorted(path.parent.parent.name for path in LOCALEDIR.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return tuple(sorted(found, key=lambda lang: lang != SOURCE))
