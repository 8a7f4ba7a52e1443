"""The codec: round trips, the documented examples, and every kind of bad input."""

from __future__ import annotations

from typing import Any

import msgpack
import msgspec
import pytest
from hypothesis import given, settings
from msgspec import inspect

import protocol
from protocol import (
    CARDS,
    CLIENT_MESSAGES,
    COLOURS,
    SERVER_MESSAGES,
    Act,
    ChatLine,
    CloseCode,
    Error,
    ErrorCode,
    Event,
    Give,
    Hello,
    MatchList,
    MatchSummary,
    ProtocolError,
    SeatInfo,
    Unknown,
    close_code_for,
    decode_client_message,
    decode_server_message,
    encode,
    error_message_for,
    negotiate_version,
)
from protocol import examples as ex
from protocol.limits import MAX_DEPTH, MAX_FRAME_BYTES, MAX_MATCHES_LISTED, MAX_NAME_LENGTH
from protocol.types import ACTION_TYPES, EVENT_TYPES

from .doc_examples import json_examples, sequence
from .strategies import client_messages, server_messages


def pack(value: Any) -> bytes:
    """MessagePack bytes of a plain value."""
    data: bytes = msgpack.packb(value)
    return data


def refused(data: Any, *, server: bool = False) -> ProtocolError:
    """The error decoding ``data`` raises (a client frame unless ``server``)."""
    with pytest.raises(ProtocolError) as info:
        (decode_server_message if server else decode_client_message)(data)
    return info.value


# -- round trips ------------------------------------------------------------


def test_every_message_type_has_an_example() -> None:
    """The examples cover both registries exactly, each under its own tag."""
    assert set(ex.CLIENT_EXAMPLES) == set(CLIENT_MESSAGES)
    assert set(ex.SERVER_EXAMPLES) == set(SERVER_MESSAGES)
    for tag, message in {**ex.CLIENT_EXAMPLES, **ex.SERVER_EXAMPLES}.items():
        assert message.__struct_config__.tag == tag
    assert set(ex.EVENT_EXAMPLES) == {cls.__struct_config__.tag for cls in EVENT_TYPES}
    assert set(ex.ACTION_EXAMPLES) == {cls.__struct_config__.tag for cls in ACTION_TYPES}


@pytest.mark.parametrize("tag", list(CLIENT_MESSAGES))
def test_client_example_round_trips(tag: str) -> None:
    """Each client→server example encodes and decodes to an equal message."""
    message = ex.CLIENT_EXAMPLES[tag]
    assert decode_client_message(encode(message)) == message


@pytest.mark.parametrize("tag", list(SERVER_MESSAGES))
def test_server_example_round_trips(tag: str) -> None:
    """Each server→client example encodes and decodes to an equal message."""
    message = ex.SERVER_EXAMPLES[tag]
    assert decode_server_message(encode(message)) == message


@pytest.mark.parametrize("kind", list(ex.EVENT_EXAMPLES))
def test_every_event_kind_round_trips(kind: str) -> None:
    """Every event kind, as its owner and as others see it, survives an event message."""
    for _, event in ex.EVENT_EXAMPLES[kind]:
        message = Event(match="m1", seq=3, event=event)
        assert decode_server_message(encode(message)) == message


@pytest.mark.parametrize("kind", list(ex.ACTION_EXAMPLES))
def test_every_action_kind_round_trips(kind: str) -> None:
    """Every action kind survives an act message, spelt as in engine/record.py."""
    message = Act(action=ex.ACTION_EXAMPLES[kind])
    data = encode(message)
    assert decode_client_message(data) == message
    assert msgpack.unpackb(data)["action"]["kind"] == kind


@settings(max_examples=300, deadline=None)
@given(client_messages)
def test_generated_client_messages_round_trip(message: Any) -> None:
    """Any valid client→server message of any type round-trips."""
    assert decode_client_message(encode(message)) == message


@settings(max_examples=300, deadline=None)
@given(server_messages)
def test_generated_server_messages_round_trip(message: Any) -> None:
    """Any valid server→client message of any type round-trips."""
    assert decode_server_message(encode(message)) == message


