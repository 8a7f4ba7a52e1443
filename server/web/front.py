"""The browser front: ``tulips-server --web`` serves the terminal client to browsers.

An aiohttp application in the game server's own event loop:

- ``GET /`` asks the player's name (or says every browser seat is taken, or
  that the visitor's address has its share of them, 503);
- ``GET /play`` is the terminal page (textual-serve's ``textual.js`` and xterm);
- ``GET /ws/{key}/{name}`` is the tab's WebSocket: one :class:`BrowserSession`,
  that is one ``tulips connect`` process against this server, per tab;
- ``GET /status`` says how many browser seats are taken, out of how many, and
  one address's share;
- ``/static`` is textual-serve's own scripts, styles and fonts (nothing is
  loaded from outside the LAN); its ``textual.js`` with one line more, which
  hands the page its terminal (:func:`textual_js`), so that a phone's page
  can change the font size when the phone is turned.

Seats (:mod:`server.web.seats`): at most ``max_sessions`` keys hold a seat,
one address at most ``per_address`` of them; one key has at most one live
client process, however many WebSockets it opens at once (a reload waits for
the process it replaces to end), so client processes never outnumber the
seats and two never share a token file. A tab that does nothing for
``idle_timeout`` seconds is closed (reloading it resumes it).

Each tab's client has a home of its own in the front's private directory
(:mod:`server.web.tokens`: its token, its ``known_servers``, never the host
user's), is pinned to the game server's current fingerprint, is held to an
input budget and a terminal size (:mod:`server.web.inputs`), and has its
address space capped (``tab_memory``). It gets a pass (an environment
variable) by which the game server, on loopback only, knows the tab's real
browser address for every per-address limit (``tab_addresses``). Only pages
of this server's own names and addresses, or allowed with ``--allow-origin``,
may open a tab (:mod:`server.web.origin`). :meth:`WebFront.stop` ends every
process it started and deletes the private directory; one left by a killed
server is removed at the next start (:mod:`server.web.leftovers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import socket
import ssl
import time
from collections.abc import Sequence
from html import escape
from importlib.resources import files
from pathlib import Path
from string import Template

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.download_manager import DownloadManager

from protocol.limits import MAX_NAME_LENGTH
from server.peer import address_key

from .guard import ConnectionGuard, GuardedSite, GuardLimits, mark_upgraded
from .inputs import MAX_MESSAGE_BYTES, InputBudget, Resizes, terminal_size
from .leftovers import make_private_directory, remove_stale
from .origin import OriginPolicy, own_names
from .seats import SeatBook, SeatRefused, Ticket
from .session import BrowserSession, client_command, tab_environment
from .tokens import TOKEN_FILE, TokenShelf

#: The browser addresses of the live tabs, by their pass: (address, the front's
#: own address it was reached at). The game server reads it (see server/app.py).
TabAddresses = dict[str, tuple[str, str | None]]

__all__ = ["WebError", "WebFront", "lan_address", "loopback_url", "textual_js"]

log = logging.getLogger("server.web")

_KEY = re.compile(r"[0-9A-Za-z_-]{16,64}")
#: What a tab sends that costs it input budget (aiohttp's autoping is off)
_CHARGED = frozenset({WSMsgType.TEXT, WSMsgType.BINARY, WSMsgType.PING, WSMsgType.PONG})
_STATIC = Path(textual_serve.__file__).parent / "static"
_PAGES = files(__package__)


#: Where textual.js makes each page's terminal (in ``window.onload``):
#: ``.forEach((e=>{const t=new w(e,{ping:r});`` in textual-serve 1.1.
_MADE = re.compile(r"\.forEach\(\(e=>\{const (\w+)=new \w+\(e,\{ping:\w+\}\);")


@functools.cache
def textual_js() -> tuple[bytes, bool]:
    """textual-serve's ``textual.js``, which keeps its terminal objects to itself,
    with one statement more: each ``.textual-terminal`` element gets its own as
    ``element.textual`` (its xterm ``terminal`` and ``fit()``). play.html uses it
    to set the font size as a phone turns; without it (another textual-serve,
    whose script does not match), the page keeps the size it starts with.
    The script, and whether it was changed."""
    text = (_STATIC / "js" / "textual.js").read_text(encoding="utf-8")
    patched, count = _MADE.subn(lambda made: f"{made.group(0)}e.textual={made.group(1)};", text)
    if count != 1:
        log.warning("textual.js is not the one expected: a phone's font size will not follow it")
        return text.encode("utf-8"), False
    return patched.encode("utf-8"), True


class WebError(Exception):
    """The browser front could not start (its port is taken, say)."""


def lan_address() -> str | None:
    """This machine's address on its LAN, if it has one (no packet is sent:
    connecting a UDP socket only picks the interface a packet would leave by)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: any routable address will do
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def loopback_url(host: str, port: int, *, secure: bool = False) -> str:
    """Where a process on this machine reaches a server bound to ``host``
    (``wss://`` when the game server speaks TLS)."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    scheme = "wss" if secure else "ws"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def _name(text: str) -> str | None:
    """The player's name from the URL, if it is one the client accepts."""
    name = text.strip()
    return name if 1 <= len(name) <= MAX_NAME_LENGTH and name.isprintable() else None


