"""Untrusted input: whatever the bytes, decoding returns a message or raises
ProtocolError — never a KeyError, a msgpack or msgspec error, a RecursionError."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import ProtocolError, decode_client_message, decode_server_message, encode
from protocol import examples as ex

from .strategies import msgpack_values

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DECODERS = (decode_client_message, decode_server_message)
EXAMPLES = [*ex.CLIENT_EXAMPLES.values(), *ex.SERVER_EXAMPLES.values()]


def only_protocol_errors(data: Any) -> None:
    """Decode ``data`` both ways; anything but ProtocolError fails the test."""
    for decode in DECODERS:
        try:
            decode(data)
        except ProtocolError as exc:
            assert exc.code.value and isinstance(exc.message, str)
            str(exc)


@FUZZ
@given(st.binary(max_size=512))
def test_random_bytes(data: bytes) -> None:
    """Random bytes only ever raise ProtocolError."""
    only_protocol_errors(data)


@FUZZ
@given(msgpack_values)
def test_random_msgpack_values(value: Any) -> None:
    """Any MessagePack value, map or not, only ever raises ProtocolError."""
    only_protocol_errors(msgpack.packb(value))


@FUZZ
@given(
    st.fixed_dictionaries(
        {"v": st.sampled_from([1, 1, 1, 2, "1", None]), "type": st.text(max_size=12)},
        optional={"id": msgpack_values},
    ),
    st.dictionaries(st.text(max_size=12), msgpack_values, max_size=6),
)
def test_random_fields_under_a_plausible_envelope(
    envelope: dict[str, Any], fields: dict[str, Any]
) -> None:
    """A near-valid envelope with random fields only ever raises ProtocolError."""
    only_protocol_errors(msgpack.packb({**fields, **envelope}))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value``."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(value[head], tuple(rest), new)
    return copy


@FUZZ
@given(st.sampled_from(EXAMPLES), st.data())
def test_valid_messages_with_one_value_replaced(message: Any, data: st.DataObject) -> None:
    """A valid message with any one value swapped for a random one (deep inside
    snapshots, events and actions) decodes or raises only ProtocolError."""
    value = msgpack.unpackb(encode(message))
    path = data.draw(st.sampled_from(_paths(value)))
    mutated = _replace(value, path, data.draw(msgpack_values))
    only_protocol_errors(msgpack.packb(mutated))


@FUZZ
@given(st.sampled_from(EXAMPLES), st.data())
def test_valid_frames_truncated_or_flipped(message: Any, data: st.DataObject) -> None:
    """A valid frame cut short or with a byte changed only raises ProtocolError."""
    frame = bytearray(encode(message))
    cut = data.draw(st.integers(0, len(frame)))
    only_protocol_errors(bytes(frame[:cut]))
    index = data.draw(st.integers(0, len(frame) - 1))
    frame[index] = data.draw(st.integers(0, 255))
    only_protocol_errors(bytes(frame))