def test_envelope_always_carries_the_version_and_omits_defaults() -> None:
    """`v` is on the wire even though it is a default; absent optionals are left off."""
    assert msgpack.unpackb(encode(protocol.Leave())) == {"type": "leave", "v": 1}
    assert msgpack.unpackb(encode(protocol.Ok(id="a"))) == {"type": "ok", "v": 1, "id": "a"}


def test_spellings() -> None:
    """Colours and the twelve cards have the one spelling "<colour>-<value>"."""
    assert COLOURS == ("purple", "blue", "pink", "orange")
    assert tuple(f"{c}-{v}" for c in COLOURS for v in (2, 3, 4)) == CARDS


# -- the document's examples -------------------------------------------------


@pytest.mark.parametrize("kind", ["c2s", "s2c", "event", "seat"])
def test_protocol_md_examples_decode(kind: str) -> None:
    """Every example in PROTOCOL.md decodes as what it claims to be."""
    found = json_examples(kind)
    assert found
    for value in found:
        if kind == "seat":
            seat = msgspec.msgpack.decode(pack(value), type=protocol.SeatInfo)
            assert pack(value) == msgspec.msgpack.encode(seat)  # nothing left out but defaults
        elif kind == "c2s":
            decode_client_message(pack(value))
        elif kind == "s2c":
            assert not isinstance(decode_server_message(pack(value)), Unknown)
        else:
            wrapped = {"v": 1, "type": "event", "match": "m", "seq": 1, "event": value}
            assert not isinstance(decode_server_message(pack(wrapped)), Unknown)


def test_protocol_md_sequence_is_a_valid_match() -> None:
    """The walk-through decodes message by message, events number on from the
    snapshot without gaps (except at marked cuts), and every request is answered."""
    messages = sequence()
    assert messages[0][1]["type"] == "hello"
    seq: int | None = None
    asked: set[Any] = set()
    for direction, value in messages:
        if direction == "cut":
            seq = None
        elif direction == "c2s":
            asked.add(decode_client_message(pack(value)).id)
        else:
            message = decode_server_message(pack(value))
            assert not isinstance(message, Unknown)
            asked.discard(message.id)
            if isinstance(message, protocol.Snapshot):
                seq = message.seq
            elif isinstance(message, Event):
                assert seq is None or message.seq == seq + 1
                seq = message.seq
    assert not asked
    ends = [v for d, v in messages if d == "s2c" and v["type"] == "event"]
    assert ends[-1]["event"]["kind"] == "match_ended"


# -- errors: the envelope ---------------------------------------------------


def test_unsupported_version_lists_the_supported_ones() -> None:
    """A v2 message is refused before its fields are looked at, keeping the id."""
    error = refused(pack({"v": 2, "type": "hello", "id": 9, "whatever": [1]}))
    assert error.code is ErrorCode.UNSUPPORTED_VERSION
    assert "supported versions: 1" in error.message
    assert error.request_id == 9
    assert close_code_for(error) is CloseCode.UNSUPPORTED_VERSION


def test_unknown_type_is_refused_with_its_id() -> None:
    """A client type this version does not know is `unknown_type`."""
    error = refused(pack({"v": 1, "type": "teleport", "id": "r1"}))
    assert (error.code, error.path, error.request_id) == (ErrorCode.UNKNOWN_TYPE, "type", "r1")
    assert "'teleport'" in error.message


def test_client_decoder_does_not_accept_server_types() -> None:
    """The directions are separate: a server's `welcome` is unknown to the server."""
    welcome = encode(ex.SERVER_EXAMPLES["welcome"])
    assert refused(welcome).code is ErrorCode.UNKNOWN_TYPE


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"type": "leave"}, "leave.v"),
        ({"v": 1}, "type"),
        ({"v": "1", "type": "leave"}, "leave.v"),
        ({"v": 1, "type": 7}, "type"),
        ({"v": 1, "type": "leave", "id": 1.5}, "leave.id"),
        ({"v": 1, "type": "leave", "id": -1}, "leave.id"),
        ({"v": 1, "type": "leave", "id": 2**53}, "leave.id"),  # past MAX_SAFE_INTEGER
        ({"v": 1, "type": "leave", "id": "x" * 65}, "leave.id"),
    ],
)
def test_bad_envelope_is_a_bad_message(value: dict[str, Any], path: str) -> None:
    """A missing or mistyped `v`, `type` or `id` names the field."""
    error = refused(pack(value))
    assert (error.code, error.path) == (ErrorCode.BAD_MESSAGE, path)


