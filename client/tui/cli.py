"""``tulips``: the terminal client's command line.

    tulips play [--players 4] [--strength medium] [--ruleset FILE] [--name Ana] [--lang de]
    tulips learn [--name Ana] [--lang es]
    tulips connect [ws://HOST:PORT | wss://HOST:PORT] [--fingerprint SHA256:…] [--name Ana]
                   [--lang es] [--identity-file PATH] [--link CODE]
    tulips servers [--timeout 3] [--json] [--interface eth0]
    tulips forget HOST:PORT

``play`` starts a local server (a subprocess on a free port) with bots in the
other seats and opens the table; ``learn`` does the same for a tutorial match
(the server's fixed deal, each rule explained the first time it matters);
``connect`` joins a server on the LAN — with no address, it lists the servers
it finds there to pick one; ``servers`` prints the servers found, for
scripts; ``forget`` drops a server's remembered certificate
(:mod:`client.trust`). ``connect --link CODE`` makes this device the player
whose other device showed the code (its profile: "Link a device"), and
remembers that player's token for the server. A bad address or an
unreachable server is one line on stderr and exit status 2 or 1, never a
traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import getpass
import json
import math
import os
import re
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from protocol import STRENGTHS
from protocol.lan import parse_fingerprint
from protocol.limits import MAX_ID_LENGTH, MAX_NAME_LENGTH
from protocol.version import add_version_flag

from .i18n import LANGUAGES, detect_language, set_language, t

__all__ = ["main", "parse_args", "websocket_url"]

DEFAULT_PORT = 8765
#: A URL's port, written out: what :func:`websocket_url` tells from a malformed address.
_PORT = re.compile(r":[0-9]+/?$")


def websocket_url(text: str) -> str:
    """``ws://host:port`` from what a person typed (``host``, ``host:port`` or a URL)."""
    candidate = text.strip()
    if "://" not in candidate:
        candidate = "ws://" + candidate
    try:
        parts = urlsplit(candidate)
        port = parts.port
    except ValueError:
        if _PORT.search(candidate):  # digits, but more than a port holds
            raise argparse.ArgumentTypeError(t("cli.bad_port", url=text)) from None
        raise argparse.ArgumentTypeError(t("cli.bad_url", url=text)) from None
    if port == 0:
        raise argparse.ArgumentTypeError(t("cli.bad_port", url=text))
    if parts.scheme not in ("ws", "wss") or not parts.hostname or parts.path not in ("", "/"):
        raise argparse.ArgumentTypeError(t("cli.bad_url", url=text))
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}:{port if port is not None else DEFAULT_PORT}"


def unreachable(url: str, timeout: float = 5.0) -> str | None:
    """Why nothing answers at ``url``'s host and port, or None if something does.

    A quick TCP check before the terminal is taken over, so a mistyped or
    offline address is one clean line rather than a flash of the app."""
    parts = urlsplit(url)
    default = 443 if parts.scheme == "wss" else DEFAULT_PORT
    try:
        with socket.create_connection((parts.hostname or "", parts.port or default), timeout):
            return None
    except OSError as exc:
        return t(
            "error.unreachable", url=url, reason=exc.strerror or str(exc) or type(exc).__name__
        )


def _fingerprint(text: str) -> str:
    try:
        return parse_fingerprint(text)
    except ValueError:
        raise argparse.ArgumentTypeError(t("cli.bad_fingerprint", text=text)) from None


