"""Where a player is: the room owns its members, and a returning player is put
back in the seat they hold (PROTOCOL.md, "Reconnecting") — after leaving and
joining back, after moving between open matches, and after a restart, where a
match the player left is not where they go back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import protocol as wire
from client.sdk import connect

from ..storage.helpers import in_process
from .helpers import RawClient, serve


async def test_left_joined_back_dropped_and_past_grace_the_seat_is_still_theirs() -> None:
    """Leave a running match, join it back, drop, return after the grace period:
    `joined` for the seat, then `snapshot` (the seat was theirs all along)."""
    async with serve(grace_period=0.1, bot_delay=0.05) as running:
        ada = await RawClient.open(running.url, "Ada")
        created = await ada.request("create_match", name="t", seats=2, bots=[{"seat": 1}])
        match = created["match"]
        assert (await ada.request("start"))["type"] == "ok"
        assert (await ada.request("leave"))["type"] == "ok"
        back = await ada.request("join", match=match)
        assert (back["type"], back["seat"]) == ("joined", 0)
        token = ada.welcome["token"] if ada.welcome else None
        await ada.close()
        await asyncio.sleep(0.3)  # past the grace period: a bot plays for Ada now
        again = await RawClient.open(running.url, "Ada", token=token)
        joined = await again.next(lambda m: m["type"] == "joined")
        assert (joined["match"], joined["seat"]) == (match, 0)
        snapshot = await again.next(lambda m: m["type"] == "snapshot")
        assert snapshot["match"] == match and snapshot["seat"] == 0
        await again.close()


async def test_moving_between_open_matches_the_player_is_put_back_in_the_second() -> None:
    """Join open match A, then open match B: a reconnect puts the player back in B,
    and when B starts they get its snapshot and prompt."""
    async with serve(grace_period=5) as running:
        host_a = await RawClient.open(running.url, "HostA")
        match_a = (await host_a.request("create_match", name="a", seats=2))["match"]
        host_b = await RawClient.open(running.url, "HostB")
        match_b = (await host_b.request("create_match", name="b", seats=2))["match"]
        ben = await RawClient.open(running.url, "Ben")
        assert (await ben.request("join", match=match_a))["seat"] == 1
        assert (await ben.request("join", match=match_b))["seat"] == 1
        room_a = running.lobby.matches[match_a].core
        assert room_a.seats[1].player is None  # moving on freed the open seat in A
        token = ben.welcome["token"] if ben.welcome else None
        await ben.close()
        again = await RawClient.open(running.url, "Ben", token=token)
        joined = await again.next(lambda m: m["type"] == "joined")
        assert (joined["match"], joined["seat"]) == (match_b, 1)
        assert (await host_b.request("start"))["type"] == "ok"
        snapshot = await again.next(lambda m: m["type"] == "snapshot")
        assert snapshot["match"] == match_b
        prompt = await again.next(lambda m: m["type"] == "prompt")
        assert (prompt["match"], prompt["seat"]) == (match_b, 1)
        for client in (host_a, host_b, again):
            await client.close()


async def test_a_player_who_left_a_finished_match_is_not_put_back_after_a_restart(
    tmp_path: Path,
) -> None:
    """Leaving a finished match is stored: after a restart, the player's hello
    gets only `welcome`, not the old match."""
    async with in_process(tmp_path) as running:
        ada = await connect(running.url, name="Ada", reconnect=False)
        await ada.create_match(seats=2, bots=[(1, "easy")])
        await ada.start()
        async with asyncio.timeout(20):
            async for message in ada:
                if isinstance(message, wire.Prompt):
                    await ada.answer(message, message.actions[0])
                if isinstance(message, wire.Snapshot) and message.state.phase == "over":
                    break
                if isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                    break
        await ada.leave()
        token = ada.token
        await ada.close()
    async with in_process(tmp_path) as running:
        again = await RawClient.open(running.url, "Ada", token=token)
        await again.send("list_matches")
        first = await again.next(lambda m: m["type"] != "welcome")
        assert first["type"] == "match_list", first  # no `joined` came first
        await again.close()


async def test_a_second_opening_choice_is_not_your_turn() -> None:
    """R11: once a seat has chosen, it has nothing to do until every seat has:
    another opening choice is `not_your_turn`, as PROTOCOL.md says."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        await ada.request("create_match", name="t", seats=2)
        ben = await RawClient.open(running.url, "Ben")
        match = running.lobby.matches
        (match_id,) = match
        await ben.request("join", match=match_id)
        await ada.request("start")
        prompt = await ada.next(lambda m: m["type"] == "prompt")
        choice = prompt["actions"][0]
        assert (await ada.request("act", action=choice))["type"] == "ok"
        again = await ada.request("act", action=choice)
        assert (again["type"], again["code"]) == ("error", "not_your_turn")
        for client in (ada, ben):
            await client.close()


