"""tulips-server (also python -m server): run a Gift of Tulips server for the LAN.

Players connect to ws://HOST:PORT (wss:// with --tls) with "tulips connect"
or any client that speaks PROTOCOL.md; GET /healthz answers a short JSON
status. On a LAN address the server announces itself, so "tulips connect"
lists it. With --web, browsers on the LAN play at http://HOST:WEBPORT too,
nothing to install. Ctrl-C or SIGTERM stops it cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import math
import os
import signal
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from protocol.version import add_version_flag

from . import fdguard
from .app import TulipsServer
from .cluster import options as cluster_options
from .cluster.workers import supervise
from .config import ServerConfig
from .lan.tls import CERT_FILE, KEY_FILE, TlsError
from .rulesets import RulesetFileError, load_files, offered
from .storage import StorageError

if TYPE_CHECKING:
    from .web import WebFront

__all__ = ["Setup", "main", "parse_args", "run"]

#: Called with the server before it starts.
Setup = Callable[[TulipsServer], None]

#: The smallest burst ``--rate-limit`` allows (twice the rate, but never fewer):
#: a client that reconnects sends its hello and a few requests at once.
MIN_RATE_BURST = 10
#: ``--web`` without a port: the one after the game's default port.
WEB_PORT = 8766


class WebUnavailable(Exception):
    """``--web`` was asked for, but the browser front cannot start."""


def _number(text: str, kind: type[int] | type[float]) -> float:
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def _positive_int(text: str) -> int:
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _ipv6_prefix(text: str) -> int:
    value = int(_number(text, int))
    if not 16 <= value <= 128:
        raise argparse.ArgumentTypeError(f"must be a prefix length from 16 to 128, got {value}")
    return value


def _seconds(text: str) -> float:
    value = _number(text, float)
    if not 0 <= value < math.inf:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number of seconds, 0 or more, got {text}")
    return value


def _positive_seconds(text: str) -> float:
    value = _number(text, float)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, more than 0, got {text}")
    return value


def _rate(text: str) -> float:
    value = _number(text, float)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be more than 0 messages a second, got {text}")
    return value


def _port(text: str) -> int:
    value = int(_number(text, int))
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {value}")
    return value


def _minutes(text: str) -> float:
    value = _number(text, float)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number of minutes, more than 0, got {text}")
    return value


def _days(text: str) -> float:
    value = _number(text, float)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number of days, more than 0, got {text}")
    return value


def _origin(text: str) -> str:
    if text == "*":
        return text
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise argparse.ArgumentTypeError(
            f"an origin is * or http(s)://host[:port], as a browser sends it; got {text!r}"
        )
    return text


class _DefaultsFormatter(argparse.HelpFormatter):
    """Ends each option's help with its default, ``(default: …)``, unless the
    help says it already or there is none to say (off, unset, empty)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            "%(default)" in text
            or "(default" in text
            or not action.option_strings
            or action.default is None
            or action.default is False  # a switch that is off; 0 and 0.0 are defaults
            or action.default == []
            or action.default == argparse.SUPPRESS
        ):
            return action.help
        return f"{text} (default: %(default)s)"


