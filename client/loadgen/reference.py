"""The reference server: the physical limit of websockets + MessagePack on this machine.

``python -m client.loadgen.reference --port 8766`` runs a server that speaks just
enough of PROTOCOL.md for ``tulips-loadtest``'s clients (hello, create_match,
join, start, act, play_again; ``GET /healthz``) and has no game at all: it
reads each request as a bare MessagePack map and answers with frames encoded
once at start. ``tulips-loadtest reference`` runs it under the same client
load as the real server, so that the game server's figures are printed as
ratios to what this stack can do at best on the same machine at the same time.

What it sends is shaped like what the real server sends in a 4-player match
(measured on standard matches of random legal actions: 60 actions, per action
about 12.6 frames and 1.2 KB in all):

- per action: ``ok`` to the actor; to every member of the group 2 or 3 event
  frames in turn (2.5 on average, as the real server sends) of real events
  (70–120 bytes); a prompt (146 bytes) to the next seat in turn;
- per match: ``ok`` to ``start``, a 4-player snapshot (about 590 bytes) and
  two match updates to every member; after :data:`MATCH_ACTIONS` actions the
  final scoring to everyone instead of a prompt, and two match updates more;
  on the first ``play_again`` a rematch offer to the others; on each
  ``play_again`` ``joined`` and a match update to the asker, a match update to
  the others.

Each member's frames for one request leave in one write to its socket (one
system call) and, for a client whose hello asked for ``batch`` (the SDK's
do), as one ``batch`` frame, as the game's server sends them: the best this
stack can do, which is what the reference is for.
There is no flow control and no validation beyond the map's ``type`` and
``id``; it is a measuring stick for loopback benchmarks, not a server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http
import itertools
import json
import os
import signal
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

import protocol as wire
from protocol import examples

__all__ = [
    "MATCH_ACTIONS",
    "ReferenceServer",
    "main",
    "run_with_loop",
    "serve_reference",
    "write_frames",
]

#: Actions in one reference match: as many as a standard 4-player match has.
MATCH_ACTIONS = 60


def _frame(message: wire.Message) -> bytes:
    return wire.encode(message)


def _event_frames() -> list[bytes]:
    """One encoded ``event`` frame per example event a player sees during turns."""
    frames = []
    for kind in ("turn_started", "card_drawn", "card_given", "card_kept", "card_added_secret"):
        for _who, event in examples.EVENT_EXAMPLES[kind]:
            frames.append(_frame(wire.Event(match=examples.MATCH, seq=80, event=event)))
    return frames


_WELCOME = examples.SERVER_EXAMPLES["welcome"]
_EVENTS = _event_frames()
_PROMPT = _frame(examples.PROMPT_4P)
_SNAPSHOT = _frame(examples.SNAPSHOT_4P)
_MATCH_UPDATE = _frame(examples.SERVER_EXAMPLES["match_update"])
_MATCH_ENDED = _frame(
    wire.Event(
        match=examples.MATCH,
        seq=81,
        event=examples.EVENT_EXAMPLES["match_ended"][0][1],
    )
)
_REMATCH_OFFER = _frame(examples.SERVER_EXAMPLES["rematch"])

_decode = msgspec.msgpack.Decoder().decode


def write_frames(connection: ServerConnection, frames: Sequence[bytes]) -> None:
    """Send ``frames`` as binary messages in one write to the socket.

    asyncio's ``transport.write()`` sends at once when its buffer is empty, so
    frames written one by one are one system call each; joined they are one.
    A connection that is no longer open is skipped.
    """
    protocol = connection.protocol
    if protocol.state is not State.OPEN or not frames:
        return
    for frame in frames:
        protocol.send_binary(frame)
    connection.transport.write(b"".join(protocol.data_to_send()))


@dataclass(eq=False)
class _Group:
    """A table: its members in seat order, whose turn it is, actions so far."""

    id: str
    members: list[ServerConnection] = field(default_factory=list)
    turn: int = 0
    actions: int = 0
    #: the rematch of the finished match has been offered to the others
    offered: bool = False


class ReferenceServer:
    """Groups of connections and the canned frames they receive."""

    def __init__(self) -> None:
        self.groups: dict[str, _Group] = {}
        self._ids = itertools.count(1)
        self._group_of: dict[ServerConnection, _Group] = {}
        #: the connections whose hello asked for ``batch``: what one request
        #: causes for them leaves as one frame, as the real server sends it
        self._batching: set[ServerConnection] = set()

    def _write(self, connection: ServerConnection, frames: Sequence[bytes]) -> None:
        batching = connection in self._batching
        write_frames(connection, wire.batch_frames(frames) if batching else frames)

    async def handle(self, connection: ServerConnection) -> None:
        """Answer one connection's requests until it closes."""
        try:
            async for data in connection:
                try:
                    if isinstance(data, str):
                        raise TypeError("a text frame")
                    request = _decode(data)
                    kind = request["type"]
                except (msgspec.DecodeError, TypeError, KeyError):
                    self._write(connection, [_error(None, "not a MessagePack map with a type")])
                    continue
                self._answer(connection, kind, request)
        except ConnectionClosed:
            pass
        finally:
            self._batching.discard(connection)
            group = self._group_of.pop(connection, None)
            if group is not None and connection in group.members:
                group.members.remove(connection)
                if not group.members:
                    self.groups.pop(group.id, None)

    def _answer(self, connection: ServerConnection, kind: object, request: Any) -> None:
        request_id = request.get("id")
        group = self._group_of.get(connection)
        if kind == "act" and group is not None:
            self._act(connection, group, request_id)
        elif kind == "hello":
            number = next(self._ids)
            batching = "batch" in (request.get("features") or ())
            welcome = msgspec.structs.replace(
                _WELCOME,
                id=request_id,
                player=f"p{number}",
                token=f"t{number}",
                features=("batch",) if batching else (),
            )
            write_frames(connection, [_frame(welcome)])
            if batching:
                self._batching.add(connection)
        elif kind == "create_match":
            group = _Group(f"r{next(self._ids)}")
            self.groups[group.id] = group
            self._seat(connection, group, request_id)
        elif kind == "join":
            found = self.groups.get(str(request.get("match")))
            if found is None:
                self._write(connection, [_error(request_id, "no such match")])
            else:
                self._seat(connection, found, request_id)
        elif kind == "start" and group is not None:
            group.turn = group.actions = 0
            group.offered = False
            self._write(connection, [_ok(request_id)])
            for index, member in enumerate(group.members):
                frames = [_SNAPSHOT, _MATCH_UPDATE, _MATCH_UPDATE]
                if index == group.turn:
                    frames.append(_PROMPT)
                self._write(member, frames)
        elif kind == "play_again" and group is not None:
            seat = group.members.index(connection)
            self._write(connection, [_joined(request_id, group, seat), _MATCH_UPDATE])
            for member in group.members:
                if member is not connection:
                    frames = [_MATCH_UPDATE] if group.offered else [_REMATCH_OFFER, _MATCH_UPDATE]
                    self._write(member, frames)
            group.offered = True
        else:
            self._write(connection, [_ok(request_id)])

    def _seat(self, connection: ServerConnection, group: _Group, request_id: Any) -> None:
        group.members.append(connection)
        self._group_of[connection] = group
        self._write(connection, [_joined(request_id, group, len(group.members) - 1)])

    def _act(self, connection: ServerConnection, group: _Group, request_id: Any) -> None:
        """One action: ``ok``, its events to everyone, then the next prompt (or the end)."""
        group.actions += 1
        count = 2 + group.actions % 2
        start = (group.actions * 3) % len(_EVENTS)
        events = [_EVENTS[(start + i) % len(_EVENTS)] for i in range(count)]
        over = group.actions >= MATCH_ACTIONS
        group.turn = (group.turn + 1) % len(group.members)
        for index, member in enumerate(group.members):
            frames = [_ok(request_id), *events] if member is connection else list(events)
            if over:
                frames += [_MATCH_ENDED, _MATCH_UPDATE, _MATCH_UPDATE]
            elif index == group.turn:
                frames.append(_PROMPT)
            self._write(member, frames)

    def health(self, connection: ServerConnection, request: Request) -> Response | None:
        """``GET /healthz``: the same JSON fields the load generator reads."""
        if request.path.split("?")[0] != "/healthz":
            return None
        body = json.dumps(
            {
                "status": "ok",
                "connections": len(self._group_of),
                "matches": len(self.groups),
                "memory_bytes": _memory_bytes(),
            }
        ).encode()
        headers = Headers(
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        )
        return Response(http.HTTPStatus.OK, "OK", headers, body)


