"""``tulips-cluster``: look after a cluster from outside its nodes.

``tulips-cluster --cluster REDIS_URL nodes`` lists every node the cluster
knows: alive or not, where clients reach it, and how many of the lobby's
matches it holds. ``tulips-cluster --cluster REDIS_URL forget-node NODE``
takes a node that is gone for good (a machine retired, a data directory
lost) out of the cluster: its matches leave every lobby (browsers are told
with ``match_removed``), its players stop counting as connected, and the
node is no longer listed. A node still beating is refused: stop it first. A
forgotten node that starts again on its data directory simply joins again,
with its matches.

``ratings export|reset`` and ``players remove`` are the operator's tools of
``tulips-server`` for the cluster's shared ratings, history and players
(:mod:`.operations` says what each does, and when it is refused).

``--cluster-key-file`` is the nodes' key: ``forget-node``, ``ratings reset``
and ``players remove`` need it (the nodes believe only what is sealed with
it); ``nodes`` and ``ratings export`` with it show only what the nodes would
believe, and without it what Redis holds, unchecked.
Redis's password, if it has one, is given as to the nodes: ``--redis-password-file``
or ``TULIPS_REDIS_PASSWORD``, not in the URL (a command line is visible in ``ps``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from protocol.version import add_version_flag

from ..operator_tools import RATING_FIELDS, OperatorError, add_export_arguments, write_table
from . import operations
from .credentials import REDIS_PASSWORD_ENV, SecretFileError, take_env
from .entries import DirectoryEntry
from .freshness import ADMIN_SENDER
from .options import redis_password, redis_url
from .signing import KeyFileError, load_key
from .store import Store, StoreUnavailable

__all__ = ["forget_node", "main", "node_table"]


async def node_table(store: Store) -> list[tuple[str, bool, str, int]]:
    """Every known node (and any that only the directory names): ``(id, alive,
    url or "", matches listed)``, sorted by id."""
    live = await store.live_nodes()
    per_node = collections.Counter(e.node for e in (await store.directory()).values())
    nodes = sorted(set(await store.known_nodes()) | set(per_node))
    return [
        (node, node in live, live[node].url if node in live else "", per_node[node])
        for node in nodes
    ]


class StillAlive(Exception):
    """The node to forget is beating: it must be stopped first."""


class UnknownNode(Exception):
    """Neither the node list nor the directory names the node."""


async def forget_node(store: Store, node: str) -> int:
    """Take ``node`` out of the cluster (see the module docstring); how many
    matches left the lobby. Raises :class:`StillAlive` or :class:`UnknownNode`."""
    if node in await store.live_nodes():
        raise StillAlive(node)
    entries = [e for e in (await store.directory()).values() if e.node == node]
    if not entries and node not in await store.known_nodes():
        raise UnknownNode(node)
    await store.publish(
        DirectoryEntry(match=e.match, node=node, created=e.created, summary=None) for e in entries
    )
    await store.clear_online(node)
    await store.forget_node(node)
    return len(entries)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tulips-cluster",
        description="Look after a cluster of tulips-server nodes from outside them.",
    )
    add_version_flag(parser)
    parser.add_argument(
        "--cluster",
        metavar="REDIS_URL",
        type=redis_url,
        required=True,
        help="the cluster's Redis, as its nodes were given it (redis://HOST:6379/0)",
    )
    parser.add_argument(
        "--redis-password-file",
        metavar="FILE",
        type=Path,
        help=f"a file holding Redis's password (it beats {REDIS_PASSWORD_ENV})",
    )
    parser.add_argument(
        "--cluster-key-file",
        metavar="FILE",
        type=Path,
        help="the key the nodes share (their --cluster-key-file); forget-node needs it",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("nodes", help="list every node: alive or not, its URL, its matches")
    forget = commands.add_parser(
        "forget-node",
        help="take a node that is gone for good out of the cluster, with its matches",
    )
    forget.add_argument("node", help="the node's id, as the nodes command lists it")
    ratings = commands.add_parser("ratings", help="the shared ratings and history")
    ratings_do = ratings.add_subparsers(dest="do", required=True)
    export = ratings_do.add_parser("export", help="write them as CSV or JSON (nodes may run)")
    add_export_arguments(export, "every finished match of every node")
    reset = ratings_do.add_parser(
        "reset", help="start every shared rating again (history stays; nodes may run)"
    )
    reset.add_argument("--yes", action="store_true", help="really reset")
    players = commands.add_parser("players", help="the cluster's players")
    players_do = players.add_subparsers(dest="do", required=True)
    remove = players_do.add_parser(
        "remove",
        help="remove a player everywhere: tokens, rating and name (matches stay); every"
        " node must be stopped",
    )
    remove.add_argument("player", help="the player's id (a profile or an export shows it)")
    remove.add_argument("--yes", action="store_true", help="really remove")
    return parser


#: the commands that write to the store, and so need the cluster's key
_WRITES = ("forget-node", "reset", "remove")


def _command(args: argparse.Namespace) -> str:
    """The command's words, as messages name it."""
    return args.command if args.command in ("nodes", "forget-node") else f"{args.command} {args.do}"


