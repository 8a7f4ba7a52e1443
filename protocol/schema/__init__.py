"""``python -m protocol.schema``: the protocol as JSON Schema and AsyncAPI 3.0.

Two files beside this module are written from the same definitions as
PROTOCOL.md's tables (:mod:`protocol.messages`, :mod:`protocol.types`,
:mod:`protocol.examples`), so a client in any language can validate frames
and generate types without typing the protocol again:

- ``messages.schema.json`` — JSON Schema (Draft 2020-12). ``$defs`` holds a
  schema for every message, value, action and event, and four unions:
  ``ClientMessage`` and ``ServerMessage`` (tagged by ``type``), ``Action``
  and ``GameEvent`` (tagged by ``kind``). The root accepts any message of
  either direction; validate a received frame against
  ``#/$defs/ServerMessage``, one you send against ``#/$defs/ClientMessage``.
- ``asyncapi.json`` — an AsyncAPI 3.0.0 document of the server: one channel
  (the WebSocket), an operation per message type (the server *receives* the
  client→server messages and *sends* the server→client ones, a request's
  ``reply`` naming its answers), the messages with their examples, and
  their payloads under ``components.schemas`` in AsyncAPI's own schema
  dialect (JSON Schema Draft 7 and up).

msgspec's :func:`msgspec.json.schema_components` gives the bulk; this module
adds what it cannot know: ``v`` is required and names the version (a
``hello`` is read whatever its ``v``, to negotiate), the tag ``type`` is a
``const``, the unions of actions and events get names, and docstrings are
joined into one line as in PROTOCOL.md. The frames are MessagePack, not
JSON: a schema describes the decoded map (MessagePack *str* is a string, an
int or float a number; the protocol uses no *bin* or extension types).

``--write`` rewrites the files; ``--check`` exits with status 1 naming the
stale ones, so a test keeps them from drifting. This module uses only the
standard library and msgspec: the validator (``jsonschema``) is for the
tests.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from .. import examples
from .. import messages as _messages_module
from .. import types as _types_module
from ..generated import write_or_check
from ..messages import (
    CLIENT_MESSAGES,
    PROTOCOL_VERSION,
    SERVER_MESSAGES,
    SUPPORTED_VERSIONS,
    ClientMessage,
    Hello,
    Message,
    ServerMessage,
)
from ..types import ACTION_TYPES, EVENT_TYPES

__all__ = [
    "ASYNCAPI_PATH",
    "DIRECTORY",
    "SCHEMA_PATH",
    "asyncapi",
    "check",
    "json_schema",
    "main",
    "render",
    "write",
]

#: Where the generated files live (package data of ``protocol``).
DIRECTORY = Path(__file__).resolve().parent
#: The JSON Schema of every message.
SCHEMA_PATH = DIRECTORY / "messages.schema.json"
#: The AsyncAPI document of the server.
ASYNCAPI_PATH = DIRECTORY / "asyncapi.json"

_DEFS = "#/$defs/"
_SCHEMAS = "#/components/schemas/"
_CHANNEL = "tulips"
_CONTENT_TYPE = "application/msgpack"
_TICKED = re.compile(r"`([a-z_]+)`")

Schema = dict[str, Any]


def _doc(cls: type) -> str:
    """A class's docstring on one line, with PROTOCOL.md's single backticks."""
    return " ".join((cls.__doc__ or "").split()).replace("``", "`")


def _first_line(cls: type) -> str:
    """The first paragraph of a class's docstring, on one line."""
    return " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split()).replace("``", "`")


def _tag(cls: type[msgspec.Struct]) -> str:
    """A tagged struct's tag: a message's ``type``, an action's or event's ``kind``."""
    tag = cls.__struct_config__.tag
    assert isinstance(tag, str)
    return tag


def _walk(node: Any, change: Callable[[Schema], Schema]) -> Any:
    """``node`` with ``change`` applied to every object in it, innermost first."""
    if isinstance(node, dict):
        return change({key: _walk(value, change) for key, value in node.items()})
    if isinstance(node, list):
        return [_walk(value, change) for value in node]
    return node


def _union(
    title: str, description: str, tag_field: str, classes: Sequence[type[msgspec.Struct]]
) -> Schema:
    """A named union of tagged structs, as msgspec spells one inline."""
    names = [cls.__name__ for cls in classes]
    tags = [_tag(cls) for cls in classes]
    return {
        "title": title,
        "description": description,
        "anyOf": [{"$ref": _DEFS + name} for name in names],
        "discriminator": {
            "propertyName": tag_field,
            "mapping": {tag: _DEFS + name for tag, name in zip(tags, names, strict=True)},
        },
    }


_NAMED_UNIONS = {
    frozenset(_tag(cls) for cls in ACTION_TYPES): "Action",
    frozenset(_tag(cls) for cls in EVENT_TYPES): "GameEvent",
}


def _name_unions(node: Schema) -> Schema:
    """An inline union of every action (or event) becomes a ``$ref`` to its name."""
    mapping = node.get("discriminator", {}).get("mapping")
    name = _NAMED_UNIONS.get(frozenset(mapping)) if isinstance(mapping, dict) else None
    if name is None:
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "discriminator")}
    return {**rest, "$ref": _DEFS + name}


def _version(cls: type[Message]) -> Schema:
    """The schema of a message's ``v``."""
    if cls is Hello:
        return {
            "description": "the version the client speaks; a `hello` is read whatever its `v` "
            "(the server then weighs `versions`, or else `v`, and answers `welcome` with the "
            "version chosen, or `unsupported_version`)",
            "type": "integer",
        }
    versions = list(SUPPORTED_VERSIONS)
    spelled: Schema = {"const": versions[0]} if len(versions) == 1 else {"enum": versions}
    return {"description": "protocol version", **spelled}


def _message(cls: type[Message], schema: Schema) -> Schema:
    """A message's schema with the envelope as the protocol has it: ``type``
    first and a ``const``, then ``v`` (required), then ``id``."""
    properties = dict(schema["properties"])
    tag = properties.pop("type")
    assert tag == {"enum": [_tag(cls)]}, tag
    properties.pop("v")
    envelope = {
        "type": {"description": "the message type", "const": _tag(cls)},
        "v": _version(cls),
    }
    required = [name for name in schema.get("required", ()) if name != "type"]
    return {
        **schema,
        "properties": {**envelope, **properties},
        "required": ["type", "v", *required],
    }


def json_schema() -> Schema:
    """The JSON Schema (Draft 2020-12) of every message, value, action and event."""
    (client, server), components = msgspec.json.schema_components(
        [ClientMessage, ServerMessage], ref_template=_DEFS + "{name}"
    )
    messages = {cls.__name__: cls for cls in (*CLIENT_MESSAGES.values(), *SERVER_MESSAGES.values())}
    structs = {
        name: value
        for module in (_types_module, _messages_module)
        for name, value in vars(module).items()
        if isinstance(value, type) and issubclass(value, msgspec.Struct)
    }
    defs: Schema = {}
    for name, schema in components.items():
        schema = _walk(schema, _name_unions)
        schema["description"] = _doc(structs[name])
        if name in messages:
            schema = _message(messages[name], schema)
        defs[name] = schema
    defs["ClientMessage"] = {
        **client,
        "title": "ClientMessage",
        "description": "Every message a client may send, tagged by `type`.",
    }
    defs["ServerMessage"] = {
        **server,
        "title": "ServerMessage",
        "description": "Every message a server may send, tagged by `type`.",
    }
    defs["Action"] = _union(
        "Action", "What a seat may propose, tagged by `kind`.", "kind", ACTION_TYPES
    )
    defs["GameEvent"] = _union(
        "GameEvent", "Something that happened in a match, tagged by `kind`.", "kind", EVENT_TYPES
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Gift of Tulips wire protocol, version {PROTOCOL_VERSION}",
        "description": "Every message of the protocol, either direction, as the decoded "
        "MessagePack map (see PROTOCOL.md). Validate what a server sends against "
        "`#/$defs/ServerMessage` and what a client sends against `#/$defs/ClientMessage`: "
        "`replay` and `chat` name one message each way. Receivers ignore keys they do not "
        "know, so no object forbids other properties. Written by "
        "`python -m protocol.schema --write`; do not edit.",
        "anyOf": [{"$ref": _DEFS + "ClientMessage"}, {"$ref": _DEFS + "ServerMessage"}],
        "$defs": defs,
    }


