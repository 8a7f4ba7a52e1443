"""The host's waiting room over real sockets: a bot added and removed, a
joined player removed (told, back in the lobby, able to join again), a
spectator counted, and the start; and what the host changed outlives a
restart on the same database."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ..storage.helpers import in_process
from .helpers import RawClient, serve


async def test_the_host_adds_and_removes_a_bot_removes_a_player_and_starts() -> None:
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        created = await ada.request("create_match", name="t", seats=3)
        match = created["match"]
        bea = await RawClient.open(running.url, "Bea")
        assert (await bea.request("join", match=match))["seat"] == 1
        added = await ada.request("add_bot", strength="easy")
        assert added["type"] == "ok"
        update = await bea.next(
            lambda m: m["type"] == "match_update" and m["match"]["seats"][2]["kind"] == "bot"
        )
        assert update["match"]["seats"][2]["strength"] == "easy"
        assert (await ada.request("remove_seat", seat=2))["type"] == "ok"
        refused = await bea.request("remove_seat", seat=0)
        assert (refused["type"], refused["code"]) == ("error", "not_host")
        assert (await ada.request("remove_seat", seat=1))["type"] == "ok"
        removed = await bea.next(lambda m: m["type"] == "removed")
        assert (removed["match"], removed["host"]) == (match, "Ada")
        not_in = await bea.request("chat", text="hello?")
        assert (not_in["type"], not_in["code"]) == ("error", "not_in_match")  # back in the lobby
        assert (await bea.request("join", match=match))["seat"] == 1
        eve = await RawClient.open(running.url, "Eve")
        assert (await eve.request("watch", match=match))["seat"] is None
        counted = await ada.next(
            lambda m: m["type"] == "match_update" and m["match"].get("spectators") == 1
        )
        assert counted["match"]["watching"] == ["Eve"]
        assert (await ada.request("add_bot", seat=2, strength="hard"))["type"] == "ok"
        assert (await ada.request("start"))["type"] == "ok"
        snapshot = await bea.next(lambda m: m["type"] == "snapshot")
        assert snapshot["seat"] == 1
        late = await ada.request("remove_seat", seat=2)
        assert (late["type"], late["code"]) == ("error", "match_not_open")
        for client in (ada, bea, eve):
            await client.close()


async def test_a_bot_the_host_added_is_there_after_a_restart(tmp_path: Path) -> None:
    async with in_process(tmp_path) as running:
        ada = await RawClient.open(running.url, "Ada")
        created = await ada.request("create_match", name="t", seats=3)
        assert (await ada.request("add_bot", seat=2, strength="hard"))["type"] == "ok"
        token = ada.welcome["token"] if ada.welcome else None
        await ada.close()
    async with in_process(tmp_path) as running:
        again = await RawClient.open(running.url, "Ada", token=token)
        update = await again.next(lambda m: m["type"] == "match_update")
        assert update["match"]["match"] == created["match"]
        seats = update["match"]["seats"]
        kinds = (seats[2]["kind"], seats[2]["strength"], seats[1]["kind"])
        assert kinds == ("bot", "hard", "empty")
        await again.close()


async def _play_to_the_end(client: RawClient) -> None:
    """Answer every prompt with its first action until the match ends."""
    while True:
        message = await client.next(lambda m: m["type"] in ("prompt", "event"), timeout=20)
        if message["type"] == "prompt":
            await client.send("act", action=message["actions"][0], seq=message["seq"])
        elif message["event"]["kind"] == "match_ended":
            return


async def test_a_rematch_shows_who_has_not_accepted_and_starts_with_those_who_came() -> None:
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        bea = await RawClient.open(running.url, "Bea")
        created = await ada.request("create_match", name="t", seats=3, bots=[{"seat": 2}])
        assert (await bea.request("join", match=created["match"]))["seat"] == 1
        assert (await ada.request("start"))["type"] == "ok"
        await asyncio.gather(_play_to_the_end(ada), _play_to_the_end(bea))
        rematch = await ada.request("play_again")
        offer = await bea.next(lambda m: m["type"] == "rematch")
        assert offer["rematch"] == rematch["match"]
        update = await ada.next(
            lambda m: m["type"] == "match_update" and m["match"]["match"] == rematch["match"]
        )
        kept = [seat.get("reserved", False) for seat in update["match"]["seats"]]
        assert kept == [False, True, False]  # Bea has not accepted
        assert (await ada.request("start", without_absent=True))["type"] == "ok"
        snapshot = await ada.next(lambda m: m["type"] == "snapshot")
        assert (snapshot["seat"], len(snapshot["state"]["seats"])) == (0, 2)  # Ada and the bot
        late = await bea.request("play_again")
        assert (late["type"], late["code"]) == ("error", "match_not_open")
        for client in (ada, bea):
            await client.close()
