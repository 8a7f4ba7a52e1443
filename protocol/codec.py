"""Bytes to messages and back: :func:`encode`, :func:`decode_client_message`
(for the server) and :func:`decode_server_message` (for clients).

Decoding untrusted bytes either returns a typed, validated message or raises
:class:`~protocol.errors.ProtocolError` with a code, a message and, for a
schema violation, the path of the offending field
(``act.action.to_seat: expected int, got str``). No other exception escapes:
msgspec's errors, recursion errors and anything unforeseen are all wrapped.

Decoding runs in two passes, both in msgspec's C code:

1. the frame's size is checked (``too_large``), then its envelope (``v``,
   ``type``, ``id``) is read while every other value is skipped unbuilt.
   A frame that is not one MessagePack map is ``bad_frame``; a version this
   package does not speak is ``unsupported_version``, before any other field
   is looked at — except in a ``hello``, which every version reads with the
   same fields and whose ``versions`` :func:`negotiate_version` weighs; a
   ``type`` it does not know is ``unknown_type``;
2. the whole map is decoded into that type's struct, validating every field
   on the way (``bad_message``, with the path).

Every error carries the request's ``id`` whenever the map holds a readable
one — even when ``v`` or ``type`` is broken — so the ``error`` answer can
repeat it.

msgspec's ``ValidationError`` is only a sentence; the path and the reason are
read from its wording (see "msgspec's wording" below), which the tests check
against the msgspec versions pyproject.toml allows.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from typing import Final, cast

import msgspec

from .errors import ErrorCode, ProtocolError
from .limits import MAX_BATCH_MESSAGES, MAX_ERROR_LENGTH, MAX_FRAME_BYTES
from .messages import (
    CLIENT_MESSAGES,
    FEATURES,
    SERVER_MESSAGES,
    SUPPORTED_VERSIONS,
    Batch,
    BatchedMessage,
    ClientMessage,
    Event,
    Hello,
    Message,
    ServerMessage,
)
from .types import EVENT_TYPES, ID_PATTERN, PRINTABLE_PATTERN, RequestId

__all__ = [
    "Unknown",
    "batch_frames",
    "decode_client_message",
    "decode_server_message",
    "decode_server_messages",
    "encode",
    "negotiate_features",
    "negotiate_version",
]

#: What a WebSocket library hands over: bytes for binary frames, str for text.
Frame = bytes | bytearray | memoryview | str
_Bytes = bytes | bytearray | memoryview


class Unknown(msgspec.Struct, frozen=True, kw_only=True):
    """A server→client message this package does not know — a newer type, or an
    event of a newer kind. Clients ignore it (see PROTOCOL.md, versioning)."""

    type: str
    id: RequestId | None = None
    kind: str | None = None  #: for an unknown event: its ``kind``


class _Envelope(msgspec.Struct, frozen=True):
    """The first pass: the envelope only; every other field is skipped."""

    v: int
    type: str
    id: RequestId | None = None


class _Probe(msgspec.Struct, frozen=True):
    """Reads ``type`` and ``id`` from a map whose envelope is broken, to name
    the path and repeat the id."""

    type: msgspec.Raw = msgspec.Raw()
    id: msgspec.Raw = msgspec.Raw()


class _RawBatch(msgspec.Struct, frozen=True):
    """A ``batch`` read to its messages, each left as its bytes."""

    messages: tuple[msgspec.Raw, ...]


class _Kind(msgspec.Struct, frozen=True):
    kind: str | None = None


class _EventKind(msgspec.Struct, frozen=True):
    """Reads ``event.kind`` from an event of a kind this package does not know."""

    event: _Kind


_ENCODER: Final = msgspec.msgpack.Encoder()
_ENVELOPE: Final = msgspec.msgpack.Decoder(_Envelope)
_PROBE: Final = msgspec.msgpack.Decoder(_Probe)
_REQUEST_ID: Final[msgspec.msgpack.Decoder[RequestId]] = msgspec.msgpack.Decoder(RequestId)
_TYPE: Final = msgspec.msgpack.Decoder(str)
_EVENT_KINDS: Final = frozenset(cls.__struct_config__.tag for cls in EVENT_TYPES)
_EVENT_KIND: Final = msgspec.msgpack.Decoder(_EventKind)
_CLIENT: Final[Mapping[str, msgspec.msgpack.Decoder[Message]]] = {
    tag: msgspec.msgpack.Decoder(cls) for tag, cls in CLIENT_MESSAGES.items()
}
_SERVER: Final[Mapping[str, msgspec.msgpack.Decoder[Message]]] = {
    tag: msgspec.msgpack.Decoder(cls) for tag, cls in SERVER_MESSAGES.items()
}
_RAW_BATCH: Final = msgspec.msgpack.Decoder(_RawBatch)
_BATCH_TAG: Final = "batch"
assert Batch.__struct_config__.tag == _BATCH_TAG
_MAX_ECHO = 40  # characters of a bad value quoted back in an error message


def encode(message: Message) -> bytes:
    """``message`` as one MessagePack frame.

    Raises :class:`ProtocolError` (``too_large``) rather than produce a frame
    above :data:`~protocol.limits.MAX_FRAME_BYTES`, which no receiver accepts.
    """
    data = _ENCODER.encode(message)
    if len(data) > MAX_FRAME_BYTES:
        raise ProtocolError(
            ErrorCode.TOO_LARGE,
            f"a {message.__struct_config__.tag} message encodes to {len(data)} bytes, "
            f"more than {MAX_FRAME_BYTES}",
        )
    return data


def _batch_head(count: int) -> bytes:
    """The bytes of a ``batch`` map up to its messages' array, for ``count`` of them."""
    empty = _ENCODER.encode(Batch(messages=()))
    assert empty[-1:] == b"\x90", "msgspec writes the messages last, as an empty fixarray"
    if count < 16:
        return empty[:-1] + bytes((0x90 | count,))
    return empty[:-1] + b"\xdc" + count.to_bytes(2, "big")


