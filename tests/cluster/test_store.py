"""The cluster's store against a real redis-server: after Redis restarts, the
first command of a node finds a live connection, not one Redis closed."""

from __future__ import annotations

import asyncio

from client.redisproc import RedisProcess
from server.cluster.entries import PlayerEntry
from server.cluster.store import Store

from .helpers import needs_redis

pytestmark = needs_redis


async def test_the_first_command_after_a_redis_restart_answers() -> None:
    with RedisProcess() as redis:
        store = Store(redis.url)
        try:
            entry = PlayerEntry(id="p1", name="Ada", token_hash="h1")
            await store.put_players([entry], overwrite=True)  # leaves a connection in the pool
            redis.stop()
            await asyncio.sleep(0.2)  # the pooled connection sees Redis hang up
            redis.start()  # empty again

            assert await store.find_player("h1") is None
            await store.put_players([entry], overwrite=True)
            assert await store.find_player("h1") == entry
        finally:
            await store.close()
