"""One damaged row must not stop a server: a stored match whose row or actions
cannot be rebuilt — text that is not UTF-8, seats of the wrong shape or
count, players that are not stored, a ruleset the engine refuses, actions
that do not replay, values of the wrong type, names no client would accept —
is left out (and left on disk) with one log line naming it, and the server
starts with every other match.

Each damage is written with plain ``sqlite3``, beside good matches written
through :class:`Storage`; then a lobby opens the data as a starting server
does (one case at a time), and a real ``python -m server`` starts on all of
them at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import DEFAULT_RULESET, Match
from engine.record import action_to_data
from server.config import ServerConfig
from server.identity import hash_token
from server.lobby import Lobby
from server.match.info import Status
from server.match.records import StoredSeat
from server.match.settings import MatchSettings
from server.storage import FILE_NAME, MatchRow, PlayerRow, Storage

from .helpers import HOST, Servers, open_session

SEED = 20240607
#: the good matches, by id, and the status each is rebuilt with
GOOD = {"good-open": Status.OPEN, "good-running": Status.RUNNING}
GOOD["good-finished"] = Status.FINISHED
TWO_SEATS = [{"player": "p1", "bot": None}, {"player": None, "bot": "medium"}]


def seats(*entries: Any) -> str:
    """A ``seats`` column value."""
    return json.dumps(list(entries))


def setting(path: str, value: str) -> str:
    """SQL that sets one field of a match's stored settings (``value`` is SQL)."""
    return f"UPDATE matches SET settings = json_set(settings, '$.{path}', {value}) WHERE id = ?"


#: (case, SQL run with the match id as its one parameter). The first ones are
#: damage the database reader meets, the rest damage only a rebuild can find.
DAMAGE: list[tuple[str, str]] = [
    (
        "settings-not-utf8",
        "UPDATE matches SET settings = CAST(x'7b226e616d65223a22ff227d' AS TEXT) WHERE id = ?",
    ),
    (
        "seats-not-utf8",
        "UPDATE matches SET seats = CAST(x'5b7b22706c61796572223a22ff227d5d' AS TEXT) WHERE id = ?",
    ),
    (
        "action-not-utf8",
        "UPDATE actions SET action = CAST(x'7b226b696e64223aff7d' AS TEXT)"
        " WHERE match_id = ? AND idx = 2",
    ),
    ("seed-text", "UPDATE matches SET seed = 'abc' WHERE id = ?"),
    ("timer-text", setting("turn_timer", "'soon'")),
    ("created-text", "UPDATE matches SET created = 'yesterday' WHERE id = ?"),
    ("settings-not-json", "UPDATE matches SET settings = '{' WHERE id = ?"),
    ("settings-a-list", "UPDATE matches SET settings = '[]' WHERE id = ?"),
    ("settings-unknown-key", setting("colour", "'blue'")),
    ("seats-a-map", 'UPDATE matches SET seats = \'{"player": "p1"}\' WHERE id = ?'),
    ("seats-not-maps", "UPDATE matches SET seats = '[1, 2]' WHERE id = ?"),
    ("seats-not-json", "UPDATE matches SET seats = '[{' WHERE id = ?"),
    ("one-seat", f"UPDATE matches SET seats = '{seats(TWO_SEATS[0])}' WHERE id = ?"),
    ("nine-seats", f"UPDATE matches SET seats = '{seats(*[TWO_SEATS[1]] * 9)}' WHERE id = ?"),
    (
        "unknown-player",
        f"UPDATE matches SET seats = '{seats({'player': 'nobody'}, TWO_SEATS[1])}' WHERE id = ?",
    ),
    (
        "player-id-a-number",
        f"UPDATE matches SET seats = '{seats({'player': 7}, TWO_SEATS[1])}' WHERE id = ?",
    ),
    (
        "unknown-bot",
        f"UPDATE matches SET seats = '{seats(TWO_SEATS[0], {'bot': 'grandmaster'})}' WHERE id = ?",
    ),
    (
        "player-and-bot",
        f"UPDATE matches SET seats = '{seats({'player': 'p1', 'bot': 'easy'}, TWO_SEATS[1])}'"
        " WHERE id = ?",
    ),
    ("host-unknown", "UPDATE matches SET host = 'nobody' WHERE id = ?"),
    ("ruleset-unknown-key", setting("ruleset", 'json(\'{"colour": "blue"}\')')),
    ("ruleset-a-list", setting("ruleset", "json('[]')")),
    ("running-without-seed", "UPDATE matches SET seed = NULL WHERE id = ?"),
    ("first-seat-out", setting("first_seat", "5")),
    ("name-too-long", setting("name", f"'{'x' * 300}'")),
    ("name-control-char", setting("name", "'a' || char(7) || 'b'")),
    (
        "illegal-action",
        'UPDATE actions SET action = \'{"kind":"give","to_seat":7}\''
        " WHERE match_id = ? AND idx = 3",
    ),
    ("action-not-a-map", "UPDATE actions SET action = '[1]' WHERE match_id = ? AND idx = 1"),
    ("action-seat-text", "UPDATE actions SET seat = 'x' WHERE match_id = ? AND idx = 1"),
    ("action-gap", "DELETE FROM actions WHERE match_id = ? AND idx = 1"),
]


