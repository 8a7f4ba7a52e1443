"""Read the example messages out of PROTOCOL.md, for the tests to decode.

Example blocks are fenced as ```` ```json c2s ````, ```` ```json s2c ````,
```` ```json event ```` or ```` ```json action ````; the whole-match walk-through is
one ```` ```text sequence ```` block whose messages start with ``→`` (client to
server) or ``←`` (server to client) and may run over several lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PROTOCOL_MD = Path(__file__).resolve().parents[2] / "PROTOCOL.md"

_BLOCK = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.S | re.M)


def document() -> str:
    """PROTOCOL.md's text."""
    return PROTOCOL_MD.read_text(encoding="utf-8")


def blocks(info: str) -> list[str]:
    """The bodies of every fenced block whose info string is ``info``."""
    return [m.group("body") for m in _BLOCK.finditer(document()) if m.group("info") == info]


def json_examples(kind: str) -> list[Any]:
    """Every ```` ```json <kind> ```` example, parsed."""
    return [json.loads(body) for body in blocks(f"json {kind}")]


def sequence() -> list[tuple[str, Any]]:
    """The walk-through in order: ("c2s" or "s2c", parsed JSON) for each message,
    and ("cut", None) where turns are left out (a ``# …`` line)."""
    (body,) = blocks("text sequence")
    messages: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith(("→ ", "← ")):
            messages.append(("c2s" if line[0] == "→" else "s2c", [line[2:]]))
        elif line.startswith("# …"):
            messages.append(("cut", []))
        elif line.startswith("#") or not line.strip():
            continue
        else:
            messages[-1][1].append(line)
    return [
        (direction, json.loads("\n".join(text)) if text else None) for direction, text in messages
    ]
