"""The operator's tools for ratings and players, on a data directory's
database file (while no server uses it)::

    tulips-server ratings export [--what ratings|history] [--format csv|json] [--out FILE]
    tulips-server ratings reset --yes
    tulips-server players remove PLAYER_ID --yes

``export`` writes the ratings (every player and bot strength, best first) or
the history (one line per seat of every finished match) as CSV or JSON.
``reset`` starts every rating again (history keeps the changes it shows).
``remove`` removes a player: their tokens and rating go, and their name in the
matches they played reads ``removed player`` (the matches stay).

A server holds a lock on its data directory while it runs; the tools refuse
to change (or read) a database a server uses, and say so.
"""

from __future__ import annotations

import argparse
import csv
import fcntl
import io
import json
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import platformdirs

from .ratings.cards import REMOVED_NAME, bot_name
from .ratings.model import STRENGTH_OF
from .storage import FILE_NAME, Storage, StorageError
from .storage.database import LOCK_NAME

__all__ = [
    "COMMANDS",
    "OperatorError",
    "add_export_arguments",
    "main",
    "remove_from",
    "write_table",
]

#: the first words that make ``tulips-server`` run these tools
COMMANDS = ("ratings", "players")
#: the token column of a removed player: no token hashes to it
REMOVED_TOKEN = "removed:"

RATING_FIELDS = ("rank", "player", "name", "kind", "mu", "sigma", "ordinal", "matches", "wins")
HISTORY_FIELDS = (
    "match",
    "finished",
    "name",
    "ruleset",
    "rated",
    "seat",
    "player",
    "player_name",
    "bot",
    "points",
    "place",
    "counted",
    "mu_before",
    "sigma_before",
    "mu_after",
    "sigma_after",
)


class OperatorError(Exception):
    """What the operator asked cannot be done; the message says why."""


def add_export_arguments(export: argparse.ArgumentParser, matches: str) -> None:
    """``ratings export``'s options (``--what``, ``--format``, ``--out``), the same
    for one server's file and a cluster's store; ``matches``: whose history."""
    export.add_argument(
        "--what",
        dest="table",
        choices=("ratings", "history"),
        default="ratings",
        help=f"the ratings, best first, or one line per seat of {matches} (default: ratings)",
    )
    export.add_argument("--format", choices=("csv", "json"), default="csv", help="(default: csv)")
    export.add_argument("--out", type=Path, help="the file to write (default: standard output)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tulips-server",
        description="Operator's tools: export or reset the ratings, remove a player. They work "
        "on the database file of a data directory that no server uses now.",
        allow_abbrev=False,
    )
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument(
        "--data-dir",
        type=Path,
        default=Path(platformdirs.user_data_dir("gift-of-tulips")),
        help="the server's data directory (default: your user data directory)",
    )
    what = parser.add_subparsers(dest="what", required=True)
    ratings = what.add_parser("ratings", help="the ratings and the history of finished matches")
    ratings_do = ratings.add_subparsers(dest="do", required=True)
    export = ratings_do.add_parser("export", parents=[data], help="write them as CSV or JSON")
    add_export_arguments(export, "every finished match")
    reset = ratings_do.add_parser(
        "reset", parents=[data], help="start every rating again (history stays)"
    )
    reset.add_argument("--yes", action="store_true", help="really reset")
    players = what.add_parser("players", help="the players")
    players_do = players.add_subparsers(dest="do", required=True)
    remove = players_do.add_parser(
        "remove", parents=[data], help="remove a player: tokens, rating and name (matches stay)"
    )
    remove.add_argument("player", help="the player's id (a profile or an export shows it)")
    remove.add_argument("--yes", action="store_true", help="really remove")
    return parser


def _open(data_dir: Path) -> tuple[sqlite3.Connection, Any]:
    """The database of ``data_dir`` (checked, and migrated to this version), with
    the server lock held so that no server starts on it meanwhile."""
    path = data_dir / FILE_NAME
    if not path.is_file():
        raise OperatorError(f"no database at {path}: is --data-dir the server's?")
    lock = open(data_dir / LOCK_NAME, "a+b")  # noqa: SIM115
    try:
        fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        raise OperatorError(
            f"a server is using {data_dir} now; stop it first (its database must not "
            "change under it)"
        ) from None
    try:
        storage = Storage(data_dir)
        storage.open()  # checks it is ours, and migrates an older one
        storage.close()
    except StorageError as exc:
        lock.close()
        raise OperatorError(str(exc)) from None
    fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # storage's close let go of it
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA busy_timeout = 5000")
    return connection, lock


