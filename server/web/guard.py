"""The web port's door: how many connections, from whom, and for how long.

aiohttp accepts every connection and waits as long as its keep-alive timeout
(an hour by default) for a request head; it has no header timeout and no cap
per address (aio-libs/aiohttp#13681 only starts the keep-alive timer at
connect). Issue 29: 2,169 half-open requests from one address held the web
port for good and took the descriptors the game port needed. So the web port
listens through :class:`GuardedSite`, whose every connection is first a
:class:`ConnectionGuard`'s, before aiohttp sees a byte:

- one address (counted as :func:`server.peer.address_key` counts it) holds at
  most ``per_address`` connections, the whole port at most
  ``max_connections``, and a connection is never taken from the last
  ``fd_reserve`` descriptors of the process (they are the game port's): one
  past any of these is closed at once (plain HTTP is told 429 or 503 first);
- a connection's first request head must have arrived ``header_timeout``
  seconds after it was accepted, TLS handshake included, or it is closed;
  after that, aiohttp's keep-alive timeout (``keepalive_timeout``) closes it when
  it has sent no new request that long after the last response, and whatever
  it does, it is closed ``lifetime`` seconds after it was accepted (a body sent
  a byte a minute, a response read as slowly). Only an upgraded WebSocket
  (:func:`mark_upgraded`) lives as long as it plays;
- each of these conditions is logged once when it starts and once when it
  ends (:mod:`server.logcalm`), never once per connection.

TLS is done here, with ``loop.start_tls`` after the connection is counted, so
a handshake that never comes counts too.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from ..fdguard import fd_limit
from ..logcalm import Episodes
from ..peer import address_key

__all__ = ["Admission", "ConnectionGuard", "GuardLimits", "GuardedSite", "mark_upgraded"]

log = logging.getLogger("server.web.guard")

#: Seconds without a refusal (of one kind, for one address) that end its log episode.
QUIET = 30.0
#: Connections the web port's listening socket queues. asyncio accepts as many
#: in one turn of the loop, and a refused one is closed three turns later (its
#: task, its ``connection_made``, its ``connection_lost``): a burst holds up to
#: three backlogs at once, so the descriptor reserve is four.
BACKLOG = 32

_RESPONSES = {
    "address": b"HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 40\r\n\r\n"
    b"too many connections from your address\r\n",
    "full": b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 26\r\n\r\n"
    b"the web port is too busy\r\n",
}


@dataclass(frozen=True, slots=True)
class GuardLimits:
    """The web port's limits (``tulips-server --web-*`` flags)."""

    #: connections one address may hold on the web port (a browser opens up to
    #: six per server, plus one WebSocket per tab)
    per_address: int = 32
    #: connections the web port holds at once, from everyone
    max_connections: int = 256
    #: seconds from accepting a connection to its first request head (TLS included)
    header_timeout: float = 10.0
    #: seconds a connection may wait with no request after the last response
    keepalive_timeout: float = 15.0
    #: seconds a connection lives, whatever it does, unless it is a WebSocket
    lifetime: float = 60.0
    #: descriptors the web port never takes: a connection whose descriptor is
    #: among the process's last ``fd_reserve`` is closed at once (four times the
    #: listening socket's backlog, see :data:`BACKLOG`)
    fd_reserve: int = 4 * BACKLOG
    #: how IPv6 clients are counted (``--ipv6-prefix``)
    ipv6_prefix: int = 64

    def __post_init__(self) -> None:
        for name in ("per_address", "max_connections"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("header_timeout", "keepalive_timeout", "lifetime"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be more than 0 seconds")


class Admission:
    """The web port's connections, counted by address: who may have one more.

    No I/O: :meth:`admit` is told the address and the descriptor's number,
    which on POSIX is the lowest free one, so a number within ``fd_reserve`` of
    the limit means the process is nearly out of descriptors.
    """

    def __init__(self, limits: GuardLimits, fd_limit: int) -> None:
        self.limits = limits
        self.fd_limit = fd_limit
        self.by_address: Counter[str] = Counter()
        self.total = 0

    def admit(self, address: str, fileno: int) -> str | None:
        """Count a connection from ``address``; or why not (``address``,
        ``full``, ``reserve``), and then it is not counted."""
        if self.by_address[address] >= self.limits.per_address:
            return "address"
        if self.total >= self.limits.max_connections:
            return "full"
        if fileno >= self.fd_limit - self.limits.fd_reserve:
            return "reserve"
        self.by_address[address] += 1
        self.total += 1
        return None

    def release(self, address: str) -> None:
        """A counted connection from ``address`` has closed."""
        self.total -= 1
        self.by_address[address] -= 1
        if self.by_address[address] <= 0:
            del self.by_address[address]


def _host(address: Any) -> str | None:
    """A socket address's host, with its interface (``fe80::1%3``) when it has one."""
    if not isinstance(address, tuple) or not address:
        return None
    host = str(address[0])
    if len(address) == 4 and address[3] and "%" not in host:
        return f"{host}%{address[3]}"
    return host


class ConnectionGuard:
    """Counts, times and logs the web port's connections; one per :class:`GuardedSite`.

    :meth:`install` adds its middleware to the aiohttp application (it marks
    when a connection's request head has arrived); :meth:`factory` wraps
    aiohttp's protocol factory.
    """

    def __init__(
        self,
        limits: GuardLimits | None = None,
        *,
        fd_limit: Callable[[], int] = fd_limit,
        quiet: float = QUIET,
    ) -> None:
        self.limits = limits if limits is not None else GuardLimits()
        self.admission = Admission(self.limits, fd_limit())
        self.episodes: Episodes[tuple[str, str]] = Episodes(quiet)
        self._connections: set[_Guarded] = set()
        self._by_transport: dict[asyncio.BaseTransport, _Guarded] = {}
        self._settle: asyncio.TimerHandle | None = None

    @property
    def open(self) -> int:
        """Connections the guard holds (counted, not yet closed)."""
        return self.admission.total

    def install(self, app: web.Application) -> None:
        """Add the guard's middleware to ``app`` (before it starts)."""
        app.middlewares.append(self._middleware)
        app[_GUARD] = self

    def upgraded(self, request: web.BaseRequest) -> None:
        """``request``'s connection is now a WebSocket: no lifetime for it."""
        transport = request.transport
        guarded = self._by_transport.get(transport) if transport is not None else None
        if guarded is not None:
            guarded.upgraded()

    def factory(
        self, inner: Callable[[], asyncio.Protocol], tls: ssl.SSLContext | None
    ) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server``, guarding ``inner``'s."""
        return lambda: _Guarded(self, inner, tls)

    def close_all(self) -> None:
        """Drop the connections aiohttp was never given (the site is stopping;
        aiohttp closes its own)."""
        for connection in list(self._connections):
            if not connection.serving:
                connection.abort()
        if self._settle is not None:
            self._settle.cancel()
            self._settle = None

    @web.middleware
    async def _middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        transport = request.transport
        guarded = self._by_transport.get(transport) if transport is not None else None
        if guarded is not None:
            guarded.head_arrived()
        return await handler(request)

    # -- what the connections tell the guard ----------------------------------------------

    def _admit(self, connection: _Guarded, address: str, fileno: int) -> str | None:
        refusal = self.admission.admit(address, fileno)
        if refusal is None:
            self._connections.add(connection)
        else:
            self._event(refusal, address)
        return refusal

    def _release(self, connection: _Guarded) -> None:
        if connection in self._connections:
            self._connections.discard(connection)
            self.admission.release(connection.address)
        if connection.transport is not None:
            self._by_transport.pop(connection.transport, None)

    def _serving(self, connection: _Guarded, transport: asyncio.BaseTransport) -> None:
        self._by_transport[transport] = connection

    def _event(self, kind: str, address: str) -> None:
        """A refusal or a timeout: logged when its episode starts."""
        loop = asyncio.get_running_loop()
        # the port's own conditions are one episode whoever meets them; a cap's, one per address
        key = (kind, address if kind in ("address", "timeout", "lifetime") else "")
        if not self.episodes.hit(key, loop.time()):
            return
        limits = self.limits
        if kind == "address":
            log.warning(
                "web port: %s holds %d connections, the most one address may; "
                "closing its new ones at once (--web-max-connections-per-address)",
                address,
                limits.per_address,
            )
        elif kind == "full":
            log.warning(
                "web port: %d connections open, the most it holds; closing new ones at once "
                "(--web-max-connections); the latest came from %s",
                limits.max_connections,
                address,
            )
        elif kind == "reserve":
            log.warning(
                "web port: this process is within %d of its %d file descriptors; "
                "closing new web connections at once, to keep those for the game port",
                limits.fd_reserve,
                self.admission.fd_limit,
            )
        elif kind == "lifetime":
            log.warning(
                "web port: closing connections from %s still open %.0f s after they came, "
                "not WebSockets (--web-connection-lifetime)",
                address,
                limits.lifetime,
            )
        else:
            log.warning(
                "web port: closing connections from %s that sent no request in %.0f s "
                "(--web-header-timeout)",
                address,
                limits.header_timeout,
            )
        if self._settle is None:
            self._settle = loop.call_later(self.episodes.quiet / 2, self._settle_episodes)

    def _settle_episodes(self) -> None:
        loop = asyncio.get_running_loop()
        self._settle = None
        for episode in self.episodes.settle(loop.time()):
            kind, address = episode.key
            what = {
                "address": f"past the cap of {address}",
                "full": "with the web port full",
                "reserve": "to keep descriptors for the game port",
                "timeout": f"from {address} for sending no request in time",
                "lifetime": f"from {address} for outliving their lifetime",
            }[kind]
            log.info(
                "web port: closed %d connection(s) %s over %.0f s; that has stopped",
                episode.events,
                what,
                episode.duration,
            )
        if self.episodes:
            self._settle = loop.call_later(self.episodes.quiet / 2, self._settle_episodes)


class _Guarded(asyncio.Protocol):
    """One connection to the web port: counted and timed, then aiohttp's.

    Stands between the transport and aiohttp's request handler, passing every
    call through once the handler has the connection (after TLS, if any).
    """

    def __init__(
        self,
        guard: ConnectionGuard,
        inner: Callable[[], asyncio.Protocol],
        tls: ssl.SSLContext | None,
    ) -> None:
        self._guard = guard
        self._make_inner = inner
        self._tls = tls
        self._inner: asyncio.Protocol | None = None
        self._raw: asyncio.Transport | None = None
        self.transport: asyncio.BaseTransport | None = None  #: what aiohttp writes to
        self.address = "?"
        self._timer: asyncio.TimerHandle | None = None  # the header timeout, then the lifetime
        self._accepted = 0.0
        self._headed = False  # its first request head has come
        self._handshake: asyncio.Task[None] | None = None
        self._early: list[bytes] = []  # data that came before the handler had the connection
        self._eof = False
        self._counted = False
        self._closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._raw = transport
        limits = self._guard.limits
        host = _host(transport.get_extra_info("peername")) or "?"
        local = _host(transport.get_extra_info("sockname"))
        self.address = address_key(host, local, limits.ipv6_prefix)
        sock = transport.get_extra_info("socket")
        fileno = sock.fileno() if sock is not None else -1
        refusal = self._guard._admit(self, self.address, fileno)
        self._counted = refusal is None
        if refusal is not None:
            self._closed = True
            response = _RESPONSES.get(refusal)
            if self._tls is None and response is not None:
                transport.write(response)
                transport.close()
            else:
                transport.abort()
            return
        loop = asyncio.get_running_loop()
        self._accepted = loop.time()
        self._timer = loop.call_later(limits.header_timeout, self._no_head)
        if self._tls is None:
            self._serve(transport)
        else:
            self._handshake = loop.create_task(self._start_tls(transport, self._tls))

    async def _start_tls(self, transport: asyncio.Transport, context: ssl.SSLContext) -> None:
        loop = asyncio.get_running_loop()
        try:
            secure = await loop.start_tls(
                transport,
                self,
                context,
                server_side=True,
                ssl_handshake_timeout=self._guard.limits.header_timeout,
            )
        except Exception:  # a failed or timed-out handshake: a hostile client, most likely
            secure = None
        if secure is None or self._closed or transport.is_closing():
            # Lost during the handshake, asyncio's TLS does not call connection_lost.
            self.abort()
            self._finish()
            return
        self._serve(secure)

    def _serve(self, transport: asyncio.BaseTransport) -> None:
        """Hand the connection to aiohttp, with what it sent meanwhile."""
        self.transport = transport
        self._guard._serving(self, transport)
        self._inner = inner = self._make_inner()
        inner.connection_made(transport)
        for data in self._early:
            inner.data_received(data)
        self._early.clear()
        if self._eof and not inner.eof_received():
            transport.close()

    @property
    def serving(self) -> bool:
        """Whether aiohttp has the connection."""
        return self._inner is not None

    def head_arrived(self) -> None:
        """A request head has come: from now on aiohttp's timeouts apply, and
        the connection's lifetime (unless it has become a WebSocket)."""
        if self._headed or self._closed:
            return  # a later request of the connection
        self._headed = True
        if self._timer is not None:
            self._timer.cancel()
        end = self._accepted + self._guard.limits.lifetime
        self._timer = asyncio.get_running_loop().call_at(end, self._too_old)

    def upgraded(self) -> None:
        """The connection is a WebSocket: it lives as long as it plays."""
        self._headed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_old(self) -> None:
        self._timer = None
        if not self._closed:
            self._guard._event("lifetime", self.address)
            self.abort()

    def _no_head(self) -> None:
        self._timer = None
        if not self._closed:
            self._guard._event("timeout", self.address)
            self.abort()

    def abort(self) -> None:
        """Close the connection now, without a word."""
        if self._raw is not None and not self._raw.is_closing():
            self._raw.abort()
        elif self.transport is not None and not self.transport.is_closing():
            self.transport.abort()  # type: ignore[attr-defined]

    # -- passed through ---------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self._inner is not None:
            self._inner.data_received(data)
        elif not self._closed:
            self._early.append(data)

    def eof_received(self) -> bool | None:
        if self._inner is not None:
            return self._inner.eof_received()
        self._eof = True
        return None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def _finish(self) -> None:
        """The connection is gone: stop its timer, give its place back (once)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._counted:  # a connection refused at once never was
            self._counted = False
            self._guard._release(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()
        if self._handshake is not None and not self._handshake.done():
            self._handshake.cancel()
        if self._inner is not None:
            inner, self._inner = self._inner, None
            inner.connection_lost(exc)


#: where an application keeps its guard (:meth:`ConnectionGuard.install`)
_GUARD = web.AppKey("server.web.guard", ConnectionGuard)


def mark_upgraded(request: web.BaseRequest) -> None:
    """``request`` has become a WebSocket (after ``prepare``): its connection
    is not closed at the end of its lifetime. Nothing when the application has no guard."""
    guard = request.app.get(_GUARD) if isinstance(request, web.Request) else None
    if guard is not None:
        guard.upgraded(request)


class GuardedSite(web.BaseSite):
    """aiohttp's ``TCPSite``, listening through a :class:`ConnectionGuard`."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str | None,
        port: int,
        *,
        guard: ConnectionGuard,
        ssl_context: ssl.SSLContext | None = None,
        backlog: int = BACKLOG,
    ) -> None:
        """Like ``web.TCPSite(runner, host, port, ssl_context=...)``."""
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._host = host
        self._port = port
        self.guard = guard

    @property
    def name(self) -> str:
        """The site's URL, as aiohttp names its sites."""
        scheme = "https" if self._ssl_context else "http"
        host = self._host or "0.0.0.0"
        return f"{scheme}://{host}:{self._port}"

    async def start(self) -> None:
        """Listen on ``host:port`` (raises OSError when it cannot)."""
        await super().start()
        inner = self._runner.server
        assert inner is not None
        self._server = await asyncio.get_running_loop().create_server(
            self.guard.factory(inner, self._ssl_context),
            self._host,
            self._port,
            backlog=self._backlog,
        )

    async def stop(self) -> None:
        """Stop listening and drop the connections aiohttp was never given."""
        await super().stop()
        self.guard.close_all()