def _timeout(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 3600 or math.isnan(seconds):
        raise argparse.ArgumentTypeError(t("cli.bad_timeout"))
    return seconds


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(t("cli.bad_count"))
    return int(text)


def _name(text: str) -> str:
    name = text.strip()
    if not 1 <= len(name) <= MAX_NAME_LENGTH or not name.isprintable():
        raise argparse.ArgumentTypeError(t("cli.bad_name"))
    return name


def _link(text: str) -> str:
    code = text.strip()
    if not 1 <= len(code) <= MAX_ID_LENGTH or not code.isprintable():
        raise argparse.ArgumentTypeError(t("cli.bad_link"))
    return code


def _language(text: str) -> str:
    if text not in LANGUAGES:
        raise argparse.ArgumentTypeError(
            t("cli.bad_lang", lang=text, languages=", ".join(LANGUAGES))
        )
    return text


def _players(text: str) -> int:
    try:
        players = int(text)
    except ValueError:
        players = 0
    if not 2 <= players <= 6:
        raise argparse.ArgumentTypeError(t("cli.bad_players"))
    return players


def default_name() -> str:
    """The login name, if it makes a display name; else the catalogue's."""
    try:
        name = getpass.getuser().strip()
    except (OSError, KeyError):
        name = ""
    return name[:MAX_NAME_LENGTH] if name and name.isprintable() else t("cli.default_name")


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--name", type=_name, default=None, help=t("cli.help.name"))
    common.add_argument(
        "--lang", type=_language, metavar="LANG", default=None, help=t("cli.help.lang")
    )
    common.add_argument("--no-bell", action="store_true", help=t("cli.help.no_bell"))
    parser = argparse.ArgumentParser(prog="tulips", description=t("cli.description"))
    add_version_flag(parser, t("cli.help.version"))
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="{play,learn,connect,servers,forget}"
    )
    play = commands.add_parser("play", parents=[common], help=t("cli.help.play"))
    play.add_argument("--players", type=_players, default=4, help=t("cli.help.players"))
    play.add_argument(
        "--strength", choices=STRENGTHS, default="medium", help=t("cli.help.strength")
    )
    play.add_argument(
        "--ruleset", type=Path, default=None, metavar="FILE", help=t("cli.help.ruleset")
    )
    play.add_argument("--bot-delay", type=float, default=0.6, help=argparse.SUPPRESS)
    learn = commands.add_parser(
        "learn", parents=[common], help=t("cli.help.learn"), description=t("cli.learn")
    )
    learn.add_argument("--bot-delay", type=float, default=0.6, help=argparse.SUPPRESS)
    lan = argparse.ArgumentParser(add_help=False)
    lan.add_argument(
        "--interface",
        action="append",
        default=[],
        metavar="NAME",
        help=t("cli.help.interface"),
    )
    connect = commands.add_parser("connect", parents=[common, lan], help=t("cli.help.connect"))
    connect.add_argument("url", type=websocket_url, nargs="?", help=t("cli.help.url"))
    connect.add_argument(
        "--fingerprint", type=_fingerprint, metavar="SHA256:…", help=t("cli.help.fingerprint")
    )
    connect.add_argument(
        "--identity-file", type=Path, default=None, metavar="PATH", help=t("cli.help.identity_file")
    )
    connect.add_argument(
        "--link", type=_link, default=None, metavar="CODE", help=t("cli.help.link")
    )
    servers = commands.add_parser("servers", parents=[common, lan], help=t("cli.help.servers"))
    servers.add_argument("--timeout", type=_timeout, default=3.0, help=t("cli.help.timeout"))
    servers.add_argument("--count", type=_count, default=None, help=t("cli.help.count"))
    servers.add_argument("--json", action="store_true", help=t("cli.help.json"))
    forget = commands.add_parser("forget", parents=[common], help=t("cli.help.forget"))
    forget.add_argument(
        "server", type=websocket_url, metavar="HOST:PORT", help=t("cli.help.server")
    )
    return parser


def list_servers(args: argparse.Namespace) -> int:
    """``tulips servers``: browse for ``--timeout`` seconds and print what was found."""
    from client.discovery import browse, interface_addresses

    try:
        interface_addresses(args.interface)
        found = asyncio.run(browse(args.timeout, interfaces=args.interface, count=args.count))
    except (OSError, ValueError) as exc:
        print(
            f"tulips: {t('error.browse', reason=str(exc) or type(exc).__name__)}", file=sys.stderr
        )
        return 1
    if args.json:
        print(json.dumps([server.to_json() for server in found], indent=1))
    elif not found:
        print(t("servers.none", seconds=f"{args.timeout:g}"), file=sys.stderr)
    for server in [] if args.json else found:
        print(
            t(
                "servers.line",
                name=server.name,
                url=server.url,
                players=server.players,
                matches=server.open_matches,
                seats=server.open_seats,
            )
        )
        if server.fingerprint:
            print("    " + server.fingerprint)
    return 0 if found else 1


