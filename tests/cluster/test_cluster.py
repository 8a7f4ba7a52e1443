"""Three real nodes sharing one Redis: one lobby everywhere, redirects to the
node of a match, resume tokens that work on every node."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect as ws_connect

import protocol as wire
from client.sdk import ConnectionLost, RequestError, Session

from .helpers import ROOT, NodeProcess, cluster, eventually, needs_redis

pytestmark = needs_redis

#: The issue's bound: every node lists a new match within a second.
CONSISTENT_WITHIN = 1.0


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[NodeProcess]]:
    """Three nodes and their Redis, for the whole module."""
    with cluster(tmp_path_factory.mktemp("cluster")) as (_, procs):
        yield procs


def node_id(node: NodeProcess) -> str:
    health = node.health()
    assert health is not None
    return str(health["cluster"]["node"])


async def _session(url: str, name: str, **options: object) -> Session:
    session = Session(url, name, **options)  # type: ignore[arg-type]
    await session.open()
    return session


async def test_every_node_lists_every_match_within_a_second(nodes: list[NodeProcess]) -> None:
    """A match made on any node is listed by every node, with its node, within a second."""
    sessions = [await _session(n.url, f"host{i}") for i, n in enumerate(nodes)]
    try:
        made: dict[str, str] = {}
        for proc, session in zip(nodes, sessions, strict=True):
            joined = await session.create_match(name="everywhere", seats=3, bots=[(1, "easy")])
            made[joined.match] = node_id(proc)
        created = time.monotonic()
        for session in sessions:
            while True:
                listed = {m.match: m for m in await session.list_matches()}
                if set(made) <= set(listed):
                    break
                assert time.monotonic() - created < CONSISTENT_WITHIN, f"{session.url} lags"
                await asyncio.sleep(0.02)
            for match, where in made.items():
                assert listed[match].node == where
                assert listed[match].available
    finally:
        await asyncio.gather(*(s.close() for s in sessions))


async def test_a_client_on_node_1_joins_a_match_on_node_3_through_the_redirect(
    nodes: list[NodeProcess],
) -> None:
    """join of a match on another node: the SDK moves there and plays, unnoticed."""
    host = await _session(nodes[2].url, "Host")
    guest = await _session(nodes[0].url, "Guest")
    try:
        match = (await host.create_match(name="far", seats=2)).match
        await eventually(
            lambda: _listed(guest, match), "the match reaches node 1", CONSISTENT_WITHIN * 5
        )
        joined = await guest.join(match)
        assert (joined.match, joined.seat) == (match, 1)
        assert guest.url == nodes[2].url
        await host.start()
        snapshot = await guest.next_of(wire.Snapshot, timeout=10)
        assert snapshot.match == match and snapshot.seat == 1
    finally:
        await asyncio.gather(host.close(), guest.close())


async def test_the_redirect_on_the_wire_names_the_node_and_the_match(
    nodes: list[NodeProcess],
) -> None:
    """PROTOCOL.md: `error` `elsewhere` answers the request, with `url` and `match`."""
    host = await _session(nodes[2].url, "Host")
    try:
        match = (await host.create_match(name="wire", seats=2)).match
        async with ws_connect(nodes[0].url) as ws:
            await ws.send(wire.encode(wire.Hello(client="test", name="Raw", id=1)))
            assert isinstance(wire.decode_server_message(await ws.recv()), wire.Welcome)

            async def redirected() -> wire.Error | None:
                await ws.send(wire.encode(wire.Watch(match=match, id=7)))
                answer = wire.decode_server_message(await ws.recv())
                assert isinstance(answer, wire.Error)
                return answer if answer.code == "elsewhere" else None

            error = await eventually(redirected, "node 1 knows the match", 5)
            assert (error.id, error.url, error.match) == (7, nodes[2].url, match)
    finally:
        await host.close()


async def test_a_seat_resumes_through_any_node(nodes: list[NodeProcess]) -> None:
    """hello with the token on node 1: the player is sent to node 2, their seat's, and put back."""
    player = await _session(nodes[1].url, "Ria")
    match = (await player.create_match(name="resume", seats=2, bots=[(1, "easy")])).match
    await player.start()
    token = player.token
    await player.close()
    again = Session(nodes[0].url, "Ria", token=token)
    try:
        await eventually(lambda: _listed_at(nodes[0], match), "node 1 knows the match", 5)
        await again.open()
        joined = await again.next_of(wire.Joined, timeout=10)
        assert (joined.match, joined.seat) == (match, 0)
        assert again.url == nodes[1].url
        snapshot = await again.next_of(wire.Snapshot, timeout=10)
        assert snapshot.seat == 0
    finally:
        await again.close()


