"""What outlives a restart: finished matches (listed, replayable page by
page, and replaying to the same events with the engine), players' identities
(the same token resumes the same player; a wrong one is still refused), and
— commit by commit — every state a crash can leave on disk."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import random
import shutil
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import protocol as wire
from client.sdk import ConnectError
from server.config import ServerConfig
from server.lobby import Lobby
from server.match.info import Status
from server.storage import FILE_NAME, Storage

from .helpers import (
    HOST,
    Recorder,
    Replayed,
    Seen,
    Servers,
    check_client,
    fetch_replay,
    free_port,
    in_process,
    open_session,
    play,
    read_disk,
    replay_of,
)

#: quick bots (a *hard* one searches for hundreds of ms a move: not what these tests are about)
BOTS_3 = [(1, "easy"), (2, "medium"), (3, "easy")]


async def play_to_the_end(
    url: str, name: str, seats: int, bots: list[tuple[int, str]]
) -> tuple[str, Seen]:
    """A client creates a match with these bots, starts it and plays it to the
    end: the match id, and what the client saw."""
    session = await open_session(url, name)
    try:
        async with asyncio.timeout(30):
            # open box (R27): its seed and actions are published once it is over
            joined = await session.create_match(
                name=f"{name}'s", seats=seats, bots=bots, open_box=True
            )
            await session.start()
            assert session.player_id is not None and session.token is not None
            seen = Seen(name, joined.seat or 0, session.player_id, session.token)
            assert await play(session, seen, random.Random(name)) == "over"
    finally:
        await session.close()
    return joined.match, seen


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGKILL"])
async def test_a_finished_match_after_a_restart(
    servers: Servers, tmp_path: Path, stop: str
) -> None:
    """After a restart (clean, or a crash after the end) the finished match is
    listed as finished; ``replay`` gives the same events, seed, first seat and
    actions as before, from any ``from_seq``; the engine's replay of the seed
    and actions gives exactly those public events and what the player saw."""
    data = tmp_path / "data"
    server = await servers.start(data)
    match, ana = await play_to_the_end(server.url, "Ana", 4, BOTS_3)
    viewer = await open_session(server.url, "Vic")
    before_pages, before_events = await fetch_replay(viewer, match)
    await viewer.close()
    if stop == "SIGTERM":
        assert await server.stop() == 0, server.log()
    else:
        await server.kill()

    server = await servers.start(data)
    viewer = await open_session(server.url, "Vic")  # anyone may check a finished open box
    try:
        async with asyncio.timeout(10):
            listed = {summary.match: summary for summary in await viewer.list_matches()}
        summary = listed[match]
        assert summary.status == "finished"
        assert summary.host == "Ana"
        assert [seat.kind for seat in summary.seats] == ["human", "bot", "bot", "bot"]
        assert [seat.strength for seat in summary.seats] == [None, "easy", "medium", "easy"]
        assert summary.seats[0].name == "Ana"

        pages, events = await fetch_replay(viewer, match)
        assert events == before_events
        last, old = pages[-1], before_pages[-1]
        assert (last.seed, last.first_seat, last.actions) == (old.seed, old.first_seat, old.actions)
        assert last.status == "finished" and last.ruleset == "standard"
        replayed = replay_of(pages, 4)
        assert events == replayed.wire_events(None)
        check_client(replayed, ana)  # what Ana saw while playing is the replay too

        total = len(events)
        for from_seq in (1, 2, 6, 57, total - 1, total, total + 1, total + 40):
            async with asyncio.timeout(10):
                page = await viewer.request(wire.Replay, match=match, from_seq=from_seq)
            assert isinstance(page, wire.ReplayPage)
            assert page.from_seq == from_seq
            assert list(page.events) == events[from_seq - 1 :]
            assert page.next_seq is None
            assert (page.seed, page.actions) == (last.seed, last.actions)
    finally:
        await viewer.close()


async def test_replay_pages_cover_every_event_once_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With small pages (7 events), following ``next_seq`` from 1 gives every
    event exactly once, in order, and the last page says no more remain."""
    monkeypatch.setattr("server.match.views.MAX_REPLAY_EVENTS", 7)
    data = tmp_path / "data"
    async with in_process(data) as running:
        match, ana = await play_to_the_end(running.url, "Ana", 3, [(1, "easy"), (2, "medium")])
    async with in_process(data) as running:
        viewer = await open_session(running.url, "Vic")
        try:
            pages, events = await fetch_replay(viewer, match)
        finally:
            await viewer.close()
    replayed = replay_of(pages, 3)
    assert events == replayed.wire_events(None)
    assert len(pages) == math.ceil(len(events) / 7) > 10
    assert [page.from_seq for page in pages] == list(range(1, len(events) + 1, 7))
    assert all(len(page.events) == 7 for page in pages[:-1])
    assert 1 <= len(pages[-1].events) <= 7
    assert [page.next_seq for page in pages] == [page.from_seq for page in pages[1:]] + [None]
    check_client(replayed, ana)


