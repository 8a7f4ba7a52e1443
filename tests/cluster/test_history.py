"""A cluster's history and totals are one shared fact in its Redis: a
player's profile and history are the same whichever node answers, agree with
the leaderboard, survive a crash between the shared write and the node's own
record, and a finished match of another node is replayed there — against a
real redis-server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import protocol as wire
from client.loadgen.redisproc import RedisProcess
from client.localserver import free_port
from client.sdk import Session, connect
from server.app import TulipsServer
from server.cluster import ratings as cluster_ratings
from server.cluster.ratings import ClusterLedger
from server.cluster.signing import load_key
from server.cluster.store import Store
from server.config import ServerConfig
from server.match.results import MatchResult, SeatResult
from server.ratings.ledger import SqlLedger, Totals
from server.storage import FILE_NAME, Storage

from ..server.helpers import RawClient, play_randomly
from .helpers import HEARTBEAT, NodeProcess, cluster, eventually, key_file, needs_redis

pytestmark = needs_redis


def _result(index: int, *, rated: bool = True) -> MatchResult:
    """Ada against Bo (or, every third match, a bot): Ada wins the even ones."""
    won = index % 2 == 0
    other = (
        SeatResult(1, None, "bot 1", "easy", 40, 8, 1 if not won else 2, 30, 0)
        if index % 3 == 0
        else SeatResult(1, "p_bo", "Bo", None, 40, 8, 1 if not won else 2, 30, 0)
    )
    ada = SeatResult(0, "p_ada", "Ada", None, 50 + index, 10, 1 if won else 2, 30, 0)
    return MatchResult(f"m{index}", f"match {index}", "standard", False, rated, index, (ada, other))


@contextlib.asynccontextmanager
async def _ledgers(tmp_path: Path, redis: RedisProcess) -> AsyncIterator[list[ClusterLedger]]:
    """Two nodes' ledgers (n0, n1), each with its own file, sharing the Redis."""
    key = os.urandom(32)
    stores = [Store(redis.url, key, sender=f"n{i}") for i in range(2)]
    storages = [Storage(tmp_path / f"node{i}") for i in range(2)]
    for storage in storages:
        storage.open()
    try:
        yield [
            ClusterLedger(store, SqlLedger(storage), f"n{i}")
            for i, (store, storage) in enumerate(zip(stores, storages, strict=True))
        ]
    finally:
        for store in stores:
            await store.close()
        for storage in storages:
            storage.close()


async def test_every_node_reads_the_same_history_and_totals(tmp_path: Path) -> None:
    """Six matches of Ada, applied alternately by two nodes (one unrated):
    both nodes list all six, latest first, each with the node that ran it,
    page through them with a stable cursor, count the same totals, and the
    leaderboard counts her five rated ones; each node's own file has its three."""
    with RedisProcess() as redis:
        async with _ledgers(tmp_path, redis) as ledgers:
            results = [_result(i, rated=i != 4) for i in range(6)]
            for i, result in enumerate(results):
                await ledgers[i % 2].apply(result)
            points = [seat.points for r in results for seat in r.seats if seat.player == "p_ada"]
            expected = Totals(6, 3, sum(points) / 6)
            seen = []
            for ledger in ledgers:
                records = await ledger.records("p_ada", None, 10)
                assert [r.result.match for r in records] == [f"m{i}" for i in range(5, -1, -1)]
                assert [r.node for r in records] == [f"n{i % 2}" for i in range(5, -1, -1)]
                unrated = next(r for r in records if r.result.match == "m4")
                assert not unrated.result.rated and not unrated.changes and not unrated.counted
                assert await ledger.totals("p_ada") == expected
                seen.append(records)
                paged, before = [], None
                while True:  # two at a time: every match once, none skipped
                    page = await ledger.records("p_ada", before, 2)
                    if not page:
                        break
                    paged += page
                    before = page[-1].cursor
                assert paged == records
            assert seen[0] == seen[1]
            standing = await ledgers[1].standing("p_ada")
            assert standing is not None and (standing.matches, standing.wins) == (5, 2)
            assert (await ledgers[0].totals("bot_easy")).matches == 2
            for i, ledger in enumerate(ledgers):  # what each node alone knew before
                own = await ledger.local.records("p_ada", None, 10)
                assert {r.result.match for r in own} == {f"m{j}" for j in range(i, 6, 2)}