_BATCH_HEADS: Final = tuple(_batch_head(count) for count in range(MAX_BATCH_MESSAGES + 1))


def batch_frames(frames: Sequence[bytes]) -> list[bytes]:
    """``frames`` (each an encoded server message, none a batch) as few frames as
    they fit in: a ``batch`` of two or more, or a frame alone as it is.

    A batch is made of the frames' own bytes, so a message encoded once for
    an audience is not encoded again per receiver; each batch holds at most
    :data:`~protocol.limits.MAX_BATCH_MESSAGES` messages and
    :data:`~protocol.limits.MAX_FRAME_BYTES` bytes.
    """
    out: list[bytes] = []
    run: list[bytes] = []
    size = 0
    limit = MAX_FRAME_BYTES - len(_BATCH_HEADS[-1])
    for frame in frames:
        if run and (len(run) == MAX_BATCH_MESSAGES or size + len(frame) > limit):
            out.append(_BATCH_HEADS[len(run)] + b"".join(run) if len(run) > 1 else run[0])
            run, size = [], 0
        run.append(frame)
        size += len(frame)
    if run:
        out.append(_BATCH_HEADS[len(run)] + b"".join(run) if len(run) > 1 else run[0])
    return out


def decode_client_message(data: Frame) -> ClientMessage:
    """Decode and validate a frame a client sent (the server's side).

    A ``hello`` is returned whatever its ``v``, when this version can read
    it: :func:`negotiate_version` then decides. Raises :class:`ProtocolError`,
    and nothing else, for any bad frame.
    """
    buffer, envelope = _open(data)
    if envelope.v not in SUPPORTED_VERSIONS:
        if envelope.type == Hello.__struct_config__.tag:
            return _foreign_hello(buffer, envelope)
        raise _unsupported((envelope.v,), envelope.id)
    decoder = _CLIENT.get(envelope.type)
    if decoder is None:
        raise ProtocolError(
            ErrorCode.UNKNOWN_TYPE,
            f"unknown message type {_echo(envelope.type)}",
            path="type",
            request_id=envelope.id,
        )
    return cast(ClientMessage, _decode_body(decoder, buffer, envelope))