@pytest.mark.parametrize(
    ("value", "request_id"),
    [
        ({"type": "leave", "id": 7}, 7),
        ({"v": "1", "type": "leave", "id": "r1"}, "r1"),
        ({"v": 1, "type": 7, "id": 0}, 0),
        ({"v": None, "id": 2**53 - 1}, 2**53 - 1),
        ({"type": "leave", "id": 1.5}, None),  # the id itself is what is broken
        ({"type": "leave", "id": "x" * 65}, None),
        ({1: 2, "v": "1", "type": "leave", "id": 3}, None),  # a key no struct can read
    ],
)
def test_bad_envelope_repeats_a_readable_id(value: dict[str, Any], request_id: Any) -> None:
    """A broken `v` or `type` still lets the `error` repeat the request's `id` (PROTOCOL.md)."""
    error = refused(pack(value))
    assert error.code is ErrorCode.BAD_MESSAGE
    assert error.request_id == request_id
    assert error_message_for(error).id == request_id


@pytest.mark.parametrize(
    ("value", "kind"),
    [([1, 2], "an array"), (1, "an int"), ("hello", "a str"), (None, "nil"), (2.5, "a float")],
)
def test_a_frame_that_is_not_a_map_says_what_it_is(value: Any, kind: str) -> None:
    """Read from the MessagePack type byte, not from msgspec's wording."""
    error = refused(pack(value))
    assert (error.code, error.message) == (
        ErrorCode.BAD_FRAME,
        f"a message is one MessagePack map, not {kind}",
    )


@pytest.mark.parametrize(
    "data",
    [
        pack([1, 2]),
        pack(1),
        pack("hello"),
        pack(None),
        b"",
        b"\xc1",
        b"\x82\xa1v",
        pack({"v": 1, "type": "leave"}) + b"\x00",
    ],
)
def test_non_map_or_broken_frames_are_bad_frames(data: bytes) -> None:
    """Not MessagePack, truncated, trailing bytes, or not a map: `bad_frame`."""
    assert refused(data).code is ErrorCode.BAD_FRAME


def test_text_and_non_bytes_frames_are_bad_frames() -> None:
    """A WebSocket text frame (str) or any non-bytes object is a `bad_frame`."""
    assert "text frame" in refused('{"v": 1}').message
    assert refused(12345).code is ErrorCode.BAD_FRAME


def test_bytes_like_frames_are_accepted() -> None:
    """bytearray and memoryview frames decode like bytes."""
    data = encode(ex.ACT)
    assert decode_client_message(bytearray(data)) == ex.ACT
    assert decode_client_message(memoryview(data)) == ex.ACT


def test_oversize_frame_is_refused_unread() -> None:
    """A frame above MAX_FRAME_BYTES is `too_large` and closes with 1009."""
    data = pack({"v": 1, "type": "chat", "text": "x" * MAX_FRAME_BYTES})
    error = refused(data)
    assert error.code is ErrorCode.TOO_LARGE
    assert close_code_for(error) is CloseCode.MESSAGE_TOO_BIG
    assert refused(memoryview(data)).code is ErrorCode.TOO_LARGE


def test_deep_nesting_is_refused() -> None:
    """Nesting far beyond MAX_DEPTH, even in an unknown field, is a `bad_frame`."""
    deep = b"\x91" * 60_000 + b"\xc0"
    assert refused(deep).code is ErrorCode.BAD_FRAME
    unknown_field = b"\x83\xa1v\x01\xa4type\xa5leave\xa4junk" + deep
    assert refused(unknown_field).message == "nested too deeply"