# -- identities ----------------------------------------------------------------------------------


async def test_a_player_survives_a_restart_and_a_wrong_token_is_refused(
    servers: Servers, tmp_path: Path
) -> None:
    """A new player is stored before its welcome: even a crash right after it
    keeps the identity. The same token resumes the same player (with a new
    name, if it says one, kept across the next restart); a wrong token, or a
    player id used as a token, is refused."""
    data = tmp_path / "data"
    server = await servers.start(data)
    first = await open_session(server.url, "Ana")
    player, token = first.player_id, first.token
    assert player is not None and token is not None
    await server.kill()  # SIGKILL just after the welcome
    await first.close()

    server = await servers.start(data, port=free_port())
    again = await open_session(server.url, "Ana", token=token)
    assert (again.player_id, again.token) == (player, token)
    await again.close()
    renamed = await open_session(server.url, "Ana Maria", token=token)
    assert renamed.player_id == player
    await renamed.close()
    for wrong in ("x" * 32, player, token[:-1] + ("A" if token[-1] != "A" else "B")):
        with pytest.raises(ConnectError, match="bad_token"):
            await open_session(server.url, "Mallory", token=wrong)
    assert await server.stop() == 0, server.log()

    disk = read_disk(data)
    assert disk.players[player] == ("Ana Maria", hashlib.sha256(token.encode()).hexdigest())
    for path in data.iterdir():  # only the token's hash is kept, anywhere
        assert token.encode() not in path.read_bytes(), f"the token is in {path.name}"

    server = await servers.start(data)
    back = await open_session(server.url, "Ana Maria", token=token)
    try:
        assert back.player_id == player
    finally:
        await back.close()
    with pytest.raises(ConnectError, match="bad_token"):
        await open_session(server.url, "Mallory", token="not-a-token")


# -- every state a crash can leave --------------------------------------------------------------


@dataclass
class Recorded:
    """A match played in-process with a copy of the data directory taken
    after every commit — each one what a crash right then would leave."""

    copies: list[Path]
    match: str
    seen: Seen
    replayed: Replayed


async def record_every_commit(tmp_path: Path) -> Recorded:
    """Play a 2-seat match (a client and a bot) to the end, copying the
    database and its log after each commit, before anyone hears of it."""
    data = tmp_path / "data"
    commits = tmp_path / "commits"
    copies: list[Path] = []

    def copy_after_commit(count: int) -> None:  # the writer thread; it waits for us
        target = commits / f"{count:04d}"
        target.mkdir(parents=True)
        for name in (FILE_NAME, f"{FILE_NAME}-wal"):
            if (data / name).exists():
                shutil.copyfile(data / name, target / name)
        copies.append(target)

    async with in_process(data, sync="NORMAL") as running:  # the copies need no fsync
        running.storage.after_commit = copy_after_commit
        match, seen = await play_to_the_end(running.url, "Ana", 2, [(1, "medium")])
        viewer = await open_session(running.url, "Vic")
        try:
            pages, _ = await fetch_replay(viewer, match)
        finally:
            await viewer.close()
    return Recorded(copies, match, seen, replay_of(pages, 2))


@contextlib.asynccontextmanager
async def restored(data_dir: Path) -> AsyncIterator[Lobby]:
    """A lobby opened on ``data_dir`` as a restarting server opens it."""
    lobby = Lobby(ServerConfig(host=HOST, port=0, data_dir=data_dir), storage=Storage(data_dir))
    await lobby.open()
    try:
        yield lobby
    finally:
        await lobby.close()


