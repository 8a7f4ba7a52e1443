"""With storage, the server holds in memory only the players it needs: those
connected, and those a room in memory names. The others are evicted (they stay
on disk) and come back, as the same player, when their token is presented —
so identities made in a loop leave no memory behind, and a seat's player is
always the one object the room holds.

Real sockets on 127.0.0.1, real SQLite files in tmp dirs; every wait bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from server.identity import hash_token
from server.lobby import Lobby
from server.storage import FILE_NAME

from ..storage.helpers import in_process, read_disk
from .helpers import RawClient, serve

FRESH = 200


async def hello(client: RawClient, name: str, token: str | None = None) -> dict[str, Any]:
    """Say hello; the answer (welcome or error)."""
    fields: dict[str, Any] = {"client": "t/1", "name": name}
    if token is not None:
        fields["token"] = token
    return await client.request("hello", **fields)


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait (at most 10 s) until ``condition`` holds."""
    try:
        async with asyncio.timeout(10):
            while not condition():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"never happened: {what}") from None


async def come_and_go(url: str, name: str) -> dict[str, Any]:
    """A fresh identity that says hello and leaves; its welcome."""
    client = await RawClient.open(url, name)
    assert client.welcome is not None
    await client.close()
    return client.welcome


def in_memory(lobby: Lobby) -> set[str]:
    """The ids of the players the lobby holds in memory."""
    return {player.id for player in lobby.players}


