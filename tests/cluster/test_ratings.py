"""A cluster's ratings are one shared fact in its Redis (issue 31): two nodes
ending matches of one player at the same moment lose no update, and a match
counts once whichever node applies it — against a real redis-server."""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

import protocol as wire
from client.loadgen.redisproc import RedisProcess
from client.sdk import ConnectError, connect
from server.cluster.ratings import ClusterLedger
from server.cluster.store import Store
from server.match.results import MatchResult, SeatResult
from server.ratings.ledger import SqlLedger
from server.storage import Storage

from ..server.helpers import play_randomly
from .helpers import cluster, eventually, needs_redis

pytestmark = needs_redis


def _result(match: str, opponent: str, won: bool) -> MatchResult:
    seats = (
        SeatResult(0, "p_shared", "Ada", None, 60, 10, 1 if won else 2, 30, 0),
        SeatResult(1, opponent, opponent, None, 50, 10, 2 if won else 1, 30, 0),
    )
    return MatchResult(match, match, "standard", False, True, 1.0, seats)


async def test_two_nodes_finishing_matches_of_one_player_at_once_lose_no_update(
    tmp_path: Path,
) -> None:
    key = os.urandom(32)
    with RedisProcess() as redis:
        stores = [Store(redis.url, key, sender=f"n{i}") for i in range(2)]
        storages = [Storage(tmp_path / f"node{i}") for i in range(2)]
        for storage in storages:
            storage.open()
        ledgers = [
            ClusterLedger(store, SqlLedger(s), f"n{i}")
            for i, (store, s) in enumerate(zip(stores, storages, strict=True))
        ]
        try:
            results = [_result(f"m{i}", f"p{i}", won=i % 3 == 0) for i in range(40)]
            # each node applies its half, all at once: every transaction races the others
            applied = await asyncio.gather(
                *(ledgers[i % 2].apply(result) for i, result in enumerate(results))
            )
            assert all(changes for changes in applied)
            shared = await ledgers[0].standing("p_shared")
            assert shared is not None
            assert (shared.matches, shared.wins) == (40, sum(i % 3 == 0 for i in range(40)))
            # each change started from the rating the one before it left: a chain
            chain = sorted(
                (c for changes in applied if changes for c in changes if c.ident == "p_shared"),
                key=lambda c: c.before.sigma,
                reverse=True,
            )
            assert len(chain) == 40 and chain[0].before.mu == pytest.approx(25.0)
            befores = {(c.before.mu, c.before.sigma) for c in chain}
            afters = {(c.after.mu, c.after.sigma) for c in chain}
            assert len(befores) == 40 and len(befores - afters) == 1  # only the first is new
            # a match counts once, whichever node sees it again (a restart, another node)
            assert await ledgers[1].apply(results[0]) is None
            other = SqlLedger(storages[1])
            assert await ClusterLedger(stores[1], other, "n1").apply(results[1]) is None
            again = await ledgers[0].standing("p_shared")
            assert again is not None and again.matches == 40
            board, total = await ledgers[1].board(0, 50)
            assert total == 41 and board[0].skill.ordinal >= board[-1].skill.ordinal
            assert await ledgers[0].place(board[0].ident) == 1
        finally:
            for store in stores:
                await store.close()
            for storage in storages:
                storage.close()


async def test_one_match_counts_once_when_two_nodes_apply_it_at_once(tmp_path: Path) -> None:
    """Both nodes apply the same result together: one of them applies it, with
    openskill's numbers; the other finds the mark and records the same changes."""
    key = os.urandom(32)
    with RedisProcess() as redis:
        stores = [Store(redis.url, key, sender=f"n{i}") for i in range(2)]
        storages = [Storage(tmp_path / f"node{i}") for i in range(2)]
        for storage in storages:
            storage.open()
        try:
            ledgers = [
                ClusterLedger(st, SqlLedger(sg), f"n{i}")
                for i, (st, sg) in enumerate(zip(stores, storages, strict=True))
            ]
            result = _result("m1", "p_bo", won=True)
            first, second = await asyncio.gather(*(ledger.apply(result) for ledger in ledgers))
            assert (first is None) != (second is None)
            model = PlackettLuce()
            expected = model.rate([[model.rating()], [model.rating()]], ranks=[1.0, 2.0])
            shared = await ledgers[1].standing("p_shared")
            assert shared is not None and shared.matches == 1
            assert shared.skill.mu == pytest.approx(expected[0][0].mu)
            for ledger in ledgers:  # both nodes' history has it, with the same change
                (record,) = await ledger.records("p_shared", None, 5)
                assert record.changes[0].after == shared.skill
        finally:
            for store in stores:
                await store.close()
            for storage in storages:
                storage.close()


async def test_names_link_codes_and_the_leaderboard_span_the_nodes(tmp_path: Path) -> None:
    """Real nodes: a name held on one node is taken on the other, a link code
    from one node links a device on the other, and a rated match played on
    one node is on the other's leaderboard."""
    with cluster(tmp_path, nodes=2) as (_, (one, two)):
        async with connect(one.url, name="Ada", reconnect=False) as ada:
            async with connect(two.url, name="ada", reconnect=False) as other:
                assert other.name == "ada 2"
            code = (await ada.link_code()).code
            async with connect(two.url, name="tablet", link=code, reconnect=False) as tablet:
                assert tablet.player_id == ada.player_id and tablet.name == "Ada"
            with pytest.raises(ConnectError):
                await connect(two.url, name="tablet", link=code, reconnect=False)
            ada_id, token = ada.player_id, ada.token
        # the tablet's hello replaced the laptop's connection: it comes back with its token
        async with connect(one.url, name="Ada", token=token, reconnect=False) as ada:
            await ada.create_match(seats=2, bots=[(1, "easy")])
            await ada.start()
            await play_randomly(ada, 0, random.Random(2))
        async with connect(two.url, name="Cy", reconnect=False) as cy:

            async def listed() -> object:
                board = await cy.leaderboard()
                return board if board.total == 2 else None

            board = await eventually(listed, "the match's ratings on the other node")
            assert isinstance(board, wire.LeaderboardPage)
            names = {entry.player: entry.name for entry in board.entries}
            assert names == {ada_id: "Ada", "bot_easy": "Bots (easy)"}


async def test_two_nodes_never_give_one_name_twice_at_the_same_moment(tmp_path: Path) -> None:
    """Names are unique across the cluster even when both nodes are asked at
    once: six new "Zoe"s, three on each node, get six names; and of two
    players renaming themselves "Max" at once on two nodes, one gets it and
    the other is told `name_taken`."""
    with cluster(tmp_path, nodes=2) as (_, (one, two)):
        urls = [one.url, two.url] * 3
        sessions = await asyncio.gather(
            *(connect(url, name="Zoe", reconnect=False) for url in urls)
        )
        try:
            keys = [session.name.casefold() for session in sessions]
            assert len(set(keys)) == len(keys), keys
            first, second = sessions[0], sessions[1]  # one on each node
            results = await asyncio.gather(
                first.rename("Max"), second.rename("max"), return_exceptions=True
            )
            taken = [r for r in results if isinstance(r, Exception)]
            assert len(taken) == 1, results
            assert getattr(taken[0], "code", None) == "name_taken"
        finally:
            await asyncio.gather(*(session.close() for session in sessions))
