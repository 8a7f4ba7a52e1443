"""The operator's tools on a real data directory (issue 31): ``tulips-server
ratings export|reset`` and ``players remove``, refused while a server uses it."""

from __future__ import annotations

import csv
import io
import json
import random
import sqlite3
import sys
from pathlib import Path

import pytest

from client.sdk import RequestError, Session
from server.storage import FILE_NAME

from ..server.helpers import play_randomly
from .helpers import Servers, run_until_exit


async def _tool(data: Path, *words: str) -> tuple[int, str, str]:
    return await run_until_exit(
        [sys.executable, "-m", "server", *words, "--data-dir", str(data)], timeout=60
    )


async def test_export_reset_and_remove_on_a_real_file(servers: Servers, tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = await servers.start(data)
    async with Session(server.url, "Ada", reconnect=False) as ada:
        await ada.open()
        ada_id = ada.player_id
        assert ada_id is not None
        await ada.create_match(seats=2, bots=[(1, "easy")])
        await ada.start()
        await play_randomly(ada, 0, random.Random(5))
        for _ in range(100):
            if (await ada.history()).matches:
                break
        await ada.link_code()

    code, _, err = await _tool(data, "ratings", "export")
    assert code == 1 and "a server is using" in err, err
    assert await server.stop() == 0

    code, out, err = await _tool(data, "ratings", "export", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {row["player"] for row in rows} == {ada_id, "bot_easy"}
    assert [row["rank"] for row in rows] == ["1", "2"]
    code, out, err = await _tool(data, "ratings", "export", "--what", "history", "--format", "json")
    assert code == 0, err
    history = json.loads(out)
    assert [(row["seat"], row["player"], row["counted"]) for row in history] == [
        (0, ada_id, 1),
        (1, None, 1),
    ]

    code, _, err = await _tool(data, "players", "remove", ada_id)
    assert code == 1 and "--yes" in err
    code, _, err = await _tool(data, "players", "remove", ada_id, "--yes")
    assert code == 0, err
    code, _, err = await _tool(data, "players", "remove", ada_id, "--yes")
    assert code == 1 and "no player" in err
    db = sqlite3.connect(data / FILE_NAME)
    try:
        assert db.execute("SELECT name FROM players WHERE id = ?", (ada_id,)).fetchone() == (
            "removed player",
        )
        assert db.execute("SELECT count(*) FROM player_tokens").fetchone() == (0,)
        assert db.execute("SELECT player FROM ratings").fetchall() == [("bot_easy",)]
        assert db.execute("SELECT player, name FROM result_seats WHERE seat = 0").fetchone() == (
            None,
            "removed player",
        )
        assert db.execute("SELECT count(*) FROM matches").fetchone() == (1,)  # the match stays
    finally:
        db.close()

    code, _, err = await _tool(data, "ratings", "reset", "--yes")
    assert code == 0 and "reset 1 ratings" in err, err
    code, _, err = await _tool(data, "ratings", "export", "--format", "xml")
    assert code == 2 and "invalid choice" in err
    code, _, err = await _tool(tmp_path / "nowhere", "ratings", "export")
    assert code == 1 and "no database" in err

    # the server starts on it again: the removed player's match is there, anonymised
    again = await servers.start(data)
    async with Session(again.url, "Bo", reconnect=False) as bo:
        await bo.open()
        assert (await bo.leaderboard()).total == 0
        with pytest.raises(RequestError) as gone:
            await bo.profile(ada_id)
        assert gone.value.code == "no_such_player"
    assert await again.stop() == 0