def forget_server(args: argparse.Namespace) -> int:
    """``tulips forget HOST:PORT``: trust that server's certificate afresh next time."""
    from client.trust import KnownServers, server_key

    known = KnownServers()
    key = server_key(args.server)
    try:
        forgotten = known.forget(key)
    except OSError as exc:
        print(f"tulips: {known.path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if not forgotten:
        print(t("forget.unknown", server=key, path=known.path), file=sys.stderr)
        return 1
    print(t("forget.done", server=key, path=known.path))
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Read the command line (exits with status 2 and one message when it is wrong)."""
    args = list(sys.argv[1:] if argv is None else argv)
    early = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    early.add_argument("--lang", default=None)
    try:
        known, _ = early.parse_known_args(args)
    except argparse.ArgumentError:  # "--lang" with no code: the full parser says so
        known = argparse.Namespace(lang=None)
    # before any help text is built; a --lang there is not is the full parser's to refuse
    wanted = known.lang if known.lang in LANGUAGES else None
    set_language(wanted or detect_language(os.environ))
    return _parser().parse_args(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tulips``."""
    args = parse_args(argv)
    name = args.name or default_name()
    if args.command == "servers":
        return list_servers(args)
    if args.command == "forget":
        return forget_server(args)
    try:
        from .app import Plan, QuickMatch, TulipsApp  # after parsing: --help stays instant
    except ModuleNotFoundError as exc:  # a server-only install: no Textual, nor Rich
        if (exc.name or "").partition(".")[0] not in ("textual", "rich"):
            raise
        print(f"tulips: {t('cli.no_textual')}", file=sys.stderr)
        return 1
    from client.localserver import LocalServer, LocalServerError, check_ruleset
    from client.trust import KnownServers

    from .hangup import HangupGuard
    from .identity import IdentityStore

    local = None
    bell = not args.no_bell
    if args.command == "play":
        rulesets = () if args.ruleset is None else (args.ruleset,)
        ruleset = None
        if args.ruleset is not None:
            try:  # the server reads the file: a bad one is told before the screen opens
                ruleset = check_ruleset(args.ruleset)
            except LocalServerError as exc:
                print(f"tulips: {exc}", file=sys.stderr)
                return 2
        local = LocalServer(bot_delay=args.bot_delay, rulesets=rulesets)
        plan = Plan(
            name=name,
            local=local,
            quick=QuickMatch(args.players, args.strength, ruleset),
            bell=bell,
            ruleset=ruleset,
        )
    elif args.command == "learn":
        local = LocalServer(bot_delay=args.bot_delay)
        plan = Plan(name=name, local=local, quick=QuickMatch(tutorial=True), bell=bell)
    elif args.url is None:
        plan = Plan(
            name=name,
            discover=True,
            interfaces=tuple(args.interface),
            fingerprint=args.fingerprint,
            bell=bell,
            link=args.link,
        )
    else:
        why = unreachable(args.url)
        if why is not None:
            print(f"tulips: {why}", file=sys.stderr)
            return 1
        plan = Plan(
            name=name, url=args.url, fingerprint=args.fingerprint, bell=bell, link=args.link
        )
    identity = IdentityStore(getattr(args, "identity_file", None))  # play has no such flag
    # its terminal gone, the client ends within a second, and its local server first
    hangup = HangupGuard(functools.partial(local.stop, 0.2) if local is not None else None)
    app = TulipsApp(
        plan,
        identity=identity,
        known_servers=KnownServers(),
        handle_signals=True,
        hangup=hangup,
    )
    try:
        app.run()
    finally:
        if local is not None:
            local.stop()
    if app.failure:
        print(f"tulips: {app.failure}", file=sys.stderr)
        return app.return_code or 1
    return app.return_code or 0


if __name__ == "__main__":
    raise SystemExit(main())
