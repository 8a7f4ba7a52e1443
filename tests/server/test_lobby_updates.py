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


async def test_a_browser_follows_its_page_and_nothing_else() -> None:
    """Issue 45: a browser that asked for the newest match only hears of that
    one; a later page hears of its own; the total counts them all."""
    async with serve() as running:
        host = await RawClient.open(running.url, "Host")
        guest = await RawClient.open(running.url, "Guest")
        older = (await host.request("create_match", name="older", seats=3))["match"]
        newer = (await guest.request("create_match", name="newer", seats=3))["match"]
        top = await RawClient.open(running.url, "Top")
        second = await RawClient.open(running.url, "Second")
        listed = await top.request("list_matches", limit=1)
        assert [m["match"] for m in listed["matches"]] == [newer]
        assert (listed.get("offset", 0), listed["total"]) == (0, 2)  # defaults go unsent
        listed = await second.request("list_matches", offset=1, limit=1)
        assert [m["match"] for m in listed["matches"]] == [older]
        joiner = await RawClient.open(running.url, "Joiner")
        await joiner.request("join", match=older)
        await second.next(lambda m: m["type"] == "match_update", timeout=5)
        # one telling serves every follower at once: a round trip of top's comes after it
        await top.request("leaderboard")
        assert _updates(top, older) == [] and _updates(second, older) != []
        for client in [host, guest, top, second, joiner]:
            await client.close()


async def test_a_new_match_in_the_filter_comes_in_at_the_top_of_a_first_page() -> None:
    """A first page of open matches of length one: a new open match comes in
    (the old one falls off), a match that starts is seen going, and a running
    match never comes in."""
    async with serve() as running:
        host = await RawClient.open(running.url, "Host")
        first = (await host.request("create_match", name="first", seats=2))["match"]
        browser = await RawClient.open(running.url, "Lou")
        listed = await browser.request("list_matches", status=["open"], limit=1)
        assert [m["match"] for m in listed["matches"]] == [first]
        other = await RawClient.open(running.url, "Other")
        second = (await other.request("create_match", name="second", seats=2))["match"]
        await browser.next(lambda m: m["type"] == "match_update", timeout=5)
        assert _updates(browser, second)[-1]["status"] == "open"
        await host.request("leave")  # the first match, off the page, goes unheard
        third = await RawClient.open(running.url, "Third")
        await third.request("join", match=second)
        assert (await other.request("start"))["type"] == "ok"
        await browser.next(
            lambda m: m["type"] == "match_update" and m["match"]["status"] == "running",
            timeout=5,
        )  # a removal is told at once, so it would have come before this update
        assert not any(m["type"] == "match_removed" for m in browser.messages)
        assert _updates(browser, first) == []
        for client in [host, other, third, browser]:
            await client.close()


async def test_a_bad_page_is_refused_with_what_was_wrong() -> None:
    """A limit beyond the protocol's, or a status that is none, is a clear error."""
    async with serve() as running:
        browser = await RawClient.open(running.url, "Lou")
        for fields in ({"limit": 0}, {"limit": 1000}, {"status": ["sleeping"]}):
            answer = await browser.request("list_matches", **fields)
            assert answer["type"] == "error", answer
            assert answer["code"] == "bad_message", answer
            assert answer["path"].startswith(f"list_matches.{next(iter(fields))}"), answer
        await browser.close()
