"""What everyone at a table is told about absent players, timers and rematches
(PROTOCOL.md, the additions within version 1): the seats' ``bot_in`` and
``stand_in``, ``event.by``, the ``turn_timer`` notice and the ``rematch``
offer — over real sockets, every frame a spectator receives checked for
secrets (R24–R26)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any, TypeVar

import protocol as wire
from client.sdk import Session, connect
from protocol.limits import MIN_TURN_TIMER

from .helpers import RawClient, check_frame, play_randomly, serve

M = TypeVar("M", bound=wire.Message)


async def next_where(
    session: Session, kind: type[M], where: Callable[[M], bool], timeout: float = 10.0
) -> M:
    """The next message of ``kind`` that ``where`` accepts (others are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            message = await session.next_of(kind)
            if where(message):
                return message


async def raw_next(
    client: RawClient, where: Callable[[dict[str, Any]], bool], timeout: float = 10.0
) -> dict[str, Any]:
    """The spectator's next message ``where`` accepts."""
    return await client.next(where, timeout)


async def test_an_away_player_shows_the_countdown_then_the_stand_in_then_the_return() -> None:
    """Bea drops: everyone sees `bot_in` count down from the grace period, then
    `stand_in`, the stand-in's moves marked `by: stand_in`; back, she is herself."""
    grace = 0.6
    async with serve(grace_period=grace) as running:
        ada = await connect(running.url, name="Ada", reconnect=False)
        bea = await connect(running.url, name="Bea", reconnect=False)
        watcher = await RawClient.open(running.url, "Watcher")
        try:
            joined = await ada.create_match(seats=3, bots=[(2, "easy")], first_seat=0)
            await bea.join(joined.match)
            await watcher.request("watch", match=joined.match)
            await ada.start()
            await bea.next_of(wire.Prompt, timeout=5)
            token = bea.token
            await bea.close()  # Bea is gone before her opening choice
            away = await raw_next(
                watcher,
                lambda m: m["type"] == "match_update" and "bot_in" in m["match"]["seats"][1],
            )
            seat = away["match"]["seats"][1]
            assert seat["name"] == "Bea" and not seat.get("connected")
            assert 0 < seat["bot_in"] <= grace and not seat.get("stand_in")
            player = asyncio.create_task(play_randomly(ada, 0, random.Random(1), timeout=30))
            plays = await raw_next(
                watcher,
                lambda m: m["type"] == "match_update" and m["match"]["seats"][1].get("stand_in"),
            )
            assert "bot_in" not in plays["match"]["seats"][1]  # the countdown is over
            by_stand_in = await raw_next(
                watcher, lambda m: m["type"] == "event" and m.get("by") is not None
            )
            assert by_stand_in["by"] == "stand_in" and by_stand_in["event"]["seat"] == 1
            # Bea comes back: connected, nobody stands in, no countdown
            back = await connect(running.url, name="Bea", token=token, reconnect=False)
            try:
                here = await raw_next(
                    watcher,
                    lambda m: (
                        m["type"] == "match_update" and m["match"]["seats"][1].get("connected")
                    ),
                )
                assert not here["match"]["seats"][1].get("stand_in")
                assert "bot_in" not in here["match"]["seats"][1]
            finally:
                await back.close()
            player.cancel()
            await asyncio.gather(player, return_exceptions=True)
            for frame in watcher.frames[1:]:
                check_frame(frame, None)
        finally:
            await ada.close()
            await watcher.close()


async def test_a_timed_out_move_says_so_to_everyone_and_every_timer_is_public() -> None:
    """Turn timer: the spectator and the other player get `turn_timer` for the
    seat that must act; when it runs out, the move made for it is `by: timer`
    — to the player too — and nothing else carries `by`."""
    timer = MIN_TURN_TIMER
    async with serve() as running:
        ada = await connect(running.url, name="Ada", reconnect=False)
        bea = await connect(running.url, name="Bea", reconnect=False)
        watcher = await RawClient.open(running.url, "Watcher")
        try:
            joined = await ada.create_match(seats=2, first_seat=0, turn_timer=timer)
            await bea.join(joined.match)
            await watcher.request("watch", match=joined.match)
            await ada.start()
            # the opening: both seats' timers, told to everyone
            opening = await raw_next(watcher, lambda m: m["type"] == "turn_timer")
            assert [t["seat"] for t in opening["timers"]] == [0, 1]
            assert all(0 < t["seconds"] <= timer for t in opening["timers"])
            seen = await next_where(bea, wire.TurnTimer, lambda m: True)
            assert {t.seat for t in seen.timers} == {0, 1}
            # nobody answers: the timer plays for both, and says so
            chosen = [
                await raw_next(
                    watcher,
                    lambda m: m["type"] == "event" and m["event"]["kind"] == "opening_chosen",
                )
                for _ in range(2)
            ]
            assert [m.get("by") for m in chosen] == ["timer", "timer"]
            mine = await next_where(
                ada,
                wire.Event,
                lambda m: isinstance(m.event, wire.OpeningChosen) and m.event.seat == 0,
            )
            assert isinstance(mine.event, wire.OpeningChosen)
            assert mine.by == "timer" and mine.event.secret is not None  # her own card, to her
            revealed = await raw_next(
                watcher, lambda m: m["type"] == "event" and m["event"]["kind"] == "opening_revealed"
            )
            assert "by" not in revealed  # only the first event of an action carries it
            # turn 1 is Ada's: everyone learns her timer
            turn = await raw_next(watcher, lambda m: m["type"] == "turn_timer")
            assert [t["seat"] for t in turn["timers"]] == [0]
            # a spectator who comes in now is told the running timer after the snapshot
            late = await RawClient.open(running.url, "Late")
            try:
                await late.request("watch", match=joined.match)
                after = await raw_next(late, lambda m: m["type"] in ("snapshot", "turn_timer"))
                assert after["type"] == "snapshot"
                told = await raw_next(late, lambda m: m["type"] == "turn_timer", timeout=timer)
                assert [t["seat"] for t in told["timers"]] == [0]
                for frame in late.frames[1:]:
                    check_frame(frame, None)
            finally:
                await late.close()
            for frame in watcher.frames[1:]:
                check_frame(frame, None)
        finally:
            await ada.close()
            await bea.close()
            await watcher.close()


async def test_a_stand_in_stops_the_absent_seats_timer_at_once() -> None:
    """Bea drops during a timed opening: when the stand-in takes her seat,
    everyone is told the timers without hers — before the stand-in moves (it
    waits the bot delay), so no table counts down a seat nobody waits for."""
    async with serve(grace_period=0.3, bot_delay=1.0) as running:
        ada = await connect(running.url, name="Ada", reconnect=False)
        bea = await connect(running.url, name="Bea", reconnect=False)
        watcher = await RawClient.open(running.url, "Watcher")
        try:
            joined = await ada.create_match(seats=2, first_seat=0, turn_timer=60.0)
            await bea.join(joined.match)
            await watcher.request("watch", match=joined.match)
            await ada.start()
            both = await raw_next(watcher, lambda m: m["type"] == "turn_timer")
            assert [t["seat"] for t in both["timers"]] == [0, 1]
            await bea.close()
            await raw_next(
                watcher,
                lambda m: m["type"] == "match_update" and m["match"]["seats"][1].get("stand_in"),
            )
            after = await raw_next(
                watcher, lambda m: m["type"] in ("turn_timer", "event"), timeout=5
            )
            assert after["type"] == "turn_timer", after  # before the stand-in's move
            assert [t["seat"] for t in after["timers"]] == [0]  # Ada's still runs
            moved = await raw_next(watcher, lambda m: m["type"] == "event", timeout=5)
            assert moved["by"] == "stand_in" and moved["event"]["seat"] == 1
        finally:
            await ada.close()
            await watcher.close()


async def test_a_player_who_answers_in_time_has_no_by() -> None:
    """Ada's own moves carry no `by`, even in a timed match against a bot."""
    async with serve() as running, connect(running.url, name="Ada", reconnect=False) as ada:
        await ada.create_match(seats=2, bots=[(1, "easy")], first_seat=0, turn_timer=60)
        await ada.start()
        seen: list[object] = []
        await play_randomly(ada, 0, random.Random(4), seen=seen, timeout=30)
        events = [m for m in seen if isinstance(m, wire.Event)]
        assert events and all(m.by is None for m in events)
        timers = [m for m in seen if isinstance(m, wire.TurnTimer)]
        assert timers and all(t.seat == 0 for m in timers for t in m.timers)  # bots: no timer


async def test_rematch_asks_the_others_instead_of_moving_them() -> None:
    """Ada's play_again opens the rematch; Bea gets `rematch` (not `joined`), stays
    in the finished match until she accepts with her own play_again; a
    spectator is not asked."""
    async with serve() as running:
        ada = await connect(running.url, name="Ada", reconnect=False)
        bea = await connect(running.url, name="Bea", reconnect=False)
        watcher = await RawClient.open(running.url, "Watcher")
        try:
            joined = await ada.create_match(seats=2, first_seat=0)
            await bea.join(joined.match)
            await watcher.request("watch", match=joined.match)
            await ada.start()
            await asyncio.gather(
                play_randomly(ada, 0, random.Random(5), timeout=30),
                play_randomly(bea, 1, random.Random(6), timeout=30),
            )
            again = await ada.play_again()
            assert again.match != joined.match and again.seat == 0 and again.host
            offer = await bea.next_of(wire.RematchOffer, timeout=5)
            assert (offer.match, offer.rematch, offer.host) == (joined.match, again.match, "Ada")
            room = running.lobby.matches[joined.match].core
            (still,) = [room.seats[s].player for s in room.members.values() if s is not None]
            assert still is not None
            assert still.name == "Bea"  # not moved
            rematch = running.lobby.matches[again.match].core
            assert rematch.seat_of(still.id) == 1  # her seat waits for her
            accepted = await bea.play_again()
            assert (accepted.match, accepted.seat, accepted.host) == (again.match, 1, False)
            update = await next_where(bea, wire.MatchUpdate, lambda m: m.match.match == again.match)
            assert update.match.seats[1].connected
            await asyncio.sleep(0.05)
            assert all(m["type"] != "rematch" for m in watcher.messages)
            assert not any(
                m["type"] == "joined" and m.get("match") == again.match for m in watcher.messages
            )
        finally:
            await ada.close()
            await bea.close()
            await watcher.close()
