"""Issue 29 review, "replay of sealed pub/sub messages", made for real: a real
cluster, and someone who can read and publish on its Redis without the key.
They record real sealed messages from the channels — a player's hello and seat
on one node, the ``gone`` of a match, an old directory entry — and send them
again later. No node acts on them: the player keeps their connection and their
seat, the match stays listed, and the old entry in the directory is put right."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

import protocol as wire
from client.sdk import Session
from server.cluster.admin import forget_node
from server.cluster.entries import DirectoryEntry, Presence
from server.cluster.freshness import ADMIN_SENDER
from server.cluster.signing import load_key
from server.cluster.store import DIRECTORY, LOBBY, PRESENCE, Store

from .helpers import NodeProcess, cluster, eventually, needs_redis

pytestmark = needs_redis


class Tap:
    """Everything published on the cluster's channels, as an eavesdropper records it."""

    def __init__(self, url: str) -> None:
        self._redis: Any = aioredis.Redis.from_url(url)
        self._pubsub: Any = self._redis.pubsub(ignore_subscribe_messages=True)
        self.heard: list[tuple[str, bytes]] = []
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Tap:
        await self._pubsub.subscribe(LOBBY, PRESENCE)
        self._task = asyncio.get_running_loop().create_task(self._listen())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self._pubsub.aclose()
        await self._redis.aclose()

    async def _listen(self) -> None:
        while True:
            message = await self._pubsub.get_message(timeout=0.1)
            if message is not None and message.get("type") == "message":
                self.heard.append((message["channel"].decode(), message["data"]))

    async def publish(self, channel: str, data: bytes, times: int = 3) -> None:
        """Send a recorded message again, ``times`` times."""
        for _ in range(times):
            await self._redis.publish(channel, data)

    async def put(self, match: str, data: bytes) -> None:
        """Write a recorded directory entry back into the directory."""
        await self._redis.hset(DIRECTORY, match, data)

    async def stored(self, match: str) -> bytes | None:
        """The directory's value of a match now."""
        data: bytes | None = await self._redis.hget(DIRECTORY, match)
        return data


def _node_id(node: NodeProcess) -> str:
    health = node.health()
    assert health is not None
    return str(health["cluster"]["node"])


def _refused(node: NodeProcess, kind: str) -> int:
    health = node.health() or {}
    return int(health.get("cluster", {}).get("refused_messages", {}).get(kind, 0))


async def _sent_again_and_refused(
    tap: Tap, node: NodeProcess, kind: str, channel: str, *messages: bytes, times: int = 3
) -> None:
    """Send each of ``messages`` again until ``node`` has refused ``times`` more
    of them as ``kind``. Redis's publish reaches only who listens at that
    moment, and a node under load may be between subscriptions (it subscribes
    afresh after a late heartbeat), so a copy it never heard is sent once more:
    at most ten rounds; every copy heard must be refused (the caller then checks
    that nothing moved)."""
    wanted = _refused(node, kind) + times * len(messages)

    async def enough() -> bool:
        return _refused(node, kind) >= wanted

    for _ in range(10):
        for data in messages:
            await tap.publish(channel, data)
        with contextlib.suppress(AssertionError):
            await eventually(enough, f"{wanted} messages refused as {kind!r}", 3.0)
            return
    raise AssertionError(f"{node} did not refuse {wanted} messages as {kind!r}")


async def _listed(session: Session, match: str) -> wire.MatchSummary | None:
    return next((m for m in await session.list_matches() if m.match == match), None)


