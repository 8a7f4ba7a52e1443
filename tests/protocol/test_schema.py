"""protocol/schema's JSON Schema and AsyncAPI files: current, valid documents,
and in agreement with every example of PROTOCOL.md and protocol/examples.py
and with the codec's verdict on hostile frames."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack
import msgspec
import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from protocol import CLIENT_MESSAGES, SERVER_MESSAGES, examples, schema
from protocol.codec import decode_client_message, encode
from protocol.errors import ProtocolError
from protocol.messages import Message
from protocol.types import ACTION_TYPES, EVENT_TYPES

from .doc_examples import json_examples, sequence
from .schema_helpers import asyncapi, problems
from .schema_helpers import schema as loaded_schema

# -- the files ------------------------------------------------------------------------


def test_generated_files_are_up_to_date() -> None:
    """The committed files are what `python -m protocol.schema --write` writes."""
    assert schema.check() == []
    assert schema.main(["--check"]) == 0


def test_check_names_stale_files_and_write_repairs_them(tmp_path: Path) -> None:
    """A hand edit or a missing file is caught, and --write repairs it."""
    assert schema.check(tmp_path) == ["messages.schema.json", "asyncapi.json"]
    assert schema.main(["--write", "--dir", str(tmp_path)]) == 0
    assert schema.check(tmp_path) == []
    edited = tmp_path / "asyncapi.json"
    edited.write_text(edited.read_text(encoding="utf-8").replace("3.0.0", "2.6.0"), "utf-8")
    assert schema.check(tmp_path) == ["asyncapi.json"]
    assert schema.main(["--check", "--dir", str(tmp_path)]) == 1


def test_schema_is_valid_draft_2020_12() -> None:
    """The JSON Schema passes the Draft 2020-12 meta-schema (which checks every
    definition under ``$defs`` too)."""
    document = loaded_schema()
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(document)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def _resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        assert isinstance(node, dict) and part in node, f"{ref} leads nowhere"
        node = node[part]
    return node


def test_schema_defines_every_message_value_action_and_event() -> None:
    """One definition per struct, each message's envelope as the protocol has it,
    the four unions named, and every ``$ref`` leads to a definition."""
    defs = loaded_schema()["$defs"]
    for cls in (*CLIENT_MESSAGES.values(), *SERVER_MESSAGES.values()):
        definition = defs[cls.__name__]
        assert definition["properties"]["type"]["const"] == cls.__struct_config__.tag
        assert definition["required"][:2] == ["type", "v"]
        assert "id" in definition["properties"]
    for union, classes in (("Action", ACTION_TYPES), ("GameEvent", EVENT_TYPES)):
        assert [m["$ref"] for m in defs[union]["anyOf"]] == [
            f"#/$defs/{cls.__name__}" for cls in classes
        ]
    assert set(defs["ClientMessage"]["discriminator"]["mapping"]) == set(CLIENT_MESSAGES)
    assert set(defs["ServerMessage"]["discriminator"]["mapping"]) == set(SERVER_MESSAGES)
    for ref in _refs(loaded_schema()):
        _resolve(loaded_schema(), ref)


def test_asyncapi_document_is_well_formed() -> None:
    """AsyncAPI 3.0.0: one channel holding every message, an operation per message
    type (receive: client→server, send: server→client), replies on the channel,
    every reference resolving, and payload schemas valid in Draft 7 (AsyncAPI's
    schema dialect)."""
    doc = asyncapi()
    assert doc["asyncapi"] == "3.0.0"
    assert doc["info"]["title"] and doc["info"]["version"] == "1"
    assert set(doc) <= {
        "asyncapi", "id", "info", "servers", "defaultContentType", "channels", "operations",
        "components",
    }  # fmt: skip
    for server in doc["servers"].values():
        assert server["protocol"] in ("ws", "wss") and server["host"]
    (name, channel) = next(iter(doc["channels"].items()))
    assert len(doc["channels"]) == 1 and channel["address"] == "/"
    messages = doc["components"]["messages"]
    expected = [cls.__name__ for cls in (*CLIENT_MESSAGES.values(), *SERVER_MESSAGES.values())]
    assert list(messages) == expected == list(channel["messages"])
    for ref in _refs(doc):
        _resolve(doc, ref)
    actions = {}
    for operation_id, operation in doc["operations"].items():
        assert operation["channel"] == {"$ref": f"#/channels/{name}"}
        (message,) = operation["messages"]
        assert message["$ref"].startswith(f"#/channels/{name}/messages/")
        cls_name = message["$ref"].rsplit("/", 1)[1]
        actions[cls_name] = operation["action"]
        assert operation_id == f"{operation['action']}_{messages[cls_name]['name']}"
        if operation["action"] == "receive":
            replies = [m["$ref"].rsplit("/", 1)[1] for m in operation["reply"]["messages"]]
            assert "Error" in replies and set(replies) <= {
                cls.__name__ for cls in SERVER_MESSAGES.values()
            }
    assert actions == {
        **{cls.__name__: "receive" for cls in CLIENT_MESSAGES.values()},
        **{cls.__name__: "send" for cls in SERVER_MESSAGES.values()},
    }
    schemas = doc["components"]["schemas"]
    assert set(schemas) == set(loaded_schema()["$defs"])
    text = json.dumps(schemas)
    assert "prefixItems" not in text and "$defs" not in text and "discriminator" not in text
    for definition in schemas.values():
        Draft7Validator.check_schema(definition)


def test_asyncapi_examples_fit_their_payloads() -> None:
    """Each AsyncAPI message's example is valid under its payload schema, read as
    Draft 7 with the document's components."""
    doc = asyncapi()
    for name, message in doc["components"]["messages"].items():
        payload = _resolve(doc, message["payload"]["$ref"])
        validator = Draft7Validator({**payload, "components": doc["components"]})
        for example in message["examples"]:
            assert list(validator.iter_errors(example["payload"])) == [], name
        # the same message under a wrong tag is refused
        wrong = {**message["examples"][0]["payload"], "type": "no_such_type"}
        assert not validator.is_valid(wrong), name


