"""tulips-server (also python -m server): run a Gift of Tulips server for the LAN.

Players connect to ws://HOST:PORT (wss:// with --tls) with "tulips connect"
or any client that speaks PROTOCOL.md; GET /healthz answers a short JSON
status. On a LAN address the server announces itself, so "tulips connect"
lists it. With --web, browsers on the LAN play at http://HOST:WEBPORT too,
nothing to install. Ctrl-C or SIGTERM stops it cleanly.

The operator's tools, on a data directory no server uses: "tulips-server
ratings export|reset" and "tulips-server players remove" (each with --help).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol.limits import MAX_NAME_LENGTH
from protocol.version import add_version_flag

from . import fdguard, operator_tools
from .app import TulipsServer
from .cluster import options as cluster_options
from .cluster.workers import supervise
from .config import GROUPS, WEB_PORT, ServerConfig, rate_burst
from .lan.tls import CERT_FILE, KEY_FILE, TlsError
from .rulesets import RulesetFileError, load_files, offered
from .settings import Setting, command_line_default, declared
from .storage import StorageError

if TYPE_CHECKING:
    from .web import WebFront

__all__ = ["WEB_PORT", "Setup", "build_parser", "help_text", "main", "parse_args", "run"]

#: Called with the server before it starts.
Setup = Callable[[TulipsServer], None]


class WebUnavailable(Exception):
    """``--web`` was asked for, but the browser front cannot start."""


def _help_template(action: argparse.Action) -> str | None:
    """An option's help ending with its default, ``(default: %(default)s)``, unless
    the help says it already or there is none to say (a switch, unset, empty)."""
    text = action.help or ""
    if (
        "%(default)" in text
        or "(default" in text
        or not action.option_strings
        or action.nargs == 0  # a switch: its default is "not given"
        or action.default is None
        or action.default == []
        or action.default == argparse.SUPPRESS
    ):
        return action.help
    return f"{text} (default: %(default)s)"


def help_text(action: argparse.Action, default: object) -> str:
    """An option's help as ``--help`` shows it, on one line, saying ``default``."""
    return " ".join(((_help_template(action) or "") % {"default": default}).split())


class _DefaultsFormatter(argparse.HelpFormatter):
    """Ends each option's help with its default (:func:`_help_template`)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return _help_template(action)


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``tulips-server``: a flag for each setting declared on
    :class:`ServerConfig`, in its group, then the flags that are no one setting's value."""
    parser = argparse.ArgumentParser(
        prog="tulips-server", description=__doc__, formatter_class=_DefaultsFormatter
    )
    add_version_flag(parser)
    groups: dict[str, argparse._ActionsContainer] = {"": parser}
    for title, purpose in GROUPS.items():
        groups[title] = parser.add_argument_group(title, purpose)
    for field, how in declared(ServerConfig):
        _add_setting(groups[how.group], field, how)
    _add_other_flags(parser)
    cluster_options.add_arguments(groups["cluster"])
    return parser


def _add_setting(
    parser: argparse._ActionsContainer, field: dataclasses.Field[Any], how: Setting
) -> None:
    """The flag that sets ``field``, read as ``how`` says, its value at ``args.<field name>``."""
    default = command_line_default(field, how)
    flag = how.flag_for(field.name)
    if isinstance(default, bool):  # a switch turns the default over
        action = "store_false" if default else "store_true"
        parser.add_argument(flag, dest=field.name, action=action, help=how.help)
        return
    options: dict[str, Any] = {"type": how.parse, "metavar": how.metavar}
    if how.choices is not None:
        options["choices"] = list(how.choices)
    if how.const is not None:
        options.update(nargs="?", const=how.const)
    if isinstance(default, tuple):
        options.update(action="append", default=[])
    else:
        options["default"] = how.to_flag(default)
    parser.add_argument(flag, dest=field.name, help=how.help, **options)


def _add_other_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that are not one setting's value: they switch storage or TLS
    on and off, or read files the server offers (:func:`parse_args` applies them)."""
    parser.add_argument(
        "--no-storage", action="store_true", help="keep matches in memory only (lost on exit)"
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help=f"serve wss:// with a self-signed certificate, made on first run in --data-dir "
        f"({CERT_FILE}, {KEY_FILE}); its fingerprint is logged for players to compare",
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


def parse_args(argv: list[str] | None = None) -> ServerConfig:
    """Read the command line into a :class:`ServerConfig` (exits on a bad flag)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    values = {
        field.name: how.to_field(getattr(args, field.name)) for field, how in declared(ServerConfig)
    }
    if args.no_storage:
        values["data_dir"] = None
    values.update(_tls(parser, args))
    values.update(_name(parser, values["announce_name"]))
    try:
        values["rulesets"] = load_files(args.ruleset)
    except RulesetFileError as exc:
        parser.error(f"--ruleset {exc}")
    if args.check_rulesets:
        print("\n".join(offered(values["rulesets"])))
        parser.exit(0)
    logging.basicConfig(
        level=values["log_level"], format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    config = ServerConfig(**values, rate_burst=rate_burst(values["rate_limit"]))
    return cluster_options.apply(parser, args, config)


def _tls(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """The TLS settings of ``--tls``, or of ``--tls-cert`` with ``--tls-key``."""
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    if not args.tls or args.tls_cert is not None:
        return {"tls_self_signed": False}
    folder = args.data_dir
    return {"tls_cert": folder / CERT_FILE, "tls_key": folder / KEY_FILE, "tls_self_signed": True}


def _name(parser: argparse.ArgumentParser, given: str | None) -> dict[str, Any]:
    """The server's name from ``--name``: in welcome and on the LAN."""
    if given is None:
        return {}
    name = given.strip()
    if not (1 <= len(name) <= MAX_NAME_LENGTH and given.isprintable()):
        parser.error(f"--name needs 1 to {MAX_NAME_LENGTH} printable characters, got {given!r}")
    return {"name": name, "announce_name": name}


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
    before it starts (to install hooks: the fault-injecting test runner does).
    ``tulips-server ratings …`` and ``tulips-server players …`` run the
    operator's tools instead (:mod:`.operator_tools`)."""
    words = sys.argv[1:] if argv is None else argv
    if words and words[0] in operator_tools.COMMANDS:
        return operator_tools.main(words)
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
