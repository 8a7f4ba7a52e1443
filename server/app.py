"""The server: accepts WebSocket connections, says hello, and hands each
request to the lobby, which owns the rooms.

One task per connection: hello under a timeout, then ``async for`` the
frames — rate-limit, decode, dispatch — with one logged top-level ``except``
that closes with 1011, and the player's seat released in ``finally``.
``GET /healthz`` on the same port answers a short JSON status. With TLS
(:mod:`server.lan.tls`) both are served over it (``wss://``, ``https://``); on a
LAN address the server announces itself while it runs (:mod:`server.lan.discovery`).

No one client can hurt the server: the handshake refuses web pages from
origins the operator has not allowed (403) and an address's connections past
its cap (429); every frame a connection sends, good or bad, spends a token of
its own bucket, and a connection out of tokens is simply not read until it
has one again, so each connection gets its fair share and a flooder is slowed
by TCP itself; what is held for a client that does not read is bounded in
bytes (:mod:`server.peer`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import gc
import http
import ipaddress
import json
import logging
import os
import resource
import sys
import time
from typing import Any

import msgspec
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

import protocol as wire
import protocol.lan as wire_lan
from protocol.tabs import TAB_PASS_HEADER

from .config import ServerConfig
from .errors import error_for, refused
from .lan.discovery import Announcer, announce_addresses, default_instance_name, lobby_announcement
from .lan.tls import TlsSetup, from_config
from .lobby import Lobby
from .peer import Flusher, Peer, TulipsConnection, address_key, client_address
from .ratelimit import KeyedBuckets, Pacer
from .storage import Storage

__all__ = ["RELEASE_AFTER", "TulipsServer", "memory_bytes", "release_memory"]

log = logging.getLogger("server")

_FLOODING = wire.ProtocolError(
    wire.ErrorCode.RATE_LIMITED, "too many messages for too long; closing the connection"
)
#: what a flooder is sent before it is closed with 4008
_FLOODING_FRAME = wire.encode(error_for(_FLOODING))
_FLOOD_CLOSE = (wire.CloseCode.RATE_LIMITED, "flooding")


def memory_bytes() -> int:
    """This process's resident memory, in bytes."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # not Linux: the peak is the best we have
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _find_malloc_trim() -> Any:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_MALLOC_TRIM = _find_malloc_trim()
#: Seconds between two rounds of forgetting unused players.
_HOUSEKEEPING_SECONDS = 3600.0


#: Seconds after a connection ends that the server gives its memory back (once a wave).
RELEASE_AFTER = 5.0
#: Connections that end between two collections of the young generations.
_COLLECT_AFTER_DEPARTURES = 16