# -- every example --------------------------------------------------------------------


def _wire(value: msgspec.Struct) -> Any:
    """A message (or an action, an event) as a MessagePack client reads it off the wire."""
    data = encode(value) if isinstance(value, Message) else msgspec.msgpack.encode(value)
    return msgpack.unpackb(data)


def test_every_example_of_protocol_examples_is_valid() -> None:
    """protocol/examples.py's messages, actions and events, as encoded on the wire."""
    for tag, message in examples.CLIENT_EXAMPLES.items():
        assert problems(_wire(message), "ClientMessage") == [], tag
    for tag, message in examples.SERVER_EXAMPLES.items():
        assert problems(_wire(message), "ServerMessage") == [], tag
    for kind, action in examples.ACTION_EXAMPLES.items():
        assert problems(_wire(action), "Action") == [], kind
    for kind, seen in examples.EVENT_EXAMPLES.items():
        for who, event in seen:
            assert problems(_wire(event), "GameEvent") == [], (kind, who)
    for name in ("SNAPSHOT_4P", "PROMPT_4P", "ACT"):
        extra = getattr(examples, name, None)
        if extra is not None:
            assert problems(_wire(extra)) == [], name


def test_every_example_in_protocol_md_is_valid() -> None:
    """Every ```json c2s / s2c / event block and the whole-match walk-through."""
    found = {"c2s": 0, "s2c": 0, "event": 0}
    for kind, definition in (("c2s", "ClientMessage"), ("s2c", "ServerMessage")):
        for message in json_examples(kind):
            assert problems(message, definition) == [], message
            found[kind] += 1
    for event in json_examples("event"):
        assert problems(event, "GameEvent") == [], event
        found["event"] += 1
    assert found["c2s"] >= len(CLIENT_MESSAGES) and found["s2c"] >= len(SERVER_MESSAGES)
    assert found["event"] >= len(EVENT_TYPES)
    walked = 0
    for direction, message in sequence():
        if direction == "cut":
            continue
        definition = "ClientMessage" if direction == "c2s" else "ServerMessage"
        assert problems(message, definition) == [], message
        walked += 1
    assert walked > 20


# -- hostile frames: the codec's verdict and the schema's -----------------------------