def parse_args(argv: list[str] | None = None) -> ServerConfig:
    """Read the command line into a :class:`ServerConfig` (exits on a bad flag)."""
    defaults = ServerConfig()
    parser = argparse.ArgumentParser(
        prog="tulips-server", description=__doc__, formatter_class=_DefaultsFormatter
    )
    add_version_flag(parser)
    parser.add_argument("--host", default=defaults.host, help="address to listen on")
    parser.add_argument("--port", type=_port, default=defaults.port, help="0 picks a free port")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(platformdirs.user_data_dir("gift-of-tulips")),
        help="where matches are stored (default: %(default)s)",
    )
    parser.add_argument(
        "--no-storage", action="store_true", help="keep matches in memory only (lost on exit)"
    )
    parser.add_argument(
        "--sync",
        choices=["full", "normal"],
        default="full",
        help="full: every action survives a power cut; normal: survives a crash (faster)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="what is logged (default: %(default)s)",
    )
    parser.add_argument(
        "--parent-pid",
        type=_positive_int,
        metavar="PID",
        help="stop when process PID ends: for a program that runs a server of its own "
        "(tulips play does), so that the server does not outlive it",
    )
    parser.add_argument(
        "--max-matches",
        type=_positive_int,
        default=defaults.max_matches,
        help="open and running matches at most (default: %(default)s)",
    )
    parser.add_argument(
        "--max-connections",
        type=_positive_int,
        default=defaults.max_connections,
        help="connected clients at most (default: %(default)s)",
    )
    parser.add_argument(
        "--grace-period",
        type=_seconds,
        default=defaults.grace_period,
        help="seconds before a bot plays for a player who is gone",
    )
    parser.add_argument(
        "--bot-delay",
        type=_seconds,
        default=defaults.bot_delay,
        help="seconds a bot waits before it acts",
    )
    parser.add_argument(
        "--bot-think-ms",
        type=_seconds,
        default=defaults.bot_think_ms,
        help="milliseconds a hard bot searches per decision",
    )
    parser.add_argument(
        "--stop-timeout",
        type=_seconds,
        default=defaults.stop_timeout,
        help="seconds a shutdown (Ctrl-C, SIGTERM) waits for the disk to store what was"
        " already accepted (nothing not stored by then was acknowledged) and, side by side,"
        " for clients to answer the close; one that does not is cut off"
        " (default: %(default)s)",
    )
    parser.add_argument(
        "--web",
        type=_port,
        nargs="?",
        const=WEB_PORT,
        default=None,
        metavar="PORT",
        help=f"also serve the game to browsers on PORT (default {WEB_PORT}): each tab"
        " runs the terminal client as its own player (needs the [web] extra)",
    )
    parser.add_argument(
        "--web-max-sessions",
        type=_positive_int,
        default=defaults.web_max_sessions,
        metavar="N",
        help="browser tabs playing at once; each is a client process (default: %(default)s)",
    )
    parser.add_argument(
        "--web-sessions-per-address",
        type=_positive_int,
        default=defaults.web_sessions_per_address,
        metavar="N",
        help="browser tabs one address may have playing at once, loopback too; its next "
        "tab is refused (HTTP 503) and the other seats stay for others (default: %(default)s)",
    )
    parser.add_argument(
        "--web-tab-idle",
        type=_minutes,
        default=defaults.web_tab_idle / 60,
        metavar="MINUTES",
        help="a browser tab that sends nothing (no key, no resize) this long is closed and "
        "its client process ended; reloading the tab resumes the player (default: %(default)s)",
    )
    parser.add_argument(
        "--web-tab-memory",
        type=_positive_int,
        default=defaults.web_tab_memory // 2**20,
        metavar="MIB",
        help="address space each browser tab's client process may use, in MiB (a normal "
        "tab needs under 200); past it the tab's client fails and its tab closes. Needs "
        "util-linux's prlimit (default: %(default)s)",
    )
    parser.add_argument(
        "--web-max-connections-per-address",
        type=_positive_int,
        default=defaults.web_max_connections_per_address,
        metavar="N",
        help="connections one address may hold on the web port, loopback too; more are "
        "closed at once (HTTP 429) (default: %(default)s)",
    )
    parser.add_argument(
        "--web-max-connections",
        type=_positive_int,
        default=defaults.web_max_connections,
        metavar="N",
        help="connections the web port holds at once, from everyone; more are closed at "
        "once (HTTP 503), so that it never takes what the game port needs "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--web-header-timeout",
        type=_positive_seconds,
        default=defaults.web_header_timeout,
        metavar="SECONDS",
        help="a web connection that has not sent its first request head this long after "
        "it was accepted (TLS handshake included) is closed (default: %(default)s)",
    )
    parser.add_argument(
        "--web-keepalive-timeout",
        type=_positive_seconds,
        default=defaults.web_keepalive_timeout,
        metavar="SECONDS",
        help="a web connection with no new request this long after its last response is "
        "closed; a tab's WebSocket is never cut by it (default: %(default)s)",
    )
    parser.add_argument(
        "--web-connection-lifetime",
        type=_positive_seconds,
        default=defaults.web_connection_lifetime,
        metavar="SECONDS",
        help="a web connection is closed this long after it was accepted, whatever it "
        "does, unless it is a tab's WebSocket (default: %(default)s)",
    )
    parser.add_argument(
        "--rate-limit",
        type=_rate,
        default=defaults.rate_limit,
        help="frames a second one connection may send, in bursts of up to twice that (at "
        f"least {MIN_RATE_BURST}); every frame counts, good or bad, pings and pongs "
        "included. Past it the server reads "
        "that connection more slowly; one that keeps on is closed (4008) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--max-connections-per-address",
        type=_positive_int,
        default=defaults.max_connections_per_address,
        metavar="N",
        help="connections one address may hold at once; more are refused with HTTP 429 "
        "(default: %(default)s). Loopback (127.0.0.1, ::1) is not limited, so that "
        "tulips-loadtest can run on the server's own machine",
    )
    parser.add_argument(
        "--ipv6-prefix",
        type=_ipv6_prefix,
        default=defaults.ipv6_prefix,
        metavar="BITS",
        help="an IPv6 client counts, for the per-address limits, as its whole /BITS "
        "network, the server's own LAN included, and every link-local address of one "
        "interface as one, since a device may pick any address in its /64: the IPv6 "
        "devices of one LAN share one budget (default: %(default)s; 128 counts each "
        "address alone, for a LAN whose devices you all trust)",
    )
    parser.add_argument(
        "--allow-origin",
        type=_origin,
        action="append",
        default=[],
        metavar="URL",
        help="a web page origin allowed to connect, e.g. http://tulips.lan:8080 (repeat "
        "for more; * allows every page). Browsers send their page's origin: any other is "
        "refused with HTTP 403. Programs that send no Origin are never refused",
    )
    parser.add_argument(
        "--new-players-per-minute",
        type=_rate,
        default=defaults.new_players_per_minute,
        metavar="N",
        help="new identities (hello without a token) one address may make a minute "
        "(default: %(default)s); loopback is not limited",
    )
    parser.add_argument(
        "--forget-players-after",
        type=_days,
        default=defaults.forget_players_after / 86400,
        metavar="DAYS",
        help="forget a player who has not connected for this many days and whom no kept "
        "match names; their token stops working (default: %(default)s)",
    )
    parser.add_argument(
        "--ruleset",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="offer the house ruleset in this TOML file too, under the file's name "
        "(repeat for more); the printed rules are always offered as standard. "
        "See engine/ruleset.py for the layout (default: the printed rules only)",
    )
    parser.add_argument(
        "--check-rulesets",
        action="store_true",
        help="read the --ruleset files, print the names of the rulesets offered (one a "
        "line, standard first) and exit; tulips play --ruleset checks its file so",
    )
    cluster_options.add_arguments(parser)
    parser.add_argument(
        "--name",
        default=None,
        help="the server's name on the LAN (default: Gift of Tulips on HOSTNAME), "
        "also sent to clients in welcome",
    )
    parser.add_argument(
        "--no-announce",
        action="store_true",
        help="do not announce the server on the LAN (it never is on 127.0.0.1)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help=f"serve wss:// with a self-signed certificate, made on first run in --data-dir "
        f"({CERT_FILE}, {KEY_FILE}); its fingerprint is logged for players to compare",
    )
    parser.add_argument(
        "--tls-cert",
        type=Path,
        default=None,
        metavar="FILE",
        help="serve wss:// with this PEM certificate",
    )
    parser.add_argument(
        "--tls-key",
        type=Path,
        default=None,
        metavar="FILE",
        help="the unencrypted PEM key of --tls-cert",
    )
    parser.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default=defaults.loop,
        help="the event loop; uvloop needs pip install 'gift-of-tulips[uvloop]'"
        " (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    tls_self_signed = args.tls and args.tls_cert is None
    if tls_self_signed:
        args.tls_cert, args.tls_key = args.data_dir / CERT_FILE, args.data_dir / KEY_FILE
    if args.name is not None and not (
        1 <= len(args.name.strip()) <= 40 and args.name.isprintable()
    ):
        parser.error(f"--name needs 1 to 40 printable characters, got {args.name!r}")
    try:
        house = load_files(args.ruleset)
    except RulesetFileError as exc:
        parser.error(f"--ruleset {exc}")
    if args.check_rulesets:
        print("\n".join(offered(house)))
        parser.exit(0)
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    config = ServerConfig(
        host=args.host,
        port=args.port,
        data_dir=None if args.no_storage else args.data_dir,
        sync=args.sync.upper(),
        max_matches=args.max_matches,
        max_connections=args.max_connections,
        grace_period=args.grace_period,
        bot_delay=args.bot_delay,
        bot_think_ms=args.bot_think_ms,
        rate_limit=args.rate_limit,
        rate_burst=max(MIN_RATE_BURST, math.ceil(args.rate_limit * 2)),
        max_connections_per_address=args.max_connections_per_address,
        ipv6_prefix=args.ipv6_prefix,
        allowed_origins=tuple(args.allow_origin),
        new_players_per_minute=args.new_players_per_minute,
        forget_players_after=args.forget_players_after * 86400,
        stop_timeout=args.stop_timeout,
        name=args.name.strip() if args.name else defaults.name,
        announce=not args.no_announce,
        announce_name=args.name.strip() if args.name else None,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_self_signed=tls_self_signed,
        web_port=args.web,
        web_max_sessions=args.web_max_sessions,
        web_sessions_per_address=args.web_sessions_per_address,
        web_tab_idle=args.web_tab_idle * 60,
        web_tab_memory=args.web_tab_memory * 2**20,
        web_max_connections_per_address=args.web_max_connections_per_address,
        web_max_connections=args.web_max_connections,
        web_header_timeout=args.web_header_timeout,
        web_keepalive_timeout=args.web_keepalive_timeout,
        web_connection_lifetime=args.web_connection_lifetime,
        loop=args.loop,
        parent_pid=args.parent_pid,
        rulesets=house,
    )
    return cluster_options.apply(parser, args, config)


