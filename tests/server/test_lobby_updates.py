"""A lobby browser is told of a burst of a match's changes once, as the match
is at its end: at most one ``match_update`` per match every
``LOBBY_UPDATE_INTERVAL``, the latest always sent; the players of the match
still get each change at once. Over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
from typing import Any

from server.lobbynews import LOBBY_UPDATE_INTERVAL

from .helpers import RawClient, serve


def _updates(client: RawClient, match: str) -> list[dict[str, Any]]:
    return [
        m["match"]
        for m in client.messages
        if m["type"] == "match_update" and m["match"]["match"] == match
    ]


async def test_a_burst_of_changes_reaches_a_browser_as_one_update_with_the_last_state() -> None:
    """Creating a match, three joins and the start within one interval: the
    browser gets one update, showing the match running with four seats taken,
    while the host saw every join."""
    async with serve() as running:
        browser = await RawClient.open(running.url, "Lou", features=["batch"])
        await browser.request("list_matches")
        host, *others = [await RawClient.open(running.url, f"P{n}") for n in range(4)]
        loop = asyncio.get_running_loop()
        began = loop.time()
        joined = await host.request("create_match", name="burst", seats=4)
        match = joined["match"]
        for player in others:
            await player.request("join", match=match)
        assert (await host.request("start"))["type"] == "ok"
        assert loop.time() - began < LOBBY_UPDATE_INTERVAL, "too slow a machine for this test"
        await browser.next(lambda m: m["type"] == "match_update", timeout=5)
        await asyncio.sleep(2 * LOBBY_UPDATE_INTERVAL)  # nothing more is coming
        updates = _updates(browser, match)
        assert len(updates) == 1, updates
        assert updates[0]["status"] == "running"
        assert [seat["kind"] for seat in updates[0]["seats"]] == ["human"] * 4
        assert len(_updates(host, match)) >= 4  # each join, and the start, at once
        for client in [browser, host, *others]:
            await client.close()


async def test_changes_an_interval_apart_each_reach_the_browser() -> None:
    """A change after the interval is told again: coalescing delays, it never drops."""
    async with serve() as running:
        browser = await RawClient.open(running.url, "Lou")
        await browser.request("list_matches")
        host = await RawClient.open(running.url, "Host")
        guest = await RawClient.open(running.url, "Guest")
        match = (await host.request("create_match", name="slow", seats=2))["match"]
        await browser.next(lambda m: m["type"] == "match_update", timeout=5)
        await guest.request("join", match=match)
        await browser.next(
            lambda m: (
                m["type"] == "match_update"
                and [s["kind"] for s in m["match"]["seats"]] == ["human", "human"]
            ),
            timeout=5,
        )
        assert len(_updates(browser, match)) == 2
        for client in [browser, host, guest]:
            await client.close()
