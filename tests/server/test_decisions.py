"""The move a player chose is the move that is played, over real sockets:
an act names the prompt it answers (``seq``), a late one is refused with
``decision_taken`` and changes nothing, a player who is back plays their own
seat, and every answer goes out only once what it acknowledges is on disk.
(The same paths under random interleavings, without sockets:
test_core_properties.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import protocol as wire
from client.sdk import RequestError, Session, connect
from protocol.limits import MIN_TURN_TIMER

from ..storage.helpers import in_process, live_match
from .helpers import RawClient, serve


async def _turn_prompt(session: Session) -> wire.Prompt:
    """Answer the opening prompt; the seat's first turn prompt."""
    async with asyncio.timeout(10):
        async for message in session:
            if isinstance(message, wire.Prompt):
                if not isinstance(message.actions[0], wire.Opening):
                    return message
                await session.answer(message, message.actions[0])
    raise AssertionError("the session ended")


async def test_an_act_at_the_deadline_is_refused_not_moved_to_the_next_decision() -> None:
    """Ada lets her turn timer run out: the server plays her card (``by``
    timer); her act naming that prompt, sent late, gets ``decision_taken``, and
    the match is as the timer left it — not applied to her next card."""
    async with (
        serve() as running,
        connect(running.url, name="Ada", reconnect=False) as ada,
    ):
        await ada.create_match(seats=2, bots=[(1, "easy")], first_seat=0, turn_timer=MIN_TURN_TIMER)
        await ada.start()
        prompt = await _turn_prompt(ada)
        async with asyncio.timeout(10):
            async for message in ada:  # she does not answer: the timer does
                if isinstance(message, wire.Event) and message.by == "timer":
                    break
        before = await ada.sync()
        with pytest.raises(RequestError) as late:
            await ada.answer(prompt, prompt.actions[-1])
        assert late.value.code == "decision_taken"
        after = await ada.sync()
        assert after.seq == before.seq and after.state == before.state


async def test_a_raw_client_names_its_prompt_and_hears_why_a_stale_act_is_refused() -> None:
    """By hand, as PROTOCOL.md says: ``act`` with the prompt's ``seq`` is
    ``ok``; the same ``seq`` again, once that decision is taken, is
    ``decision_taken``; a ``seq`` no prompt had is ``bad_message`` on act.seq."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        await ada.request("create_match", name="t", seats=2, bots=[{"seat": 1}], first_seat=0)
        await ada.request("start")
        opening = await ada.next(lambda m: m["type"] == "prompt")
        action = opening["actions"][0]
        ok = await ada.request("act", action=action, seq=opening["seq"])
        assert ok["type"] == "ok", ok
        again = await ada.request("act", action=action, seq=opening["seq"])
        assert again["code"] == "decision_taken", again
        ahead = await ada.request("act", action=action, seq=10_000)
        assert (ahead["code"], ahead["path"]) == ("bad_message", "act.seq")
        await ada.close()


async def test_a_player_back_from_a_drop_is_put_back_in_order_and_plays_her_seat() -> None:
    """Ada drops past the grace period (the server plays her seat), then comes
    back: ``joined``, ``match_update``, ``snapshot`` first, in that order, then
    her prompt; from then on every move of her seat is hers (no ``stand_in``
    mark), a stand-in's move still being thought about included."""
    async with serve(grace_period=0.2, bot_delay=0.1) as running:
        first = await connect(running.url, name="Ada", reconnect=False)
        joined = await first.create_match(seats=2, bots=[(1, "easy")], first_seat=0)
        await first.start()
        await first.next_of(wire.Prompt, timeout=5)
        token = first.token
        async with connect(running.url, name="Watcher", reconnect=False) as watcher:
            await watcher.watch(joined.match)
            await first.close()
            async with asyncio.timeout(10):  # the server plays her seat now
                while not any(
                    s.stand_in for s in (await watcher.next_of(wire.MatchUpdate)).match.seats
                ):
                    pass
        back = await RawClient.connect(running.url)
        hello = await back.request("hello", client="raw/1", name="Ada", token=token)
        assert hello["type"] == "welcome"
        prompt = await back.next(lambda m: m["type"] == "prompt", timeout=10)
        kinds = [m["type"] for m in back.messages]
        start = kinds.index("joined")
        assert kinds[start : start + 3] == ["joined", "match_update", "snapshot"], kinds
        assert kinds[:start] == ["welcome"], kinds  # nothing of the match before joined
        snapshot = back.messages[start + 2]
        assert prompt["seq"] >= snapshot["seq"]
        answer = await back.request("act", action=prompt["actions"][0], seq=prompt["seq"])
        assert answer["type"] == "ok", answer
        mine = [
            m
            for m in back.messages
            if m["type"] == "event" and m["event"].get("seat") == 0 and m["seq"] > snapshot["seq"]
        ]
        assert mine and all("by" not in m for m in mine), mine
        await back.close()


async def test_joined_and_ok_go_out_only_once_their_facts_are_on_disk(tmp_path: Path) -> None:
    """The moment ``joined`` arrives for a new match, its row and its host's
    seat are in the database; for a join, the joiner's seat is; for ``ok`` to
    an act, the action is (read from the live file by another connection)."""
    data = tmp_path / "data"
    async with in_process(data) as running:
        ada = await RawClient.open(running.url, "Ada")
        bea = await RawClient.open(running.url, "Bea")
        joined = await ada.request("create_match", name="d", seats=3, bots=[{"seat": 2}])
        row, _ = live_match(data, joined["match"])
        assert row is not None and ada.welcome is not None
        assert ada.welcome["player"] in row["seats"]
        again = await bea.request("join", match=joined["match"])
        assert again["type"] == "joined"
        row, _ = live_match(data, joined["match"])
        assert row is not None and bea.welcome is not None
        assert bea.welcome["player"] in row["seats"]
        await ada.request("start")
        prompt = await ada.next(lambda m: m["type"] == "prompt")
        ok = await ada.request("act", action=prompt["actions"][0], seq=prompt["seq"])
        assert ok["type"] == "ok"
        _, actions = live_match(data, joined["match"])
        assert any(seat == 0 for seat, _ in actions), actions  # hers, stored before the ok
        await ada.close()
        await bea.close()
