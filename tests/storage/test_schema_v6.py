"""Schema version 6 (issue 31): profiles and ratings. A version-5 file is
migrated in place: its players get their names' keys (two old players whose
names differ only in case keep them both), the new tables are there and empty,
and a new player whose name is taken is welcomed under a free variant."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

from client.sdk import connect
from server.storage import FILE_NAME, SCHEMA_VERSION

from .helpers import file_at_version, in_process


def _version_5_file(data_dir: Path) -> None:
    with contextlib.closing(file_at_version(data_dir, 5)) as db:
        db.executemany(
            "INSERT INTO players (id, name, token_hash, created) VALUES (?, ?, ?, ?)",
            [("p1", "Anna", "h1", time.time()), ("p2", "ANNA ", "h2", time.time())],
        )
        db.commit()


async def test_a_version_5_file_gets_name_keys_and_the_rating_tables(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _version_5_file(data)
    async with (
        in_process(data) as running,
        connect(running.url, name="anna", reconnect=False) as third,
    ):
        assert third.name == "anna 2"
    with contextlib.closing(sqlite3.connect(data / FILE_NAME)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION  # 6 or later
        keys = dict(db.execute("SELECT id, name_key FROM players WHERE id IN ('p1', 'p2')"))
        assert keys == {"p1": "anna", "p2": "anna"}
        for table in ("ratings", "results", "result_seats", "player_tokens"):
            assert db.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
