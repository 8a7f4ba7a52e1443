"""Guessing link codes is slowed across the cluster, not per node: five wrong
codes from one address, spread over two nodes, lock that address out on both
(server/linking.py: five wrong codes, ten minutes) — with a real redis-server."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.sdk import ConnectError, connect

from .helpers import cluster, needs_redis

pytestmark = needs_redis


async def _wrong(url: str) -> None:
    with pytest.raises(ConnectError) as wrong:
        await connect(url, name="Eve", link="AAAA-AAAA", reconnect=False)
    assert wrong.value.code == "bad_link_code"


async def test_five_wrong_codes_over_two_nodes_lock_the_address_out_on_both(
    tmp_path: Path,
) -> None:
    """Four wrong codes, two on each node, still let a right one through; the
    fifth, on node 1, locks the address out: a right code is refused
    `rate_limited` on node 2 as well as on node 1."""
    with cluster(tmp_path, nodes=2) as (_, (one, two)):
        async with connect(one.url, name="Ada", reconnect=False) as ada:
            for url in (one.url, two.url, one.url, two.url):
                await _wrong(url)
            code = (await ada.link_code()).code
            token = ada.token
        async with connect(two.url, name="phone", link=code, reconnect=False) as phone:
            assert phone.player_id == ada.player_id  # (the laptop's connection is replaced)
        await _wrong(one.url)
        async with connect(one.url, name="Ada", token=token, reconnect=False) as ada:
            for url in (two.url, one.url):
                code = (await ada.link_code()).code
                with pytest.raises(ConnectError) as locked:
                    await connect(url, name="tablet", link=code, reconnect=False)
                assert locked.value.code == "rate_limited"
                assert "too many wrong link codes" in str(locked.value)