async def test_a_replay_elsewhere_goes_there_and_back_to_the_seat(
    nodes: list[NodeProcess],
) -> None:
    """replay of a match on node 2 by a player seated on node 1: answered there, and the
    session returns to node 1, where the player is put back in their seat."""
    other = await _session(nodes[1].url, "Other")
    player = await _session(nodes[0].url, "Seated")
    try:
        far = (await other.create_match(name="to replay", seats=2)).match
        mine = (await player.create_match(name="mine", seats=2, bots=[(1, "easy")])).match
        await player.start()
        page = await player.replay(far)
        assert page.match == far and page.events == ()
        assert player.url == nodes[0].url
        async with asyncio.timeout(10):  # the unasked joined of the seat it is put back in
            joined = await anext(
                m async for m in player if isinstance(m, wire.Joined) and m.id is None
            )
        assert joined.match == mine
    finally:
        await asyncio.gather(other.close(), player.close())


async def test_an_analysis_elsewhere_is_asked_there_like_a_replay(
    nodes: list[NodeProcess],
) -> None:
    """Issue 32: analyse of a match on node 2 from node 1 is sent there
    (`elsewhere`, followed), and node 2 answers it: not finished yet."""
    other = await _session(nodes[1].url, "Host2")
    asker = await _session(nodes[0].url, "Asker")
    try:
        far = (await other.create_match(name="to analyse", seats=2)).match
        await eventually(lambda: _listed_at(nodes[0], far), "node 1 knows the match", 5)
        with pytest.raises(RequestError) as refused:
            await asker.analyse(far)
        assert refused.value.code == "not_finished"
        assert asker.url == nodes[1].url
    finally:
        await asyncio.gather(other.close(), asker.close())


async def test_a_newer_connection_on_another_node_replaces_the_older(
    nodes: list[NodeProcess],
) -> None:
    """As on one server, the same identity's older connection is closed with 4004."""
    first = await _session(nodes[0].url, "Twice", reconnect=False)
    second = Session(nodes[1].url, "Twice", token=first.token, reconnect=False)
    try:
        await second.open()
        async with asyncio.timeout(10):
            lost = await anext(m async for m in first if isinstance(m, ConnectionLost))
        assert lost.reason.startswith(str(int(wire.CloseCode.REPLACED)))
    finally:
        await asyncio.gather(first.close(), second.close())


async def test_taking_a_seat_on_another_node_leaves_the_seat_here(
    nodes: list[NodeProcess],
) -> None:
    """join leaves one's current match on one server; across nodes it does too."""
    mover = await _session(nodes[0].url, "Mover")
    other = await _session(nodes[1].url, "Other")
    try:
        first = (await mover.create_match(name="left behind", seats=3)).match
        second = (await other.create_match(name="the new one", seats=3)).match
        await eventually(lambda: _listed(mover, second), "node 1 knows the new match", 5)
        await mover.join(second)
        assert mover.url == nodes[1].url

        async def left() -> bool:
            summary = await _listed(other, first)
            return summary is None or all(seat.name != "Mover" for seat in summary.seats)

        await eventually(left, "the seat on node 1 is left", 5)
    finally:
        await asyncio.gather(mover.close(), other.close())


async def test_the_cluster_example_client_follows_the_redirect(
    nodes: list[NodeProcess], tmp_path: Path
) -> None:
    """examples/cluster_client.py, given node 1, joins a match on node 3 and plays it out."""
    host = await _session(nodes[2].url, "Host")
    try:
        match = (await host.create_match(name="example", seats=3, bots=[(1, "easy")])).match
        await eventually(lambda: _listed_at(nodes[0], match), "node 1 knows the match", 5)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "examples/cluster_client.py",
            nodes[0].url,
            match,
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:

            async def full() -> bool:
                summary = await _listed(host, match)
                return summary is not None and all(s.kind != "empty" for s in summary.seats)

            await eventually(full, "the example client took its seat", 20)
            await host.start()
            async with asyncio.timeout(60):
                async for message in host:
                    if isinstance(message, wire.Prompt):
                        await host.answer(message, message.actions[0])
                    elif isinstance(message, wire.Event) and isinstance(
                        message.event, wire.MatchEnded
                    ):
                        break
                out, err = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        assert process.returncode == 0, err.decode()
        assert f"moved to {nodes[2].url}" in out.decode()
        assert "winners:" in out.decode()
    finally:
        await host.close()


