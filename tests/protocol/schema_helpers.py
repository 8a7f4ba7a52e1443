"""Validators for protocol/schema's generated files, for the tests.

:func:`validator` checks a decoded frame against one definition of
``messages.schema.json`` (``ServerMessage``, ``ClientMessage``, ``Action`` …)
with ``jsonschema``'s Draft 2020-12 validator; :func:`problems` lists what
it finds wrong, one line each, for assertion messages.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator

from protocol.schema import ASYNCAPI_PATH, SCHEMA_PATH


@functools.cache
def schema() -> dict[str, Any]:
    """messages.schema.json, parsed."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def asyncapi() -> dict[str, Any]:
    """asyncapi.json, parsed."""
    loaded: dict[str, Any] = json.loads(ASYNCAPI_PATH.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def validator(definition: str | None = None) -> Draft202012Validator:
    """A validator of the whole schema, or of one of its ``$defs``."""
    root = schema()
    if definition is not None:
        assert definition in root["$defs"], definition
        # a $ref (not an anyOf of one) so that errors are the definition's own
        root = {"$schema": root["$schema"], "$defs": root["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(root)


def problems(instance: Any, definition: str | None = None) -> list[str]:
    """Every way ``instance`` breaks the schema (empty: it is valid). For a
    union tagged by ``type`` whose tag ``instance`` names, the errors are the
    tagged member's, which say more than "not valid under any of"."""
    union = schema()["$defs"].get(definition or "", {})
    mapping = union.get("discriminator", {}).get("mapping", {})
    tag = (
        instance.get(union["discriminator"]["propertyName"])
        if mapping and isinstance(instance, dict)
        else None
    )
    member = mapping.get(tag) if isinstance(tag, str) else None
    check = validator(member.rsplit("/", 1)[1]) if member else validator(definition)
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"[:300]
        for error in check.iter_errors(instance)
    ]