def decode_server_message(data: Frame) -> ServerMessage | Unknown:
    """Decode and validate a frame a server sent (a client's side).

    A message of a type, or an event of a kind, that this version does not
    know is returned as :class:`Unknown`, which the client ignores; anything
    else that is wrong raises :class:`ProtocolError`.
    """
    buffer, envelope = _open(data)
    if envelope.v not in SUPPORTED_VERSIONS:
        raise _unsupported((envelope.v,), envelope.id)
    if envelope.type == _BATCH_TAG:
        inner = [m for m in _batch(buffer) if not isinstance(m, Unknown)]
        return Batch(id=envelope.id, messages=tuple(inner))
    decoder = _SERVER.get(envelope.type)
    if decoder is None:
        return Unknown(type=envelope.type, id=envelope.id)
    try:
        return cast(ServerMessage, _decode_body(decoder, buffer, envelope))
    except ProtocolError:
        kind = _event_kind(buffer) if envelope.type == Event.__struct_config__.tag else None
        if kind is not None and kind not in _EVENT_KINDS:
            return Unknown(type=envelope.type, id=envelope.id, kind=kind)
        raise


def decode_server_messages(data: Frame) -> list[BatchedMessage | Unknown]:
    """The messages of a frame a server sent, in order: a ``batch``'s messages,
    or the frame's one message (see :func:`decode_server_message`)."""
    buffer, envelope = _open(data)
    if envelope.type == _BATCH_TAG and envelope.v in SUPPORTED_VERSIONS:
        return _batch(buffer)
    message = decode_server_message(buffer)
    assert not isinstance(message, Batch)  # a batch of an unknown version is refused above
    return [message]


def _batch(buffer: _Bytes) -> list[BatchedMessage | Unknown]:
    """A ``batch``'s messages, each decoded as a frame of its own (a batch in a
    batch is ``bad_message``)."""
    try:
        raw = _RAW_BATCH.decode(buffer)
    except msgspec.ValidationError as exc:
        raise _schema_error(_BATCH_TAG, str(exc), None) from None
    except (msgspec.DecodeError, RecursionError):  # pragma: no cover - _open read it whole
        raise ProtocolError(ErrorCode.BAD_FRAME, "not a MessagePack map") from None
    if not 2 <= len(raw.messages) <= MAX_BATCH_MESSAGES:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"a batch holds 2 to {MAX_BATCH_MESSAGES} messages, not {len(raw.messages)}",
            path="batch.messages",
        )
    messages: list[BatchedMessage | Unknown] = []
    for index, one in enumerate(raw.messages):
        try:
            message = decode_server_message(memoryview(one))
        except ProtocolError as exc:
            path = f"batch.messages[{index}]" + (f".{exc.path}" if exc.path else "")
            raise ProtocolError(exc.code, exc.message, path=path) from None
        if isinstance(message, Batch):
            raise ProtocolError(
                ErrorCode.BAD_MESSAGE,
                "a batch inside a batch",
                path=f"batch.messages[{index}]",
            )
        messages.append(message)
    return messages


def negotiate_features(hello: Hello) -> tuple[str, ...]:
    """The features of ``hello.features`` this package speaks, in its order
    (the rest are ignored: a newer client may ask for more)."""
    asked = set(hello.features)
    return tuple(feature for feature in FEATURES if feature in asked)


def negotiate_version(hello: Hello) -> int:
    """The version to speak with the client that sent ``hello``: the highest one
    both speak, the client speaking ``hello.versions`` when it is given (whatever
    ``hello.v``) and else only ``hello.v``. Raises :class:`ProtocolError`
    (``unsupported_version``)."""
    offered = hello.versions if hello.versions is not None else (hello.v,)
    common = set(offered) & set(SUPPORTED_VERSIONS)
    if not common:
        raise _unsupported(offered, hello.id)
    return max(common)


# -- the two passes --------------------------------------------------------


