"""``tulips-cluster ratings export|reset`` and ``players remove``, run as real
commands against a real cluster: the export holds every node's matches, reset
starts the shared ratings again while nodes run, and remove — refused while a
node is alive — anonymises the player in the shared history and, when the
nodes start again, in each node's own file."""

from __future__ import annotations

import csv
import io
import json
import random
import sqlite3
from pathlib import Path

import pytest

from client.sdk import ConnectError, RequestError, Session, connect
from server.operator_tools import REMOVED_TOKEN
from server.ratings.cards import REMOVED_NAME
from server.storage import FILE_NAME

from ..server.helpers import play_randomly
from .helpers import NodeProcess, cluster, eventually, needs_redis, tulips_cluster

pytestmark = needs_redis


async def _play(session: Session, seed: int) -> str:
    """A rated match against an easy bot, played to its end and left."""
    match = (await session.create_match(seats=2, bots=[(1, "easy")])).match
    await session.start()
    await play_randomly(session, 0, random.Random(seed))
    await session.leave()
    return match


def _node_id(node: NodeProcess) -> str:
    health = node.health()
    assert health is not None
    return str(health["cluster"]["node"])


def _local(data_dir: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    db = sqlite3.connect(data_dir / FILE_NAME)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


async def test_the_operator_tools_act_on_the_whole_cluster(tmp_path: Path) -> None:
    """Ada plays on node 1 and node 2, Bo on node 2. The history export lists
    all three matches with their nodes; reset (nodes running) empties the
    leaderboard and keeps the history; remove is refused while nodes run, and
    once they are stopped it anonymises Ada everywhere: the export, every
    node's profiles and history, each node's file; her token opens nothing."""
    with cluster(tmp_path, nodes=2) as (redis, (one, two)):
        base = ("--cluster", redis.url, "--cluster-key-file", str(one.key_file))
        async with connect(one.url, name="Ada", reconnect=False) as ada:
            first = await _play(ada, 1)
            token, ada_id = ada.token, ada.player_id
        assert token is not None and ada_id is not None
        async with connect(two.url, name="Ada", token=token, reconnect=False) as ada:
            second = await _play(ada, 2)
        async with connect(two.url, name="Bo", reconnect=False) as bo:
            third = await _play(bo, 3)
            bo_token = bo.token

            async def rated() -> bool:
                board = await bo.leaderboard()
                return board.total == 3 and sum(e.matches for e in board.entries) == 2 + 1 + 3

            await eventually(rated, "the three matches rated")

        exported = tulips_cluster(
            *base, "ratings", "export", "--what", "history", "--format", "json"
        )
        assert exported.returncode == 0, exported.stderr
        rows = json.loads(exported.stdout)
        assert "exported 6 history lines" in exported.stderr
        assert {row["match"] for row in rows} == {first, second, third}
        nodes = {row["match"]: row["node"] for row in rows}
        assert nodes == {first: _node_id(one), second: _node_id(two), third: _node_id(two)}
        assert all(row["counted"] == 1 for row in rows)
        ratings = tulips_cluster(*base, "ratings", "export")
        lines = {row["player"]: row for row in csv.DictReader(io.StringIO(ratings.stdout))}
        assert (lines[ada_id]["name"], lines[ada_id]["matches"]) == ("Ada", "2")
        assert lines["bot_easy"]["matches"] == "3"

        unsure = tulips_cluster(*base, "ratings", "reset")
        assert unsure.returncode == 1 and "--yes" in unsure.stderr
        reset = tulips_cluster(*base, "ratings", "reset", "--yes")
        assert reset.returncode == 0 and "reset 3 ratings" in reset.stderr, reset.stderr
        for node in (one, two):
            async with connect(node.url, name="Ada", token=token, reconnect=False) as ada:
                assert (await ada.leaderboard()).total == 0
                card = await ada.profile()
                assert (card.matches, card.rated_matches, card.rating) == (2, 0, None)
                history = (await ada.history()).matches
                assert [m.match for m in history] == [second, first]
                assert all(m.rating is not None for m in history)  # the changes it showed

        alive = tulips_cluster(*base, "players", "remove", ada_id, "--yes")
        assert alive.returncode == 1 and "are alive: stop every node first" in alive.stderr
        one.stop()
        two.stop()
        removed = tulips_cluster(*base, "players", "remove", ada_id, "--yes")
        assert removed.returncode == 0, removed.stderr
        assert f"removed player {ada_id} (2 matches anonymised)" in removed.stderr
        again = tulips_cluster(*base, "players", "remove", ada_id, "--yes")
        assert again.returncode == 1 and "removed already" in again.stderr
        bot = tulips_cluster(*base, "players", "remove", "bot_easy", "--yes")
        assert bot.returncode == 1 and "bot strength" in bot.stderr
        after = json.loads(
            tulips_cluster(
                *base, "ratings", "export", "--what", "history", "--format", "json"
            ).stdout
        )
        assert ada_id not in json.dumps(after)
        humans = {
            row["match"]: (row["player"], row["player_name"]) for row in after if not row["bot"]
        }
        assert humans[first] == humans[second] == (None, REMOVED_NAME)
        assert humans[third][1] == "Bo"

        for node in (one, two):
            node.start()
        for node in (one, two):
            node.wait_up()
        for node in (one, two):
            with pytest.raises(ConnectError) as gone:
                await connect(node.url, name="Ada", token=token, reconnect=False)
            assert gone.value.code == "bad_token"
            async with connect(node.url, name="Bo", token=bo_token, reconnect=False) as bo:
                with pytest.raises(RequestError) as unknown:
                    await bo.profile(ada_id)
                assert unknown.value.code == "no_such_player"
                recent = (await bo.profile("bot_easy")).recent
                seats = {m.match: m.seats[0] for m in recent}
                assert (seats[first].name, seats[first].player) == (REMOVED_NAME, None)
                assert seats[third].name == "Bo"
                assert [m.match for m in (await bo.history()).matches] == [third]
        for node in (one, two):  # each node's file, as `tulips-server players remove` leaves it
            rows = _local(node.data_dir, "SELECT token_hash FROM players WHERE id = ?", ada_id)
            assert len(rows) == 1 and str(rows[0][0]).startswith(REMOVED_TOKEN)
            seated = _local(node.data_dir, "SELECT 1 FROM result_seats WHERE player = ?", ada_id)
            assert seated == []
