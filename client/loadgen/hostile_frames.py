"""A pool of hostile WebSocket frames, built once and drawn from cheaply.

Every entry is ready-to-write client bytes: one or more RFC 6455 frames,
masked, so that sending one is a single ``write``. The kinds:

``random``      random bytes in a binary frame
``truncated``   a real client message (:mod:`protocol.examples`), cut short
``bomb``        MessagePack that declares huge arrays, maps, strings, binaries
                or extensions (up to 4 GiB) and carries a few bytes of them —
                at the top, in a known field, in an unknown field, as a key
``nested``      arrays and maps nested 10 to 60,000 deep, alone or in a field
``huge``        fields near the 64 KiB frame limit, out-of-range numbers,
                60,000-item lists and 6,000-key maps
``mistyped``    a real client message with one field of the wrong type
``mutated``     a real client message with fields removed, retyped, added,
                its ``type``, ``v``, ``id`` or action changed, keys doubled,
                invalid UTF-8, or sent as an array
``valid``       well-formed requests that make no sense now (``start`` outside
                a match, ``join`` of a running match, ``replay`` of another's)
``text``        text frames: JSON of real messages, or any text
``control``     pings and unsolicited pongs
``fragmented``  a message in up to 12 frames, one byte in each but the last
``violation``   frames that break RFC 6455 itself (unmasked, reserved bits or
                opcodes, oversized control frames, invalid UTF-8 text, frames
                above 64 KiB, bad close codes): the server must close the
                connection, and nothing else

:meth:`Pool.draw` also makes ``bitflip`` frames on the fly: a real message
with one to three bits flipped. Nothing here does I/O; all randomness comes
from the ``random.Random`` passed in, so a seed gives the same pool.
"""

from __future__ import annotations

import base64
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

import protocol as wire
from protocol import examples

__all__ = ["KINDS", "Frame", "Pool", "client_frame", "hello_frame"]

_OP_CONTINUATION, _OP_TEXT, _OP_BINARY, _OP_CLOSE, _OP_PING, _OP_PONG = 0, 1, 2, 8, 9, 10
_LIMIT = wire.MAX_FRAME_BYTES
_NAN = math.nan


@dataclass(frozen=True, slots=True)
class Frame:
    """Bytes to write, and what the server owes for them."""

    data: bytes
    kind: str
    frames: int = 1  #: WebSocket frames in ``data``
    answers: int = 1  #: protocol answers the server sends back (0: none, or a close)
    #: offset of the (masked) payload of a single frame, for bit flips; -1: none
    payload_at: int = -1
    closes: bool = False  #: the server must close the connection on it


