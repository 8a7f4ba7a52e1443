"""The cluster's command-line flags of ``tulips-server``, and what they make of
its :class:`~server.config.ServerConfig` (kept here so ``server/cli.py`` only
calls two functions)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from urllib.parse import urlsplit

from ..config import ServerConfig
from .credentials import REDIS_PASSWORD_ENV, SecretFileError, read_private, take_env
from .naming import check_node_id
from .signing import KEY_ENV, KeyFileError, load_key, parse_key
from .workers import worker_config

__all__ = ["add_arguments", "apply", "redis_password", "redis_url"]


def redis_url(text: str) -> str:
    """``text`` if it is a Redis URL (for argparse)."""
    if urlsplit(text).scheme not in ("redis", "rediss", "unix"):
        raise argparse.ArgumentTypeError(f"expected redis://HOST:PORT/DB, got {text!r}")
    return text


def _ws_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"expected ws://HOST:PORT, got {text!r}")
    return text


def _node_id(text: str) -> str:
    try:
        return check_node_id(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"must be 1 to 64, got {value}")
    return value


def _heartbeat(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0.05 <= value <= 60:
        raise argparse.ArgumentTypeError(f"must be 0.05 to 60 seconds, got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--cluster``, ``--redis-password-file``, ``--cluster-key-file``,
    ``--public-url``, ``--workers``, ``--node-id``, ``--heartbeat``."""
    group = parser.add_argument_group(
        "cluster", "several nodes sharing one lobby through Redis (README: Architecture)"
    )
    group.add_argument(
        "--cluster",
        metavar="REDIS_URL",
        type=redis_url,
        help="join the cluster of every node naming this Redis (redis://HOST:6379/0);"
        " give Redis's password with --redis-password-file or in the environment"
        f" ({REDIS_PASSWORD_ENV}), not in this URL: a command line is visible to every"
        " user of the machine (ps)",
    )
    group.add_argument(
        "--redis-password-file",
        metavar="FILE",
        type=Path,
        help="a file, readable by its owner only, holding Redis's password (requirepass);"
        f" it beats {REDIS_PASSWORD_ENV}. --workers hands it to its workers in their"
        " environment",
    )
    group.add_argument(
        "--cluster-key-file",
        metavar="FILE",
        type=Path,
        help="the key every node of the cluster shares, which seals what they keep in"
        " Redis (64 hex digits: openssl rand -hex 32 > FILE; chmod 600 FILE); needed"
        " with --cluster, except that --workers makes one for its own workers",
    )
    group.add_argument(
        "--public-url",
        type=_ws_url,
        help="the URL clients should use to reach this node (default: ws://HOST:PORT);"
        " with --workers, each worker's is this one with the worker's own port",
    )
    group.add_argument(
        "--workers",
        type=_workers,
        default=1,
        help="start this many nodes on this machine sharing --port (needs --cluster;"
        " not with --web, whose tabs must reach the node that let them in);"
        " worker I also listens on --port + 1 + I and keeps its data in DATA_DIR/node-I",
    )
    group.add_argument(
        "--node-id",
        type=_node_id,
        help="this node's id (default: the one kept in the data directory, made on first start)",
    )
    group.add_argument(
        "--heartbeat",
        type=_heartbeat,
        default=ServerConfig().heartbeat,
        help="seconds between heartbeats; a node is taken for dead after three missed"
        " (default: %(default)s)",
    )
    group.add_argument("--worker", type=int, help=argparse.SUPPRESS)


def apply(
    parser: argparse.ArgumentParser, args: argparse.Namespace, config: ServerConfig
) -> ServerConfig:
    """``config`` with the cluster flags in it (exits on flags that do not fit together).

    The secrets given in the environment are taken out of it here, whatever the
    flags: no process this one starts inherits them."""
    given_key = take_env(KEY_ENV)
    given_password = take_env(REDIS_PASSWORD_ENV)
    if args.workers > 1 and getattr(args, "web", None) is not None:
        parser.error(
            "--web cannot go with --workers: the workers share the game port, so a browser"
            " tab's client could reach a worker that does not know the tab, and count there"
            " as this machine's own address; run the browser front on a node of its own"
            " (tulips-server --cluster … --web, without --workers)"
        )
    if args.cluster is None:
        if args.workers > 1:
            parser.error("--workers needs --cluster: the workers share their lobby through Redis")
        for flag in ("public_url", "node_id", "cluster_key_file", "redis_password_file"):
            if getattr(args, flag) is not None:
                parser.error(f"--{flag.replace('_', '-')} needs --cluster")
        return config
    if config.port == 0 and (args.public_url is None or args.workers > 1):
        parser.error("--cluster needs a fixed --port (or, for one node, --public-url)")
    if config.port + args.workers > 65535:
        parser.error(f"--workers {args.workers} needs ports up to {config.port + args.workers}")
    if (
        config.tls_cert is not None
        and args.public_url is not None
        and urlsplit(args.public_url).scheme != "wss"
    ):
        parser.error(
            "--public-url must be wss:// with --tls: this node serves TLS, and its"
            " redirects must not send players' tokens in clear"
        )
    config = dataclasses.replace(
        config,
        cluster=args.cluster,
        cluster_key=_cluster_key(parser, args, given_key),
        redis_password=_redis_password(parser, args, given_password),
        public_url=args.public_url,
        node_id=args.node_id,
        heartbeat=args.heartbeat,
        workers=args.workers,
    )
    if args.worker is not None:
        if not 0 <= args.worker < args.workers:
            parser.error(f"--worker must be 0 to {args.workers - 1}")
        config = worker_config(config, args.worker)
    return config


def redis_password(path: Path | None, given: str | None) -> str | None:
    """Redis's password: the one in the file ``path``, else ``given`` (from the
    environment); raises :class:`SecretFileError` for a file that cannot be used."""
    if path is None:
        return given or None
    text = read_private(
        path, "Redis password file", "whoever holds the password can change the cluster's Redis"
    ).strip()
    if not text or "\n" in text:
        raise SecretFileError(f"Redis password file {path} must hold the password on one line")
    return text


def _redis_password(
    parser: argparse.ArgumentParser, args: argparse.Namespace, given: str | None
) -> str | None:
    try:
        password = redis_password(args.redis_password_file, given)
    except SecretFileError as exc:
        parser.error(str(exc))
    if password is not None and urlsplit(args.cluster).password is not None:
        parser.error(
            "Redis's password is given twice: in the --cluster URL and in"
            f" --redis-password-file or {REDIS_PASSWORD_ENV}; keep it out of the URL"
        )
    return password


def _cluster_key(
    parser: argparse.ArgumentParser, args: argparse.Namespace, given: str | None
) -> bytes | None:
    """The key of ``--cluster-key-file``, or the one ``--workers`` gave this worker
    (``given``, from the environment); None for a ``--workers`` supervisor given
    none (it makes one); else exits."""
    try:
        if args.cluster_key_file is not None:
            return load_key(args.cluster_key_file)
        if args.worker is not None:
            if given is None:
                parser.error(f"--worker is for the workers of --workers (no {KEY_ENV})")
            return parse_key(given, KEY_ENV)
    except KeyFileError as exc:
        parser.error(str(exc))
    if args.workers > 1:
        return None
    parser.error(
        "--cluster needs --cluster-key-file FILE: the key every node of the cluster"
        " shares, so that no one who can write to Redis can pose as a node and collect"
        " the players sent there. Make one with: openssl rand -hex 32 > FILE &&"
        " chmod 600 FILE — and give every node the same file"
    )