async def test_a_spectator_cannot_open_the_rematch() -> None:
    """`play_again` from a spectator is `not_in_match`: only the match's players
    open a rematch (a stranger must not become its host and move them in)."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        created = await ada.request("create_match", name="t", seats=2, bots=[{"seat": 1}])
        eve = await RawClient.open(running.url, "Eve")
        assert (await eve.request("watch", match=created["match"]))["type"] == "joined"
        await ada.request("start")
        async with asyncio.timeout(20):
            while True:
                message = await ada.next(lambda m: m["type"] in ("prompt", "event"))
                if message["type"] == "prompt":
                    await ada.send("act", action=message["actions"][0])
                elif message["event"]["kind"] == "match_ended":
                    break
        refused = await eve.request("play_again")
        assert (refused["type"], refused["code"]) == ("error", "not_in_match")
        rematch = await ada.request("play_again")
        assert (rematch["type"], rematch["host"], rematch["seat"]) == ("joined", True, 0)
        for client in (ada, eve):
            await client.close()


async def test_the_lobby_is_told_when_a_match_leaves_it() -> None:
    """A lobby browser sees a match go: an open match everyone left, and a
    finished one past ``keep_finished`` once its last member goes, each with
    ``match_removed``; joining it afterwards is ``no_such_match``."""
    async with serve(keep_finished=0) as running:
        browser = await RawClient.open(running.url, "Bea")
        assert (await browser.request("list_matches"))["type"] == "match_list"
        ada = await RawClient.open(running.url, "Ada")
        opened = (await ada.request("create_match", name="left", seats=3))["match"]
        await browser.next(lambda m: m["type"] == "match_update" and m["match"]["match"] == opened)
        await ada.request("leave")
        removed = await browser.next(lambda m: m["type"] == "match_removed")
        assert removed == {"v": 1, "type": "match_removed", "match": opened}
        refused = await browser.request("join", match=opened)
        assert (refused["type"], refused["code"]) == ("error", "no_such_match")

        bots = [{"seat": 0}, {"seat": 1}]
        done = (await ada.request("create_match", name="done", seats=2, bots=bots))["match"]
        await ada.request("start")
        await ada.next(lambda m: m["type"] == "event" and m["event"]["kind"] == "match_ended", 10)
        await ada.request("leave")
        removed = await browser.next(lambda m: m["type"] == "match_removed")
        assert removed["match"] == done
        for client in (browser, ada):
            await client.close()


async def test_when_the_host_leaves_an_open_match_the_next_seated_player_hosts_it() -> None:
    """The host leaves before starting: the person in the lowest seat becomes
    the host — told with an unasked ``joined`` (``host`` true), named in the
    ``match_update`` — and can start the match once the seats are full."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        match = (await ada.request("create_match", name="t", seats=3))["match"]
        bo = await RawClient.open(running.url, "Bo")
        cy = await RawClient.open(running.url, "Cy")
        assert (await bo.request("join", match=match))["seat"] == 1
        assert (await cy.request("join", match=match))["seat"] == 2
        await ada.request("leave")
        told = await bo.next(lambda m: m["type"] == "joined")
        assert told == {"v": 1, "type": "joined", "match": match, "seat": 1, "host": True}
        update = await cy.next(lambda m: m["type"] == "match_update" and m["match"]["host"] == "Bo")
        assert [s["kind"] for s in update["match"]["seats"]] == ["empty", "human", "human"]
        refused = await cy.request("start")
        assert (refused["type"], refused["code"]) == ("error", "not_host")
        not_ready = await bo.request("start")
        assert (not_ready["type"], not_ready["code"]) == ("error", "match_not_ready")
        dan = await RawClient.open(running.url, "Dan")
        assert (await dan.request("join", match=match))["seat"] == 0
        assert (await bo.request("start"))["type"] == "ok"
        for client in (ada, bo, cy, dan):
            await client.close()