async def _listed(session: Session, match: str) -> wire.MatchSummary | None:
    return next((m for m in await session.list_matches() if m.match == match), None)


async def _listed_at(node: NodeProcess, match: str) -> wire.MatchSummary | None:
    async with ws_connect(node.url) as ws:
        await ws.send(wire.encode(wire.Hello(client="test", name="Peek", id=1)))
        await ws.recv()
        await ws.send(wire.encode(wire.ListMatches(id=2)))
        answer = wire.decode_server_message(await ws.recv())
        assert isinstance(answer, wire.MatchList)
        return next((m for m in answer.matches if m.match == match), None)


async def test_a_match_that_leaves_the_lobby_is_removed_on_every_node(
    nodes: list[NodeProcess],
) -> None:
    """An open match everyone left on one node: a lobby browser on another node
    gets ``match_removed`` for it, and no longer finds it listed."""
    host = await _session(nodes[0].url, "leaver")
    browser = await _session(nodes[1].url, "browser")
    try:
        match = (await host.create_match(name="short-lived", seats=3)).match
        await eventually(lambda: _listed(browser, match), "the match is listed on node 1")
        await host.leave()
        removed = await browser.next_of(wire.MatchRemoved, timeout=5)
        while removed.match != match:  # an earlier test's match may go first
            removed = await browser.next_of(wire.MatchRemoved, timeout=5)
        assert await _listed(browser, match) is None
    finally:
        await asyncio.gather(host.close(), browser.close())


async def test_a_tutorial_is_listed_on_no_node_and_refused_to_others(
    nodes: list[NodeProcess],
) -> None:
    """A tutorial on node 3 is never listed, there or elsewhere (an ordinary match made
    after it is), and another player's join, redirected there, finds no such match."""
    host = await _session(nodes[2].url, "Learner")
    guest = await _session(nodes[0].url, "Guest")
    try:
        bots = [(1, "medium"), (2, "medium")]
        tutorial = (await host.create_match(name="t", seats=3, bots=bots, tutorial=True)).match
        await host.start()  # running: in the directory, so that its creator finds it anywhere
        ordinary = (await host.create_match(name="o", seats=2)).match
        await eventually(
            lambda: _listed(guest, ordinary), "the match reaches node 1", CONSISTENT_WITHIN * 5
        )
        assert await _listed(guest, tutorial) is None
        assert await _listed(host, tutorial) is None
        with pytest.raises(RequestError) as refused:
            await guest.join(tutorial)
        assert refused.value.code == "no_such_match"
    finally:
        await asyncio.gather(host.close(), guest.close())


async def test_a_browser_hears_only_of_the_matches_on_its_page_from_any_node(
    nodes: list[NodeProcess],
) -> None:
    """Issue 45: the cluster's fan-out follows the page too. A browser on
    node 1 asking for the newest open match hears of a new one made on node
    0 (it comes in at the top), and then not of the one it pushed off."""
    older_host = await _session(nodes[0].url, "older-host")
    newer_host = await _session(nodes[2].url, "newer-host")
    browser = await _session(nodes[1].url, "pager")
    joiner = await _session(nodes[0].url, "pager-joiner")
    try:
        older = (await older_host.create_match(name="older", seats=3)).match
        await eventually(lambda: _listed(browser, older), "the match is listed on node 1")
        page = await browser.browse(status=["open"], limit=1)
        assert [m.match for m in page.matches] == [older]
        newer = (await newer_host.create_match(name="newer", seats=3)).match
        update = await browser.next_of(wire.MatchUpdate, timeout=5)
        assert update.match.match == newer
        await joiner.join(older)  # off the page now: unheard
        with pytest.raises(TimeoutError):
            while True:
                heard = await browser.next_of(wire.MatchUpdate, timeout=1.0)
                assert heard.match.match != older, "a match off the page was told"
    finally:
        await asyncio.gather(*(s.close() for s in (older_host, newer_host, browser, joiner)))