async def test_fresh_identities_that_leave_are_not_kept_in_memory(tmp_path: Path) -> None:
    """200 fresh identities say hello and leave: the lobby holds as many players
    as before; every one is still on disk, and a token brings its player back,
    same id and name, until it leaves again."""
    async with in_process(tmp_path) as running:
        before = len(running.lobby.players)
        welcomes: list[dict[str, Any]] = []
        for batch in range(FRESH // 20):
            welcomes += await asyncio.gather(
                *(come_and_go(running.url, f"fresh {batch}-{i}") for i in range(20))
            )
        await until(lambda: len(running.lobby.players) == before, "the fresh players evicted")
        assert len({welcome["player"] for welcome in welcomes}) == FRESH

        some = welcomes[123]
        back = await RawClient.open(running.url, some["name"], some["token"])
        assert back.welcome is not None
        assert (back.welcome["player"], back.welcome["name"]) == (some["player"], some["name"])
        assert in_memory(running.lobby) == {some["player"]}
        await back.close()
        await until(lambda: len(running.lobby.players) == before, "the returning player evicted")
    stored = read_disk(tmp_path).players
    assert {w["player"]: (w["name"], hash_token(w["token"])) for w in welcomes} == stored


async def test_a_seated_player_comes_back_to_the_same_object_in_their_seat(
    tmp_path: Path,
) -> None:
    """A seated player who is away stays in memory (their match names them) while
    others are evicted; their token puts them back in their seat, and the seat,
    the host and the token all name the one player, whom the lobby holds once."""
    async with in_process(tmp_path) as running:
        ada = await RawClient.open(running.url, "Ada")
        assert ada.welcome is not None
        joined = await ada.request("create_match", name="waiting", seats=2, bots=[{"seat": 1}])
        room = running.lobby.matches[joined["match"]].core
        assert room.seats[0].player is not None
        seated = running.lobby.players.get(room.seats[0].player.id)
        assert seated is not None and room.host.id == seated.id
        await ada.close()
        gone = await come_and_go(running.url, "Bob")
        await until(lambda: in_memory(running.lobby) == {seated.id}, "Bob evicted, Ada kept")
        assert not seated.connected

        again = await RawClient.connect(running.url)
        answer = await hello(again, "Ada", ada.welcome["token"])
        assert (answer["type"], answer["player"]) == ("welcome", seated.id)
        back = await again.next(lambda m: m["type"] == "joined")
        assert (back["match"], back["seat"]) == (room.id, 0)
        assert running.lobby.players.by_token(ada.welcome["token"]) is seated
        assert room.seats[0].player is not None and room.seats[0].player.id == seated.id
        assert room.host.id == seated.id
        assert (await again.request("start"))["type"] == "ok"  # she is the host still

        bob = await RawClient.open(running.url, "Bob again", gone["token"])
        assert bob.welcome is not None and bob.welcome["player"] == gone["player"]
        await again.close()
        await bob.close()


async def test_after_a_restart_tokens_resume(tmp_path: Path) -> None:
    """After a restart, only the players the restored matches name are loaded;
    every token still resumes — a seated player into their seat."""
    async with in_process(tmp_path) as running:
        bea = await come_and_go(running.url, "Bea")
        ada = await RawClient.open(running.url, "Ada")
        assert ada.welcome is not None
        joined = await ada.request("create_match", name="kept", seats=3, bots=[{"seat": 2}])
        await ada.close()
    async with in_process(tmp_path) as running:
        assert in_memory(running.lobby) == {ada.welcome["player"]}
        room = running.lobby.matches[joined["match"]].core
        returning = await RawClient.connect(running.url)
        answer = await hello(returning, "Ada", ada.welcome["token"])
        assert answer["player"] == ada.welcome["player"]
        back = await returning.next(lambda m: m["type"] == "joined")
        assert back["seat"] == 0
        player = running.lobby.players.by_token(ada.welcome["token"])
        assert player is not None and room.seats[0].player is not None
        assert room.seats[0].player.id == player.id
        again = await RawClient.open(running.url, "Bea", bea["token"])
        assert again.welcome is not None
        assert (again.welcome["player"], again.welcome["name"]) == (bea["player"], "Bea")
        await returning.close()
        await again.close()


def _stored_long_ago(data_dir: Path) -> None:
    """Into a stopped server's file: two players created two hours ago and never
    seen since (NULL last_seen), one named by a finished match a restart does not
    keep in memory (keep_finished=0)."""
    created = time.time() - 7200  # not yet forgotten by the housekeeping at start
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        db.executemany(
            "INSERT INTO players (id, name, token_hash, created) VALUES (?, ?, ?, ?)",
            [("old-named", "Olga", "h1", created), ("old-alone", "Otto", "h2", created)],
        )
        db.execute(
            "INSERT INTO matches (id, host, settings, seats, status, created, seed, finished)"
            " VALUES ('done', 'someone', '{}',"
            ' \'[{"player": "old-named", "bot": null, "left": false}]\', \'finished\', 1.0, 7, 2.0)'
        )
        db.commit()


async def test_forgetting_deletes_old_unnamed_players_on_disk_and_keeps_named_ones(
    tmp_path: Path,
) -> None:
    """forget_players deletes from disk the players last seen (or, never seen,
    created) before the time whom no stored match names and who are not in
    memory; a host of a room in memory, a player a stored match names, and
    everyone seen since stay — and the forgotten's tokens stop working."""
    async with in_process(tmp_path) as running:
        left = await come_and_go(running.url, "Lou")
        host = await RawClient.open(running.url, "Hana")
        assert host.welcome is not None
        await host.request("create_match", name="open", seats=3, bots=[{"seat": 2}])
        await host.close()
    _stored_long_ago(tmp_path)
    async with in_process(tmp_path, keep_finished=0) as running:
        assert "done" not in running.lobby.matches
        assert await running.lobby.forget_players(time.time() - 3600) == 1  # Otto, created 2 h ago
        assert await running.lobby.forget_players(time.time() + 1) == 1  # Lou
        stored = read_disk(tmp_path).players  # (a copy of the file and its log)
        assert set(stored) == {host.welcome["player"], "old-named"}
        answer = await hello(await RawClient.connect(running.url), "Lou", left["token"])
        assert answer["code"] == "bad_token"
        kept = await RawClient.open(running.url, "Hana", host.welcome["token"])
        assert kept.welcome is not None and kept.welcome["player"] == host.welcome["player"]
        await kept.close()


async def test_a_damaged_stored_player_is_an_unknown_token_with_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A stored player whose row does not read (a name that is not UTF-8) is
    not brought back: its token is unknown, and one log line says why."""
    caplog.set_level(logging.ERROR)
    async with in_process(tmp_path) as running:
        welcome = await come_and_go(running.url, "Dora")
        await until(lambda: not running.lobby.players.get(welcome["player"]), "Dora evicted")
    with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        db.execute("UPDATE players SET name = ? WHERE id = ?", (b"\xff\xfe", welcome["player"]))
        db.commit()
    async with in_process(tmp_path) as running:
        answer = await hello(await RawClient.connect(running.url), "Dora", welcome["token"])
        assert answer["code"] == "bad_token"
    damaged = [r for r in caplog.records if "stored row is damaged" in r.getMessage()]
    assert len(damaged) == 1 and welcome["player"] in damaged[0].getMessage()


async def _watch_bots_finish(url: str, name: str) -> tuple[RawClient, str]:
    """A host who watches an all-bot match to its end; the host, still in the
    finished match, and its id."""
    host = await RawClient.open(url, name)
    bots = [{"seat": 0}, {"seat": 1}]
    match = (await host.request("create_match", name=name, seats=2, bots=bots))["match"]
    await host.request("start")
    await host.next(lambda m: m["type"] == "event" and m["event"]["kind"] == "match_ended", 10)
    return host, match


async def test_a_finished_match_past_keep_finished_goes_when_its_last_member_goes() -> None:
    """Only ``keep_finished`` finished matches stay in memory: one beyond it
    goes as soon as nobody is in it any more — its host leaves it, or its
    host's connection drops — not when someone next creates a match."""
    async with serve(keep_finished=0) as running:
        rooms = running.lobby.matches
        leaving, left = await _watch_bots_finish(running.url, "Lea")
        dropping, dropped = await _watch_bots_finish(running.url, "Dro")
        assert {left, dropped} <= set(rooms)  # someone is still in each
        await leaving.request("leave")
        assert left not in rooms
        await dropping.close()
        await until(lambda: dropped not in rooms, "the dropped host's finished match goes")
        await leaving.close()

    async with serve(keep_finished=1) as running:
        host, kept = await _watch_bots_finish(running.url, "Kim")
        await host.request("leave")
        assert kept in running.lobby.matches  # the newest one is kept
        await host.close()


async def test_a_stand_in_is_made_when_needed_and_dropped_when_the_match_ends() -> None:
    """A person's seat gets its stand-in bot (and its generator) only when a bot
    must play for it; a finished match keeps its own bots and no stand-in."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        match = (await ada.request("create_match", name="m", seats=2, bots=[{"seat": 1}]))["match"]
        await ada.request("start")
        room = running.lobby.matches[match].core
        assert room.seats[0].bot is None  # Ada plays for herself
        await ada.request("leave")  # the stand-in takes her seat and plays it to the end
        await until(lambda: room.status.value == "finished", "the stand-in finishes the match")
        assert room.seats[0].bot is None
        assert room.seats[1].bot is not None and room.seats[1].is_bot
        await ada.close()
