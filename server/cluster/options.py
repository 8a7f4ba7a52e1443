"""The cluster's secret files on ``tulips-server``'s command line, and the checks
that the cluster's settings fit together (kept here so ``server/cli.py`` only
calls two functions). The settings themselves, ``--cluster``, ``--workers`` and
the rest, are declared on :class:`~server.config.ServerConfig`."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from urllib.parse import urlsplit

from ..config import ServerConfig
from ..settings import redis_url
from .credentials import REDIS_PASSWORD_ENV, SecretFileError, read_private, take_env
from .signing import KEY_ENV, KeyFileError, load_key, parse_key
from .workers import worker_config

__all__ = ["add_arguments", "apply", "redis_password", "redis_url"]


def add_arguments(group: argparse._ActionsContainer) -> None:
    """Add ``--redis-password-file`` and ``--cluster-key-file`` to ``group``: the
    files the cluster's secrets are read from (the cluster's settings, ``--cluster``
    and the rest, are declared on :class:`~server.config.ServerConfig`)."""
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


#: The flags that mean nothing without ``--cluster``, in the order they are checked.
_NEED_CLUSTER = ("--public-url", "--node-id", "--cluster-key-file", "--redis-password-file")


def apply(
    parser: argparse.ArgumentParser, args: argparse.Namespace, config: ServerConfig
) -> ServerConfig:
    """``config`` with the cluster's secrets in it, for a worker its own settings
    (exits on settings that do not fit together).

    The secrets given in the environment are taken out of it here, whatever the
    flags: no process this one starts inherits them."""
    given_key = take_env(KEY_ENV)
    given_password = take_env(REDIS_PASSWORD_ENV)
    if config.workers > 1 and config.web_port is not None:
        parser.error(
            "--web cannot go with --workers: the workers share the game port, so a browser"
            " tab's client could reach a worker that does not know the tab, and count there"
            " as this machine's own address; run the browser front on a node of its own"
            " (tulips-server --cluster … --web, without --workers)"
        )
    if config.cluster is None:
        if config.workers > 1:
            parser.error("--workers needs --cluster: the workers share their lobby through Redis")
        given = (config.public_url, config.node_id, args.cluster_key_file, args.redis_password_file)
        for flag, value in zip(_NEED_CLUSTER, given, strict=True):
            if value is not None:
                parser.error(f"{flag} needs --cluster")
        return config
    if config.port == 0 and (config.public_url is None or config.workers > 1):
        parser.error("--cluster needs a fixed --port (or, for one node, --public-url)")
    if config.port + config.workers > 65535:
        parser.error(f"--workers {config.workers} needs ports up to {config.port + config.workers}")
    if (
        config.tls_cert is not None
        and config.public_url is not None
        and urlsplit(config.public_url).scheme != "wss"
    ):
        parser.error(
            "--public-url must be wss:// with --tls: this node serves TLS, and its"
            " redirects must not send players' tokens in clear"
        )
    config = dataclasses.replace(
        config,
        cluster_key=_cluster_key(parser, args, given_key),
        redis_password=_redis_password(parser, args, given_password),
    )
    if config.worker is not None:
        if not 0 <= config.worker < config.workers:
            parser.error(f"--worker must be 0 to {config.workers - 1}")
        config = worker_config(config, config.worker)
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
