"""The client SDK: connect, say hello, ask the lobby, receive typed messages,
propose actions, and come back with the resume token after a drop.

Everything else on the client side — the terminal app, the example bots, the
load generator — is built on :class:`Session`::

    async with connect("ws://localhost:8765", name="Ana") as session:
        await session.create_match(seats=4, bots=[(1, "easy"), (2, "easy"), (3, "easy")])
        await session.start()
        async for message in session:
            if isinstance(message, protocol.Prompt):
                await session.answer(message, message.actions[0])

Requests return their answer (or raise :class:`RequestError`); every message
the server sends, answers included, also arrives through ``async for``.

A ``wss://`` server with a self-signed certificate (``tulips-server --tls``)
is checked by its fingerprint instead of a certificate authority: give
``fingerprint="SHA256:…"`` to pin it, and/or ``known_servers`` (remembered
fingerprints, :mod:`client.trust`) with a ``trust`` callback that is asked
about a server seen for the first time. The check runs after the TLS
handshake and before ``hello``, so no token is sent to a server that fails
it; a certificate that does not match raises :class:`CertificateRefused`.

In a cluster (PROTOCOL.md: a cluster of nodes) the session follows the server's
``elsewhere`` redirects by itself: to the node of a match it joins, watches or
replays, and to the node of the seat it resumes. ``url`` is then that node's.
A session that checked its node's certificate expects, at the other node, the
certificate its node vouched for in the redirect (``error.fingerprint``), or
else the one it pinned. A redirect that would give the token away — from
``wss://`` to ``ws://``, or a pinned session to a node whose certificate it
cannot check — is not followed: :class:`RedirectRefused`, nothing sent there.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import ipaddress
import itertools
import logging
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidURI, WebSocketException

import protocol as wire
from protocol.limits import MAX_MATCHES_LISTED
from protocol.tabs import TAB_PASS_ENV, TAB_PASS_HEADER

from .trust import KnownServers, fingerprint, parse_fingerprint, pinning_context, server_key

__all__ = [
    "CertificateRefused",
    "ConnectError",
    "ConnectionLost",
    "Reconnected",
    "RedirectRefused",
    "RequestError",
    "Session",
    "TrustCallback",
    "connect",
]

log = logging.getLogger(__name__)

CLIENT_NAME = "tulips-sdk/0.1"
_M = TypeVar("_M", bound=wire.Message)


class ConnectError(Exception):
    """The server could not be reached or refused the hello (``code`` says why,
    when the server said: e.g. ``bad_token``, ``unsupported_version``)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class CertificateRefused(ConnectError):
    """A ``wss://`` server's certificate is not the one expected. ``code``:
    ``certificate_changed`` (``known_servers`` remembers another one, at line
    ``line`` of ``path``), ``fingerprint_mismatch`` (not the pinned one) or
    ``certificate_untrusted`` (never seen, and not trusted when asked)."""

    def __init__(
        self,
        message: str,
        code: str,
        *,
        server: str,
        actual: str,
        expected: str | None = None,
        path: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message, code)
        self.server = server
        self.actual = actual
        self.expected = expected
        self.path = path
        self.line = line


#: Asked about a server seen for the first time: (``host:port``, fingerprint) -> trust it?
TrustCallback = Callable[[str, str], "Awaitable[bool] | bool"]


class RequestError(Exception):
    """The server answered a request with an error."""

    def __init__(self, error: wire.Error) -> None:
        super().__init__(error.code, error.message)
        self.error = error
        self.code = error.code
        self.path = error.path

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"{self.code}: {self.error.message}{where}"


class RedirectRefused(RequestError):
    """An ``elsewhere`` the session did not follow, because going there could give
    its token away (``why`` says how); nothing was sent to that URL, and the
    session is still connected where it was."""

    def __init__(self, error: wire.Error, why: str) -> None:
        super().__init__(error)
        self.why = why

    def __str__(self) -> str:
        return f"{self.code}: not followed: {self.why}"


@dataclass(frozen=True, slots=True)
class ConnectionLost:
    """Not from the wire: the connection dropped; the session is reconnecting."""

    reason: str


