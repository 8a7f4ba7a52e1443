"""Issue 29, "Redis is trusted blindly", made for real: a real cluster, and an
attacker who can write to its Redis (no password) but does not hold the
cluster's key. They list a node of their own — a listener of the test's on
127.0.0.1 that records whatever reaches it — point matches and a player's
seat at it, overwrite a real node's heartbeat with its URL, and register a
token of theirs for another player. No client is sent there, the listener
receives nothing (no hello, no token), and the token is refused."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from pathlib import Path
from types import TracebackType

import pytest
import redis as redis_py

import protocol as wire
from client.sdk import ConnectError, RequestError, Session
from server.cluster.entries import DirectoryEntry, NodeInfo, PlayerEntry, encode
from server.cluster.store import DIRECTORY, LOBBY, NODES, Store
from server.identity import hash_token

from .helpers import HEARTBEAT, cluster, eventually, needs_redis

pytestmark = needs_redis


class Recorder:
    """A TCP listener on 127.0.0.1 that records every connection and byte it gets."""

    def __init__(self) -> None:
        self.connections = 0
        self.received = b""
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Recorder:
        self._server = await asyncio.start_server(self._on_connection, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        """A ``ws://`` URL that reaches it."""
        assert self._server is not None
        return f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.connections += 1
        with contextlib.suppress(OSError, TimeoutError):
            self.received += await asyncio.wait_for(reader.read(65536), 2.0)
        writer.close()


def _summary(match: str, node: str) -> wire.MatchSummary:
    return wire.MatchSummary(
        match=match,
        name="free tulips",
        status="open",
        seats=(wire.SeatInfo(seat=0, kind="empty"), wire.SeatInfo(seat=1, kind="empty")),
        host="Mallory",
        has_join_code=False,
        ruleset="standard",
        node=node,
    )


def _forged_node(node: str, url: str) -> NodeInfo:
    return NodeInfo(node=node, url=url, pid=1, started=0.0, expires=time.time() + 3600)


def _forged_entry(match: str, node: str, homes: tuple[str, ...]) -> DirectoryEntry:
    # newer than any real seat, so a returning player would be sent there first
    return DirectoryEntry(
        match=match,
        node=node,
        created=time.time() + 1000,
        summary=_summary(match, node),
        homes=homes,
    )


async def test_a_node_forged_in_redis_receives_no_player_and_no_token(tmp_path: Path) -> None:
    """Issue 29: "anyone who can write to the cluster's Redis can point a match at
    their own listener and collect the hello, token included". Forged heartbeats
    and directory entries — sealed with another key, or not sealed, as before
    the fix — send nobody anywhere; the real node's heartbeat overwritten with
    the listener's URL sends nobody there either; a token of the attacker's
    registered for another player is refused."""
    with cluster(tmp_path, nodes=2) as (redis, (near, far)):
        raw = redis_py.Redis.from_url(redis.url)
        mallory = Store(redis.url, os.urandom(32), sender="evil1")  # a key of their own
        host = Session(far.url, "Host")
        victim = Session(near.url, "Victim")
        bystander = Session(near.url, "Bystander")  # never on the far node
        await asyncio.gather(host.open(), victim.open(), bystander.open())
        try:
            async with Recorder() as listener:
                assert victim.player_id is not None and victim.token is not None
                far_health = far.health()
                assert far_health is not None
                far_id = str(far_health["cluster"]["node"])
                homes = (victim.player_id,)

                # Their own node, sealed with their key, and its match holding the victim's seat.
                await mallory.beat(_forged_node("evil1", listener.url), 3600)
                await mallory.publish([_forged_entry("evilmatch1", "evil1", homes)])
                # The same, unsealed (what every node believed before the fix).
                raw.set("tulips:node:evil2", encode(_forged_node("evil2", listener.url)))
                raw.sadd(NODES, "evil2")
                unsealed = encode(_forged_entry("evilmatch2", "evil2", homes))
                raw.hset(DIRECTORY, "evilmatch2", unsealed)
                raw.publish(LOBBY, unsealed)
                # The bystander's identity, given a token of the attacker's.
                assert bystander.player_id is not None
                stolen = secrets.token_urlsafe(24)
                forged_player = PlayerEntry(
                    id=bystander.player_id, name="Bystander", token_hash=hash_token(stolen)
                )
                await mallory.put_players([forged_player], overwrite=True)
                await asyncio.sleep(4 * HEARTBEAT)  # every node has read the store since

                with pytest.raises(ConnectError) as impostor:
                    await Session(far.url, "Mallory", token=stolen, reconnect=False).open()
                assert impostor.value.code == "bad_token"

                for forged in ("evilmatch1", "evilmatch2"):
                    with pytest.raises(RequestError) as refused:
                        await victim.watch(forged)
                    assert refused.value.code == "no_such_match"
                listed = {m.match for m in await victim.list_matches()}
                assert not listed & {"evilmatch1", "evilmatch2"}
                assert listener.connections == 0 and listener.received == b""

                # Coming back with the token: the forged seat does not call the victim away.
                again = Session(near.url, "Victim", token=victim.token)
                await again.open()
                assert (await again.list_matches()) is not None
                assert again.url == near.url
                await again.close()

                # The real node's heartbeat, overwritten with the listener's URL, again
                # and again while the victim is sent to that node's real match.
                match = (await host.create_match(name="real", seats=3)).match

                async def overwrite() -> None:
                    for _ in range(60):
                        await mallory.beat(_forged_node(far_id, listener.url), 3600)
                        raw.set(f"tulips:node:{far_id}", encode(_forged_node(far_id, listener.url)))
                        await asyncio.sleep(0.02)

                forging = asyncio.create_task(overwrite())
                for _ in range(5):
                    viewer = Session(near.url, "Victim", token=victim.token, reconnect=False)
                    await viewer.open()
                    try:
                        joined = await viewer.watch(match)
                        assert joined.match == match and viewer.url == far.url
                    except RequestError as exc:  # the forged beat hid the real one
                        assert exc.code in ("node_unavailable", "no_such_match")
                    finally:
                        await viewer.close()
                await forging
                assert listener.connections == 0 and listener.received == b""

                async def lands() -> bool:
                    viewer = Session(near.url, "Victim", token=victim.token, reconnect=False)
                    await viewer.open()
                    try:
                        await viewer.watch(match)
                        return viewer.url == far.url
                    except RequestError:
                        return False
                    finally:
                        await viewer.close()

                # once the real node beats again, the match is reached where it really is
                await eventually(lands, "the real node's match is reached again")
                assert listener.connections == 0 and listener.received == b""
        finally:
            await asyncio.gather(host.close(), victim.close(), bystander.close(), mallory.close())
            raw.close()