_LONG = "x" * 41
#: (what is wrong, the frame). Each is sent as MessagePack; the codec
#: (decode_client_message) is the oracle and the schema must agree.
HOSTILE: tuple[tuple[str, dict[str, Any]], ...] = (
    ("a valid hello", {"v": 1, "type": "hello", "client": "c/1", "name": "Ada", "id": 1}),
    ("a valid act", {"v": 1, "type": "act", "action": {"kind": "give", "to_seat": 5}}),
    ("unknown keys are ignored", {"v": 1, "type": "sync", "colour": "mauve", "x": [1]}),
    ("a hello of another version", {"v": 7, "type": "hello", "client": "c", "name": "A"}),
    ("a string id of 64", {"v": 1, "type": "sync", "id": "i" * 64}),
    ("the largest int id", {"v": 1, "type": "sync", "id": 2**53 - 1}),
    ("no v", {"type": "sync"}),
    ("no type", {"v": 1}),
    ("an unknown type", {"v": 1, "type": "fly"}),
    ("a server's type", {"v": 1, "type": "welcome"}),
    ("v of another version", {"v": 2, "type": "sync"}),
    ("v as a string", {"v": "1", "type": "sync"}),
    ("v as a bool", {"v": True, "type": "sync"}),
    ("type as an int", {"v": 1, "type": 3}),
    ("an int id too large", {"v": 1, "type": "sync", "id": 2**53}),
    ("a negative id", {"v": 1, "type": "sync", "id": -1}),
    ("an empty string id", {"v": 1, "type": "sync", "id": ""}),
    ("a string id of 65", {"v": 1, "type": "sync", "id": "i" * 65}),
    ("a float id", {"v": 1, "type": "sync", "id": 2.5}),
    ("a bool id", {"v": 1, "type": "sync", "id": False}),
    ("hello without a name", {"v": 1, "type": "hello", "client": "c"}),
    ("an empty name", {"v": 1, "type": "hello", "client": "c", "name": ""}),
    ("a name of 41", {"v": 1, "type": "hello", "client": "c", "name": _LONG}),
    ("a name with a bell", {"v": 1, "type": "hello", "client": "c", "name": "A\x07da"}),
    ("a name with a C1 control", {"v": 1, "type": "hello", "client": "c", "name": "A\x85"}),
    ("a name as bin", {"v": 1, "type": "hello", "client": "c", "name": b"Ada"}),
    ("a token with a space", {"v": 1, "type": "hello", "client": "c", "name": "A", "token": "a b"}),
    ("versions 0", {"v": 1, "type": "hello", "client": "c", "name": "A", "versions": [0]}),
    ("17 versions", {"v": 1, "type": "hello", "client": "c", "name": "A", "versions": [1] * 17}),
    ("seats 7", {"v": 1, "type": "create_match", "name": "m", "seats": 7}),
    ("seats 1", {"v": 1, "type": "create_match", "name": "m", "seats": 1}),
    ("seats as a string", {"v": 1, "type": "create_match", "name": "m", "seats": "3"}),
    ("bots as nil", {"v": 1, "type": "create_match", "name": "m", "seats": 3, "bots": None}),
    (
        "open_box as nil",
        {"v": 1, "type": "create_match", "name": "m", "seats": 3, "open_box": None},
    ),
    (
        "join_code as nil",
        {"v": 1, "type": "create_match", "name": "m", "seats": 3, "join_code": None},
    ),
    (
        "a bot of unknown strength",
        {
            "v": 1,
            "type": "create_match",
            "name": "m",
            "seats": 3,
            "bots": [{"seat": 1, "strength": "godlike"}],
        },
    ),
    (
        "7 bots",
        {"v": 1, "type": "create_match", "name": "m", "seats": 3, "bots": [{"seat": 1}] * 7},
    ),
    (
        "a turn timer of 0.5 s",
        {"v": 1, "type": "create_match", "name": "m", "seats": 2, "turn_timer": 0.5},
    ),
    (
        "a turn timer as an int",
        {"v": 1, "type": "create_match", "name": "m", "seats": 2, "turn_timer": 5},
    ),
    ("seat 6", {"v": 1, "type": "join", "match": "m1", "seat": 6}),
    ("seat -1", {"v": 1, "type": "join", "match": "m1", "seat": -1}),
    ("a match id with a slash", {"v": 1, "type": "join", "match": "m/1"}),
    ("a match id of 65", {"v": 1, "type": "watch", "match": "m" * 65}),
    ("remove_seat without a seat", {"v": 1, "type": "remove_seat"}),
    ("act without an action", {"v": 1, "type": "act"}),
    ("an unknown action kind", {"v": 1, "type": "act", "action": {"kind": "steal"}}),
    ("an action without kind", {"v": 1, "type": "act", "action": {"to_seat": 1}}),
    ("give to seat 6", {"v": 1, "type": "act", "action": {"kind": "give", "to_seat": 6}}),
    ("give without to_seat", {"v": 1, "type": "act", "action": {"kind": "give"}}),
    (
        "a card that is not",
        {"v": 1, "type": "act", "action": {"kind": "opening", "secret": "pink-5"}},
    ),
    ("an action as a string", {"v": 1, "type": "act", "action": "keep"}),
    ("a negative seq", {"v": 1, "type": "act", "action": {"kind": "keep"}, "seq": -1}),
    ("replay from 0", {"v": 1, "type": "replay", "match": "m1", "from_seq": 0}),
    ("an empty chat line", {"v": 1, "type": "chat", "text": ""}),
    ("a chat line of 501", {"v": 1, "type": "chat", "text": "x" * 501}),
    ("a chat line with an escape", {"v": 1, "type": "chat", "text": "hi \x1b[2J"}),
    ("a chat line as a list", {"v": 1, "type": "chat", "text": ["hi"]}),
    ("a strength of a bot to add", {"v": 1, "type": "add_bot", "strength": "Hard"}),
)