async def test_sealed_messages_sent_again_move_nobody(tmp_path: Path) -> None:
    """The reviewer's attacks, each with messages a node really sealed:
    ``Presence(P, far)`` sent again (near would close P with 4004),
    ``Presence(P, far, match)`` sent again (near would leave P's seat there), the
    ``gone`` of a match that came back (near would hide it), and an old directory
    entry written back (its node puts it right; near keeps the newer one)."""
    with cluster(tmp_path, nodes=2) as (redis, (near, far)):
        store = Store(redis.url, load_key(near.key_file))  # to open what was recorded
        far_id = _node_id(far)
        sessions: list[Session] = []

        async def session(url: str, name: str, token: str | None = None) -> Session:
            opened = Session(url, name, token=token, reconnect=False)
            await opened.open()
            sessions.append(opened)
            return opened

        def recorded(channel: str, kind: type[Any], **fields: Any) -> bytes | None:
            for heard_on, data in tap.heard:
                value = store.unpack(data, kind, "recorded") if heard_on == channel else None
                if value is not None and all(getattr(value, k) == v for k, v in fields.items()):
                    return data
            return None

        async def record(channel: str, kind: type[Any], **fields: Any) -> bytes:
            async def heard() -> bytes | None:
                return recorded(channel, kind, **fields)

            return await eventually(heard, f"a {kind.__name__} {fields} on {channel}")

        async with Tap(redis.url) as tap:
            try:
                host = await session(far.url, "Host")
                far_match = (await host.create_match(name="far", seats=3)).match
                ada = await session(far.url, "Ada")
                await ada.join(far_match)
                assert ada.player_id is not None and ada.token is not None
                hello = await record(PRESENCE, Presence, player=ada.player_id, node=far_id)
                seated = await record(
                    PRESENCE, Presence, player=ada.player_id, node=far_id, match=far_match
                )
                await ada.leave()
                await ada.close()

                # Ada now plays on the near node, in a match of its own.
                ada = await session(near.url, "Ada", token=ada.token)
                near_match = (await ada.create_match(name="near", seats=3)).match
                first = await record(LOBBY, DirectoryEntry, match=near_match)
                bob = await session(near.url, "Bob")
                await bob.join(near_match)

                async def bob_seated() -> bool:
                    summary = await _listed(ada, near_match)
                    return (
                        summary is not None and sum(s.kind == "human" for s in summary.seats) == 2
                    )

                await eventually(bob_seated, "Bob's seat is listed")

                await _sent_again_and_refused(
                    tap, near, "tulips:presence: heard before", PRESENCE, hello, seated
                )
                await asyncio.sleep(0.5)  # time for a wrongly posted leave to act
                summary = await _listed(ada, near_match)  # Ada is still connected …
                assert summary is not None
                assert summary.seats[0].kind == "human" and summary.seats[0].name == "Ada"
                assert summary.seats[0].connected  # … and seated

                # The far node is gone, forgotten, and back: the old `gone` hides nothing.
                await host.close()
                far.kill()

                async def unavailable() -> bool:
                    summary = await _listed(ada, far_match)
                    return summary is not None and not summary.available

                await eventually(unavailable, "the far node's heartbeat has expired")
                admin = Store(redis.url, load_key(far.key_file), sender=ADMIN_SENDER)
                try:
                    assert await forget_node(admin, far_id) == 1
                finally:
                    await admin.close()
                gone = await record(LOBBY, DirectoryEntry, match=far_match, summary=None)
                far.start()
                far.wait_up()

                async def back() -> bool:
                    summary = await _listed(ada, far_match)
                    return summary is not None and summary.available

                await eventually(back, "the far node's match is back", 20)
                await _sent_again_and_refused(tap, near, "tulips:lobby: heard before", LOBBY, gone)
                assert await back()

                # The near match's first entry written back into the directory.
                await tap.put(near_match, first)

                async def put_right() -> bool:
                    data = await tap.stored(near_match)
                    return data is not None and data != first

                await eventually(put_right, "the near node puts its entry right again")
                data = await tap.stored(near_match)
                assert data is not None
                entry = store.unpack(data, DirectoryEntry, "the stored entry")
                assert entry is not None and entry.summary is not None
                assert sum(s.kind == "human" for s in entry.summary.seats) == 2
                viewer = await session(far.url, "Viewer")
                summary = await _listed(viewer, near_match)
                assert summary is not None
                assert sum(s.kind == "human" for s in summary.seats) == 2
            finally:
                await asyncio.gather(*(s.close() for s in sessions))
                await store.close()