async def test_a_bot_strengths_history_keeps_its_latest_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot strength plays every bot match of the cluster: its history lists
    the latest only, while its totals count them all (a person's lists all)."""
    monkeypatch.setattr(cluster_ratings, "BOT_HISTORY_KEPT", 2)
    with RedisProcess() as redis:
        async with _ledgers(tmp_path, redis) as ledgers:
            for i in (0, 3, 6, 9):
                await ledgers[0].apply(_result(i))
            kept = await ledgers[1].records("bot_easy", None, 10)
            assert [r.result.match for r in kept] == ["m9", "m6"]
            assert (await ledgers[1].totals("bot_easy")).matches == 4
            assert len(await ledgers[1].records("p_ada", None, 10)) == 4


async def _play(session: Session, seed: int) -> str:
    """A rated match of the session against an easy bot, played to its end
    (and left: the player's home is no longer there)."""
    match = (await session.create_match(seats=2, bots=[(1, "easy")])).match
    await session.start()
    await play_randomly(session, 0, random.Random(seed))
    await session.leave()
    return match


async def test_profile_and_history_are_the_same_on_every_node(tmp_path: Path) -> None:
    """Ada finishes a match on node 1 and one on node 2: both nodes' profile
    and history answer both matches and the same totals, which match the
    leaderboard's count; each match is replayable (its node is alive)."""
    with cluster(tmp_path, nodes=2) as (_, (one, two)):
        async with connect(one.url, name="Ada", reconnect=False) as ada:
            first = await _play(ada, 1)
            token, ada_id = ada.token, ada.player_id
        async with connect(two.url, name="Ada", token=token, reconnect=False) as ada:
            second = await _play(ada, 2)

            async def counted() -> wire.LeaderboardPage | None:
                board = await ada.leaderboard()
                return board if board.you is not None and board.you.matches == 2 else None

            board = await eventually(counted, "both matches on the leaderboard")
        answers = []
        for node in (one, two):
            async with connect(node.url, name="Ada", token=token, reconnect=False) as ada:
                card, history = await ada.profile(), await ada.history()
                answers.append((card, history))
                assert board.you is not None
                assert (card.matches, card.rated_matches) == (2, 2) == (board.you.matches,) * 2
                assert [m.match for m in history.matches] == [second, first]
                assert all(m.replay and m.seat == 0 for m in history.matches)
                assert [m.match for m in card.recent] == [second, first]
                assert card.player == ada_id
        (card_one, history_one), (card_two, history_two) = answers
        assert history_one == history_two
        assert msgspec_plain(card_one) == msgspec_plain(card_two)


def msgspec_plain(card: wire.ProfileCard) -> dict[str, Any]:
    """A card without its request id (each answer repeats its own)."""
    fields = {name: getattr(card, name) for name in card.__struct_fields__}
    fields.pop("id", None)
    return fields


@contextlib.asynccontextmanager
async def _node(redis_url: str, key: bytes, data_dir: Path, **settings: Any) -> AsyncIterator[Any]:
    """A cluster node in this process (its settings beyond the command line's reach)."""
    port = free_port()
    config = ServerConfig(
        host="127.0.0.1",
        port=port,
        data_dir=data_dir,
        cluster=redis_url,
        cluster_key=key,
        public_url=f"ws://127.0.0.1:{port}",
        heartbeat=HEARTBEAT,
        bot_delay=0.0,
        bot_think_ms=5.0,
        **settings,
    )
    server = TulipsServer(config)
    await server.start()
    try:
        yield server
    finally:
        async with asyncio.timeout(10):
            await server.stop()


async def test_a_finished_match_no_longer_listed_is_replayed_on_its_node(tmp_path: Path) -> None:
    """Node A keeps no finished match in memory: once Ada leaves, her match
    leaves the directory. Node B still lists it in her history, replayable
    while A is alive, and sends `replay` and `analyse` of it to A (`elsewhere`,
    A's URL, as the match's record names A); A stopped: `node_unavailable`."""
    key = os.urandom(32)
    with RedisProcess() as redis:
        async with (
            _node(redis.url, key, tmp_path / "a", keep_finished=0) as a,
            _node(redis.url, key, tmp_path / "b") as b,
        ):
            a_url = f"ws://127.0.0.1:{a.config.port}"
            b_url = f"ws://127.0.0.1:{b.config.port}"
            async with connect(a_url, name="Ada", reconnect=False) as ada:
                match = await _play(ada, 3)
                token = ada.token
            assert token is not None

            async def unlisted() -> bool:
                return match not in a.lobby.matches and match not in b.lobby.node.entries

            await eventually(unlisted, "the finished match leaves the directory")
            async with connect(b_url, name="Ada", token=token, reconnect=False) as ada:
                (listed,) = (await ada.history()).matches
                assert (listed.match, listed.replay) == (match, True)
            raw = await RawClient.open(b_url, "Ada", token)
            try:
                for kind, fields in (("replay", {}), ("analyse", {"seat": 0})):
                    answer = await raw.request(kind, match=match, **fields)
                    assert (answer["type"], answer["code"]) == ("error", "elsewhere"), answer
                    assert (answer["url"], answer["match"]) == (a_url, match)
            finally:
                await raw.close()
            await a.stop()

            async def a_gone() -> bool:
                return a.lobby.node.id not in b.lobby.node.live

            await eventually(a_gone, "node B sees node A stop")
            async with connect(b_url, name="Ada", token=token, reconnect=False) as ada:
                (listed,) = (await ada.history()).matches
                assert (listed.match, listed.replay) == (match, False)
            raw = await RawClient.open(b_url, "Ada", token)
            try:
                answer = await raw.request("replay", match=match)
                assert answer["code"] == "node_unavailable", answer
            finally:
                await raw.close()


class KillableNode(NodeProcess):
    """A node that SIGKILLs itself just before its own record of a finished
    match is stored (:mod:`tests.storage.killable_server`): in a cluster that
    is after the shared ratings, history and totals were written."""

    def command(self) -> list[str]:
        """The node's command line, run under the fault runner."""
        command = super().command()
        at = command.index("server")
        return [
            *command[:at],
            "tests.storage.killable_server",
            "--kill-at-ratings",
            "before",
            *command[at + 1 :],
        ]


def _local_results(data_dir: Path) -> int:
    db = sqlite3.connect(data_dir / FILE_NAME)
    try:
        return int(db.execute("SELECT count(*) FROM results").fetchone()[0])
    finally:
        db.close()


async def _shared(store: Store, ident: str) -> tuple[int, int, int, int]:
    """(totals' matches, history's matches, results, rated matches) in the store."""
    totals = await store.totals(ident)
    rating = (await store.ratings([ident])).get(ident)
    return (
        totals.matches if totals is not None else 0,
        len(await store.history(ident, None, 10)),
        len((await store.results(0, 10))[0]),
        rating.matches if rating is not None else 0,
    )


async def test_a_crash_between_the_shared_write_and_the_node_record_counts_once(
    tmp_path: Path,
) -> None:
    """The node dies after the cluster's store took a finished match (ratings,
    record, totals) and before its own file did; started again, it records
    the match, once: the store still counts it once, and the profile says so."""
    data = tmp_path / "node1"
    with RedisProcess() as redis:
        store = Store(redis.url, load_key(key_file(tmp_path)))
        node = KillableNode(redis.url, data)
        node.start()
        node.wait_up()
        session = Session(node.url, "Ada", reconnect=False)
        await session.open()
        token, ada = session.token, session.player_id
        assert token is not None and ada is not None
        game = asyncio.ensure_future(_play(session, 4))

        async def died() -> bool:
            assert node.process is not None
            return node.process.poll() is not None

        await eventually(died, "the node kills itself at the match's end", 60)
        game.cancel()
        with contextlib.suppress(BaseException):
            await game
        with contextlib.suppress(Exception):
            await session.close()
        try:
            assert _local_results(data) == 0
            assert await _shared(store, ada) == (1, 1, 1, 1)
            again = NodeProcess(redis.url, data)
            again.start()
            try:
                again.wait_up()

                async def recorded() -> bool:
                    return _local_results(data) == 1

                await eventually(recorded, "the restarted node records the match")
                assert await _shared(store, ada) == (1, 1, 1, 1)
                async with connect(again.url, name="Ada", token=token, reconnect=False) as back:
                    card = await back.profile()
                    assert (card.matches, card.rated_matches, len(card.recent)) == (1, 1, 1)
            finally:
                again.stop()
        finally:
            await store.close()


async def test_without_the_store_profile_and_history_say_cluster_unavailable(
    tmp_path: Path,
) -> None:
    """A node whose Redis does not answer cannot read the shared history: the
    request gets `cluster_unavailable` (try again later), not a server error."""
    storage = Storage(tmp_path / "node")
    storage.open()
    store = Store(f"redis://127.0.0.1:{free_port()}/0", os.urandom(32), timeout=0.5)
    try:
        ledger = ClusterLedger(store, SqlLedger(storage), "n0")
        for read in (ledger.records("p_ada", None, 5), ledger.totals("p_ada"), ledger.place("x")):
            with pytest.raises(wire.ProtocolError) as refused:
                await read
            assert refused.value.code == "cluster_unavailable"
    finally:
        await store.close()
        storage.close()
