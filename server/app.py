"""The server: accepts WebSocket connections, says hello, and hands each
request to the lobby, which owns the rooms.

One task per connection: hello under a timeout, then ``async for`` the
frames — decode, rate-limit, dispatch — with one logged top-level ``except``
that closes with 1011, and the player's seat released in ``finally``.
``GET /healthz`` on the same port answers a short JSON status.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import logging
import os
import resource
import time
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

import protocol as wire

from .config import ServerConfig
from .errors import error_for
from .lobby import Lobby
from .peer import Peer
from .ratelimit import TokenBucket
from .storage import Storage

__all__ = ["TulipsServer", "memory_bytes"]

log = logging.getLogger("server")

_RATE_LIMITED = wire.ProtocolError(wire.ErrorCode.RATE_LIMITED, "too many messages; slow down")


def memory_bytes() -> int:
    """This process's resident memory, in bytes."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # not Linux: the peak is the best we have
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class TulipsServer:
    """A running server: ``await start()``, then ``await stop()``."""

    def __init__(self, config: ServerConfig, lobby: Lobby | None = None) -> None:
        self.config = config
        if lobby is None:
            storage = None
            if config.data_dir is not None:
                storage = Storage(config.data_dir, synchronous=config.sync)
            lobby = _new_lobby(config, storage)
        self.lobby = lobby
        self.peers: set[Peer] = set()
        self.started = time.monotonic()
        self._server: Server | None = None
        #: servers on ``config.extra_ports`` (a cluster worker's own port)
        self._extra: list[Server] = []

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Listen, and log where in a line a person can read."""
        await self.lobby.open()
        self._server = await self._listen(self.config.port)
        self._extra = [await self._listen(port) for port in self.config.extra_ports]
        host = self.config.host
        shown = "every interface" if host in ("0.0.0.0", "::", "") else host
        log.info(
            "Gift of Tulips server listening on %s, port %d (ws://%s:%d)",
            shown,
            self.port,
            "localhost" if shown == "every interface" else host,
            self.port,
        )

    async def _listen(self, port: int) -> Server:
        return await serve(
            self._handle,
            self.config.host,
            port,
            process_request=self._http,
            compression=None,  # LAN-sized frames: deflate costs more memory than it saves
            max_size=wire.MAX_FRAME_BYTES,
            max_queue=16,
            ping_interval=self.config.ping_interval,
            ping_timeout=self.config.ping_timeout,
            open_timeout=self.config.hello_timeout,
            server_header=None,
            reuse_port=self.config.reuse_port,
        )

    async def stop(self) -> None:
        """Stop taking actions, tell every client the server is going away, let
        the disk store what was accepted (within ``config.stop_timeout``), and close."""
        if self._server is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.stop_timeout
        self._server.close(close_connections=False)
        for extra in self._extra:
            extra.close(close_connections=False)
        self.lobby.halt()
        await asyncio.gather(
            *(
                peer.flush_and_close(wire.CloseCode.GOING_AWAY, "server shutting down")
                for peer in list(self.peers)
            ),
            return_exceptions=True,
        )
        with contextlib.suppress(TimeoutError):  # a handler whose action waits for the disk
            async with asyncio.timeout_at(deadline):
                servers = [self._server, *self._extra]
                await asyncio.shield(asyncio.gather(*(s.wait_closed() for s in servers)))
        await self.lobby.close(max(0.0, deadline - loop.time()))
        self._server = None

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        assert self._server is not None
        await self._server.serve_forever()

    # -- HTTP ---------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """The status ``/healthz`` reports."""
        return {
            "status": "ok",
            "matches": len(self.lobby.rooms),
            "running": self.lobby.running_count(),
            "connections": len(self.peers),
            "players": len(self.lobby.players),
            "uptime": round(time.monotonic() - self.started, 1),
            "memory_bytes": memory_bytes(),
            **self._cluster_health(),
        }

    def _cluster_health(self) -> dict[str, Any]:
        if self.config.cluster is None:
            return {}
        from .cluster.lobby import ClusterLobby

        return (
            {"cluster": self.lobby.cluster_health()} if isinstance(self.lobby, ClusterLobby) else {}
        )

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path.split("?")[0] == "/healthz":
            body = json.dumps(self.health()).encode()
            headers = Headers(
                [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return Response(200, "OK", headers, body)
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return connection.respond(
                http.HTTPStatus.NOT_FOUND,
                "Gift of Tulips: use a WebSocket client, or GET /healthz\n",
            )
        if len(self.peers) >= self.config.max_connections:
            return connection.respond(http.HTTPStatus.SERVICE_UNAVAILABLE, "server full\n")
        return None

    # -- WebSocket ----------------------------------------------------------------------

    async def _handle(self, connection: ServerConnection) -> None:
        peer = Peer(connection, self.config.max_outbox)
        self.peers.add(peer)
        try:
            if await self._hello(peer):
                await self._serve(peer)
        except ConnectionClosed:
            pass
        except Exception:
            log.exception("connection %r failed", peer)
            await connection.close(wire.CloseCode.INTERNAL_ERROR, "internal error")
        finally:
            self.peers.discard(peer)
            self.lobby.disconnect(peer)
            peer.stop()

    async def _hello(self, peer: Peer) -> bool:
        """Read frames until a hello is welcomed. Every other frame is answered
        with an error; the connection is closed after a closing error, after
        ``max_bad_frames`` errors, or when ``hello_timeout`` has passed since it opened."""
        deadline = asyncio.get_running_loop().time() + self.config.hello_timeout
        bad = 0
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    frame = await peer.connection.recv()
            except TimeoutError:
                await peer.connection.close(wire.CloseCode.HELLO_TIMEOUT, "no hello in time")
                return False
            message: wire.ClientMessage | None = None
            try:
                message = wire.decode_client_message(_as_bytes(frame))
                if not isinstance(message, wire.Hello):
                    raise wire.ProtocolError(wire.ErrorCode.NOT_WELCOME, "say hello first")
                version = wire.negotiate_version(message)
                answer = await self.lobby.hello(peer, message, version)
            except wire.ProtocolError as exc:  # the answer repeats the request's id, if read
                bad += 1
                peer.send(wire.encode(error_for(exc, getattr(message, "id", None))))
                code = wire.close_code_for(exc)
                if code is None and bad >= self.config.max_bad_frames:
                    code = wire.CloseCode.PROTOCOL_VIOLATION
                if code is not None:
                    await peer.flush_and_close(code, _close_reason(exc.message))
                    return False
                continue
            peer.send(wire.encode(answer))
            self.lobby.after_welcome(peer)
            return True

    async def _serve(self, peer: Peer) -> None:
        bucket = TokenBucket(self.config.rate_limit, self.config.rate_burst)
        bad = 0
        closing: asyncio.Task[None] | None = None
        async for frame in peer.connection:
            # Frames already received are handed over without a pause: yield, so the
            # writer drains this client's answers and other connections get their turn.
            await asyncio.sleep(0)
            if closing is not None:
                # Closing: read on and drop what comes, or a flooder's unread frames
                # would stall the close handshake (returning would close with 1000).
                continue
            if not bucket.take():
                peer.send(wire.encode(error_for(_RATE_LIMITED)))
                if bucket.overdrawn():
                    closing = asyncio.create_task(
                        peer.flush_and_close(wire.CloseCode.RATE_LIMITED, "flooding")
                    )
                continue
            try:
                message = wire.decode_client_message(_as_bytes(frame))
            except wire.ProtocolError as exc:
                bad += 1
                peer.send(wire.encode(error_for(exc)))
                code, reason = wire.close_code_for(exc), _close_reason(exc.message)
                if code is None and bad >= self.config.max_bad_frames:
                    code, reason = wire.CloseCode.PROTOCOL_VIOLATION, "too many bad messages"
                if code is not None:  # unsupported_version closes at once (4001)
                    closing = asyncio.create_task(peer.flush_and_close(code, reason))
                continue
            bad = 0  # only bad frames *in a row* end the connection
            await self.lobby.dispatch(peer, message)
        if closing is not None:
            await closing


def _new_lobby(config: ServerConfig, storage: Storage | None) -> Lobby:
    """The one-process lobby or, with ``config.cluster``, a cluster node's
    (imported only then: a single server never imports redis)."""
    if config.cluster is None:
        return Lobby(config, storage=storage)
    from .cluster.lobby import ClusterLobby

    return ClusterLobby(config, storage=storage)


def _as_bytes(frame: str | bytes) -> bytes:
    if isinstance(frame, str):
        raise wire.ProtocolError(
            wire.ErrorCode.BAD_FRAME, "frames are binary MessagePack, not text"
        )
    return frame


def _close_reason(text: str) -> str:
    """``text`` cut to fit a close frame's reason (123 bytes of UTF-8)."""
    return text.encode()[:123].decode(errors="ignore")