def played(actions: int | None) -> tuple[Match, list[tuple[int, dict[str, Any]]]]:
    """The stored match's deal, with ``actions`` random legal actions (None: to the end)."""
    match = Match.new(2, SEED, DEFAULT_RULESET, 0)
    rng = random.Random(SEED)
    stored: list[tuple[int, dict[str, Any]]] = []
    while not match.is_over and (actions is None or len(stored) < actions):
        seat = match.to_act[0]
        action = rng.choice(match.legal_actions(seat))
        match.apply(seat, action)
        stored.append((seat, action_to_data(action)))
    return match, stored


async def store_match(storage: Storage, match_id: str, status: str, created: float) -> None:
    """A 2-seat match (Ana and a medium bot) in ``status``, with its actions."""
    actions = [] if status == "open" else played(None if status == "finished" else 6)[1]
    await storage.save_match(
        MatchRow(
            id=match_id,
            host="p1",
            settings=MatchSettings(
                name=f"match {match_id}",
                ruleset_name="standard",
                ruleset=DEFAULT_RULESET,
                first_seat=0,
            ),
            seats=tuple(StoredSeat(player=s["player"], bot=s["bot"]) for s in TWO_SEATS),
            seed=None if status == "open" else SEED,
            status=status,
            created=created,
            finished=created + 60 if status == "finished" else None,
        )
    )
    for index, (seat, data) in enumerate(actions):
        await storage.append_action(match_id, index, seat, data)


async def prepare(data_dir: Path, bad: list[str]) -> None:
    """The good matches, and one running match named after each case in ``bad``."""
    storage = Storage(data_dir)
    storage.open()
    try:
        for number, name in enumerate(["Ana", "Bea", "Cem"], 1):
            await storage.save_player(PlayerRow(f"p{number}", name, hash_token(name)), 0.0)
        created = 1_700_000_000.0
        for match_id in GOOD:
            await store_match(storage, match_id, match_id.removeprefix("good-"), created)
            created += 1
        for match_id in bad:
            await store_match(storage, match_id, "running", created)
            created += 1
    finally:
        await storage.aclose()


def damage(data_dir: Path, sql: str, match_id: str) -> None:
    """Write the damage with plain sqlite3."""
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        assert db.execute(sql, (match_id,)).rowcount == 1, sql
        db.commit()


def rows(data_dir: Path, match_id: str) -> tuple[list[Any], list[Any]]:
    """A match's row and action rows, as stored (bytes and all)."""
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        db.text_factory = bytes
        return (
            db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchall(),
            db.execute(
                "SELECT * FROM actions WHERE match_id = ? ORDER BY idx", (match_id,)
            ).fetchall(),
        )


