"""Value classes built on the engine's hot paths: the events a match returns,
the entries of the secret pile, and the final scoring's breakdown.

A value class is a slotted dataclass with equality and hashing by its fields,
immutable by contract: type checkers treat it as ``frozen=True`` (through
:func:`typing.dataclass_transform`), so mypy refuses any assignment to a
field anywhere in the project. At run time it is not frozen, on purpose: a
frozen dataclass's ``__init__`` must go round its own ``__setattr__`` for
every field, which costs two to three times a plain slotted ``__init__``, and
a random playout builds some 150 events (a frozen event was 13% of the
engine benchmark). Nothing in the engine reads back an object it has handed
out, so a caller who mutated one at run time would spoil only its own copy.

Cards and actions, built rarely and shared everywhere, stay frozen at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

__all__ = ["value_class"]

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def value_class(cls: type[T]) -> type[T]:
    """Make ``cls`` a slotted dataclass with ``==`` and ``hash`` by its fields."""
    return dataclass(slots=True, unsafe_hash=True)(cls)