async def _operate(store: Store, args: argparse.Namespace) -> int:
    """``ratings export|reset`` and ``players remove``."""
    if args.do == "export":
        fields: Sequence[str] = RATING_FIELDS
        if args.table == "ratings":
            rows = await operations.rating_rows(store)
        else:
            rows = await operations.history_rows(store)
            fields = operations.CLUSTER_HISTORY_FIELDS
        buffer = io.StringIO()
        count = write_table(rows, fields, args.format, buffer)
        if args.out is None:
            sys.stdout.write(buffer.getvalue())
        else:
            args.out.write_text(buffer.getvalue(), encoding="utf-8")
        if not store.checks:
            print(
                "(unchecked: without --cluster-key-file, forged values are listed too)",
                file=sys.stderr,
            )
        print(f"exported {count} {args.table} lines", file=sys.stderr)
    elif args.do == "reset":
        print(f"reset {await operations.reset_ratings(store)} ratings", file=sys.stderr)
    else:
        count = await operations.remove_player(store, args.player)
        print(
            f"removed player {args.player} ({count} matches anonymised); each node removes"
            " them from its own file when it starts",
            file=sys.stderr,
        )
    return 0


async def _run(args: argparse.Namespace) -> int:
    try:
        password = redis_password(args.redis_password_file, take_env(REDIS_PASSWORD_ENV))
    except SecretFileError as exc:
        print(f"tulips-cluster: {exc}", file=sys.stderr)
        return 1
    key = None
    if args.cluster_key_file is not None:
        try:
            key = load_key(args.cluster_key_file)
        except KeyFileError as exc:
            print(f"tulips-cluster: {exc}", file=sys.stderr)
            return 1
    elif getattr(args, "do", args.command) in _WRITES:
        print(
            f"tulips-cluster: {_command(args)} needs --cluster-key-file, the key the nodes"
            " share (they believe only what is sealed with it)",
            file=sys.stderr,
        )
        return 1
    if getattr(args, "do", None) in ("reset", "remove") and not args.yes:
        print(
            f"tulips-cluster: {_command(args)} changes the cluster's store for good: add --yes",
            file=sys.stderr,
        )
        return 1
    store = Store(args.cluster, key, sender=ADMIN_SENDER, password=password)
    try:
        if args.command == "nodes":
            rows = await node_table(store)
            if not rows:
                print("no node has joined this cluster")
            if not store.checks:
                print(
                    "(unchecked: without --cluster-key-file, forged nodes are listed too)",
                    file=sys.stderr,
                )
            for node, alive, url, matches in rows:
                state = "alive" if alive else "gone "
                print(f"{node}  {state}  {matches:4d} matches  {url}".rstrip())
            return 0
        if args.command in ("ratings", "players"):
            try:
                return await _operate(store, args)
            except (OperatorError, OSError) as exc:
                print(f"tulips-cluster: {_command(args)}: {exc}", file=sys.stderr)
                return 1
        try:
            count = await forget_node(store, args.node)
        except StillAlive:
            print(
                f"tulips-cluster: node {args.node} is alive (its heartbeat is fresh); "
                "stop it first, then forget it",
                file=sys.stderr,
            )
            return 1
        except UnknownNode:
            print(f"tulips-cluster: this cluster knows no node {args.node}", file=sys.stderr)
            return 1
        print(f"forgot node {args.node}: {count} matches left the lobby")
        return 0
    except StoreUnavailable as exc:
        print(f"tulips-cluster: cannot reach {store.url}: {exc}", file=sys.stderr)
        return 1
    finally:
        await store.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``tulips-cluster``."""
    return asyncio.run(_run(_parser().parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
