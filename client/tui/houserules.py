"""House rules in words: what a match's ruleset changes from the printed rules.

The server says which fields differ (``RulesetInfo.changes``) and every
number; the printed numbers come from the ruleset it offers as ``standard``
(the client cannot import the engine). Without them the text leaves the
"(printed: …)" out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import protocol as wire

from .i18n import t

__all__ = ["STANDARD", "house_rules", "house_rules_text"]

#: The name under which a server offers the printed rules.
STANDARD = "standard"


def _row(values: Sequence[int]) -> str:
    return "/".join(str(v) for v in values)


def _majority(info: wire.RulesetInfo) -> str:
    return " ".join(_row(row) for row in info.majority)


#: For each whole field: its words and how to say its value.
_FIELDS: dict[str, tuple[Callable[[str], str], Callable[[wire.RulesetInfo], str]]] = {
    "reveal_size": (lambda v: t("rules.reveal", n=v), lambda i: str(i.reveal_size)),
    "deck.copies": (lambda v: t("rules.copies", n=v), lambda i: str(i.copies)),
    "deck.extra_copies": (lambda v: t("rules.extra_copies", n=v), lambda i: str(i.extra_copies)),
    "deck.extra_from_players": (
        lambda v: t("rules.extra_from", n=v),
        lambda i: str(i.extra_from_players),
    ),
    "points.giving_bonus": (lambda v: t("rules.give", points=v), lambda i: _row(i.giving_bonus)),
    "points.bouquet": (lambda v: t("rules.keep", points=v), lambda i: _row(i.bouquet)),
    "points.majority": (lambda v: t("rules.majority", points=v), _majority),
}


def _column(info: wire.RulesetInfo, table: str) -> tuple[int, ...]:
    return tuple(info.removed if table == "removed" else info.majority_places)


def _change(path: str, info: wire.RulesetInfo, printed: wire.RulesetInfo | None) -> str | None:
    """One change in words, with its printed value when known."""
    if path in _FIELDS:
        words, value = _FIELDS[path]
        mine, theirs = value(info), value(printed) if printed is not None else None
    else:
        table, _, count = path.partition(".")
        if table not in ("removed", "majority_places") or not count.isdigit():
            return None  # a field newer than this client
        index = int(count) - 2
        if not 0 <= index < len(info.removed):
            return None
        column = info.removed if table == "removed" else info.majority_places
        mine = str(column[index])
        theirs = None
        if printed is not None:
            theirs = str(
                (printed.removed if table == "removed" else printed.majority_places)[index]
            )
        key = "rules.removed" if table == "removed" else "rules.places"
        text = t(key, n=mine, players=count)
        return text if theirs is None else t("rules.printed", change=text, printed=theirs)
    text = words(mine)
    return text if theirs is None else t("rules.printed", change=text, printed=theirs)


def house_rules(info: wire.RulesetInfo, printed: wire.RulesetInfo | None) -> tuple[str, ...]:
    """Every change of ``info`` from the printed rules, in words (none: it is them)."""
    return tuple(
        said for path in info.changes if (said := _change(path, info, printed)) is not None
    )


def house_rules_text(info: wire.RulesetInfo, printed: wire.RulesetInfo | None) -> str | None:
    """ "House rules: reveal 3 secret cards (printed: 5); …", or None for the printed rules."""
    changes = house_rules(info, printed)
    if not changes:
        return None
    return t("rules.house", name=info.name, changes="; ".join(changes))
