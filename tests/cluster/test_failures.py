"""A node killed mid-game, and Redis stopped mid-game: the other nodes play on,
the lobby says what is unavailable, and everything comes back — with nothing
that was acknowledged lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import protocol as wire
from client.sdk import Reconnected, RequestError, Session

from .helpers import NodeProcess, cluster, eventually, needs_redis

pytestmark = needs_redis


async def _session(url: str, name: str, **options: object) -> Session:
    session = Session(url, name, **options)  # type: ignore[arg-type]
    await session.open()
    return session


async def _listed(session: Session, match: str) -> wire.MatchSummary | None:
    return next((m for m in await session.list_matches() if m.match == match), None)


class Player:
    """A seated SDK session that plays its prompts and remembers the last event seen."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.seen = 0
        self.acted = 0

    async def play(self, actions: int, timeout: float = 20) -> None:
        """Act on ``actions`` more prompts (each answered ``ok``)."""
        goal = self.acted + actions
        async with asyncio.timeout(timeout):
            async for message in self.session:
                if isinstance(message, wire.Event):
                    self.seen = max(self.seen, message.seq)
                elif isinstance(message, wire.Prompt):
                    await self.session.answer(message, message.actions[0])
                    self.acted += 1
                    if self.acted >= goal:
                        return


async def _start_against_bots(url: str, name: str) -> tuple[Player, str]:
    session = await _session(url, name)
    match = (await session.create_match(name=name, seats=3, bots=[(1, "easy"), (2, "easy")])).match
    await session.start()
    return Player(session), match


@pytest.mark.slow
async def test_a_killed_node_is_unavailable_then_resumes_with_nothing_lost(
    tmp_path: Path,
) -> None:
    """SIGKILL of node 2 while all play: its match shows unavailable, a join is told
    so, node 1 plays on; after node 2's restart its match is back, acknowledged
    actions included, and its player carries on."""
    with cluster(tmp_path) as (_, nodes):
        victim, survivor = nodes[1], nodes[0]
        far, far_match = await _start_against_bots(victim.url, "Far")
        near, _ = await _start_against_bots(survivor.url, "Near")
        lobby = await _session(survivor.url, "Lobby")
        try:
            await asyncio.gather(far.play(4), near.play(2))
            await eventually(lambda: _listed(lobby, far_match), "node 1 lists node 2's match")
            seen_before = far.seen
            assert seen_before > 0
            victim.kill()

            async def unavailable() -> bool:
                summary = await _listed(lobby, far_match)
                return summary is not None and not summary.available

            await eventually(unavailable, "node 2's match shows as unavailable")
            with pytest.raises(RequestError) as refused:
                await lobby.watch(far_match)
            assert refused.value.code == "node_unavailable"
            await near.play(3)  # the other nodes play on

            victim.start()
            victim.wait_up()

            async def available() -> bool:
                summary = await _listed(lobby, far_match)
                return summary is not None and summary.available

            await eventually(available, "node 2's match is available again", 20)
            async with asyncio.timeout(30):
                await anext(m async for m in far.session if isinstance(m, Reconnected))
            snapshot = await far.session.next_of(wire.Snapshot, timeout=10)
            assert snapshot.match == far_match
            assert snapshot.seq >= seen_before  # every event anyone saw was stored first
            far.seen = snapshot.seq
            await far.play(2)
        finally:
            await asyncio.gather(far.session.close(), near.session.close(), lobby.close())


async def test_redis_stopped_and_restarted_mid_game(tmp_path: Path) -> None:
    """Without Redis a node plays its matches, welcomes new players and refuses
    cross-node joins with cluster_unavailable; once Redis is back (empty), the
    nodes publish everything again and identities made meanwhile work everywhere."""
    with cluster(tmp_path, nodes=2) as (redis, nodes):
        player, match = await _start_against_bots(nodes[0].url, "Steady")
        host = await _session(nodes[1].url, "Away")
        far_match = (await host.create_match(name="away", seats=3)).match
        lobby = await _session(nodes[0].url, "Lobby")
        try:
            await eventually(lambda: _listed(lobby, far_match), "node 1 lists node 2's match")
            await player.play(2)
            redis.stop()
            await eventually(lambda: _store_down(nodes[0]), "node 1 notices Redis is gone")

            await player.play(3)  # the match on this node goes on
            with pytest.raises(RequestError) as refused:
                await lobby.join(far_match)
            assert refused.value.code == "cluster_unavailable"
            summary = await _listed(lobby, far_match)
            assert summary is not None and not summary.available
            newcomer = await _session(nodes[0].url, "Newcomer")  # made while Redis is away
            token, newcomer_id = newcomer.token, newcomer.player_id
            await newcomer.close()

            redis.start()  # the same port, and empty: the nodes must publish it all again

            async def everywhere() -> bool:
                mine = await _listed(host, match)
                theirs = await _listed(lobby, far_match)
                return bool(mine and theirs and theirs.available)

            await eventually(everywhere, "both nodes list both matches again", 20)
            elsewhere = Session(nodes[1].url, "Newcomer", token=token)
            welcome = await elsewhere.open()
            assert welcome.player == newcomer_id
            await elsewhere.close()
            joined = await lobby.join(far_match)
            assert joined.match == far_match and lobby.url == nodes[1].url
            await player.play(1)
        finally:
            await asyncio.gather(player.session.close(), host.close(), lobby.close())


async def _store_down(node: NodeProcess) -> bool:
    health = node.health()
    return health is not None and health["cluster"]["store"] == "unreachable"
