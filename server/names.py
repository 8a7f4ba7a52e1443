"""Players' names: unique on a server in any case, and the free variant a
``hello`` gets when its name is taken (``Anna`` → ``Anna 2``)."""

from __future__ import annotations

from collections.abc import Iterator

from protocol.limits import MAX_NAME_LENGTH

__all__ = ["name_key", "numbered", "variants"]


def name_key(name: str) -> str:
    """What two names must differ in to be two names: not case (``Anna``,
    ``anna`` and ``ANNA`` are one), nor spaces at either end."""
    return name.strip().casefold()


def numbered(name: str, number: int) -> str:
    """``name N``, the name cut to leave room for the number."""
    suffix = f" {number}"
    return name[: MAX_NAME_LENGTH - len(suffix)].rstrip() + suffix


def variants(name: str, count: int = 1000) -> Iterator[str]:
    """The names a taken ``name`` is offered, in order: itself, ``name 2``, …
    (made as they are asked for: most names are free as they are)."""
    yield name
    for number in range(2, count + 1):
        yield numbered(name, number)
