"""Hypothesis strategies for valid protocol values, derived from the definitions.

:func:`strategy_for` reads a type the way msgspec does
(``msgspec.inspect.type_info``) and builds values that satisfy every bound
it declares, so "every message type round-trips" is tested against the same
single definition the codec validates with — a new field or a new bound is
covered without touching the tests.
"""

from __future__ import annotations

import string
from typing import Any

import msgspec
from hypothesis import strategies as st
from msgspec import inspect

from protocol import CLIENT_MESSAGES, SERVER_MESSAGES
from protocol.messages import Message

#: Keep generated strings and lists short; bounds are tested separately.
MAX_TEXT = 12
MAX_ITEMS = 4

_ID_ALPHABET = string.ascii_letters + string.digits + "_-"
_PRINTABLE = st.characters(exclude_categories=("Cs", "Cc"))


def _text(t: inspect.StrType) -> st.SearchStrategy[str]:
    low = t.min_length or 0
    high = min(t.max_length if t.max_length is not None else MAX_TEXT, max(low, MAX_TEXT))
    if t.pattern is not None and "A-Za-z" in t.pattern:
        return st.text(_ID_ALPHABET, min_size=low, max_size=high)
    if t.pattern is not None and t.pattern.startswith("^[a-z][a-z0-9_]"):  # a feature
        return st.from_regex(t.pattern, fullmatch=True)
    if t.pattern is not None and "0-9a-f" in t.pattern:
        return st.text("0123456789abcdef", min_size=low, max_size=max(low, high))
    return st.text(_PRINTABLE, min_size=low, max_size=high)


def _sized(t: Any) -> tuple[int, int]:
    low = t.min_length or 0
    high = t.max_length if t.max_length is not None else MAX_ITEMS
    return low, max(low, min(high, MAX_ITEMS))


def _struct(t: inspect.StructType) -> st.SearchStrategy[Any]:
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for field in t.fields:
        if issubclass(t.cls, Message) and field.name == "v":
            continue
        target = required if field.required else optional
        target[field.name] = strategy_for(field.type)
    return st.fixed_dictionaries(required, optional=optional).map(lambda kw: t.cls(**kw))


def strategy_for(t: inspect.Type) -> st.SearchStrategy[Any]:
    """Valid values of the msgspec type ``t``."""
    if isinstance(t, inspect.Metadata):
        return strategy_for(t.type)
    if isinstance(t, inspect.IntType):
        return st.integers(
            t.ge if t.ge is not None else -(2**63), t.le if t.le is not None else 2**64 - 1
        )
    if isinstance(t, inspect.FloatType):
        return st.floats(t.ge, t.le, allow_nan=False, allow_infinity=False)
    if isinstance(t, inspect.StrType):
        return _text(t)
    if isinstance(t, inspect.BoolType):
        return st.booleans()
    if isinstance(t, inspect.NoneType):
        return st.none()
    if isinstance(t, inspect.LiteralType):
        return st.sampled_from(t.values)
    if isinstance(t, inspect.VarTupleType):
        low, high = _sized(t)
        return st.lists(strategy_for(t.item_type), min_size=low, max_size=high).map(tuple)
    if isinstance(t, inspect.TupleType):
        return st.tuples(*(strategy_for(x) for x in t.item_types))
    if isinstance(t, inspect.DictType):
        return st.dictionaries(
            strategy_for(t.key_type), strategy_for(t.value_type), max_size=MAX_ITEMS
        )
    if isinstance(t, inspect.StructType):
        return _struct(t)
    if isinstance(t, inspect.UnionType):
        return st.one_of(*(strategy_for(x) for x in t.types))
    raise TypeError(f"no strategy for {t!r}")


def message_strategy(cls: type[msgspec.Struct]) -> st.SearchStrategy[Any]:
    """Valid messages (or values) of ``cls``."""
    return strategy_for(inspect.type_info(cls))


#: Valid client→server messages of every type.
client_messages = st.one_of(*(message_strategy(cls) for cls in CLIENT_MESSAGES.values()))
#: Valid server→client messages of every type.
server_messages = st.one_of(*(message_strategy(cls) for cls in SERVER_MESSAGES.values()))

#: Any value MessagePack can hold, nested a little.
msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=MAX_TEXT)
    | st.binary(max_size=MAX_TEXT),
    lambda children: (
        st.lists(children, max_size=MAX_ITEMS)
        | st.dictionaries(
            st.text(max_size=MAX_TEXT) | st.integers(-(2**63), 2**64 - 1),
            children,
            max_size=MAX_ITEMS,
        )
    ),
    max_leaves=20,
)