def release_memory() -> None:
    """Collect what departed connections left in reference cycles, then hand
    the heap's free pages back to the system (glibc's ``malloc_trim``).

    The server collects the old generations rarely (see ``tune_gc`` in
    server/cli.py), and glibc keeps the heap it grew for a burst of large
    buffers until told to give it back; elsewhere the trim does nothing.
    Called at most once per wave of departures.
    """
    gc.collect()  # what departed connections left in reference cycles, first
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


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
        #: writes out the peers that queued frames, once per turn of the event loop
        self._flusher = Flusher()
        #: connections past the handshake's checks whose socket is still open, by address
        self.addresses: collections.Counter[str] = collections.Counter()
        #: the browser front's live tabs: their pass -> (browser address, the front's
        #: own address); a loopback connection with a live pass counts as that
        #: address for every per-address limit (see :meth:`address_of`)
        self.tab_addresses: dict[str, tuple[str, str | None]] = {}
        #: the address each open connection counts as, fixed at its handshake
        self._counted_as: dict[ServerConnection, str] = {}
        self.started = time.monotonic()
        self._server: Server | None = None
        #: the TLS the server serves with (None: plain ws://), set by start()
        self.tls: TlsSetup | None = None
        #: the LAN announcement while it runs (None: not announced)
        self.announcer: Announcer | None = None
        self._release: asyncio.TimerHandle | None = None
        #: seconds after a connection ends that its memory is given back (RELEASE_AFTER)
        self.release_after = RELEASE_AFTER
        self._departed = 0  #: connections ended since the last young collection
        self._housekeeping: asyncio.Task[None] | None = None
        per_minute = config.new_players_per_minute
        self._new_players = KeyedBuckets(per_minute / 60, max(1, int(per_minute)))
        #: servers on ``config.extra_ports`` (a cluster worker's own port)
        self._extra: list[Server] = []

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Listen, and log where in a line a person can read (raises
        :class:`~server.tls.TlsError` for an unusable certificate or key)."""
        self.tls = from_config(self.config)
        self.lobby.fingerprint = self.tls.fingerprint if self.tls is not None else None
        await self.lobby.open()
        self._housekeeping = asyncio.get_running_loop().create_task(self._forget_players())
        self._server = await self._listen(self.config.port)
        self._extra = [await self._listen(port) for port in self.config.extra_ports]
        host = self.config.host
        shown = "every interface" if host in ("0.0.0.0", "::", "") else host
        log.info(
            "Gift of Tulips server listening on %s, port %d (%s://%s:%d)",
            shown,
            self.port,
            "ws" if self.tls is None else "wss",
            "localhost" if shown == "every interface" else host,
            self.port,
        )
        if self.tls is not None:
            log.info("TLS certificate fingerprint %s", self.tls.fingerprint)
        await self._announce()

    async def _listen(self, port: int) -> Server:
        return await serve(
            self._handle,
            self.config.host,
            port,
            process_request=self._http,
            compression=None,  # LAN-sized frames: deflate costs more memory than it saves
            max_size=wire.MAX_FRAME_BYTES,
            # Frames read ahead of the one being handled: a client held back by its
            # rate limit fills these, then TCP stops it (at most 4 x 64 KiB each).
            max_queue=4,
            close_timeout=self.config.close_timeout,
            create_connection=TulipsConnection,
            ping_interval=self.config.ping_interval,
            ping_timeout=self.config.ping_timeout,
            open_timeout=self.config.hello_timeout,
            server_header=None,
            ssl=self.tls.context if self.tls is not None else None,
            reuse_port=self.config.reuse_port,
        )

    async def _announce(self) -> None:
        """Announce on the LAN, on the interfaces listened on: none for loopback."""
        addresses = announce_addresses(self.config.host) if self.config.announce else []
        if not addresses:
            return
        tls = self.tls

        def status() -> wire_lan.Announcement:
            players = len({peer.player for peer in self.peers if peer.player is not None})
            fingerprint = tls.fingerprint if tls is not None else None
            matches = self.lobby.infos()
            return lobby_announcement(
                matches, players, fingerprint=fingerprint, tls=tls is not None
            )

        self.announcer = Announcer(
            name=self.config.announce_name or default_instance_name(),
            port=self.port,
            addresses=addresses,
            status=status,
        )
        await self.announcer.start()

    async def stop(self) -> None:
        """Stop taking requests, tell every client the server is going away, let
        the disk store what was accepted and close the database, and end.

        The disk and the clients each have ``config.stop_timeout`` seconds, side
        by side: a client that does not answer the close (a frozen machine) is
        cut off then, and never spends the disk's time. The log says what, if
        anything, was waited for.
        """
        if self._server is None:
            return
        if self.announcer is not None:  # first, so nobody is sent to a closing server
            await self.announcer.stop()
            self.announcer = None
        loop = asyncio.get_running_loop()
        started = loop.time()
        budget = self.config.stop_timeout
        self._server.close(close_connections=False)
        for extra in self._extra:
            extra.close(close_connections=False)
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            self._housekeeping = None
        self.lobby.halt()
        storing = loop.create_task(self._close_storage(budget))
        unanswered = await self._close_connections(budget)
        await storing
        for server in [*self._extra, self._server]:
            with contextlib.suppress(TimeoutError):  # every handler ends once its socket is gone
                async with asyncio.timeout(1.0):
                    await server.wait_closed()
        if self._release is not None:
            self._release.cancel()
            self._release = None
        self._server = None
        took = loop.time() - started
        if unanswered:
            log.warning(
                "stopped in %.1f s: %d client(s) did not answer the close and were cut off"
                " after %.1f s: %s",
                took,
                len(unanswered),
                budget,
                ", ".join(unanswered[:5]) + (" …" if len(unanswered) > 5 else ""),
            )
        else:
            log.info("stopped in %.2f s", took)

    async def _close_connections(self, budget: float) -> list[str]:
        """Close every connection with 1001, each within ``budget`` seconds;
        those that did not answer in time (cut off), as a log line names them."""
        peers = list(self.peers)
        if not peers:
            return []
        closes = [
            asyncio.ensure_future(
                peer.flush_and_close(wire.CloseCode.GOING_AWAY, "server shutting down")
            )
            for peer in peers
        ]
        _, pending = await asyncio.wait(closes, timeout=budget)
        unanswered = []
        for peer, close in zip(peers, closes, strict=True):
            if close in pending:
                close.cancel()
                unanswered.append(repr(peer))
                if peer.connection.transport is not None:
                    peer.connection.transport.abort()
        if pending:
            await asyncio.wait(pending, timeout=1.0)
        return unanswered

    async def _close_storage(self, budget: float) -> None:
        """Let every match finish what it was given and the disk its writes
        (within ``budget`` s), then close the database; log what waited."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        await self.lobby.close(budget)
        took = loop.time() - started
        if took >= 0.5:
            log.info("the matches and the disk took %.1f s to finish their writes", took)

    async def _forget_players(self) -> None:
        """Every hour, forget the players unused for ``forget_players_after``."""
        while True:
            try:
                await self.lobby.forget_players(time.time() - self.config.forget_players_after)
            except Exception:  # storage trouble: try again next time
                log.exception("could not forget unused players")
            await asyncio.sleep(_HOUSEKEEPING_SECONDS)

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        assert self._server is not None
        await self._server.serve_forever()

    # -- HTTP ---------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """The status ``/healthz`` reports."""
        return {
            "status": "ok",
            "matches": len(self.lobby.matches),
            "running": self.lobby.running_count(),
            "connections": len(self.peers),
            "outbound_bytes": sum(peer.held for peer in self.peers),
            "players": len(self.lobby.players),
            "uptime": round(time.monotonic() - self.started, 1),
            "memory_bytes": memory_bytes(),
            # objects Python holds (blocks of its small-object allocator): what is
            # live, whatever the allocator keeps of the memory freed since
            "python_blocks": sys.getallocatedblocks(),
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
        refusal = self._refusal(connection, request)
        if refusal is not None:
            self._counted_as.pop(connection, None)
            return refusal
        self._admit(connection)
        return None

    def _refusal(self, connection: ServerConnection, request: Request) -> Response | None:
        """Why this WebSocket handshake is refused, as an HTTP response; None to accept."""
        origins = request.headers.get_all("Origin")
        if origins and (len(origins) > 1 or not self._origin_allowed(origins[0])):
            log.info("refused a web page's connection from origin %r", origins[0][:100])
            return connection.respond(
                http.HTTPStatus.FORBIDDEN,
                "this server does not take connections from this web page "
                "(its operator can allow it with --allow-origin)\n",
            )
        if self.addresses.total() >= self.config.max_connections:
            return connection.respond(http.HTTPStatus.SERVICE_UNAVAILABLE, "server full\n")
        address = self.address_of(connection)
        held = self.addresses[address]
        if held >= self.config.max_connections_per_address and self.config.limits_address(address):
            log.warning("refused a connection from %s: it holds too many already", address)
            return connection.respond(
                http.HTTPStatus.TOO_MANY_REQUESTS, "too many connections from your address\n"
            )
        return None

    def address_of(self, connection: ServerConnection) -> str:
        """The client's address as the per-address limits count it: a browser
        tab's own (``tab_addresses``) for a loopback connection that shows a
        live pass of the browser front (``Tulips-Tab-Pass``), else its peer's.
        Decided once, at the handshake: it is the same for all the
        connection's life, even if its tab's pass goes meanwhile."""
        counted = self._counted_as.get(connection)
        if counted is None:
            counted = self._counted_as[connection] = self._address_now(connection)
        return counted

    def _address_now(self, connection: ServerConnection) -> str:
        address = client_address(connection, self.config.ipv6_prefix)
        request = connection.request
        if request is None or not _is_loopback_peer(connection):
            return address  # from elsewhere the header is not believed
        passes = request.headers.get_all(TAB_PASS_HEADER)
        tab = self.tab_addresses.get(passes[0]) if len(passes) == 1 else None
        if tab is None:
            return address
        return address_key(tab[0], tab[1], self.config.ipv6_prefix)

    def _origin_allowed(self, origin: str) -> bool:
        allowed = self.config.allowed_origins
        return "*" in allowed or _origin_key(origin) in {_origin_key(o) for o in allowed}

    def _admit(self, connection: ServerConnection) -> None:
        """Count the connection against its address until its socket closes."""
        address = self.address_of(connection)
        self.addresses[address] += 1

        def release(_: object) -> None:
            self._counted_as.pop(connection, None)
            self.addresses[address] -= 1
            if self.addresses[address] <= 0:
                del self.addresses[address]

        # Set once, when the socket is gone: whether the handshake then succeeds or not.
        connection.connection_lost_waiter.add_done_callback(release)

    # -- WebSocket ----------------------------------------------------------------------

    async def _handle(self, connection: ServerConnection) -> None:
        config = self.config
        peer = Peer(
            connection,
            config.max_outbox_bytes,
            write_timeout=config.write_timeout,
            close_timeout=config.close_timeout,
            flusher=self._flusher,
            ipv6_prefix=config.ipv6_prefix,
        )
        peer.address = self.address_of(connection)  # a browser tab counts as its browser
        # The handshake's headers (about 3 KiB) are read by nothing past here, and
        # a connection holds them for all its life: websockets' parser keeps the
        # request it parsed in its generator's frame (ServerProtocol.parse), so a
        # new Request would not free them; they are emptied in place. websockets
        # reads a request of None as "the handshake is yet to come": the path stays.
        if connection.request is not None:
            connection.request.headers.clear()
        connection.response = None
        self.peers.add(peer)
        # Every frame counts against one budget: messages (in _serve), and pings
        # and pongs, which websockets answers by itself, from the first frame on.
        pacer = Pacer(config.rate_limit, config.rate_burst)
        if isinstance(connection, TulipsConnection):
            connection.pace(pacer, lambda: peer.fail(_FLOODING_FRAME, *_FLOOD_CLOSE))
        try:
            if await self._hello(peer):
                await self._serve(peer, pacer)
        except ConnectionClosed:
            pass
        except Exception:
            log.exception("connection %r failed", peer)
            peer.close(wire.CloseCode.INTERNAL_ERROR, "internal error")
        finally:
            self.peers.discard(peer)
            self.lobby.disconnect(peer)
            if peer.player is not None:
                peer.player.last_seen = time.time()
            peer.stop()
            await peer.finish()  # bounded: a client that never reads is cut off
            self._departed += 1
            if self._departed >= _COLLECT_AFTER_DEPARTURES:
                # a closed connection leaves reference cycles (its transport, the
                # exceptions that ended it); young ones go now, not at the next
                # collection the allocation count calls for, so a stream of
                # connections that come and go does not pile them up
                self._departed = 0
                gc.collect(1)
            if self._release is None:
                self._release = asyncio.get_running_loop().call_later(
                    self.release_after, self._release_memory
                )

    def _release_memory(self) -> None:
        """A while after clients left (once for a whole wave): what they sent and
        were sent, large frames included, grew the heap."""
        self._release = None
        release_memory()

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
                await peer.flush_and_close(wire.CloseCode.HELLO_TIMEOUT, "no hello in time")
                return False
            message: wire.ClientMessage | None = None
            try:
                message = wire.decode_client_message(_as_bytes(frame))
                if not isinstance(message, wire.Hello):
                    raise wire.ProtocolError(wire.ErrorCode.NOT_WELCOME, "say hello first")
                version = wire.negotiate_version(message)
                self._check_new_player(peer, message)
                answer = await self.lobby.hello(peer, message, version)
            except wire.ProtocolError as exc:  # the answer repeats the request's id, if read
                bad += 1
                peer.send(wire.encode(error_for(exc, getattr(message, "id", None))))
                code = wire.close_code_for(exc)
                if code is None and bad >= self.config.max_bad_frames:
                    code = wire.CloseCode.PROTOCOL_VIOLATION
                if code is not None:
                    await peer.flush_and_close(code, exc.message)  # cut to fit by the peer
                    return False
                continue
            features = wire.negotiate_features(message)
            if features:
                answer = msgspec.structs.replace(answer, features=features)
            peer.send(wire.encode(answer))
            if "batch" in features:
                peer.start_batching()
            await self.lobby.after_welcome(peer)
            return True

    def _check_new_player(self, peer: Peer, hello: wire.Hello) -> None:
        """A hello without a token makes an identity: only so many per address."""
        if hello.token is not None or hello.link is not None:
            return
        if not self.config.limits_address(peer.address):
            return
        if not self._new_players.take(peer.address):
            raise refused(
                wire.ErrorCode.RATE_LIMITED,
                "this address has made too many new players; "
                "say hello with your token, or try again in a minute",
            )

    async def _serve(self, peer: Peer, pacer: Pacer) -> None:
        bad = 0
        async for frame in peer.connection:
            if peer.closing:  # being closed (replaced, too slow): what it sends is moot
                return
            peer.received += 1
            if not await pacer.admit():  # every frame counts, good or bad
                peer.send(_FLOODING_FRAME)
                # Read no more: parsing the backlog of a flood to find its close
                # frame would cost more than letting the close time out.
                await peer.flush_and_close(*_FLOOD_CLOSE)
                return
            try:
                message = wire.decode_client_message(_as_bytes(frame))
            except wire.ProtocolError as exc:
                bad += 1
                peer.send(wire.encode(error_for(exc)))
                code, reason = wire.close_code_for(exc), exc.message
                if code is None and bad >= self.config.max_bad_frames:
                    code, reason = wire.CloseCode.PROTOCOL_VIOLATION, "too many bad messages"
                if code is not None:  # unsupported_version closes at once (4001)
                    await peer.flush_and_close(code, reason)
                    return
                continue
            bad = 0  # only bad frames *in a row* end the connection
            await self.lobby.dispatch(peer, message)


def _is_loopback_peer(connection: ServerConnection) -> bool:
    """Whether the connection comes from this machine's loopback (its raw peer)."""
    remote = connection.remote_address
    try:
        ip = ipaddress.ip_address(str(remote[0]).split("%")[0]) if remote else None
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip is not None and ip.is_loopback


def _origin_key(origin: str) -> str:
    """An origin as compared: scheme and host are case-insensitive, no trailing slash."""
    return origin.strip().rstrip("/").lower()


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