async def run(config: ServerConfig, setup: Setup | None = None) -> None:
    """Serve until SIGINT or SIGTERM, then shut down cleanly."""
    fdguard.install(asyncio.get_running_loop())  # out of descriptors: a line, not a flood
    server = TulipsServer(config)
    if setup is not None:
        setup(server)
    await server.start()
    web = None
    watcher: asyncio.Task[None] | None = None
    try:
        if config.web_port is not None:
            web = await _start_web(config, server)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if config.parent_pid is not None:
            watcher = loop.create_task(_stop_with(config.parent_pid, stop))
        await stop.wait()
        logging.getLogger("server").info("shutting down")
    finally:
        if watcher is not None:
            watcher.cancel()
        if web is not None:  # browser players first: their clients leave the game server
            await web.stop()
        await server.stop()


async def _stop_with(pid: int, stop: asyncio.Event, every: float = 0.5) -> None:
    """Set ``stop`` once process ``pid`` has ended (polled: no signal tells a
    child that its parent died, on every system)."""
    direct = os.getppid() == pid  # then a new parent means it is gone, even if pid is reused
    while not stop.is_set():
        if direct:
            alive = os.getppid() == pid
        else:
            try:
                os.kill(pid, 0)
                alive = True
            except ProcessLookupError:
                alive = False
            except PermissionError:  # someone else's process: it exists
                alive = True
        if not alive:
            logging.getLogger("server").info("process %d ended: stopping with it", pid)
            stop.set()
            return
        await asyncio.sleep(every)