def test_modest_nesting_in_unknown_fields_is_ignored() -> None:
    """Values of unknown fields are skipped, up to MAX_DEPTH levels at least."""
    value: Any = 1
    for _ in range(MAX_DEPTH):
        value = [value]
    data = pack({"v": 1, "type": "leave", "extra": value, "more": {"a": 1}})
    assert decode_client_message(data) == protocol.Leave()


def _leave_nested(levels: int) -> bytes:
    """A ``leave`` with one unknown field whose value nests ``levels`` deep."""
    return b"\x83\xa1v\x01\xa4type\xa5leave\xa4junk" + b"\x91" * (levels - 1) + b"\x01"


def test_the_decoders_nesting_limit_is_the_one_protocol_md_states() -> None:
    """PROTOCOL.md (limits): an unknown field nested a few hundred levels is
    read (its value skipped); one nested 1,000 levels is ``bad_frame``."""
    assert decode_client_message(_leave_nested(300)) == protocol.Leave()
    assert refused(_leave_nested(1000)).code is ErrorCode.BAD_FRAME


# -- errors: the fields -----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        (
            {"v": 1, "type": "act", "action": {"kind": "give", "to_seat": "2"}},
            "act.action.to_seat",
            "expected int, got str",
        ),
        ({"v": 1, "type": "act", "action": {"kind": "give"}}, "act.action.to_seat", "missing"),
        ({"v": 1, "type": "act"}, "act.action", "missing required field"),
        ({"v": 1, "type": "act", "action": {"kind": "fly"}}, "act.action.kind", "'fly'"),
        ({"v": 1, "type": "act", "action": {"kind": "give", "to_seat": 6}}, None, "<= 5"),
        ({"v": 1, "type": "act", "action": {"kind": "give", "to_seat": True}}, None, "bool"),
        (
            {"v": 1, "type": "act", "action": {"kind": "opening", "secret": "red-3"}},
            "act.action.secret",
            "'red-3'",
        ),
        (
            {
                "v": 1,
                "type": "create_match",
                "name": "m",
                "seats": 3,
                "bots": [{"seat": 1}, {"seat": 2, "strength": "godlike"}],
            },
            "create_match.bots[1].strength",
            "invalid value 'godlike'",
        ),
        ({"v": 1, "type": "create_match", "name": "m", "seats": 7}, "create_match.seats", "<= 6"),
        (
            {"v": 1, "type": "create_match", "name": "m", "seats": 3, "turn_timer": float("nan")},
            "create_match.turn_timer",
            "float",
        ),
        (
            {"v": 1, "type": "create_match", "name": "m", "seats": 3, "bots": [{"seat": 1}] * 7},
            "create_match.bots",
            "length <= 6",
        ),
        ({"v": 1, "type": "hello", "client": "c", "name": ""}, "hello.name", ">= 1"),
        (
            {"v": 1, "type": "hello", "client": "c", "name": "x" * (MAX_NAME_LENGTH + 1)},
            "hello.name",
            "<= 40",
        ),
        (
            {"v": 1, "type": "hello", "client": "c", "name": "Ada\x1b[2J"},
            "hello.name",
            "without control characters",
        ),
        (
            {"v": 1, "type": "hello", "client": "c", "name": "Ada", "token": "no spaces"},
            "hello.token",
            "letters, digits",
        ),
        ({"v": 1, "type": "hello", "client": "c", "name": b"Ada"}, "hello.name", "got bytes"),
        ({"v": 1, "type": "chat", "text": "x" * 501}, "chat.text", "<= 500"),
        ({1: 2, "v": 1, "type": "leave"}, "[key]", "expected str, got int"),
    ],
)
def test_schema_violations_name_the_field(
    value: dict[str, Any], path: str | None, message: str
) -> None:
    """A field that breaks its schema is `bad_message` with its path and the reason."""
    error = refused(pack(value))
    assert error.code is ErrorCode.BAD_MESSAGE
    if path is not None:
        assert error.path == path
    assert message in error.message
    assert close_code_for(error) is None


def test_error_text_reads_path_colon_reason() -> None:
    """str(error) is "act.action.to_seat: expected int, got str"."""
    error = refused(
        pack({"v": 1, "type": "act", "id": 4, "action": {"kind": "give", "to_seat": "x"}})
    )
    assert str(error) == "act.action.to_seat: expected int, got str"
    assert error.request_id == 4
    assert "act.action.to_seat" in repr(error)


