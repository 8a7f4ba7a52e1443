"""tulips-server (also python -m server): run a Gift of Tulips server for the LAN.

Players connect to ws://HOST:PORT with "tulips connect" or any client that
speaks PROTOCOL.md; GET /healthz answers a short JSON status. Ctrl-C or
SIGTERM stops it cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import math
import resource
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import platformdirs

from .app import TulipsServer
from .cluster import options as cluster_options
from .cluster.workers import supervise
from .config import ServerConfig
from .storage import StorageError

__all__ = ["Setup", "main", "parse_args", "run"]

#: Called with the server before it starts.
Setup = Callable[[TulipsServer], None]


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


def _seconds(text: str) -> float:
    value = _number(text, float)
    if not 0 <= value < math.inf:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number of seconds, 0 or more, got {text}")
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


def parse_args(argv: list[str] | None = None) -> ServerConfig:
    """Read the command line into a :class:`ServerConfig` (exits on a bad flag)."""
    defaults = ServerConfig()
    parser = argparse.ArgumentParser(prog="tulips-server", description=__doc__)
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
        help="seconds a shutdown (Ctrl-C, SIGTERM) waits for the disk to store the actions"
        " already accepted; one not stored by then was never acknowledged",
    )
    parser.add_argument(
        "--rate-limit",
        type=_rate,
        default=defaults.rate_limit,
        help="messages a second one connection may send",
    )
    cluster_options.add_arguments(parser)
    args = parser.parse_args(argv)
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
        rate_burst=max(defaults.rate_burst, int(args.rate_limit * 2)),
        stop_timeout=args.stop_timeout,
    )
    return cluster_options.apply(parser, args, config)


async def run(config: ServerConfig, setup: Setup | None = None) -> None:
    """Serve until SIGINT or SIGTERM, then shut down cleanly."""
    server = TulipsServer(config)
    if setup is not None:
        setup(server)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    logging.getLogger("server").info("shutting down")
    await server.stop()


def tune_gc() -> None:
    """Collect the young generation less often and never scan start-up objects.

    With thousands of connections a full collection walks every frame
    buffer and connection object and stalls every match for tens of ms;
    nearly all garbage here is short-lived and freed by reference counting.
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main(argv: list[str] | None = None, *, setup: Setup | None = None) -> int:
    """Entry point of ``tulips-server``. ``setup`` is called with the server
    before it starts (to install hooks: the fault-injecting test runner does)."""
    config = parse_args(argv)
    if config.workers > 1 and config.worker is None:
        return supervise(config, sys.argv[1:] if argv is None else argv)
    _raise_fd_limit()  # every connection is a file descriptor
    tune_gc()
    try:
        asyncio.run(run(config, setup))
    except StorageError as exc:
        logging.getLogger("server").error("%s", exc)
        return 1
    except OSError as exc:
        logging.getLogger("server").error(
            "cannot listen on %s:%s: %s", config.host, config.port, exc.strerror or exc
        )
        return 1
    return 0