@dataclass(frozen=True, slots=True)
class Reconnected:
    """Not from the wire: the session is back, with the same identity."""


SessionEvent = wire.BatchedMessage | ConnectionLost | Reconnected


class Session:
    """One identity on one server, over a connection that may be renewed."""

    def __init__(
        self,
        url: str,
        name: str,
        *,
        token: str | None = None,
        link: str | None = None,
        client: str = CLIENT_NAME,
        reconnect: bool = True,
        open_timeout: float = 10.0,
        request_timeout: float = 10.0,
        fingerprint: str | None = None,
        trust: TrustCallback | None = None,
        known_servers: KnownServers | None = None,
    ) -> None:
        """``fingerprint``, ``trust`` and ``known_servers`` check a ``wss://``
        server's certificate by its fingerprint (see the module's docstring);
        without any of them a ``wss://`` certificate must be signed by an
        authority this machine trusts. ``link``: a one-time code another device
        of the player got with :meth:`link_code`; the first ``hello`` sends it
        instead of a token, and the session is that player from then on (its
        new token in ``token``)."""
        self.url = url
        self.name = name
        self.token = token
        self.link = link
        self.client = client
        self.reconnect = reconnect
        self.open_timeout = open_timeout
        self.request_timeout = request_timeout
        #: the pinned fingerprint; after a checked connection, that server's
        self.fingerprint = parse_fingerprint(fingerprint) if fingerprint else None
        self.trust = trust
        self.known_servers = known_servers
        self.player_id: str | None = None
        self.server_name: str | None = None
        self._connection: ClientConnection | None = None
        self._inbox: asyncio.Queue[SessionEvent | None] = asyncio.Queue()
        self._pending: dict[int, asyncio.Future[wire.ServerMessage]] = {}
        #: `analysis_progress` listeners, and how many notices each request has had
        self._progress: dict[int, Callable[[wire.AnalysisProgress], object] | None] = {}
        self._progress_seen: dict[int, int] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._closed = False
        #: cluster redirects: a move under way, and what a request-driven one heard
        self._moving: asyncio.Task[bool] | None = None
        self._quiet = False
        self._home_hint: tuple[str, str | None] | None = None
        self._unasked_moves = 0

    # -- connection life ------------------------------------------------------------------

    async def open(self) -> wire.Welcome:
        """Connect and say hello (with the token, if this session has one)."""
        secure = urlsplit(self.url).scheme == "wss"
        pinning = secure and (self.fingerprint or self.trust or self.known_servers) is not None
        options: dict[str, Any] = {"ssl": pinning_context()} if pinning else {}
        options.update(_tab_pass(self.url))
        try:
            connection = await ws_connect(
                self.url,
                open_timeout=self.open_timeout,
                compression=None,
                max_size=wire.MAX_FRAME_BYTES,
                **options,
            )
        except (OSError, TimeoutError, InvalidURI, WebSocketException) as exc:
            raise ConnectError(f"cannot reach {self.url}: {await self._why(exc)}") from None
        if pinning:
            try:
                await self._check_certificate(connection)
            except BaseException:
                await asyncio.shield(connection.close())
                raise
        link = self.link if self.token is None else None
        hello = wire.Hello(
            client=self.client,
            name=self.name,
            token=self.token,
            link=link,
            id=0,
            features=("batch",),  # what one action causes for us comes as one frame
        )
        try:
            await connection.send(wire.encode(hello))
            frame = await asyncio.wait_for(connection.recv(), self.open_timeout)
            answer = wire.decode_server_message(_as_bytes(frame))
        except (ConnectionClosed, TimeoutError, wire.ProtocolError) as exc:
            await connection.close()
            raise ConnectError(f"{self.url} did not welcome us: {exc}") from None
        except asyncio.CancelledError:  # closed while saying hello: leave nothing open
            await asyncio.shield(connection.close())
            raise
        if isinstance(answer, wire.Error):
            await connection.close()
            raise ConnectError(
                f"{self.url} refused us: {answer.code}: {answer.message}", answer.code
            )
        if not isinstance(answer, wire.Welcome):
            await connection.close()
            raise ConnectError(f"{self.url} answered hello with {type(answer).__name__}")
        self._connection = connection
        self.token = answer.token
        self.link = None  # spent: a reconnect resumes with the token
        self.name = answer.name
        self.player_id = answer.player
        self.server_name = answer.server
        self._reader = asyncio.get_running_loop().create_task(self._read(connection))
        return answer

    async def _why(self, exc: BaseException) -> str:
        """What went wrong, in words: TLS on one side only is named as such."""
        parts = urlsplit(self.url)
        if isinstance(exc, ssl.SSLCertVerificationError):
            return (
                f"{exc.verify_message or exc}: its certificate is not signed by an authority "
                "this machine trusts; pin it with its fingerprint (tulips connect asks)"
            )
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "wss" else 80)
        if isinstance(exc, WebSocketException | ConnectionError | EOFError | ssl.SSLError):
            if parts.scheme == "ws" and await _speaks_tls(host, port):
                return f"this server speaks TLS: use wss://{parts.netloc}"
            if parts.scheme == "wss" and await _speaks_plain_http(host, port):
                return f"this server does not speak TLS: use ws://{parts.netloc}"
        return str(exc) or type(exc).__name__

    async def _check_certificate(self, connection: ClientConnection) -> None:
        """Refuse a ``wss://`` server whose certificate is not the expected one
        (see :class:`CertificateRefused`); remember a newly trusted one."""
        tls = connection.transport.get_extra_info("ssl_object")
        der = tls.getpeercert(binary_form=True) if tls is not None else None
        if not der:
            raise ConnectError(f"{self.url} showed no certificate")
        actual = fingerprint(der)
        key = server_key(self.url)
        known = self.known_servers.find(key) if self.known_servers is not None else None
        if known is not None and known[1] != actual:
            assert self.known_servers is not None
            path = str(self.known_servers.path)
            raise CertificateRefused(
                f"the certificate of {key} has CHANGED: it was {known[1]}, now it is {actual}. "
                "Someone may be posing as that server, or its operator made a new "
                f"certificate. If you trust the new one, delete line {known[0]} of {path} "
                f"(the line starting with {key}), or run: tulips forget {key}",
                "certificate_changed",
                server=key,
                actual=actual,
                expected=known[1],
                path=path,
                line=known[0],
            )
        if self.fingerprint is not None and self.fingerprint != actual:
            raise CertificateRefused(
                f"the certificate of {key} is {actual}, not the pinned {self.fingerprint}",
                "fingerprint_mismatch",
                server=key,
                actual=actual,
                expected=self.fingerprint,
            )
        if known is None and self.fingerprint is None:
            answer = self.trust(key, actual) if self.trust is not None else False
            if inspect.isawaitable(answer):
                answer = await answer
            if not answer:
                raise CertificateRefused(
                    f"the certificate of {key} ({actual}) is not one you trusted before; "
                    "pin it with its fingerprint or accept it when asked",
                    "certificate_untrusted",
                    server=key,
                    actual=actual,
                )
        if known is None and self.known_servers is not None:
            try:
                self.known_servers.remember(key, actual)
            except OSError as exc:
                log.warning("cannot remember %s in %s: %s", key, self.known_servers.path, exc)
        self.fingerprint = actual  # a reconnect must meet the same certificate

    async def close(self) -> None:
        """Close for good: no reconnect, and nothing this session started runs on."""
        self._closed = True
        for task in (self._reconnecting, self._reader, self._moving):
            if task is not None:
                task.cancel()
        if self._connection is not None:
            await self._connection.close()
        for task in (self._reconnecting, self._reader, self._moving):
            if task is not None and task is not asyncio.current_task():
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._fail_pending("session closed")
        self._inbox.put_nowait(None)

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def _read(self, connection: ClientConnection) -> None:
        try:
            async for frame in connection:
                try:
                    messages = wire.decode_server_messages(_as_bytes(frame))
                except wire.ProtocolError as exc:
                    log.warning("ignoring a frame we cannot read: %s", exc)
                    continue
                for message in messages:  # a batch's, in order, as if one by one
                    if not self._take(message):
                        return  # this connection is being left for the seat's node
        except ConnectionClosed:
            pass
        reason = f"{connection.close_code} {connection.close_reason or ''}".strip()
        self._fail_pending(f"connection closed ({reason})")
        if self._closed:
            return
        if not self.reconnect or connection.close_code in _FINAL_CLOSE_CODES:
            self._closed = True
            self._inbox.put_nowait(ConnectionLost(reason))
            self._inbox.put_nowait(None)
            return
        self._inbox.put_nowait(ConnectionLost(reason))
        self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())

    def _take(self, message: wire.BatchedMessage | wire.Unknown) -> bool:
        """Hand one message from the server on; False once the connection is
        being left for the node that holds the seat."""
        if isinstance(message, wire.Unknown):
            return True  # PROTOCOL.md: ignore message types we do not know
        if message.id is None and _redirect_url(message):
            return not self._follow_unasked(message)
        request_id = message.id
        if isinstance(message, wire.AnalysisProgress):
            self._heard_progress(message)  # a notice on the way, not the answer
        elif isinstance(request_id, int) and request_id in self._pending:
            future = self._pending.pop(request_id)
            if not future.done():
                future.set_result(message)
        self._inbox.put_nowait(message)
        return True

    async def _reconnect(self) -> None:
        delay = 0.2
        while not self._closed:
            try:
                await self.open()
                if self._closed and self._connection is not None:  # closed meanwhile
                    await self._connection.close()
                    return
            except CertificateRefused as exc:  # trying again would meet the same certificate
                log.error("reconnect refused: %s", exc)
                self._closed = True
                self._inbox.put_nowait(ConnectionLost(str(exc)))
                self._inbox.put_nowait(None)
                return
            except ConnectError as exc:
                log.info("reconnect failed: %s; next try in %.1f s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self._inbox.put_nowait(Reconnected())
            return

    def _heard_progress(self, message: wire.AnalysisProgress) -> None:
        """An ``analysis_progress`` for a request of ours: tell its listener, and
        note it, so that the request's timeout starts again."""
        request_id = message.id
        if not isinstance(request_id, int) or request_id not in self._progress:
            return
        self._progress_seen[request_id] = self._progress_seen.get(request_id, 0) + 1
        listener = self._progress[request_id]
        if listener is not None:
            try:
                listener(message)
            except Exception:
                log.exception("an analysis progress listener failed")

    def _fail_pending(self, why: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError(why))
        self._pending.clear()

    # -- receiving --------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[SessionEvent]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[SessionEvent]:
        while True:
            message = await self._inbox.get()
            if message is None:
                return
            yield message

    async def next_of(self, kind: type[_M], timeout: float | None = None) -> _M:
        """Skip to the next message of this type (handy in tests and scripts)."""
        async with asyncio.timeout(timeout):
            async for message in self:
                if isinstance(message, kind):
                    return message
        raise ConnectionError("session closed")

    # -- requests ---------------------------------------------------------------------------

    async def send(self, message: wire.Message) -> None:
        """Send a message without waiting for its answer."""
        moving = self._moving
        if moving is not None and not moving.done() and moving is not asyncio.current_task():
            with contextlib.suppress(Exception):
                await asyncio.shield(moving)
        if self._connection is None:
            raise ConnectionError("not connected")
        await self._connection.send(wire.encode(message))

    async def request(
        self,
        build: type[wire.Message],
        *,
        on_progress: Callable[[wire.AnalysisProgress], object] | None = None,
        timeout: float | None = None,
        **fields: Any,
    ) -> wire.ServerMessage:
        """Send a request with a fresh id and return its answer (or raise RequestError).

        An ``elsewhere`` answer (a cluster's match on another node) moves the
        session to that node and sends the request there again. Each
        ``analysis_progress`` notice for the request goes to ``on_progress`` and
        starts its timeout (``timeout``, default ``request_timeout``) again."""
        answer = await self._request_once(build, on_progress, timeout, **fields)
        hops = 0
        refused: str | None = None
        while (url := _redirect_url(answer)) is not None and hops < _MAX_HOPS:
            if (refused := self._refusal(url)) is not None:
                log.warning("not following the redirect: %s", refused)
                break
            hops += 1
            if not await self._move(url, quiet=True, vouched=_vouched(answer)):
                break  # that node cannot be reached: its answer stands
            answer = await self._request_once(build, on_progress, timeout, **fields)
        if hops:
            home, self._home_hint, self._quiet = self._home_hint, None, False
            entered = build in (wire.Join, wire.Watch) and not isinstance(answer, wire.Error)
            if home is not None and not entered:  # back to the seat the new node named
                await self._move(home[0], quiet=False, vouched=home[1])
        if _redirect_url(answer) is None:
            self._unasked_moves = 0
        if isinstance(answer, wire.Error) and refused is not None:
            raise RedirectRefused(answer, refused)
        if isinstance(answer, wire.Error):
            raise RequestError(answer)
        return answer

    async def _request_once(
        self,
        build: type[wire.Message],
        on_progress: Callable[[wire.AnalysisProgress], object] | None = None,
        timeout: float | None = None,
        **fields: Any,
    ) -> wire.ServerMessage:
        request_id = next(self._ids)
        wait = self.request_timeout if timeout is None else timeout
        future: asyncio.Future[wire.ServerMessage] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._progress[request_id] = on_progress
        try:
            await self.send(build(id=request_id, **fields))
            while True:  # a timeout counts from the last progress notice
                seen = self._progress_seen.get(request_id, 0)
                try:
                    answer = await asyncio.wait_for(asyncio.shield(future), wait)
                    break
                except TimeoutError:
                    if self._progress_seen.get(request_id, 0) == seen:
                        raise
        finally:
            self._progress.pop(request_id, None)
            self._progress_seen.pop(request_id, None)
            self._pending.pop(request_id, None)
            if not future.done():
                future.cancel()
            elif not future.cancelled():
                future.exception()  # seen: if sending failed, that is the error raised
        return answer

    # -- cluster redirects ------------------------------------------------------------------

    def _refusal(self, url: str) -> str | None:
        """Why a redirect to ``url`` must not be followed, if it must not: the token
        would cross the network in clear after a ``wss://`` connection, or to a
        node whose certificate a pinned session cannot check (PROTOCOL.md)."""
        there = urlsplit(url).scheme
        if there not in ("ws", "wss"):
            return f"{url} is not a ws:// or wss:// URL"
        if there == "ws" and urlsplit(self.url).scheme == "wss":
            return f"{self.url} sent us to {url}: from wss:// to ws://, the token would go in clear"
        if there == "ws" and self.fingerprint is not None:
            return f"{url} has no certificate to check against the pinned {self.fingerprint}"
        return None

    def _follow_unasked(self, message: wire.BatchedMessage) -> bool:
        """An unasked ``elsewhere`` after welcome: the seat being resumed is on
        another node. True if the session now moves there."""
        url = _redirect_url(message)
        assert url is not None
        if self._quiet:  # moving for a request: remember it, and go there afterwards if need be
            self._home_hint = (url, _vouched(message))
            return False
        if self._unasked_moves >= _MAX_HOPS:  # nodes disagree: tell the app, stay here
            self._inbox.put_nowait(message)
            return False
        if (refused := self._refusal(url)) is not None:  # tell the app, stay here
            log.warning("not following the redirect: %s", refused)
            self._inbox.put_nowait(message)
            return False
        self._unasked_moves += 1
        self._moving = asyncio.get_running_loop().create_task(
            self._move(url, quiet=False, vouched=_vouched(message))
        )
        return True

    async def _move(self, url: str, *, quiet: bool, vouched: str | None = None) -> bool:
        """Close this connection and open one to ``url`` with the same token.

        ``quiet``: the move is for a request, so an unasked redirect there is only
        remembered. ``vouched``: the certificate fingerprint the redirect gave for
        ``url``; a session that checked this node's certificate expects it there
        (this node proved itself, and vouches for the other). False if ``url``
        cannot be reached, or must not be (see :meth:`_refusal`): the session opens
        again where it was (or reconnects, if it cannot), or stays."""
        if (refused := self._refusal(url)) is not None:
            log.warning("not following the redirect: %s", refused)
            return False
        previous, previous_pin, self._quiet = self.url, self.fingerprint, quiet
        if vouched is not None and self.fingerprint is not None:
            try:
                self.fingerprint = parse_fingerprint(vouched)
            except ValueError:
                log.warning("the redirect to %s gave no usable fingerprint: %r", url, vouched)
        reader, connection = self._reader, self._connection
        self._reader = self._connection = None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        if connection is not None:
            await connection.close()
        self._fail_pending("the session moved to another node")
        self.url = url
        try:
            await self.open()
            if self._closed and self._connection is not None:  # closed meanwhile
                await self._connection.close()
            return True
        except ConnectError as exc:
            log.warning("cannot follow the redirect to %s: %s", url, exc)
        self.url, self.fingerprint, self._quiet = previous, previous_pin, False
        try:
            await self.open()
        except ConnectError as exc:
            self._inbox.put_nowait(ConnectionLost(str(exc)))
            if self.reconnect and not self._closed:
                self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())
        return False

    async def list_matches(
        self,
        *,
        status: Sequence[wire.MatchStatus] = (),
        offset: int = 0,
        limit: int = MAX_MATCHES_LISTED,
    ) -> Sequence[wire.MatchSummary]:
        """A page of the server's matches (open, running and recently finished,
        newest first); the lobby then stays live for that page's matches."""
        return (await self.browse(status=status, offset=offset, limit=limit)).matches

    async def browse(
        self,
        *,
        status: Sequence[wire.MatchStatus] = (),
        offset: int = 0,
        limit: int = MAX_MATCHES_LISTED,
    ) -> wire.MatchList:
        """As :meth:`list_matches`, the whole answer: with its ``offset`` and the
        ``total`` of matches that pass the ``status`` filter."""
        answer = await self.request(
            wire.ListMatches, status=tuple(status), offset=offset, limit=limit
        )
        assert isinstance(answer, wire.MatchList)
        return answer

    async def create_match(
        self,
        *,
        name: str = "match",
        seats: int = 4,
        bots: Sequence[tuple[int, str]] = (),
        join_code: str | None = None,
        turn_timer: float | None = None,
        ruleset: str | None = None,
        first_seat: int | None = None,
        open_box: bool = False,
        tutorial: bool = False,
        rated: bool | None = None,
        hints: bool = False,
    ) -> wire.Joined:
        """Create a match and sit in its first seat without a bot, as host.

        ``open_box`` (R27): once finished, its seed and every action are
        published, so anyone can check the shuffle. ``tutorial``: the server's
        fixed tutorial deal, 3 seats with bots in seats 1 and 2 (PROTOCOL.md).
        ``rated``: whether it changes ratings (None: the server's rule,
        PROTOCOL.md: ratings). ``hints``: players may ask for :meth:`hint`
        (the match is then unrated)."""
        answer = await self.request(
            wire.CreateMatch,
            name=name,
            seats=seats,
            bots=tuple(wire.BotSeat(seat=s, strength=cast(Any, k)) for s, k in bots),
            join_code=join_code,
            turn_timer=turn_timer,
            ruleset=ruleset,
            first_seat=first_seat,
            open_box=open_box,
            tutorial=tutorial,
            rated=rated,
            hints=hints,
        )
        assert isinstance(answer, wire.Joined)
        return answer

    async def join(
        self, match: str, seat: int | None = None, join_code: str | None = None
    ) -> wire.Joined:
        """Take a seat (the first free one if ``seat`` is None)."""
        answer = await self.request(wire.Join, match=match, seat=seat, join_code=join_code)
        assert isinstance(answer, wire.Joined)
        return answer

    async def watch(self, match: str, join_code: str | None = None) -> wire.Joined:
        """Watch a match as a spectator."""
        answer = await self.request(wire.Watch, match=match, join_code=join_code)
        assert isinstance(answer, wire.Joined)
        return answer

    async def leave(self) -> None:
        """Leave the current match."""
        await self.request(wire.Leave)

    async def start(self, *, without_absent: bool = False) -> None:
        """Start the match (host only, every seat taken); ``without_absent``:
        with those here, the empty and not-yet-accepted seats dropped."""
        if without_absent:
            await self.request(wire.Start, without_absent=True)
        else:
            await self.request(wire.Start)

    async def add_bot(self, seat: int | None = None, strength: wire.Strength = "medium") -> None:
        """Put a bot in a free seat of the open match you host (None: the lowest)."""
        await self.request(wire.AddBot, seat=seat, strength=strength)

    async def remove_seat(self, seat: int) -> None:
        """Free a seat of the open match you host: its bot or player goes."""
        await self.request(wire.RemoveSeat, seat=seat)

    async def play_again(self) -> wire.Joined:
        """Open (or join) the rematch of a finished match."""
        answer = await self.request(wire.PlayAgain)
        assert isinstance(answer, wire.Joined)
        return answer

    async def act(self, action: wire.Action, *, seq: int | None) -> None:
        """Propose an action for the decision the prompt of ``seq`` opened;
        returns once the server accepted it. If that decision was taken
        meanwhile (the turn timer ran out, the server played the seat, another
        connection acted), it raises :class:`RequestError` ``decision_taken``
        and nothing changed: the prompt of the decision open now, if any, has
        already arrived. ``seq`` None answers whatever decision is open when
        the act arrives — which a late act may not be."""
        await self.request(wire.Act, action=action, seq=seq)

    async def answer(self, prompt: wire.Prompt, action: wire.Action) -> None:
        """Answer ``prompt`` with ``action``, one of its ``actions``: :meth:`act`
        naming the prompt's ``seq``."""
        await self.act(action, seq=prompt.seq)

    async def sync(self) -> wire.Snapshot:
        """A fresh snapshot of the current match."""
        answer = await self.request(wire.Sync)
        assert isinstance(answer, wire.Snapshot)
        return answer

    async def chat(self, text: str) -> None:
        """Say something to the match."""
        await self.request(wire.Chat, text=text)

    async def replay(
        self, match: str, *, join_code: str | None = None, from_seq: int = 1
    ) -> wire.ReplayPage:
        """One page of a match's record, from event ``from_seq`` on; ask again
        from ``page.next_seq`` while it is set."""
        answer = await self.request(
            wire.Replay, match=match, join_code=join_code, from_seq=from_seq
        )
        assert isinstance(answer, wire.ReplayPage)
        return answer

    # -- learning the game -------------------------------------------------------------------

    async def analyse(
        self,
        match: str,
        *,
        seat: int | None = None,
        join_code: str | None = None,
        progress: Callable[[wire.AnalysisProgress], object] | None = None,
        timeout: float = 600.0,
    ) -> wire.AnalysisReport:
        """The post-game analysis of ``seat`` (default: yours) in the finished
        ``match``: each decision's options valued from that seat's knowledge,
        and a summary. Another seat only in a finished open-box match (R27).
        While it is queued or computed, each ``analysis_progress`` goes to
        ``progress``; the request times out only when neither progress nor
        the answer came for ``timeout`` seconds (a busy server's queue may
        hold it a while without news). Raises
        :class:`RequestError` (``not_finished``, ``not_your_seat``,
        ``analysis_busy``, …)."""
        answer = await self.request(
            wire.Analyse,
            on_progress=progress,
            timeout=timeout,
            match=match,
            seat=seat,
            join_code=join_code,
        )
        assert isinstance(answer, wire.AnalysisReport)
        return answer

    async def hint(self, seq: int | None = None) -> wire.HintValues:
        """The analysis's values of your open decision in a match that allows
        hints: ``options[i]`` values the prompt's ``actions[i]``. ``seq``: the
        prompt's (None: whatever decision is open). Raises
        :class:`RequestError` (``hints_off``, ``decision_taken``, …). It takes
        about as long as the hard bot thinks."""
        answer = await self.request(wire.Hint, seq=seq)
        assert isinstance(answer, wire.HintValues)
        return answer

    # -- profiles, ratings and history ------------------------------------------------------

    async def profile(self, player: str | None = None) -> wire.ProfileCard:
        """A player's card (default: yours): matches, wins, mean points, rating
        and recent matches. ``player`` may name a bot strength (``bot_hard``)."""
        answer = await self.request(wire.Profile, player=player)
        assert isinstance(answer, wire.ProfileCard)
        return answer

    async def leaderboard(self, offset: int = 0, limit: int = 20) -> wire.LeaderboardPage:
        """One page of the leaderboard, best first, from line ``offset`` on
        (``page.you`` is your own line)."""
        answer = await self.request(wire.Leaderboard, offset=offset, limit=limit)
        assert isinstance(answer, wire.LeaderboardPage)
        return answer

    async def history(self, before: int | None = None, limit: int = 10) -> wire.HistoryPage:
        """One page of your finished matches, latest first; ask again with
        ``before=page.next`` while it is set. Open one with :meth:`replay`."""
        answer = await self.request(wire.History, before=before, limit=limit)
        assert isinstance(answer, wire.HistoryPage)
        return answer

    async def link_code(self) -> wire.LinkCodeIssued:
        """A one-time code to link another device to this player: give it there
        as ``connect(..., link=code)`` (``tulips``: the link screen)."""
        answer = await self.request(wire.LinkCode)
        assert isinstance(answer, wire.LinkCodeIssued)
        return answer

    async def rename(self, name: str) -> None:
        """Change your name on this server; raises :class:`RequestError`
        ``name_taken`` when another player has it (in any case)."""
        await self.request(wire.Rename, name=name)
        self.name = name