def test_long_bad_values_are_not_echoed_whole() -> None:
    """A huge wrong value is quoted only in part."""
    value = {"v": 1, "type": "act", "action": {"kind": "x" * 10_000}}
    assert len(refused(pack(value)).message) < 100
    assert len(refused(pack({"v": 1, "type": "y" * 10_000})).message) < 100


def test_nested_path_in_a_server_message() -> None:
    """Paths reach into lists of maps: snapshot.state.seats[0].bouquet[1]."""
    value = msgpack.unpackb(encode(ex.SNAPSHOT_4P))
    value["state"]["seats"][0]["bouquet"][1] = "pink-9"
    error = refused(pack(value), server=True)
    assert error.path == "snapshot.state.seats[0].bouquet[1]"
    value["state"]["seats"][0]["bouquet"][1] = "pink-2"
    value["state"]["totals"]["red"] = 3
    assert refused(pack(value), server=True).path == "snapshot.state.totals[key]"


def test_unknown_fields_and_nil_optionals_are_accepted() -> None:
    """Forward compatibility: unknown keys are ignored, nil means absent."""
    data = pack({"v": 1, "type": "join", "match": "m1", "seat": None, "colour_scheme": "dark"})
    assert decode_client_message(data) == protocol.Join(match="m1")


# -- the client side --------------------------------------------------------


def test_client_ignores_unknown_server_types_and_event_kinds() -> None:
    """Newer types and event kinds come back as Unknown, not as errors."""
    assert decode_server_message(pack({"v": 1, "type": "fireworks", "id": 3})) == Unknown(
        type="fireworks", id=3
    )
    newer = {"v": 1, "type": "event", "match": "m1", "seq": 5, "event": {"kind": "rainbow"}}
    assert decode_server_message(pack(newer)) == Unknown(type="event", kind="rainbow")


def test_client_still_refuses_broken_server_messages() -> None:
    """A known type with a bad field, or a newer version, is still an error."""
    broken = {"v": 1, "type": "event", "match": "m1", "seq": 5, "event": {"kind": "card_kept"}}
    assert refused(pack(broken), server=True).path == "event.event.seat"
    assert refused(pack({"v": 2, "type": "ok"}), server=True).code is ErrorCode.UNSUPPORTED_VERSION


# -- errors on the wire -----------------------------------------------------


def test_error_message_for_round_trips() -> None:
    """The one mapping from ProtocolError to `error` keeps code, text, path and id."""
    error = refused(pack({"v": 1, "type": "act", "id": "q", "action": {"kind": "give"}}))
    message = error_message_for(error)
    assert message == Error(
        id="q", code="bad_message", message="missing required field", path="act.action.to_seat"
    )
    assert decode_server_message(encode(message)) == message


def test_error_message_for_clips_to_wire_limits() -> None:
    """Overlong text from anywhere still yields an `error` every client accepts."""
    error = ProtocolError(ErrorCode.INTERNAL_ERROR, "x" * 5000, path="p" * 500, request_id=1)
    message = error_message_for(error)
    assert decode_server_message(encode(message)) == message
    assert error_message_for(ProtocolError(ErrorCode.NOT_HOST, "")).message == "not_host"


def test_close_codes_follow_the_table() -> None:
    """Only the errors documented as closing return a close code."""
    closing = {
        code: close_code_for(ProtocolError(code, "x"))
        for code in ErrorCode
        if close_code_for(ProtocolError(code, "x")) is not None
    }
    assert closing == {
        ErrorCode.UNSUPPORTED_VERSION: CloseCode.UNSUPPORTED_VERSION,
        ErrorCode.TOO_LARGE: CloseCode.MESSAGE_TOO_BIG,
        ErrorCode.BAD_TOKEN: CloseCode.BAD_TOKEN,
        ErrorCode.BAD_LINK_CODE: CloseCode.BAD_TOKEN,
        ErrorCode.SERVER_FULL: CloseCode.SERVER_FULL,
        ErrorCode.STORAGE_UNAVAILABLE: CloseCode.TRY_AGAIN_LATER,
        ErrorCode.CLUSTER_UNAVAILABLE: CloseCode.TRY_AGAIN_LATER,
    }
    assert set(protocol.ERROR_CODE_DOCS) == set(ErrorCode)
    assert set(protocol.CLOSE_CODE_DOCS) == set(CloseCode)