def client_frame(
    payload: bytes,
    opcode: int = _OP_BINARY,
    *,
    fin: bool = True,
    rsv: int = 0,
    masked: bool = True,
    mask: bytes = b"\x5a\xa5\x3c\xc3",
    length: int | None = None,
) -> tuple[bytes, int]:
    """One client frame (masked as RFC 6455 requires, unless told not to) and the
    offset of its payload. ``length`` overrides the declared payload length."""
    n = len(payload) if length is None else length
    head = bytearray([(0x80 if fin else 0) | (rsv & 7) << 4 | (opcode & 0xF)])
    bit = 0x80 if masked else 0
    if n < 126:
        head.append(bit | n)
    elif n < 65536:
        head.append(bit | 126)
        head += n.to_bytes(2, "big")
    else:
        head.append(bit | 127)
        head += n.to_bytes(8, "big")
    if not masked:
        return bytes(head) + payload, len(head)
    head += mask
    if payload:
        key = (mask * (len(payload) // 4 + 1))[: len(payload)]
        body = int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")
        payload = body.to_bytes(len(payload), "big")
    return bytes(head) + payload, len(head)


def hello_frame(name: str, token: str | None, rng: random.Random) -> bytes:
    """A well-formed ``hello`` (the way into every request after it)."""
    hello = wire.Hello(id=0, client="tulips-hostile/0.1", name=name, token=token)
    return client_frame(wire.encode(hello), mask=rng.randbytes(4))[0]


def _pack(value: object) -> bytes:
    return msgspec.msgpack.encode(value)


def _map_with_raw(fields: dict[str, Any], key: str, raw: bytes) -> bytes:
    """A MessagePack map of ``fields`` plus ``key`` whose value is ``raw`` bytes."""
    count = len(fields) + 1
    head = bytes([0x80 | count]) if count < 16 else b"\xde" + count.to_bytes(2, "big")
    body = b"".join(_pack(k) + _pack(v) for k, v in fields.items())
    return head + body + _pack(key) + raw


#: Values of every MessagePack type, to put where another type belongs.
_ZOO: tuple[object, ...] = (
    None,
    True,
    False,
    0,
    -1,
    7,
    2**31,
    2**53 + 1,
    2**64 - 1,
    -(2**63),
    0.5,
    -0.0,
    _NAN,
    math.inf,
    -math.inf,
    1e308,
    "",
    "x",
    "k7Qm2",
    "\x00\x07\x1b[2J",
    "é" * 40,
    "\U0001f337" * 60,
    "x" * 201,
    b"",
    b"\x00\x01\xff",
    [],
    [1],
    ["a", None],
    [[[[]]]],
    {},
    {"kind": "keep"},
    {"kind": "give", "to_seat": 99},
    {"a": {"b": 1}},
    {1: 2},
    msgspec.msgpack.Ext(1, b"x"),
    msgspec.msgpack.Ext(-1, b"\x00" * 12),  # a valid timestamp: decodes to a datetime
)


def _real_messages(match_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Every client message of :mod:`protocol.examples` as a plain map, plus an
    ``act`` per action kind, some pointed at real match ids."""
    messages: list[wire.Message] = list(examples.CLIENT_EXAMPLES.values())
    messages += [
        wire.Act(id=20 + i, action=a) for i, a in enumerate(examples.ACTION_EXAMPLES.values())
    ]
    for i, match in enumerate(match_ids[:8]):
        messages += [
            wire.Join(id=30 + i, match=match),
            wire.Watch(id=40 + i, match=match),
            wire.Replay(id=50 + i, match=match),
            wire.Replay(id=60 + i, match=match, from_seq=10**9),
        ]
    return [msgspec.msgpack.decode(wire.encode(m)) for m in messages]


class Pool:
    """Hostile frames of every kind, drawn by weight."""

    #: how often each kind is drawn, relative to the others
    WEIGHTS: dict[str, float] = {
        "random": 12,
        "truncated": 10,
        "bomb": 8,
        "nested": 4,
        "huge": 1,
        "mistyped": 15,
        "mutated": 20,
        "bitflip": 10,
        "valid": 8,
        "text": 5,
        "control": 3,
        "fragmented": 1,
        "violation": 0.5,
    }

    def __init__(self, rng: random.Random, match_ids: Sequence[str] = (), size: int = 400) -> None:
        """Build about ``size`` entries of each kind (fewer of the big ones)."""
        self._rng = rng
        self.real = _real_messages(match_ids)
        self.kinds: dict[str, list[Frame]] = {}
        builders: dict[str, Callable[[], list[Frame]]] = {
            "random": lambda: [self._random() for _ in range(size)],
            "truncated": lambda: [self._truncated() for _ in range(size)],
            "bomb": self._bombs,
            "nested": self._nested,
            "huge": self._huge,
            "mistyped": self._mistyped,
            "mutated": lambda: [self._mutated() for _ in range(size * 2)],
            "valid": lambda: [self._binary(_pack(m), "valid") for m in self.real],
            "text": lambda: [self._text() for _ in range(size // 2)],
            "control": lambda: [self._control() for _ in range(size // 4)],
            "fragmented": lambda: [self._fragmented() for _ in range(size // 8)],
            "violation": self._violations,
        }
        for kind, build in builders.items():
            self.kinds[kind] = build()
        self._flippable = [
            f for f in self.kinds["valid"] + self.kinds["mutated"] if len(f.data) < 600
        ]
        names = [k for k in self.WEIGHTS if k == "bitflip" or self.kinds.get(k)]
        self._names = names
        self._cumulative: list[float] = []
        total = 0.0
        for name in names:
            total += self.WEIGHTS[name]
            self._cumulative.append(total)

    def draw(self, rng: random.Random) -> Frame:
        """One frame, of a kind chosen by :attr:`WEIGHTS`."""
        kind = rng.choices(self._names, cum_weights=self._cumulative)[0]
        if kind == "bitflip":
            return self._bitflip(rng)
        return rng.choice(self.kinds[kind])

    def total_bytes(self) -> int:
        """The pool's size in bytes (it is built once and kept)."""
        return sum(len(f.data) for frames in self.kinds.values() for f in frames)

    # -- builders ---------------------------------------------------------------------------

    def _binary(self, payload: bytes, kind: str, answers: int = 1) -> Frame:
        data, at = client_frame(payload, mask=self._rng.randbytes(4))
        return Frame(data, kind, answers=answers, payload_at=at)

    def _random(self) -> Frame:
        size = self._rng.choice((0, 1, 2, 3, 5, 8, 16, 33, 100, 300, 1000, 4000))
        return self._binary(self._rng.randbytes(size), "random")

    def _truncated(self) -> Frame:
        data = _pack(self._rng.choice(self.real))
        return self._binary(data[: self._rng.randrange(1, len(data))], "truncated")

    def _bombs(self) -> list[Frame]:
        declared = [
            b"\xdd\xff\xff\xff\xff\xc0\xc0\xc0",  # array32 of 4 G items, 3 sent
            b"\xdf\xff\xff\xff\xff\xa1a\xc0",  # map32 of 4 G pairs, 1 sent
            b"\xdb\x7f\xff\xff\xffabc",  # str32 of 2 GiB, 3 bytes sent
            b"\xc6\xff\xff\xff\xff\x00",  # bin32 of 4 GiB
            b"\xc9\xff\xff\xff\xff\x05",  # ext32 of 4 GiB
            b"\xdc\xff\xff" + b"\xc0" * 10,  # array16 of 65,535, 10 sent
            b"\xde\xff\xff\xa1a\x01",  # map16 of 65,535 pairs
            b"\xda\xff\xffabc",  # str16 of 64 KiB
            b"\x9f\xdd\xff\xff\xff\xff",  # a fixarray whose first item is a bomb
        ]
        envelopes = [{"v": 1, "type": t, "id": 9} for t in ("act", "create_match", "chat")]
        frames = []
        for raw in declared:
            frames.append(self._binary(raw, "bomb"))
            for envelope in envelopes:
                for key in ("action", "bots", "text", "name", "versions", "zz_unknown"):
                    frames.append(self._binary(_map_with_raw(envelope, key, raw), "bomb"))
            frames.append(self._binary(b"\x81" + raw + b"\xc0", "bomb"))  # the bomb as a key
        return frames

    def _nested(self) -> list[Frame]:
        frames = []
        for depth in (10, 31, 32, 33, 100, 1000, 10_000, 60_000):
            arrays = b"\x91" * depth + b"\xc0"
            maps = b"\x81\xa1a" * min(depth, 20_000) + b"\xc0"
            for raw in (arrays, maps):
                frames.append(self._binary(raw, "nested"))
                for key in ("action", "bots", "zz_unknown"):
                    envelope = {"v": 1, "type": "act", "id": 3}
                    frames.append(self._binary(_map_with_raw(envelope, key, raw), "nested"))
        return frames

    def _huge(self) -> list[Frame]:
        rng = self._rng
        room = _LIMIT - 200
        frames = []
        for message in self.real:
            for key in [*message, "zz_unknown"]:
                if key in ("v", "type"):
                    continue
                for value in ("x" * room, "\U0001f337" * (room // 4), list(range(room // 3))):
                    payload = _pack({**message, key: value})
                    if len(payload) <= _LIMIT:  # above it, the frame is a violation
                        frames.append(self._binary(payload, "huge"))
        frames += [
            self._binary(_pack({"v": 1, "type": "x" * room}), "huge"),
            self._binary(_pack({"v": 1, "type": "list_matches", "x" * room: 1}), "huge"),
            self._binary(_pack({"v": 1, "type": "hello", "versions": [1] * 60_000}), "huge"),
            self._binary(b"\xdc" + (60_000).to_bytes(2, "big") + b"\xc0" * 60_000, "huge"),
            self._binary(
                _pack({"v": 1, "type": "create_match", "bots": [{"seat": 0}] * 8_000}), "huge"
            ),
            self._binary(
                _pack({"v": 1, "type": "list_matches", "m": {f"k{i}": i for i in range(6_000)}}),
                "huge",
            ),
        ]
        rng.shuffle(frames)
        return [f for f in frames if len(f.data) <= _LIMIT + 14][:120]

    def _mistyped(self) -> list[Frame]:
        frames = []
        for message in self.real:
            for key, value in message.items():
                for wrong in _ZOO:
                    if type(wrong) is not type(value):
                        frames.append(self._binary(_pack({**message, key: wrong}), "mistyped"))
        self._rng.shuffle(frames)
        return frames[:2000]

    def _mutated(self) -> Frame:
        rng = self._rng
        message = dict(rng.choice(self.real))
        for _ in range(rng.randint(1, 3)):
            _mutate(message, rng)
        if rng.random() < 0.15:
            return self._binary(_byte_level(message, rng), "mutated")
        return self._binary(_pack(message), "mutated")

    def _text(self) -> Frame:
        rng = self._rng
        choice = rng.random()
        if choice < 0.5:
            text = json.dumps(rng.choice(self.real), default=_jsonable)
        elif choice < 0.8:
            text = "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(0, 200)))
        else:
            text = ""
        data, at = client_frame(text.encode(), _OP_TEXT, mask=self._rng.randbytes(4))
        return Frame(data, "text", payload_at=at)

    def _control(self) -> Frame:
        rng = self._rng
        opcode = rng.choice((_OP_PING, _OP_PING, _OP_PONG))
        data, _ = client_frame(rng.randbytes(rng.randrange(0, 126)), opcode, mask=rng.randbytes(4))
        return Frame(data, "control", answers=0)

    def _fragmented(self) -> Frame:
        rng = self._rng
        payload = _pack(rng.choice(self.real))
        parts = []
        pieces = rng.randint(2, 12)
        for i, byte in enumerate(payload[:pieces]):
            last = i == min(len(payload), pieces) - 1
            rest = payload[i:] if last else bytes([byte])
            opcode = _OP_BINARY if i == 0 else _OP_CONTINUATION
            parts.append(client_frame(rest, opcode, fin=last, mask=rng.randbytes(4))[0])
            if rng.random() < 0.1 and not last:  # a ping in between is allowed
                parts.append(client_frame(b"p", _OP_PING, mask=rng.randbytes(4))[0])
        return Frame(b"".join(parts), "fragmented", frames=len(parts))

    def _violations(self) -> list[Frame]:
        rng = self._rng
        hello = _pack({"v": 1, "type": "list_matches", "id": 1})
        raw: list[bytes] = [
            client_frame(hello, masked=False)[0],  # clients must mask
            client_frame(hello, rsv=4)[0],  # a reserved bit, no extension agreed
            client_frame(hello, 3)[0],  # a reserved data opcode
            client_frame(hello, 0xB)[0],  # a reserved control opcode
            client_frame(b"x" * 126, _OP_PING)[0],  # a control frame over 125 bytes
            client_frame(b"x", _OP_PING, fin=False)[0],  # a fragmented control frame
            client_frame(hello, _OP_CONTINUATION)[0],  # a continuation of nothing
            client_frame(b"\xff\xfe\xc0\xaf", _OP_TEXT)[0],  # text that is not UTF-8
            client_frame((999).to_bytes(2, "big"), _OP_CLOSE)[0],  # a close code never valid
            client_frame(b"\x03", _OP_CLOSE)[0],  # a close payload of one byte
            client_frame(b"x" * (_LIMIT + 1))[0],  # one byte over the limit
            client_frame(b"x" * 10, length=2**63 - 1)[0],  # declares 8 EiB
            client_frame(b"x" * 10, length=2**32)[0],  # declares 4 GiB
            client_frame(b"x" * 40_000, fin=False)[0]
            + client_frame(b"x" * 40_000, _OP_CONTINUATION)[0],  # fragments over the limit
        ]
        rng.shuffle(raw)
        return [Frame(data, "violation", answers=0, closes=True) for data in raw]

    def _bitflip(self, rng: random.Random) -> Frame:
        frame = rng.choice(self._flippable)
        data = bytearray(frame.data)
        for _ in range(rng.randint(1, 3)):
            if frame.payload_at < len(data):
                data[rng.randrange(frame.payload_at, len(data))] ^= 1 << rng.randrange(8)
        return Frame(bytes(data), "bitflip", payload_at=frame.payload_at)


def _mutate(message: dict[str, Any], rng: random.Random) -> None:
    """Change ``message`` in place, one way chosen at random."""
    keys = list(message)
    how = rng.randrange(8)
    if how == 0 and keys:
        del message[rng.choice(keys)]
    elif how == 1 and keys:
        message[rng.choice(keys)] = rng.choice(_ZOO)
    elif how == 2:
        message[rng.choice(("zz", "x" * 50, "action2", "V", "Type"))] = rng.choice(_ZOO)
    elif how == 3:
        message["type"] = rng.choice([*wire.CLIENT_MESSAGES, *wire.SERVER_MESSAGES, "", "HELLO"])
    elif how == 4:
        message["v"] = rng.choice((0, 2, 999, -1, "1", 1.0, None))
    elif how == 5:
        message["id"] = rng.choice((None, -1, 2**53 + 1, "", "x" * 65, 1.5, True, [1]))
    elif how == 6:
        old = message.get("action")
        action = dict(old) if isinstance(old, dict) else {"kind": "keep"}
        action[rng.choice(("kind", "to_seat", "secret", "extra"))] = rng.choice(
            (*_ZOO, "add_secret", "opening", "give", 5, 6, -1, "purple-9")
        )
        message["action"] = action
    else:
        message[rng.choice(("match", "seat", "name", "text", "from_seq", "token"))] = rng.choice(
            _ZOO
        )


def _byte_level(message: dict[str, Any], rng: random.Random) -> bytes:
    """Mutations the encoder would not make: a key twice, invalid UTF-8, an array."""
    how = rng.randrange(3)
    if how == 0 and 0 < len(message) < 15:
        body = _pack(message)[1:]
        key = rng.choice(list(message))
        return bytes([0x80 | (len(message) + 1)]) + body + _pack(key) + _pack(rng.choice(_ZOO))
    if how == 1:
        data = _pack({**message, "name": "ZZZZ"})
        return data.replace(b"\xa4ZZZZ", b"\xa4\xff\xfe\xc0\xaf")
    return _pack(list(message.values()))


def _jsonable(value: object) -> object:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return repr(value)


#: Every kind a frame may be, in report order.
KINDS: tuple[str, ...] = tuple(Pool.WEIGHTS)
