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

:func:`maker` gives the match's hot path a cheaper way to build a value than
calling its class: ``CardKept(seat, card, points)`` goes through
``type.__call__`` and then the Python ``__init__``; ``maker(CardKept)`` is
one function that allocates the object and fills its slots, field by field
as that ``__init__`` does, for about two thirds of the cost.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, dataclass_transform

__all__ = ["maker", "value_class"]

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def value_class(cls: type[T]) -> type[T]:
    """Make ``cls`` a slotted dataclass with ``==`` and ``hash`` by its fields."""
    return dataclass(slots=True, unsafe_hash=True)(cls)


def maker(cls: type[T]) -> Callable[..., T]:
    """A function that builds a ``cls`` from its fields, in order, as ``cls(...)`` does.

    Only for a :func:`value_class` without defaults or ``__post_init__``,
    whose ``__init__`` does nothing but set each field.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if any(
        f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        for f in fields
    ) or hasattr(cls, "__post_init__"):
        raise TypeError(f"maker needs fields without defaults and no __post_init__: {cls}")
    names = [f.name for f in fields]
    # the object's local name is no field's (MajorityPlace has a field "value"), and
    # neither are the names of the scope the function reads
    made = "_made"
    while made in names:
        made += "_"
    if {"new", "cls"} & set(names):
        raise TypeError(f"maker needs fields not named new or cls: {cls}")
    body = "".join(f"    {made}.{name} = {name}\n" for name in names)
    source = f"def make({', '.join(names)}):\n    {made} = new(cls)\n{body}    return {made}\n"
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec(source, scope)
    make: Callable[..., T] = scope["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    make.__doc__ = f"``{cls.__name__}(...)``, built directly."
    return make