def test_negotiate_version() -> None:
    """The highest version `versions` (default `[v]`) shares with the package, or
    `unsupported_version`: when `versions` is given, it alone decides."""
    assert negotiate_version(Hello(client="c", name="n")) == 1
    assert negotiate_version(Hello(client="c", name="n", versions=(1, 2))) == 1
    assert negotiate_version(Hello(v=2, client="c", name="n", versions=(1, 2))) == 1
    for hello in (
        Hello(id=5, client="c", name="n", versions=(2, 3)),
        Hello(id=5, v=2, client="c", name="n"),
        Hello(id=5, client="c", name="n", versions=()),
    ):
        with pytest.raises(ProtocolError) as info:
            negotiate_version(hello)
        assert info.value.code is ErrorCode.UNSUPPORTED_VERSION
        assert info.value.request_id == 5
        assert info.value.message.endswith("supported versions: 1")


def test_a_hello_is_read_whatever_its_version() -> None:
    """A `hello` of a version the package does not speak is read with this
    version's fields, so its `versions` can be negotiated; other types are not."""
    newer = {"v": 2, "type": "hello", "id": 1, "client": "c", "name": "n", "versions": [1, 2]}
    hello = decode_client_message(pack(newer))
    assert isinstance(hello, Hello) and (hello.v, hello.versions) == (2, (1, 2))
    assert negotiate_version(hello) == 1
    unreadable = {"v": 2, "type": "hello", "id": 4, "versions": [1, 2]}  # no client, no name
    error = refused(pack(unreadable))
    assert (error.code, error.request_id) == (ErrorCode.UNSUPPORTED_VERSION, 4)
    assert error.message == "protocol version 2 is not supported; supported versions: 1"
    error = refused(pack({"v": 2, "type": "list_matches", "id": 3}))
    assert (error.code, error.request_id) == (ErrorCode.UNSUPPORTED_VERSION, 3)
    assert close_code_for(error) is CloseCode.UNSUPPORTED_VERSION


def test_welcome_limits_are_optional() -> None:
    """A `welcome` from an older server, without `limits`, still decodes."""
    welcome = ex.SERVER_EXAMPLES["welcome"]
    assert isinstance(welcome, protocol.Welcome) and welcome.limits is not None
    older = msgspec.structs.replace(welcome, limits=None)
    assert "limits" not in msgpack.unpackb(encode(older))
    assert decode_server_message(encode(older)) == older


# -- msgspec's wording ------------------------------------------------------
#
# msgspec's ValidationError is only a sentence: the codec reads the path and the
# reason from its wording. These are every form it reads, as msgspec must word
# them; pyproject.toml bounds msgspec to the versions that pass.