def _open(data: Frame) -> tuple[_Bytes, _Envelope]:
    """Pass one: a binary frame, its size, MessagePack, one map, the envelope.

    The caller checks the version (a ``hello`` is read whatever its ``v``)."""
    if isinstance(data, str):
        raise ProtocolError(ErrorCode.BAD_FRAME, "text frame: send MessagePack in binary frames")
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ProtocolError(ErrorCode.BAD_FRAME, f"expected bytes, got {type(data).__name__}")
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    if size > MAX_FRAME_BYTES:
        raise ProtocolError(
            ErrorCode.TOO_LARGE, f"frame of {size} bytes is larger than {MAX_FRAME_BYTES}"
        )
    try:
        envelope = _ENVELOPE.decode(data)
    except msgspec.ValidationError as exc:
        raise _envelope_error(data, exc) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"not MessagePack: {exc}") from None
    except RecursionError:
        raise ProtocolError(ErrorCode.BAD_FRAME, "nested too deeply") from None
    except Exception as exc:  # defensive: nothing else may escape
        raise ProtocolError(ErrorCode.BAD_FRAME, f"unreadable frame: {exc!r}"[:200]) from None
    return data, envelope


def _foreign_hello(data: _Bytes, envelope: _Envelope) -> Hello:
    """A ``hello`` whose ``v`` this package does not speak, read with this
    version's fields so that its ``versions`` can be negotiated; one that
    cannot be read so is ``unsupported_version``."""
    try:
        hello = _decode_body(_CLIENT[envelope.type], data, envelope)
    except ProtocolError:
        raise _unsupported((envelope.v,), envelope.id) from None
    return cast(Hello, hello)