# -- AsyncAPI -------------------------------------------------------------------


def _asyncapi_schema(node: Schema) -> Schema:
    """One object of a Draft 2020-12 schema in AsyncAPI's dialect (Draft 7's
    keywords): refs into ``components.schemas``, ``prefixItems`` as ``items``,
    and no OpenAPI-style ``discriminator`` (AsyncAPI's is a property name,
    for inheritance; each member's ``const`` tag already tells them apart)."""
    out = {key: value for key, value in node.items() if key != "discriminator"}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS):
        out["$ref"] = _SCHEMAS + ref[len(_DEFS) :]
    if "prefixItems" in out:
        out["items"] = out.pop("prefixItems")
        out["additionalItems"] = False
    return out


def _replies(answer: str) -> list[str]:
    """The server→client message types a request's ``answer`` names, in order,
    and ``error``, which may answer any request (``rate_limited``, ``bad_message``…)."""
    found: list[str] = []
    for tag in _TICKED.findall(answer):
        if tag in SERVER_MESSAGES and tag not in found:
            found.append(tag)
    return found if "error" in found else [*found, "error"]


def _message_object(cls: type[Message], example: Message, direction: str, who: str) -> Schema:
    """An AsyncAPI message: its name (the ``type`` tag), prose, payload and example."""
    return {
        "name": _tag(cls),
        "title": f"{_tag(cls)} ({direction})",
        "summary": _first_line(cls),
        "description": f"{_doc(cls)} {who}",
        "contentType": _CONTENT_TYPE,
        "payload": {"$ref": _SCHEMAS + cls.__name__},
        "examples": [{"name": _tag(cls), "payload": msgspec.to_builtins(example)}],
    }