_WORDING: list[tuple[str, type[Any], dict[Any, Any], str]] = [
    # (the pattern read, the type, the value, msgspec's exact sentence)
    (
        "_AT and _ROOT: a located error",
        protocol.Act,
        {"type": "act", "action": {"kind": "give", "to_seat": "2"}},
        "Expected `int`, got `str` - at `$.action.to_seat`",
    ),
    (
        "_MISSING: a missing field",
        protocol.Act,
        {"type": "act", "action": {"kind": "give"}},
        "Object missing required field `to_seat` - at `$.action`",
    ),
    (
        "_MISSING, unlocated: a missing top-level field",
        protocol.Hello,
        {"v": 1, "type": "hello", "client": "c"},
        "Object missing required field `name`",
    ),
    (
        "_KEY_IN: an error in a key",
        protocol.Leave,
        {1: 2, "v": 1, "type": "leave"},
        "Expected `str`, got `int` - at `key` in `$`",
    ),
    (
        "_REGEX and _REGEX_WORDS: a name with a control character",
        protocol.Hello,
        {"v": 1, "type": "hello", "client": "c", "name": "A\x1b"},
        r"Expected `str` matching regex '^[^\\x00-\\x1f\\x7f-\\x9f]*$(?!\\n)' - at `$.name`",
    ),
    (
        "_REGEX and _REGEX_WORDS: an identifier with a space",
        protocol.Hello,
        {"v": 1, "type": "hello", "client": "c", "name": "A", "token": "a b"},
        r"Expected `str` matching regex '^[A-Za-z0-9_-]+$(?!\\n)' - at `$.token`",
    ),
    (
        "_ENUM and _QUOTED: a value outside an enumeration",
        protocol.CreateMatch,
        {
            "v": 1,
            "type": "create_match",
            "name": "m",
            "seats": 3,
            "bots": [{"seat": 1, "strength": "x"}],
        },
        "Invalid enum value 'x' - at `$.bots[0].strength`",
    ),
    (
        "_QUOTED: an unknown tag",
        protocol.Act,
        {"v": 1, "type": "act", "action": {"kind": "fly"}},
        "Invalid value 'fly' - at `$.action.kind`",
    ),
]


@pytest.mark.parametrize(
    ("pattern", "cls", "value", "sentence"), _WORDING, ids=[w[0] for w in _WORDING]
)
def test_msgspec_still_words_errors_as_the_codec_reads(
    pattern: str, cls: type[Any], value: dict[Any, Any], sentence: str
) -> None:
    """If this fails, a msgspec release words its errors differently: fix the
    patterns in protocol/codec.py ("msgspec's wording") and the bound in pyproject.toml."""
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.msgpack.decode(pack(value), type=cls)
    assert str(info.value) == sentence, f"msgspec's wording changed ({pattern})"


def test_every_msgspec_pattern_the_codec_reads_is_checked() -> None:
    """Each pattern, and each regex the codec puts in words, meets a real sentence above."""
    from protocol import codec

    sentences = [w[3] for w in _WORDING]
    reasons = []
    for sentence in sentences:
        reason, at, where = sentence.rpartition(codec._AT)
        if at:  # located: `$…` or `key` in `$…`, closed by a backtick
            assert where.removeprefix(codec._KEY_IN).startswith(codec._ROOT), sentence
            assert where.endswith("`"), sentence
        reasons.append(reason if at else where)
    assert any(codec._KEY_IN in s for s in sentences)
    assert any(
        codec._MISSING.match(r) and codec._AT not in s
        for r, s in zip(reasons, sentences, strict=True)
    )
    assert any(
        codec._MISSING.match(r) and codec._AT in s for r, s in zip(reasons, sentences, strict=True)
    )
    quoted = {m.group(1) for r in reasons if (m := codec._REGEX.search(r))}
    assert quoted == set(codec._REGEX_WORDS)
    assert any(r.startswith(codec._ENUM) for r in reasons)
    assert any(codec._QUOTED.search(r) for r in reasons)


# -- sizes ------------------------------------------------------------------


def test_encode_refuses_frames_no_receiver_accepts() -> None:
    """An (unvalidated) message too large for a frame raises `too_large`."""
    with pytest.raises(ProtocolError) as info:
        encode(ChatLine(match="m", seat=None, name="n", text="x" * MAX_FRAME_BYTES))
    assert info.value.code is ErrorCode.TOO_LARGE


def test_largest_valid_match_list_fits_in_a_frame() -> None:
    """MAX_MATCHES_LISTED summaries with the longest 4-byte names fit in a frame."""
    name = "\U0001d54f" * MAX_NAME_LENGTH
    summary = MatchSummary(
        match="m" * 64,
        name=name,
        status="running",
        seats=tuple(
            SeatInfo(seat=s, kind="bot", name=name, strength="medium", connected=True)
            for s in range(6)
        ),
        host=name,
        has_join_code=True,
        ruleset=name,
        turn_timer=3600.0,
    )
    message = MatchList(id="i" * 64, matches=(summary,) * MAX_MATCHES_LISTED)
    assert decode_server_message(encode(message)) == message