def naming(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    """The ERROR lines that name ``text``."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR and text in r.getMessage()
    ]


@pytest.mark.parametrize(("case", "sql"), DAMAGE, ids=[case for case, _ in DAMAGE])
async def test_a_damaged_match_is_left_out_with_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, case: str, sql: str
) -> None:
    """The damaged match is left out with one log line naming it; every good
    match is rebuilt with its status; the damaged rows are left as they were."""
    data = tmp_path / "data"
    await prepare(data, [case])
    damage(data, sql, case)
    before = rows(data, case)
    caplog.set_level(logging.INFO)
    lobby = Lobby(ServerConfig(host=HOST, port=0, data_dir=data), storage=Storage(data))
    async with asyncio.timeout(20):
        await lobby.open()
        try:
            assert {match_id: m.info.status for match_id, m in lobby.matches.items()} == GOOD
            lines = naming(caplog, case)
            assert len(lines) == 1, lines
            assert "left out" in lines[0]
        finally:
            await lobby.close()
    assert rows(data, case) == before


async def test_a_match_whose_id_is_not_utf8_is_named_all_the_same(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A match id that is not UTF-8 is shown with escapes in its one line."""
    data = tmp_path / "data"
    await prepare(data, ["bad-id"])
    damage(data, "UPDATE matches SET id = CAST(x'6261642dff' AS TEXT) WHERE id = ?", "bad-id")
    caplog.set_level(logging.INFO)
    lobby = Lobby(ServerConfig(host=HOST, port=0, data_dir=data), storage=Storage(data))
    async with asyncio.timeout(20):
        await lobby.open()
        await lobby.close()
    assert set(lobby.matches) == set(GOOD)
    assert len(naming(caplog, "'bad-\\xff'")) == 1


async def test_a_damaged_player_leaves_out_the_player_and_their_matches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A player whose name is not UTF-8 is left out with one line; a match that
    seats them is left out too (their seat would have nobody), with its own line."""
    data = tmp_path / "data"
    await prepare(data, ["hosted-by-bea"])
    damage(data, "UPDATE matches SET host = 'p2' WHERE id = ?", "hosted-by-bea")
    damage(data, "UPDATE players SET name = CAST(x'42ff' AS TEXT) WHERE id = ?", "p2")
    caplog.set_level(logging.INFO)
    lobby = Lobby(ServerConfig(host=HOST, port=0, data_dir=data), storage=Storage(data))
    async with asyncio.timeout(20):
        await lobby.open()
        await lobby.close()
    assert set(lobby.matches) == set(GOOD)
    assert lobby.players.get("p2") is None and lobby.players.get("p1") is not None
    assert len(naming(caplog, "player 'p2'")) == 1
    assert len(naming(caplog, "hosted-by-bea")) == 1


async def test_the_server_starts_beside_every_kind_of_damage(
    servers: Servers, tmp_path: Path
) -> None:
    """``python -m server`` on data holding every damaged match at once starts,
    lists the good matches, and names each damaged one in one log line."""
    data = tmp_path / "data"
    await prepare(data, [case for case, _ in DAMAGE])
    for case, sql in DAMAGE:
        damage(data, sql, case)
    server = await servers.start(data)
    status = await server.wait_healthy()
    assert status["matches"] == len(GOOD)
    session = await open_session(server.url, "Vic")
    try:
        async with asyncio.timeout(10):
            listed = {summary.match for summary in await session.list_matches()}
    finally:
        await session.close()
    assert listed == set(GOOD)
    assert await server.stop() == 0
    log = server.log()
    assert "Traceback" not in log
    for case, _ in DAMAGE:
        lines = [line for line in log.splitlines() if case in line]
        assert len(lines) == 1, (case, lines)
        assert "ERROR" in lines[0]