def _decode_body(
    decoder: msgspec.msgpack.Decoder[Message], data: _Bytes, envelope: _Envelope
) -> Message:
    """Pass two: the whole message, validated."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise _schema_error(envelope.type, str(exc), envelope.id) from None
    except RecursionError:  # pragma: no cover - pass one has already walked it
        raise ProtocolError(ErrorCode.BAD_FRAME, "nested too deeply") from None
    except Exception as exc:  # pragma: no cover - defensive: nothing else may escape
        raise ProtocolError(
            ErrorCode.BAD_FRAME, f"unreadable frame: {exc!r}"[:200], request_id=envelope.id
        ) from None


# -- errors ---------------------------------------------------------------


def _unsupported(offered: Sequence[int], request_id: RequestId | None) -> ProtocolError:
    spoken = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
    asked = ", ".join(str(v) for v in offered[:16])
    which = f"version {asked} is" if len(offered) == 1 else f"versions {asked} are"
    refused = f"protocol {which} not supported" if offered else "no protocol version offered"
    return ProtocolError(
        ErrorCode.UNSUPPORTED_VERSION,
        f"{refused}; supported versions: {spoken}",
        request_id=request_id,
    )


def _envelope_error(data: _Bytes, exc: msgspec.ValidationError) -> ProtocolError:
    """A frame that is MessagePack but whose envelope is wrong: not a map at
    all (``bad_frame``), or a map with a missing or mistyped ``v``, ``type``
    or ``id`` (``bad_message``, repeating the ``id`` if it can be read)."""
    first = data[0]  # not empty: an empty frame is not MessagePack
    if not (0x80 <= first <= 0x8F or first in (0xDE, 0xDF)):  # fixmap, map 16, map 32
        return ProtocolError(
            ErrorCode.BAD_FRAME, f"a message is one MessagePack map, not {_kind(first)}"
        )
    type_name, request_id = _probe(data)
    return _schema_error(type_name, str(exc), request_id)


def _kind(first: int) -> str:
    """What a MessagePack value other than a map is, from its first byte."""
    if first <= 0x7F or first >= 0xE0 or 0xCC <= first <= 0xD3:
        return "an int"
    if 0x90 <= first <= 0x9F or first in (0xDC, 0xDD):
        return "an array"
    if 0xA0 <= first <= 0xBF or 0xD9 <= first <= 0xDB:
        return "a str"
    if first in (0xCA, 0xCB):
        return "a float"
    if first in (0xC2, 0xC3):
        return "a bool"
    if 0xC4 <= first <= 0xC6:
        return "bin"
    return "nil" if first == 0xC0 else "an ext"


def _probe(data: _Bytes) -> tuple[str | None, RequestId | None]:
    """From a map whose envelope is broken: its ``type``, if it is a known one
    (to name paths), and its ``id``, if it is a valid one (to repeat it)."""
    try:
        probe = _PROBE.decode(data)
    except Exception:
        return None, None
    name: str | None = None
    request_id: RequestId | None = None
    with contextlib.suppress(Exception):
        name = _TYPE.decode(probe.type) if probe.type else None
    with contextlib.suppress(Exception):
        request_id = _REQUEST_ID.decode(probe.id) if probe.id else None
    if name not in CLIENT_MESSAGES and name not in SERVER_MESSAGES:
        name = None
    return name, request_id


def _event_kind(data: _Bytes) -> str | None:
    """The ``kind`` of an event this package does not know."""
    try:
        return _EVENT_KIND.decode(data).event.kind
    except Exception:
        return None


# -- msgspec's wording ------------------------------------------------------
#
# A msgspec.ValidationError holds nothing but its sentence, e.g.
#   Expected `int`, got `str` - at `$.action.to_seat`
#   Object missing required field `to_seat` - at `$.action`
#   Expected `str`, got `int` - at `key` in `$`
#   Expected `str` matching regex '^[A-Za-z0-9_-]+$' - at `$.token`
#   Invalid enum value 'godlike' - at `$.bots[0].strength`
# so the path and the reason are read from it, with exactly the patterns below
# and nothing else. pyproject.toml bounds msgspec to the versions checked, and
# tests/protocol/test_codec.py (test_msgspec_still_words_errors_as_the_codec_reads)
# fails, naming the pattern, when a msgspec words any of them differently.

#: Ends every located error; the path follows, closed by a backtick.
_AT = " - at `"
#: Starts the location of an error in a map's key rather than its value.
_KEY_IN = "key` in `"
#: The root of every path.
_ROOT = "$"
_MISSING = re.compile(r"^Object missing required field `(.*)`$")
_REGEX = re.compile(r"matching regex '(.*)'$")
#: The patterns of protocol.types as msgspec quotes them, in words.
_REGEX_WORDS = {
    pattern.replace("\\", "\\\\"): words  # msgspec doubles each backslash
    for pattern, words in (
        (PRINTABLE_PATTERN, "without control characters"),
        (ID_PATTERN, "of letters, digits, _ and -"),
    )
}
_QUOTED = re.compile(r"'(.*)'$")
_ENUM = "Invalid enum value"


def _schema_error(type_name: str | None, text: str, request_id: RequestId | None) -> ProtocolError:
    """Turn msgspec's "Expected `int`, got `str` - at `$.action.to_seat`" into
    ``bad_message`` with path ``act.action.to_seat`` and "expected int, got str"."""
    text, sep, where = text.rpartition(_AT)
    if not sep:
        text, where = where, ""
    is_key = where.startswith(_KEY_IN)
    if is_key:
        where = where[len(_KEY_IN) :]
    where = where.removesuffix("`")
    rest = where[len(_ROOT) :] if where.startswith(_ROOT) else ""
    path = type_name + rest if type_name else rest.lstrip(".")
    if is_key:
        path += "[key]"
    missing = _MISSING.match(text)
    if missing:
        path = f"{path}.{missing.group(1)}" if path else missing.group(1)
        text = "missing required field"
    message = _plain(text)
    return ProtocolError(
        ErrorCode.BAD_MESSAGE,
        message[:MAX_ERROR_LENGTH],
        path=path or None,
        request_id=request_id,
    )


def _plain(text: str) -> str:
    """msgspec's wording in ours: no backticks, lower case, short quotes."""
    regex = _REGEX.search(text)
    if regex:
        text = text[: regex.start()] + _REGEX_WORDS.get(regex.group(1), "of the wrong form")
    quoted = _QUOTED.search(text)
    if quoted and len(quoted.group(1)) > _MAX_ECHO:
        text = text[: quoted.start()] + _echo(quoted.group(1))
    text = text.replace("`", "").replace(_ENUM, "invalid value")
    return text[:1].lower() + text[1:]


def _echo(value: str) -> str:
    """``value`` quoted for an error message, cut to a readable length."""
    if len(value) > _MAX_ECHO:
        return repr(value[:_MAX_ECHO]) + "…"
    return repr(value)
