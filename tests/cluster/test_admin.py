"""``tulips-cluster``, run as a real command against a real cluster: it lists
the nodes, refuses to forget one that is alive, and forgets one that is gone
for good — its match leaves every lobby (``match_removed``) — until it starts
again on its data directory and joins with its match."""

from __future__ import annotations

import asyncio
from pathlib import Path

import protocol as wire
from client.sdk import Session

from .helpers import cluster, eventually, needs_redis, tulips_cluster

pytestmark = needs_redis


async def _listed(session: Session, match: str) -> wire.MatchSummary | None:
    return next((m for m in await session.list_matches() if m.match == match), None)


async def test_a_node_gone_for_good_is_forgotten_with_its_matches(tmp_path: Path) -> None:
    """Node 2 holds an open match; alive, it cannot be forgotten. Killed, its
    match shows unavailable; forgotten, the match leaves node 1's lobby and
    `nodes` lists node 1 alone. Started again, node 2 is back with its match."""
    with cluster(tmp_path, nodes=2) as (redis, (near, far)):
        host = Session(far.url, "Far")
        browser = Session(near.url, "Browser")
        await host.open()
        await browser.open()
        try:
            match = (await host.create_match(name="far away", seats=3)).match
            await eventually(lambda: _listed(browser, match), "node 1 lists node 2's match")
            health = far.health()
            assert health is not None
            far_id = str(health["cluster"]["node"])
            key = ("--cluster-key-file", str(far.key_file))

            listed = tulips_cluster("--cluster", redis.url, "nodes")
            assert listed.returncode == 0, listed.stderr
            lines = listed.stdout.splitlines()
            assert len(lines) == 2 and all(" alive " in line for line in lines)
            assert any(line.startswith(far_id) and " 1 matches" in line for line in lines)

            alive = tulips_cluster("--cluster", redis.url, *key, "forget-node", far_id)
            assert alive.returncode == 1 and "is alive" in alive.stderr
            assert await _listed(browser, match) is not None

            await host.close()
            far.kill()

            async def unavailable() -> bool:
                summary = await _listed(browser, match)
                return summary is not None and not summary.available

            await eventually(unavailable, "node 2's match shows as unavailable")
            forgot = tulips_cluster("--cluster", redis.url, *key, "forget-node", far_id)
            assert forgot.returncode == 0, forgot.stderr
            assert forgot.stdout.strip() == f"forgot node {far_id}: 1 matches left the lobby"
            removed = await browser.next_of(wire.MatchRemoved, timeout=5)
            assert removed.match == match
            assert await _listed(browser, match) is None
            after = tulips_cluster("--cluster", redis.url, "nodes").stdout.splitlines()
            assert len(after) == 1 and far_id not in after[0]
            again = tulips_cluster("--cluster", redis.url, *key, "forget-node", far_id)
            assert again.returncode == 1 and "knows no node" in again.stderr

            far.start()
            far.wait_up()

            async def back() -> bool:
                summary = await _listed(browser, match)
                return summary is not None and summary.available

            await eventually(back, "node 2's match is back when node 2 is", 20)
        finally:
            await asyncio.gather(host.close(), browser.close())


def test_bad_command_lines_say_what_is_wrong() -> None:
    """No Redis URL, a URL that is not Redis, no command: exit 2 with the reason;
    a Redis nobody listens on: exit 1, saying it cannot reach it."""
    missing = tulips_cluster("nodes")
    assert missing.returncode == 2 and "--cluster" in missing.stderr
    wrong = tulips_cluster("--cluster", "http://x", "nodes")
    assert wrong.returncode == 2 and "expected redis://" in wrong.stderr
    nothing = tulips_cluster("--cluster", "redis://127.0.0.1:1/0")
    assert nothing.returncode == 2 and "COMMAND" in nothing.stderr
    down = tulips_cluster("--cluster", "redis://127.0.0.1:1/0", "nodes")
    assert down.returncode == 1 and "cannot reach redis://127.0.0.1:1/0" in down.stderr
