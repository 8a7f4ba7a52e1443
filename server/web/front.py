"""The browser front: ``tulips-server --web`` serves the terminal client to browsers.

An aiohttp application in the game server's own event loop:

- ``GET /`` asks the player's name (or says every browser seat is taken, 503);
- ``GET /play`` is the terminal page (textual-serve's ``textual.js`` and xterm);
- ``GET /ws/{key}/{name}`` is the tab's WebSocket: one :class:`BrowserSession`,
  that is one ``tulips connect`` process against this server, per tab;
- ``GET /status`` says how many browser sessions run, out of how many;
- ``/static`` is textual-serve's own scripts, styles and fonts (nothing is
  loaded from outside the LAN).

Invariants: at most ``max_sessions`` client processes run (one more, briefly,
while a reloaded tab replaces its own); one key has at most one live
process, so two processes never share a token file; :meth:`WebFront.stop`
ends every process it started and deletes the token files.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import socket
import ssl
import tempfile
from html import escape
from importlib.resources import files
from pathlib import Path
from string import Template
from urllib.parse import urlsplit

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.download_manager import DownloadManager

from .session import BrowserSession, SeatFiles, client_command

__all__ = ["WebError", "WebFront", "lan_address", "loopback_url"]

log = logging.getLogger("server.web")

_KEY = re.compile(r"[0-9A-Za-z_-]{16,64}")
_STATIC = Path(textual_serve.__file__).parent / "static"
_PAGES = files(__package__)


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
    return name if 1 <= len(name) <= 40 and name.isprintable() else None


def _size(text: str | None, default: int) -> int:
    try:
        return min(max(int(text or default), 10), 1000)
    except ValueError:
        return default


class WebFront:
    """``await start()``, then ``await stop()``; serves browsers on ``host:port``."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        game_port: int,
        max_sessions: int = 8,
        stop_timeout: float = 3.0,
        tls: ssl.SSLContext | None = None,
        fingerprint: str | None = None,
    ) -> None:
        """With ``tls`` (the game server's own context), pages are served over
        https and each tab's client plays over ``wss://``, pinned to
        ``fingerprint``: nothing of a browser player crosses the LAN in clear."""
        self.host = host
        self.requested_port = port
        self.game_port = game_port
        self.tls = tls
        self.fingerprint = fingerprint
        self.game_url = loopback_url(host, game_port, secure=tls is not None)
        self.max_sessions = max_sessions
        self.stop_timeout = stop_timeout
        self.sessions: set[BrowserSession] = set()
        self._live: dict[str, BrowserSession] = {}
        self._downloads = DownloadManager()
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self._seats: SeatFiles | None = None
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
                web.static("/static", _STATIC),
            ]
        )
        self._seats = SeatFiles(
            Path(tempfile.mkdtemp(prefix="tulips-web-")), keep=max(64, 8 * self.max_sessions)
        )
        self._runner = web.AppRunner(
            app, handle_signals=False, access_log=None, shutdown_timeout=self.stop_timeout
        )
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, self.host, self.requested_port, ssl_context=self.tls)
        try:
            await self._site.start()
        except OSError as exc:
            await self.stop()
            why = os.strerror(exc.errno) if exc.errno else str(exc)
            raise WebError(
                f"cannot serve browsers on {self.host}:{self.requested_port}: {why}"
            ) from None
        log.info(
            "Browsers can play at %s (at most %d at once)",
            " or ".join(self.share_urls()),
            self.max_sessions,
        )

    async def stop(self) -> None:
        """End every browser session and its process, then stop listening."""
        self._stopping = True
        await asyncio.gather(*(session.end(self.stop_timeout) for session in list(self.sessions)))
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._seats is not None:
            shutil.rmtree(self._seats.directory, ignore_errors=True)
            self._seats = None

    @property
    def token_dir(self) -> Path | None:
        """The private directory of the tabs' resume-token files (None when stopped)."""
        return self._seats.directory if self._seats is not None else None

    @property
    def full(self) -> bool:
        """Whether every browser seat is taken."""
        return len(self.sessions) >= self.max_sessions

    # -- pages ---------------------------------------------------------------------------

    async def _welcome(self, request: web.Request) -> web.Response:
        if self.full:
            body = (
                f'<p class="full">Every browser seat is taken ({self.max_sessions} of'
                f" {self.max_sessions}).</p><p>Try again when someone closes their tab.</p>"
            )
        else:
            body = (
                f"<p>{len(self.sessions)} of {self.max_sessions} browser seats in use.</p>"
                '<form id="join"><label for="name">Your name at the table</label>'
                '<input id="name" maxlength="40" required autofocus autocomplete="nickname">'
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
            status=503 if self.full else 200,
            content_type="text/html",
            headers={"Cache-Control": "no-store"},
        )

    async def _play(self, _request: web.Request) -> web.Response:
        html = _PAGES.joinpath("play.html").read_text(encoding="utf-8")
        return web.Response(
            text=html, content_type="text/html", headers={"Cache-Control": "no-store"}
        )

    async def _status(self, _request: web.Request) -> web.Response:
        status = {"sessions": len(self.sessions), "max_sessions": self.max_sessions}
        return web.Response(
            text=json.dumps(status),
            content_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    # -- one tab -------------------------------------------------------------------------

    async def _session(self, request: web.Request) -> web.StreamResponse:
        key, name = request.match_info["key"], _name(request.match_info["name"])
        if not _KEY.fullmatch(key) or name is None or self._seats is None:
            raise web.HTTPBadRequest(text="a browser session needs a key and a name\n")
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            # a page from elsewhere may not start players here (cross-site WebSocket)
            raise web.HTTPForbidden(text="a browser session starts from this server's page\n")
        if self._stopping:
            raise web.HTTPServiceUnavailable(text="the server is shutting down\n")
        old = self._live.get(key)
        if old is None and self.full:
            raise web.HTTPServiceUnavailable(
                text=f"every browser seat is taken ({self.max_sessions} of {self.max_sessions})\n"
            )
        identity = self._seats.path_for(key)
        socket_ = web.WebSocketResponse(heartbeat=15, timeout=2.0)
        session = BrowserSession(
            client_command(self.game_url, name, identity, self.fingerprint),
            write_bytes=socket_.send_bytes,
            write_str=socket_.send_str,
            close=socket_.close,
            downloads=self._downloads,
        )
        self.sessions.add(session)  # counted before the first await: no race past the limit
        self._live[key] = session
        try:
            if old is not None:  # the same tab again (a reload): one process per token file
                await old.end(self.stop_timeout)
            await socket_.prepare(request)
            await session.start(
                _size(request.query.get("width"), 80), _size(request.query.get("height"), 24)
            )
            log.info("browser session for %r started (pid %s)", name, session.pid)
            await self._relay(socket_, session)
        except Exception:
            log.exception("browser session for %r failed", name)
        finally:
            self.sessions.discard(session)
            if self._live.get(key) is session:
                del self._live[key]
            await session.end(self.stop_timeout)
            with contextlib.suppress(Exception):
                await socket_.close()
            self._seats_cleanup()
            log.info("browser session for %r ended", name)
        return socket_

    def _seats_cleanup(self) -> None:
        if self._seats is not None:
            self._seats.forget_old(set(self._live))

    @staticmethod
    async def _relay(socket_: web.WebSocketResponse, session: BrowserSession) -> None:
        """Pass the tab's keys, mouse and size to the client (textual-serve's envelope)."""
        async for message in socket_:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                kind, data = json.loads(message.data)
            except (ValueError, TypeError):
                continue
            if kind == "stdin" and isinstance(data, str):
                await session.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                await session.set_terminal_size(
                    _size(str(data.get("width")), 80), _size(str(data.get("height")), 24)
                )
            elif kind == "ping":
                await socket_.send_json(["pong", data])
            elif kind == "blur":
                await session.blur()
            elif kind == "focus":
                await session.focus()
