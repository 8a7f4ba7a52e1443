"""Schema version 7 (issue 32): stored analyses. A version-6 file is migrated
in place: its matches and ratings stay, and the analyses table is there, empty."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

from client.sdk import connect
from server.storage import FILE_NAME, SCHEMA_VERSION

from .helpers import file_at_version, in_process


def _version_6_file(data_dir: Path) -> None:
    with contextlib.closing(file_at_version(data_dir, 6)) as db:
        db.execute(
            "INSERT INTO players (id, name, name_key, token_hash, created) VALUES (?, ?, ?, ?, ?)",
            ("p1", "Anna", "anna", "h1", time.time()),
        )
        db.commit()


async def test_a_version_6_file_gets_an_empty_analyses_table(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _version_6_file(data)
    async with (
        in_process(data) as running,
        connect(running.url, name="Anna", reconnect=False) as other,
    ):
        assert other.name == "Anna 2"  # the stored player kept her name
    with contextlib.closing(sqlite3.connect(data / FILE_NAME)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION  # 7 or later
        assert db.execute("SELECT count(*) FROM analyses").fetchone() == (0,)
        assert db.execute("SELECT name FROM players WHERE id = 'p1'").fetchone() == ("Anna",)
