"""Schema version 2: an open-box match's choice and its commitment's salt are
stored (R27), and a version-1 file is migrated in place, its matches closed-box."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

import pytest

from engine import DEFAULT_RULESET
from server.config import ServerConfig
from server.lobby import Lobby
from server.match.records import StoredSeat
from server.storage import (
    _MIGRATIONS,
    APPLICATION_ID,
    FILE_NAME,
    SCHEMA_VERSION,
    PlayerRow,
    Storage,
)

from .test_storage import match_row, opened

SALT = bytes(range(32))


def _version_1_file(data_dir: Path) -> None:
    """A database as a version-1 server left it: one finished match with two actions."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        db.executescript(
            f"BEGIN;\n{_MIGRATIONS[1]}\nPRAGMA application_id = {APPLICATION_ID};\n"
            "PRAGMA user_version = 1;\nCOMMIT;"
        )
        db.execute(
            "INSERT INTO matches (id, name, host, ruleset_name, ruleset, seats, join_code,"
            " turn_timer, first_seat, seed, status, created, finished)"
            " VALUES ('old', 'Old', 'p1', 'standard', '{}', '[]', NULL, NULL, NULL, 42,"
            " 'finished', 1.0, 2.0)"
        )
        db.execute(
            "INSERT INTO actions (match_id, idx, seat, action) VALUES"
            " ('old', 0, 0, '{\"kind\":\"keep\"}'), ('old', 1, 1, '{\"kind\":\"add_secret\"}')"
        )
        db.commit()


async def test_r27_a_version_1_file_is_migrated_and_its_matches_stay_closed(
    tmp_path: Path,
) -> None:
    """Opening a version-1 file adds the columns; its matches read back closed-box,
    without a salt, their seeds and actions untouched."""
    _version_1_file(tmp_path)
    async with opened(tmp_path) as storage:
        (row,) = storage.matches(["finished"])
        assert (row.id, row.seed, row.settings.open_box, row.salt) == ("old", 42, False, None)
        assert storage.actions("old") == [(0, {"kind": "keep"}), (1, {"kind": "add_secret"})]
    with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_r27_open_box_and_salt_round_trip(tmp_path: Path) -> None:
    """An open-box match is stored open without a salt; dealt, the salt is stored
    with the seed, and both come back after a reopen. A closed-box match keeps
    neither."""
    async with opened(tmp_path) as storage:
        await storage.save_match(match_row("box", open_box=True))
        await storage.save_match(match_row("shut", status="running", seed=5, created=2.0))
        assert storage.matches(["open"])[0].salt is None
        await storage.save_match(
            match_row("box", open_box=True, status="running", seed=2**63 - 1, salt=SALT)
        )
    reopened = Storage(tmp_path)
    reopened.open()
    try:
        box, shut = reopened.matches(["running"], limit=10)  # newest first
        assert box == match_row("box", open_box=True, status="running", seed=2**63 - 1, salt=SALT)
        assert (shut.id, shut.settings.open_box, shut.salt) == ("shut", False, None)
    finally:
        reopened.close()


async def test_r27_an_open_box_match_without_its_salt_is_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A dealt open-box match whose salt is missing or the wrong size cannot show
    its commitment: it is left out (and on disk) with a message naming it, and
    the server starts with the rest."""
    async with opened(tmp_path) as storage:
        await storage.save_player(PlayerRow("p1", "Ana", "h1"), 1.0)
        seats = (StoredSeat(player="p1"), StoredSeat(bot="easy"))
        common = {
            "host": "p1",
            "seats": seats,
            "status": "running",
            "seed": 7,
            "first_seat": 0,
            "ruleset": DEFAULT_RULESET,
            "ruleset_name": "standard",
        }
        await storage.save_match(match_row("nosalt", open_box=True, **common))
        await storage.save_match(match_row("short", open_box=True, salt=b"x", **common))
        await storage.save_match(match_row("good", open_box=True, salt=SALT, **common))
    lobby = Lobby(ServerConfig(data_dir=tmp_path), storage=Storage(tmp_path))
    with caplog.at_level(logging.ERROR):
        await lobby.open()
    try:
        assert set(lobby.matches) == {"good"}
        assert "match nosalt cannot be rebuilt" in caplog.text
        assert "match short cannot be rebuilt" in caplog.text
        assert "without its 32-byte salt" in caplog.text
        room = lobby.matches["good"].core
        assert room.settings.open_box and room.salt == SALT
    finally:
        await lobby.close()
