"""Schema version 2: an open-box match's choice and its commitment's salt are
stored (R27), and a version-1 file is migrated in place, its matches closed-box."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from server.storage import _MIGRATIONS, APPLICATION_ID, FILE_NAME, SCHEMA_VERSION, Storage

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
        assert (row.id, row.seed, row.open_box, row.salt) == ("old", 42, False, None)
        assert storage.actions("old") == [(0, {"kind": "keep"}), (1, {"kind": "add_secret"})]
    with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2


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
        assert (shut.id, shut.open_box, shut.salt) == ("shut", False, None)
    finally:
        reopened.close()
