"""Schema version 3: when each player was last connected is stored, so that
players kept on disk only are forgotten too; a version-2 file is migrated in
place, every player kept, their ``last_seen`` NULL (meaning: use ``created``)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from server.match.records import StoredSeat
from server.storage import _MIGRATIONS, APPLICATION_ID, FILE_NAME, SCHEMA_VERSION, PlayerRow

from .test_storage import match_row, opened

PLAYERS = [
    PlayerRow("p1", "Ana", "a" * 64),
    PlayerRow("p2", "Zoë 🌷", "b" * 64),
    PlayerRow("p3", "Carla", "c" * 64),
]


def _version_2_file(data_dir: Path) -> None:
    """A database as a version-2 server left it: three players, created at 10, 20, 30."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        db.executescript(
            f"BEGIN;\n{_MIGRATIONS[1]}\n{_MIGRATIONS[2]}\n"
            f"PRAGMA application_id = {APPLICATION_ID};\nPRAGMA user_version = 2;\nCOMMIT;"
        )
        db.executemany(
            "INSERT INTO players (id, name, token_hash, created) VALUES (?, ?, ?, ?)",
            [(p.id, p.name, p.token_hash, 10.0 * n) for n, p in enumerate(PLAYERS, 1)],
        )
        db.commit()


async def test_a_version_2_file_is_migrated_and_keeps_every_player(tmp_path: Path) -> None:
    """Opening a version-2 file adds ``last_seen``: every player reads back the
    same, by id and by token hash, and counts as last seen when created."""
    _version_2_file(tmp_path)
    async with opened(tmp_path) as storage:
        assert sorted(storage.players(), key=lambda p: p.id) == PLAYERS
        for player in PLAYERS:
            assert storage.player(player.id) == player
            assert storage.player_by_token(player.token_hash) == player
        assert storage.unused_players(25.0, "", 10) == ["p1", "p2"]  # created 10 and 20
        assert storage.unused_players(25.0, "p1", 10) == ["p2"]
        await storage.save_player(PLAYERS[0], 100.0)  # seen again at 100
        assert storage.unused_players(25.0, "", 10) == ["p2"]
        assert await storage.forget_players(["p1", "p2"], 25.0) == 1  # p1 was seen since
        assert storage.player("p2") is None and storage.player("p1") == PLAYERS[0]
    with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        rows = db.execute("SELECT id, created, last_seen FROM players ORDER BY id").fetchall()
        assert rows == [("p1", 10.0, 100.0), ("p3", 30.0, None)]


async def test_last_seen_is_stored_when_touched(tmp_path: Path) -> None:
    """touch_player_soon stores when a player was last connected, and names
    them among the unused only before that."""
    async with opened(tmp_path) as storage:
        await storage.save_player(PLAYERS[1], 5.0)
        assert storage.unused_players(6.0, "", 10) == ["p2"]
        assert await storage.touch_player_soon("p2", 50.0) == 1
        assert storage.unused_players(6.0, "", 10) == []
        assert storage.unused_players(51.0, "", 10) == ["p2"]


async def test_named_players_are_read_from_every_stored_match(tmp_path: Path) -> None:
    """Hosts and seated players of every stored match are named; a match whose
    seats are damaged names every quoted string in them (keeping more, never fewer)."""
    async with opened(tmp_path) as storage:
        await storage.save_match(match_row("m1", host="h1", seats=(StoredSeat(player="s1"),)))
    with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        db.execute(
            "INSERT INTO matches (id, host, settings, seats, status, created)"
            " VALUES ('m2', 'h2', '{}', '[{\"player\": \"s2\"', 'open', 1.0)"
        )
        db.commit()
    async with opened(tmp_path) as storage:
        assert storage.named_players() == {"h1", "s1", "h2", "player", "s2"}