#: Close codes after which coming back would be refused again (or, for
#: REPLACED, would knock out the newer connection that replaced this one).
_FINAL_CLOSE_CODES = frozenset(
    {wire.CloseCode.UNSUPPORTED_VERSION, wire.CloseCode.BAD_TOKEN, wire.CloseCode.REPLACED}
)


#: Redirects followed in a row (for one request, or unasked) before giving up.
_MAX_HOPS = 3


def _redirect_url(message: wire.ServerMessage) -> str | None:
    """The URL an ``elsewhere`` error sends the client to, if it is one."""
    if isinstance(message, wire.Error) and message.code == wire.ErrorCode.ELSEWHERE:
        return message.url or None
    return None


def _vouched(message: wire.ServerMessage) -> str | None:
    """The certificate fingerprint an ``elsewhere`` error gives for its node."""
    if isinstance(message, wire.Error) and message.code == wire.ErrorCode.ELSEWHERE:
        return message.fingerprint
    return None


def _as_bytes(frame: str | bytes) -> bytes:
    if isinstance(frame, str):
        raise wire.ProtocolError(wire.ErrorCode.BAD_FRAME, "a text frame from the server")
    return frame


async def _speaks_tls(host: str, port: int, timeout: float = 3.0) -> bool:
    """Whether a TLS handshake with ``host:port`` succeeds (asked only after a
    plain ``ws://`` connection failed, to say why)."""
    try:
        async with asyncio.timeout(timeout):
            _, writer = await asyncio.open_connection(host, port, ssl=pinning_context())
    except (OSError, TimeoutError, ssl.SSLError):
        return False
    writer.close()
    with contextlib.suppress(OSError, ssl.SSLError):
        await writer.wait_closed()
    return True


async def _speaks_plain_http(host: str, port: int, timeout: float = 3.0) -> bool:
    """Whether ``host:port`` answers a plain HTTP request (asked only after a
    ``wss://`` connection failed, to say why)."""
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(host, port)
            try:
                writer.write(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                return (await reader.readline()).startswith(b"HTTP/1.")
            finally:
                writer.close()
    except (OSError, TimeoutError):
        return False


class connect:
    """Open a :class:`Session`: ``session = await connect(...)`` or
    ``async with connect(...) as session`` (closed on exit)."""

    def __init__(self, url: str, name: str, **options: Any) -> None:
        self.session = Session(url, name, **options)

    def __await__(self) -> Generator[Any, None, Session]:
        return self._open().__await__()

    async def _open(self) -> Session:
        await self.session.open()
        return self.session

    async def __aenter__(self) -> Session:
        return await self._open()

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.session.close()


def _tab_pass(url: str) -> dict[str, Any]:
    """The handshake header of a browser tab's pass, for a loopback ``url`` (else none)."""
    tab_pass = os.environ.get(TAB_PASS_ENV)
    host = urlsplit(url).hostname or ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    return {"additional_headers": [(TAB_PASS_HEADER, tab_pass)]} if tab_pass and loopback else {}