async def _start_web(config: ServerConfig, server: TulipsServer) -> WebFront:
    """Start the browser front next to the game server (with its TLS, if any)."""
    try:
        from .web import WebError, WebFront  # aiohttp and textual-serve: only with --web
        from .web.guard import GuardLimits
    except ModuleNotFoundError as exc:
        raise WebUnavailable(f"--web needs {exc.name}: pip install 'gift-of-tulips[web]'") from None
    assert config.web_port is not None
    web = WebFront(
        host=config.host,
        port=config.web_port,
        game_port=server.port,
        max_sessions=config.web_max_sessions,
        per_address=config.web_sessions_per_address,
        idle_timeout=config.web_tab_idle,
        tab_memory=config.web_tab_memory,
        tab_addresses=server.tab_addresses,
        allowed_origins=config.allowed_origins,
        names=_mdns_names(server),
        ipv6_prefix=config.ipv6_prefix,
        connections=GuardLimits(
            per_address=config.web_max_connections_per_address,
            max_connections=config.web_max_connections,
            header_timeout=config.web_header_timeout,
            keepalive_timeout=config.web_keepalive_timeout,
            lifetime=config.web_connection_lifetime,
            ipv6_prefix=config.ipv6_prefix,
        ),
        tls=server.tls.context if server.tls is not None else None,
        fingerprint=server.tls.fingerprint if server.tls is not None else None,
    )
    try:
        await web.start()
    except WebError as exc:
        raise WebUnavailable(str(exc)) from None
    return web


def _mdns_names(server: TulipsServer) -> list[str]:
    """The mDNS name the server is announced under (``HOST.local``), if announced."""
    if server.announcer is None:
        return []
    import socket

    return [f"{socket.gethostname().split('.')[0] or 'tulips'}.local"]


def tune_gc() -> None:
    """Collect the young generation less often and never scan start-up objects.

    With thousands of connections a full collection walks every frame
    buffer and connection object and stalls every match for tens of ms;
    nearly all garbage here is short-lived and freed by reference counting.
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def _loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory of the event loop called ``name``: for asyncio, its own loop
    with the accept fix of :mod:`server.fdguard`. Raises ImportError for uvloop
    when it is not installed."""
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return fdguard.new_event_loop


def main(argv: list[str] | None = None, *, setup: Setup | None = None) -> int:
    """Entry point of ``tulips-server``. ``setup`` is called with the server
    before it starts (to install hooks: the fault-injecting test runner does)."""
    config = parse_args(argv)
    if config.workers > 1 and config.worker is None:
        return supervise(config, sys.argv[1:] if argv is None else argv)
    fdguard.raise_fd_limit()  # every connection is a file descriptor
    tune_gc()
    try:
        loop_factory = _loop_factory(config.loop)
    except ImportError:
        logging.getLogger("server").error(
            "--loop uvloop: uvloop is not installed; pip install 'gift-of-tulips[uvloop]'"
        )
        return 2
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(run(config, setup))
    except (StorageError, TlsError, WebUnavailable) as exc:
        logging.getLogger("server").error("%s", exc)
        return 1
    except OSError as exc:
        logging.getLogger("server").error(
            "cannot listen on %s:%s: %s", config.host, config.port, exc.strerror or exc
        )
        return 1
    return 0
