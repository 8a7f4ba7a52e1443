"""The cluster's store against a real redis-server: after Redis restarts, the
first command of a node finds a live connection, not one Redis closed; a
Redis with a password is reached with it in the URL, and refuses without."""

from __future__ import annotations

import asyncio
import os

import pytest
import redis as redis_py

from client.loadgen.redisproc import RedisProcess
from server.cluster.entries import PlayerEntry
from server.cluster.store import Store, StoreUnavailable

from .helpers import needs_redis

pytestmark = needs_redis


async def test_the_first_command_after_a_redis_restart_answers() -> None:
    with RedisProcess() as redis:
        store = Store(redis.url, os.urandom(32))
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


async def test_a_redis_password_goes_in_the_url() -> None:
    """Issue 29 (README: the cluster key): Redis with `requirepass`; the URL's
    password lets a node in, the log shows `***`, and without it Redis refuses."""
    with RedisProcess() as redis:
        admin = redis_py.Redis.from_url(redis.url)
        admin.config_set("requirepass", "s3cret")
        admin.close()
        port = redis.url.rsplit(":", 1)[1]
        allowed = Store(f"redis://:s3cret@127.0.0.1:{port}", os.urandom(32))
        refused = Store(redis.url, os.urandom(32))
        try:
            entry = PlayerEntry(id="p1", name="Ada", token_hash="h1")
            await allowed.put_players([entry], overwrite=True)
            assert await allowed.find_player("h1") == entry
            assert "s3cret" not in allowed.url and "***" in allowed.url
            with pytest.raises(StoreUnavailable):
                await refused.find_player("h1")
        finally:
            await allowed.close()
            await refused.close()