def asyncapi(schema: Schema | None = None) -> Schema:
    """The AsyncAPI 3.0.0 document of the server, its payloads from :func:`json_schema`."""
    schema = json_schema() if schema is None else schema
    channel_ref = {"$ref": f"#/channels/{_CHANNEL}"}
    messages: Schema = {}
    operations: Schema = {}
    for tag, cls in CLIENT_MESSAGES.items():
        answer = str(getattr(cls, "answer", ""))
        messages[cls.__name__] = _message_object(
            cls, examples.CLIENT_EXAMPLES[tag], "client→server", f"Answered by: {answer}."
        )
        operations[f"receive_{tag}"] = {
            "action": "receive",
            "channel": channel_ref,
            "title": f"A client sends `{tag}`",
            "summary": _first_line(cls),
            "messages": [{"$ref": f"#/channels/{_CHANNEL}/messages/{cls.__name__}"}],
            "reply": {
                "channel": channel_ref,
                "messages": [
                    {"$ref": f"#/channels/{_CHANNEL}/messages/{SERVER_MESSAGES[t].__name__}"}
                    for t in _replies(answer)
                ],
            },
        }
    for tag, cls in SERVER_MESSAGES.items():
        sent_to = str(getattr(cls, "sent_to", ""))
        messages[cls.__name__] = _message_object(
            cls, examples.SERVER_EXAMPLES[tag], "server→client", f"Sent to: {sent_to}."
        )
        operations[f"send_{tag}"] = {
            "action": "send",
            "channel": channel_ref,
            "title": f"The server sends `{tag}`",
            "summary": _first_line(cls),
            "description": f"Sent to: {sent_to}.",
            "messages": [{"$ref": f"#/channels/{_CHANNEL}/messages/{cls.__name__}"}],
        }
    schemas = _walk(copy.deepcopy(schema["$defs"]), _asyncapi_schema)
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Gift of Tulips",
            "version": str(PROTOCOL_VERSION),
            "description": "The wire protocol of a Gift of Tulips server, version "
            f"{PROTOCOL_VERSION}, seen from the server: it receives the client→server "
            "messages and sends the server→client ones. PROTOCOL.md says what each one "
            "means and when it comes; this document and messages.schema.json are written "
            "from the same definitions by `python -m protocol.schema --write`.",
            "license": {"name": "MIT"},
        },
        "defaultContentType": _CONTENT_TYPE,
        "servers": {
            "local": {
                "host": "localhost:8765",
                "protocol": "ws",
                "description": "`tulips-server`'s default address; any server's URL works.",
            },
            "local-tls": {
                "host": "localhost:8765",
                "protocol": "wss",
                "description": "`tulips-server --tls`: pin its certificate's fingerprint "
                "(PROTOCOL.md, encrypted connections).",
            },
        },
        "channels": {
            _CHANNEL: {
                "address": "/",
                "title": "A connection",
                "description": "One WebSocket connection. Every message is one binary frame "
                "holding one MessagePack map (at most 64 KiB); text frames are refused. The "
                "client speaks first, with `hello`.",
                "messages": {name: {"$ref": f"#/components/messages/{name}"} for name in messages},
                "bindings": {"ws": {"bindingVersion": "0.1.0"}},
            }
        },
        "operations": operations,
        "components": {"messages": messages, "schemas": schemas},
    }


# -- the files ------------------------------------------------------------------


def _text(document: Schema) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render(directory: Path = DIRECTORY) -> dict[Path, str]:
    """Each generated file's path and text."""
    schema = json_schema()
    return {
        directory / SCHEMA_PATH.name: _text(schema),
        directory / ASYNCAPI_PATH.name: _text(asyncapi(schema)),
    }


def check(directory: Path = DIRECTORY) -> list[str]:
    """The names of the generated files in ``directory`` that are missing or stale."""
    stale = []
    for path, text in render(directory).items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(path.name)
    return stale


def write(directory: Path = DIRECTORY) -> list[Path]:
    """Rewrite the generated files in ``directory``; the paths written."""
    files = render(directory)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)


def main(argv: Sequence[str] | None = None) -> int:
    """Check (``--check``) or rewrite (``--write``) the schema files."""
    return write_or_check(
        argv,
        prog="python -m protocol.schema",
        description="Write or check protocol/schema/messages.schema.json (JSON Schema) and "
        "protocol/schema/asyncapi.json (AsyncAPI 3.0) from the definitions in protocol/.",
        default=DIRECTORY,
        write=write,
        stale=check,
        flag="--dir",
    )