def _ok(request_id: Any) -> bytes:
    return _frame(wire.Ok(id=request_id))


def _joined(request_id: Any, group: _Group, seat: int) -> bytes:
    return _frame(wire.Joined(id=request_id, match=group.id, seat=seat, host=seat == 0))


def _error(request_id: Any, text: str) -> bytes:
    return _frame(wire.Error(id=request_id, code="bad_message", message=text))


def _memory_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def run_with_loop(main: Coroutine[Any, Any, None], loop: str = "asyncio") -> None:
    """Run ``main`` on asyncio's own event loop or on uvloop's (installed by the
    optional extra ``gift-of-tulips[uvloop]``)."""
    if loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            raise SystemExit("--loop uvloop: pip install 'gift-of-tulips[uvloop]' first") from None
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main)
    else:
        asyncio.run(main)


async def serve_reference(host: str, port: int) -> None:
    """Serve until SIGTERM or SIGINT."""
    reference = ReferenceServer()
    stop = asyncio.get_running_loop().create_future()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set_result, None)
    async with serve(
        reference.handle,
        host,
        port,
        process_request=reference.health,
        compression=None,
        max_size=wire.MAX_FRAME_BYTES,
        server_header=None,
    ):
        await stop


def main(argv: list[str] | None = None) -> int:
    """``python -m client.loadgen.reference``: run the reference server."""
    parser = argparse.ArgumentParser(
        prog="python -m client.loadgen.reference",
        description="A bare websockets + MessagePack server with no game in it: it answers "
        "what tulips-loadtest's clients send with frames of the sizes and number the real "
        "server sends, the limit of this stack that 'tulips-loadtest reference' compares with.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, required=True, help="port to listen on")
    parser.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="the event loop (uvloop: the optional extra gift-of-tulips[uvloop])",
    )
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        run_with_loop(serve_reference(args.host, args.port), args.loop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