def _rating_rows(db: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT r.player, p.name, r.mu, r.sigma, r.matches, r.wins FROM ratings r"
        " LEFT JOIN players p ON p.id = r.player ORDER BY r.mu - 3 * r.sigma DESC, r.player"
    ).fetchall()
    out = []
    for rank, (player, name, mu, sigma, matches, wins) in enumerate(rows, 1):
        strength = STRENGTH_OF.get(player)
        out.append(
            {
                "rank": rank,
                "player": player,
                "name": bot_name(strength) if strength else (name or REMOVED_NAME),
                "kind": "bot" if strength else "human",
                "mu": mu,
                "sigma": sigma,
                "ordinal": mu - 3 * sigma,
                "matches": matches,
                "wins": wins,
            }
        )
    return out


def _history_rows(db: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT r.match_id, r.finished, r.name, r.ruleset, r.rated, s.seat, s.player, s.name,"
        " s.bot, s.points, s.place, s.counted, s.mu_before, s.sigma_before, s.mu_after,"
        " s.sigma_after FROM results r JOIN result_seats s ON s.match_id = r.match_id"
        " ORDER BY r.rowid, s.seat"
    ).fetchall()
    return [dict(zip(HISTORY_FIELDS, row, strict=True)) for row in rows]


def export(db: sqlite3.Connection, table: str, form: str, out: TextIO) -> int:
    """Write the ratings or the history to ``out``; how many lines."""
    rows = _rating_rows(db) if table == "ratings" else _history_rows(db)
    fields = RATING_FIELDS if table == "ratings" else HISTORY_FIELDS
    return write_table(rows, fields, form, out)


def write_table(rows: list[dict[str, Any]], fields: Sequence[str], form: str, out: TextIO) -> int:
    """Write ``rows`` to ``out`` as CSV (``fields`` its columns) or JSON; how many."""
    if form == "json":
        json.dump(rows, out, indent=1, ensure_ascii=False)
        out.write("\n")
    else:
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def reset(db: sqlite3.Connection) -> int:
    """Every rating starts again; how many were there."""
    db.execute("BEGIN IMMEDIATE")
    count = db.execute("DELETE FROM ratings").rowcount
    db.execute("COMMIT")
    return int(count)


def remove(db: sqlite3.Connection, player: str) -> None:
    """Remove a player: tokens and rating deleted, name anonymised in their matches."""
    found = db.execute("SELECT token_hash FROM players WHERE id = ?", (player,)).fetchone()
    if found is None or str(found[0]).startswith(REMOVED_TOKEN):
        raise OperatorError(f"no player {player!r} in this database")
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            "UPDATE players SET name = ?, name_key = NULL, token_hash = ? WHERE id = ?",
            (REMOVED_NAME, REMOVED_TOKEN + player, player),
        )
        db.execute("DELETE FROM player_tokens WHERE player = ?", (player,))
        db.execute("DELETE FROM ratings WHERE player = ?", (player,))
        db.execute(
            "UPDATE result_seats SET player = NULL, name = ? WHERE player = ?",
            (REMOVED_NAME, player),
        )
        db.execute("COMMIT")
    except sqlite3.Error:
        db.execute("ROLLBACK")
        raise


def remove_from(data_dir: Path, players: Sequence[str]) -> list[str]:
    """Remove each of ``players`` that the database of ``data_dir`` holds and
    has not removed yet (a cluster node applies the cluster's removals so,
    before it opens its storage); those removed. No database: none."""
    if not (data_dir / FILE_NAME).is_file():
        return []
    db, lock = _open(data_dir)
    try:
        wanted = list(players)
        held = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            held |= {
                str(player)
                for player, token in db.execute(
                    f"SELECT id, token_hash FROM players WHERE id IN ({marks})", chunk
                )
                if not str(token).startswith(REMOVED_TOKEN)
            }
        done = [player for player in wanted if player in held]
        for player in done:
            remove(db, player)
        return done
    finally:
        db.close()
        lock.close()


def main(argv: Sequence[str]) -> int:
    """Run one tool; 0 on success, 1 with a message on stderr if it cannot be done."""
    args = _parser().parse_args(list(argv))
    try:
        if args.do in ("reset", "remove") and not args.yes:
            raise OperatorError(f"{args.what} {args.do} changes the database for good: add --yes")
        db, lock = _open(args.data_dir)
        try:
            if args.do == "export":
                buffer = io.StringIO()
                count = export(db, args.table, args.format, buffer)
                if args.out is None:
                    sys.stdout.write(buffer.getvalue())
                else:
                    args.out.write_text(buffer.getvalue(), encoding="utf-8")
                print(f"exported {count} {args.table} lines", file=sys.stderr)
            elif args.do == "reset":
                print(f"reset {reset(db)} ratings", file=sys.stderr)
            else:
                remove(db, args.player)
                print(f"removed player {args.player}", file=sys.stderr)
        finally:
            db.close()
            lock.close()
    except (OperatorError, sqlite3.Error, OSError) as exc:
        print(f"tulips-server {args.what} {args.do}: {exc}", file=sys.stderr)
        return 1
    return 0