#: What the schema cannot say as the codec does, and why. Each must still differ,
#: so that a fix on either side updates this list.
SCHEMA_CANNOT_SAY = {
    # JSON Schema's "integer" is a mathematical integer: 1.0 is one, and JSON
    # cannot tell them apart. MessagePack can, and the codec wants an int.
    "v as an integral float": {"v": 1.0, "type": "sync"},
    "an integral float id": {"v": 1, "type": "sync", "id": 2.0},
    "seats as an integral float": {"v": 1, "type": "create_match", "name": "m", "seats": 3.0},
}


def _codec_accepts(frame: dict[str, Any]) -> bool:
    try:
        decode_client_message(msgpack.packb(frame, use_bin_type=True))
    except ProtocolError:
        return False
    return True


def _schema_accepts(frame: dict[str, Any]) -> bool:
    read = msgpack.unpackb(msgpack.packb(frame, use_bin_type=True), raw=False)
    return problems(read, "ClientMessage") == []


@pytest.mark.parametrize(("what", "frame"), HOSTILE, ids=[what for what, _ in HOSTILE])
def test_schema_refuses_what_the_codec_refuses(what: str, frame: dict[str, Any]) -> None:
    """Each frame gets the same verdict from the schema as from the server's codec."""
    assert _schema_accepts(frame) == _codec_accepts(frame), what


def test_hostile_frames_include_both_verdicts() -> None:
    """The list tests refusals and acceptances alike, refusals mostly."""
    verdicts = [_codec_accepts(frame) for _, frame in HOSTILE]
    assert verdicts.count(True) >= 5 and verdicts.count(False) >= 40


@pytest.mark.parametrize("what", sorted(SCHEMA_CANNOT_SAY))
def test_what_the_schema_cannot_say(what: str) -> None:
    """The known differences stay known: the codec refuses, the schema accepts."""
    frame = SCHEMA_CANNOT_SAY[what]
    assert not _codec_accepts(frame) and _schema_accepts(frame), what


@pytest.mark.parametrize(
    "frame",
    [
        {"v": 1, "type": "hello", "client": "c", "name": "Ada\n"},
        {"v": 1, "type": "join", "match": "m1\n"},
        {"v": 1, "type": "chat", "text": "hi\n"},
    ],
)
def test_a_trailing_newline_is_refused_by_codec_and_schema_alike(frame: dict[str, Any]) -> None:
    """A name, id or chat line ending in a newline has a control character the
    protocol forbids: the codec refuses it (Python's `$` alone would let it
    through) and so does the schema."""
    assert not _codec_accepts(frame) and not _schema_accepts(frame)


def _integers(node: Any, path: str) -> list[tuple[str, Any]]:
    """Every integer schema under ``node``, with where it is."""
    found = (
        [(path, node.get("maximum"))]
        if isinstance(node, dict) and node.get("type") == ("integer")
        else []
    )
    if isinstance(node, dict):
        for key, value in node.items():
            found += _integers(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _integers(value, f"{path}/{i}")
    return found


def test_only_the_seed_is_bounded_beyond_53_bits() -> None:
    """PROTOCOL.md's notes for 53-bit languages: the one integer the schema lets
    exceed 2**53 − 1 explicitly is the replay's seed, and an int ``id`` stops at
    2**53 − 1 (the unbounded counts are the notes' other subject)."""
    defs = loaded_schema()["$defs"]
    beyond = [path for path, most in _integers(defs, "") if most is not None and most > 2**53 - 1]
    assert beyond == ["/ReplayPage/properties/seed/anyOf/0"]
    for name in ("Hello", "Welcome", "Act", "Error"):
        (as_int,) = [
            s for s in defs[name]["properties"]["id"]["anyOf"] if s.get("type") == "integer"
        ]
        assert (as_int["minimum"], as_int["maximum"]) == (0, 2**53 - 1)


def test_protocol_md_links_the_schema_files() -> None:
    """PROTOCOL.md names both files, where they are."""
    text = Path(schema.__file__).resolve().parents[2].joinpath("PROTOCOL.md").read_text("utf-8")
    for path in (schema.SCHEMA_PATH, schema.ASYNCAPI_PATH):
        assert f"(protocol/schema/{path.name})" in text