async def test_every_commit_leaves_a_state_the_server_rebuilds(tmp_path: Path) -> None:
    """Whichever commit a crash follows, a restart rebuilds exactly what was
    stored: every stored player (in memory only those the match names), the
    match once its row is stored, and its actions — always a prefix of the
    whole match's — replayed to the same events; finished exactly when every
    action is there."""
    recorded = await record_every_commit(tmp_path)
    final = recorded.replayed.data()
    counts = set()
    for copy in recorded.copies:
        disk = read_disk(copy)
        stored = disk.actions.get(recorded.match, [])
        assert stored == final[: len(stored)], f"{copy.name}: not a prefix of the match"
        counts.add(len(stored))
        async with restored(copy) as lobby:
            assert lobby.storage is not None
            assert all(lobby.storage.player(player) is not None for player in disk.players)
            named = {player for info in lobby.infos() for player in info.named}
            assert {player.id for player in lobby.players} == named  # only those, in memory
            if recorded.match not in disk.matches:
                assert recorded.match not in lobby.matches
                continue
            room = lobby.matches[recorded.match].core
            row = disk.matches[recorded.match]
            ana = room.seats[recorded.seen.seat].player
            assert ana is not None and ana.id == recorded.seen.player_id
            assert room.seats[1].is_bot
            if row["seed"] is None:
                assert room.match is None and room.status is Status.OPEN
                continue
            assert room.match is not None
            assert row["seed"] == recorded.replayed.seed, "the seed changed after it was stored"
            assert list(room.match.history) == recorded.replayed.actions[: len(stored)]
            assert room.events() == recorded.replayed.events[: room.seq]
            over = len(stored) == len(final)
            assert room.status is (Status.FINISHED if over else Status.RUNNING)
    assert counts == set(range(len(final) + 1)), "some number of actions was never a crash point"


async def test_a_player_whose_match_ended_unseen_is_put_back_after_a_restart(
    tmp_path: Path,
) -> None:
    """The server dies right after storing the match's last action, before
    anyone heard of it. The player comes back with its token and — as after
    any other drop — is put back in its match: joined, and a snapshot of the
    end with the final scoring."""
    recorded = await record_every_commit(tmp_path)
    total = len(recorded.replayed.actions)
    crash = next(
        c for c in recorded.copies if len(read_disk(c).actions.get(recorded.match, [])) == total
    )
    async with in_process(crash) as running:
        assert running.lobby.matches[recorded.match].core.status is Status.FINISHED
        back = Recorder(
            await open_session(running.url, "Ana", token=recorded.seen.token),
        )
        try:
            joined = await back.wait_for(wire.Joined, timeout=2)
            assert (joined.match, joined.seat) == (recorded.match, recorded.seen.seat)
            snapshot = await back.wait_for(wire.Snapshot, timeout=3)
        finally:
            await back.close()
    assert snapshot.state.phase == "over"
    assert snapshot.state.scoring == recorded.seen.scoring


# -- damaged matches ------------------------------------------------------------------------------


def damage(data_dir: Path, sql: str, *params: object) -> None:
    """Change the stored data behind the server's back."""
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        changed = db.execute(sql, params).rowcount
        db.commit()
    assert changed == 1, f"{sql} changed {changed} rows"


def raw_actions(data_dir: Path) -> list[tuple[object, ...]]:
    """Every stored action row, exactly as stored."""
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        return db.execute("SELECT * FROM actions ORDER BY match_id, idx").fetchall()


async def four_finished_matches(data_dir: Path) -> list[str]:
    """Four finished 2-seat matches, stored."""
    async with in_process(data_dir, sync="NORMAL") as running:
        return [
            (await play_to_the_end(running.url, name, 2, [(1, "easy")]))[0]
            for name in ("Ana", "Bea", "Cem", "Dan")
        ]


async def test_damaged_actions_leave_out_only_their_match(tmp_path: Path) -> None:
    """A match whose stored actions are damaged (a gap, an illegal action, not
    JSON) cannot be rebuilt: it is left out — and left on disk as it is —
    while the server starts with everything else."""
    data = tmp_path / "data"
    gap, illegal, garbage, intact = await four_finished_matches(data)
    damage(data, "DELETE FROM actions WHERE match_id = ? AND idx = 3", gap)
    damage(
        data,
        "UPDATE actions SET action = ? WHERE match_id = ? AND idx = 9",
        '{"kind":"opening","secret":"pink-1"}',
        illegal,
    )
    damage(data, "UPDATE actions SET action = '{not json' WHERE match_id = ? AND idx = 0", garbage)
    before = raw_actions(data)
    async with restored(data) as lobby:
        assert set(lobby.matches) == {intact}
        assert lobby.matches[intact].core.status is Status.FINISHED
    assert raw_actions(data) == before


async def test_a_damaged_match_row_leaves_out_only_its_match(tmp_path: Path) -> None:
    """A match whose stored row is damaged (its seats are not JSON) is left out
    like any match that cannot be rebuilt; the server still starts."""
    data = tmp_path / "data"
    damaged, *others = await four_finished_matches(data)
    damage(data, "UPDATE matches SET seats = '[{' WHERE id = ?", damaged)
    async with restored(data) as lobby:
        assert set(lobby.matches) == set(others)