class WebFront:
    """``await start()``, then ``await stop()``; serves browsers on ``host:port``."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        game_port: int,
        max_sessions: int = 8,
        per_address: int = 2,
        idle_timeout: float = 1800.0,
        tab_memory: int | None = 512 * 2**20,
        stop_timeout: float = 3.0,
        tls: ssl.SSLContext | None = None,
        fingerprint: str | None = None,
        tab_addresses: TabAddresses | None = None,
        allowed_origins: Sequence[str] = (),
        names: Sequence[str] = (),
        ipv6_prefix: int = 128,
        connections: GuardLimits | None = None,
        keys_per_address: int | None = None,
    ) -> None:
        """With ``tls`` (the game server's own context), pages are served over
        https and each tab's client plays over ``wss://``, pinned to
        ``fingerprint``: nothing of a browser player crosses the LAN in clear.
        ``tab_addresses`` is the game server's (``TulipsServer.tab_addresses``);
        ``allowed_origins`` are ``--allow-origin``'s and ``names`` other names
        the server is known by (its mDNS name); ``tab_memory`` caps each tab's
        client process, in bytes (None: no cap); ``ipv6_prefix`` is as in
        :func:`server.peer.address_key`; ``keys_per_address`` is how many
        keys' tokens one address keeps (by default 4 x ``per_address``, at least 8);
        ``connections`` are the web port's connection limits (server/web/guard.py)."""
        self.host = host
        self.requested_port = port
        self.game_port = game_port
        self.tls = tls
        self.fingerprint = fingerprint
        self.game_url = loopback_url(host, game_port, secure=tls is not None)
        self.max_sessions = max_sessions
        self.per_address = per_address
        self.idle_timeout = idle_timeout
        self.tab_memory = tab_memory
        self.stop_timeout = stop_timeout
        self.tab_addresses: TabAddresses = tab_addresses if tab_addresses is not None else {}
        self.allowed_origins = tuple(allowed_origins)
        self.names = tuple(names)
        self.ipv6_prefix = ipv6_prefix
        self.keys_per_address = keys_per_address or max(8, 4 * per_address)
        #: the web port's connection limits (server/web/guard.py)
        self.connections = connections or GuardLimits(ipv6_prefix=ipv6_prefix)
        self.sessions: set[BrowserSession] = set()
        self.seats = SeatBook(max_sessions, per_address, time.monotonic)
        self._downloads = DownloadManager()
        self._runner: web.AppRunner | None = None
        self._site: GuardedSite | None = None
        self._tokens: TokenShelf | None = None
        self._origins: OriginPolicy | None = None
        self._reaper: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        assert self._runner is not None
        return int(self._runner.addresses[0][1])

    def share_urls(self) -> list[str]:
        """The addresses to give players: the LAN one first when bound to every interface."""
        scheme = "https" if self.tls is not None else "http"
        if self.host in ("", "0.0.0.0", "::"):
            lan = lan_address()
            urls = [f"{scheme}://{lan}:{self.port}"] if lan else []
            return [*urls, f"{scheme}://localhost:{self.port}"]
        host = f"[{self.host}]" if ":" in self.host else self.host
        return [f"{scheme}://{host}:{self.port}"]

    async def start(self) -> None:
        """Listen; raises :class:`WebError` when the port cannot be had."""
        app = web.Application()
        app.add_routes(
            [
                web.get("/", self._welcome),
                web.get("/play", self._play),
                web.get("/status", self._status),
                web.get("/ws/{key}/{name}", self._session),
                web.get("/static/js/textual.js", self._script),
                web.static("/static", _STATIC),
            ]
        )
        remove_stale()
        self._tokens = TokenShelf(
            make_private_directory(),
            per_address=self.keys_per_address,
            total=max(1024, 8 * self.max_sessions),
            clock=time.monotonic,
        )
        guard = ConnectionGuard(self.connections)
        guard.install(app)
        self._runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=self.stop_timeout,
            keepalive_timeout=self.connections.keepalive_timeout,
        )
        await self._runner.setup()
        self._site = GuardedSite(
            self._runner, self.host, self.requested_port, guard=guard, ssl_context=self.tls
        )
        try:
            await self._site.start()
        except OSError as exc:
            await self.stop()
            why = os.strerror(exc.errno) if exc.errno else str(exc)
            raise WebError(
                f"cannot serve browsers on {self.host}:{self.requested_port}: {why}"
            ) from None
        self._origins = OriginPolicy(
            own_names(self.host, self.names), self.port, self.allowed_origins
        )
        self._reaper = asyncio.get_running_loop().create_task(self._close_idle())
        log.info(
            "Browsers can play at %s (at most %d at once)",
            " or ".join(self.share_urls()),
            self.max_sessions,
        )

    async def stop(self) -> None:
        """End every browser session and its process, then stop listening."""
        self._stopping = True
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None
        await asyncio.gather(*(session.end(self.stop_timeout) for session in list(self.sessions)))
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._tokens is not None:
            shutil.rmtree(self._tokens.directory, ignore_errors=True)
            self._tokens = None

    @property
    def token_dir(self) -> Path | None:
        """The private directory of the tabs' homes and token files (None when stopped)."""
        return self._tokens.directory if self._tokens is not None else None

    @property
    def full(self) -> bool:
        """Whether every browser seat is taken."""
        return self.seats.full

    def _address(self, request: web.BaseRequest) -> tuple[str, str, str | None]:
        """The visitor's address as the per-address limits count it, its raw
        address, and the front's own address it reached."""
        remote = request.remote or "?"
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        local = str(sockname[0]) if sockname else None
        return address_key(remote, local, self.ipv6_prefix), remote, local

    # -- pages ---------------------------------------------------------------------------

    async def _welcome(self, request: web.Request) -> web.Response:
        address = self._address(request)[0]
        mine = self.seats.held_by(address) >= self.per_address
        if mine and not self.full:
            body = (
                f'<p class="full">Your address has its share of the browser seats'
                f" ({self.per_address}).</p><p>Close one of your tabs to open another.</p>"
            )
        elif self.full:
            body = (
                f'<p class="full">Every browser seat is taken ({self.max_sessions} of'
                f" {self.max_sessions}).</p><p>Try again when someone closes their tab.</p>"
            )
        else:
            body = (
                f"<p>{len(self.seats)} of {self.max_sessions} browser seats in use.</p>"
                '<form id="join"><label for="name">Your name at the table</label>'
                f'<input id="name" maxlength="{MAX_NAME_LENGTH}" required autofocus'
                ' autocomplete="nickname">'
                '<button type="submit">Play</button></form>'
                '<p class="hint">This tab is your seat: reload it and you are back at your'
                " table. Another tab is another player.</p>"
            )
        host = request.url.host or "HOST"
        game_host = f"[{host}]" if ":" in host else host
        page = Template(_PAGES.joinpath("welcome.html").read_text(encoding="utf-8"))
        scheme = "wss" if self.tls is not None else "ws"
        game_url = f"{scheme}://{game_host}:{self.game_port}"
        html = page.substitute(body=body, game_url=escape(game_url))
        return web.Response(
            text=html,
            status=503 if self.full or mine else 200,
            content_type="text/html",
            headers={"Cache-Control": "no-store"},
        )

    async def _play(self, _request: web.Request) -> web.Response:
        html = _PAGES.joinpath("play.html").read_text(encoding="utf-8")
        return web.Response(
            text=html, content_type="text/html", headers={"Cache-Control": "no-store"}
        )

    async def _script(self, request: web.Request) -> web.Response:
        script = textual_js()[0]
        tag = f'"{hashlib.sha256(script).hexdigest()[:32]}"'
        headers = {"Cache-Control": "no-cache", "ETag": tag}
        if request.headers.get("If-None-Match") == tag:
            return web.Response(status=304, headers=headers)
        return web.Response(
            body=script, content_type="application/javascript", charset="utf-8", headers=headers
        )

    async def _status(self, _request: web.Request) -> web.Response:
        status = {
            "sessions": len(self.seats),
            "max_sessions": self.max_sessions,
            "per_address": self.per_address,
        }
        return web.Response(
            text=json.dumps(status),
            content_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    # -- one tab -------------------------------------------------------------------------

    async def _session(self, request: web.Request) -> web.StreamResponse:
        key, name = request.match_info["key"], _name(request.match_info["name"])
        if not _KEY.fullmatch(key) or name is None or self._tokens is None:
            raise web.HTTPBadRequest(text="a browser session needs a key and a name\n")
        origins = request.headers.getall("Origin", [])
        if origins and (len(origins) > 1 or not self._origin_allowed(origins[0])):
            # a page from elsewhere may not start players here (cross-site WebSocket,
            # DNS rebinding): compared with the server's own names, never with Host
            log.info("refused a browser tab from origin %r", origins[0][:100])
            raise web.HTTPForbidden(text="a browser session starts from this server's page\n")
        if self._stopping:
            raise web.HTTPServiceUnavailable(text="the server is shutting down\n")
        address, remote, local = self._address(request)
        try:
            ticket = self.seats.admit(key, address)  # before the first await: no race
        except SeatRefused as refused:
            raise web.HTTPServiceUnavailable(text=f"{refused}\n") from None
        tab_pass = secrets.token_urlsafe(32)
        socket_ = web.WebSocketResponse(
            heartbeat=15,
            autoping=False,  # pings are answered by _pass_input, within the tab's budget
            timeout=2.0,
            compress=False,  # no permessage-deflate: a tiny frame may not inflate to MiBs
            max_msg_size=MAX_MESSAGE_BYTES,
        )
        session: BrowserSession | None = None
        try:
            await ticket.predecessors_done()  # a reload: its old process ends first
            if ticket.replaced.is_set() or self._stopping:
                raise web.HTTPConflict(text="this tab was opened again elsewhere\n")
            home = self._tokens.home_for(key, address, in_use=self.seats.keys())
            # the fingerprint is given afresh each start: nothing remembered may override it
            (home / "config" / "gift-of-tulips" / "known_servers").unlink(missing_ok=True)
            session = BrowserSession(
                client_command(self.game_url, name, home / TOKEN_FILE, self.fingerprint),
                write_bytes=socket_.send_bytes,
                write_str=socket_.send_str,
                close=socket_.close,
                downloads=self._downloads,
                environment=tab_environment(home, tab_pass),
                memory=self.tab_memory,
            )
            self.sessions.add(session)
            self.tab_addresses[tab_pass] = (remote, local)
            await socket_.prepare(request)
            mark_upgraded(request)
            if not ticket.replaced.is_set() and not self._stopping:
                width, height = terminal_size(
                    request.query.get("width"), request.query.get("height")
                )
                await session.start(width, height)
                self.seats.touch(ticket)  # idle from now on, not from the handshake
                log.info("browser session for %r started (pid %s)", name, session.pid)
                await self._relay(socket_, session, ticket)
        except web.HTTPException:
            raise
        except Exception:
            log.exception("browser session for %r failed", name)
        finally:
            self.tab_addresses.pop(tab_pass, None)
            if session is not None:
                await session.end(self.stop_timeout)
                await session.exited()  # its seat is held until it is gone
                self.sessions.discard(session)
            with contextlib.suppress(Exception):
                await socket_.close()
            self.seats.release(ticket)  # the seat stays taken while a replaced client runs
            if self._tokens is not None:
                self._tokens.touch(key)
                self._tokens.forget_old(self.seats.keys())
            if session is not None:
                log.info("browser session for %r ended", name)
        return socket_

    def _origin_allowed(self, origin: str) -> bool:
        return self._origins is not None and self._origins.allows(origin)

    async def _close_idle(self) -> None:
        """Close the tabs idle for ``idle_timeout`` seconds (checked a few times
        per timeout; reloading such a tab resumes it)."""
        every = min(60.0, max(0.05, self.idle_timeout / 4))
        while True:
            await asyncio.sleep(every)
            for ticket in self.seats.idle(self.idle_timeout):
                if not ticket.replaced.is_set():
                    log.info("closing a browser tab idle for %.0f s", self.idle_timeout)
                    ticket.replaced.set()

    async def _relay(
        self, socket_: web.WebSocketResponse, session: BrowserSession, ticket: Ticket
    ) -> None:
        """Pass the tab's keys, mouse and size to the client until the tab or the
        client goes, or the ticket is replaced (a reload, an idle tab)."""
        relay = asyncio.ensure_future(self._pass_input(socket_, session, ticket))
        replaced = asyncio.ensure_future(ticket.replaced.wait())
        try:
            await asyncio.wait({relay, replaced}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (relay, replaced):
                task.cancel()
            outcome, _ = await asyncio.gather(relay, replaced, return_exceptions=True)
            if isinstance(outcome, Exception) and not isinstance(outcome, ConnectionError):
                log.error("a browser tab's input failed", exc_info=outcome)

    async def _pass_input(
        self, socket_: web.WebSocketResponse, session: BrowserSession, ticket: Ticket
    ) -> None:
        """textual-serve's envelope, within the tab's input budget: a tab over it
        is not read for a while; resizes are coalesced."""
        loop = asyncio.get_running_loop()
        budget, resizes = InputBudget(loop.time), Resizes(loop.time)
        later: asyncio.Task[None] | None = None

        async def resize_later() -> None:
            while resizes.pending is not None:
                await asyncio.sleep(resizes.wait())
                size = resizes.due()
                if size is not None:
                    await session.set_terminal_size(*size)

        try:
            async for message in socket_:
                if message.type not in _CHARGED:
                    continue
                data = message.data
                wait = budget.take(len(data.encode("utf-8") if isinstance(data, str) else data))
                if message.type == WSMsgType.PING:
                    await socket_.pong(data)
                elif message.type == WSMsgType.TEXT:
                    try:
                        kind, data = json.loads(message.data)
                    except (ValueError, TypeError):
                        kind, data = None, None
                    if kind == "stdin" and isinstance(data, str):
                        self.seats.touch(ticket)
                        await session.send_bytes(data.encode("utf-8"))
                    elif kind == "resize" and isinstance(data, dict):
                        self.seats.touch(ticket)
                        resizes.ask(terminal_size(data.get("width"), data.get("height")))
                        if later is None or later.done():
                            later = loop.create_task(resize_later())
                    elif kind == "ping":
                        await socket_.send_json(["pong", data])
                    elif kind == "blur":
                        await session.blur()
                    elif kind == "focus":
                        await session.focus()
                if wait > 0:
                    await asyncio.sleep(wait)  # not read meanwhile: TCP holds the tab back
        finally:
            if later is not None:
                later.cancel()
                await asyncio.gather(later, return_exceptions=True)