def _depth(t: inspect.Type) -> int:
    """Levels of maps and lists a value of ``t`` can nest (a scalar is 0)."""
    if isinstance(t, inspect.Metadata):
        return _depth(t.type)
    if isinstance(t, inspect.StructType):
        return 1 + max((_depth(f.type) for f in t.fields), default=0)
    if isinstance(t, inspect.VarTupleType):
        return 1 + _depth(t.item_type)
    if isinstance(t, inspect.TupleType):
        return 1 + max(_depth(x) for x in t.item_types)
    if isinstance(t, inspect.DictType):
        return 1 + _depth(t.value_type)
    if isinstance(t, inspect.UnionType):
        return max(_depth(x) for x in t.types)
    return 0


def test_schema_depth_is_bounded_as_documented() -> None:
    """The deepest message nests 10 levels (PROTOCOL.md says so: a replay page's
    final scoring in a batch), within MAX_DEPTH."""
    deepest = max(
        _depth(inspect.type_info(cls))
        for cls in (*CLIENT_MESSAGES.values(), *SERVER_MESSAGES.values())
    )
    assert deepest == 10 <= MAX_DEPTH


# -- hidden information ------------------------------------------------------


def test_private_event_fields_are_nullable_and_public_cards_are_not() -> None:
    """Only the fields an event lists as private can be null (R25–R26)."""
    for cls in EVENT_TYPES:
        info = inspect.type_info(cls)
        assert isinstance(info, inspect.StructType)
        for field in info.fields:
            t = field.type.type if isinstance(field.type, inspect.Metadata) else field.type
            nullable = isinstance(t, inspect.UnionType) and any(
                isinstance(x, inspect.NoneType) for x in t.types
            )
            assert nullable == (field.name in cls.private), (cls.__name__, field.name)
            assert field.required  # present on the wire, as null when hidden


def test_hidden_card_goes_on_the_wire_as_nil() -> None:
    """Another seat's face-down card is encoded as nil, with only the count public."""
    _, hidden = ex.EVENT_EXAMPLES["card_added_secret"][1]
    wire = msgpack.unpackb(encode(Event(match="m1", seq=9, event=hidden)))
    assert wire["event"] == {
        "kind": "card_added_secret",
        "seat": 1,
        "card": None,
        "secret_count": 4,
    }


def test_give_is_spelt_like_the_engine_record() -> None:
    """An action's map is exactly engine/record.py's action_to_data form."""
    assert msgspec.to_builtins(Give(to_seat=2)) == {"kind": "give", "to_seat": 2}


def test_error_message_for_takes_the_request_id_when_the_error_has_none() -> None:
    """A handler's error gets the id of the request it answers."""
    error = ProtocolError(ErrorCode.NOT_HOST, "only the host may start")
    assert error_message_for(error, 7).id == 7
    assert error_message_for(ProtocolError(ErrorCode.NOT_HOST, "x", request_id=3), 7).id == 3


def test_largest_valid_welcome_rulesets_fit_in_a_frame() -> None:
    """MAX_RULESETS rulesets with the longest 4-byte names, huge numbers and
    every change listed fit in one ``welcome`` frame."""
    from protocol import RulesetInfo, Welcome
    from protocol.limits import MAX_RULESETS

    big = 2**63 - 1
    info = RulesetInfo(
        name="\U0001d54f" * MAX_NAME_LENGTH,
        copies=big,
        extra_copies=big,
        extra_from_players=big,
        removed=(big,) * 5,
        reveal_size=big,
        giving_bonus=(big,) * 4,
        bouquet=(big,) * 4,
        majority=((big,) * 3,) * 3,
        majority_places=(3,) * 5,
        changes=("x" * 64,) * 32,
    )
    message = Welcome(
        id="i" * 64,
        server="s" * 200,
        versions=(1,),
        player="p" * 64,
        token="t" * 64,
        name="\U0001d54f" * MAX_NAME_LENGTH,
        rulesets=(info,) * MAX_RULESETS,
    )
    assert len(encode(message)) <= MAX_FRAME_BYTES
    assert decode_server_message(encode(message)) == message
