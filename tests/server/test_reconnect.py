"""Coming back and going away: resuming a seat mid-turn with the token (by
hand and by the SDK itself), the grace period after which a bot plays a
seat whose player is gone, and the turn timer."""

from __future__ import annotations

import asyncio
import random
import time

import protocol as wire
from client.sdk import ConnectionLost, Reconnected, Session, connect
from protocol.limits import MIN_TURN_TIMER

from .helpers import Tracker, finish_and_check, play_randomly, serve


async def until_turn_prompt(session: Session, tracker: Tracker) -> wire.Prompt:
    """Follow the match, making the opening choice, until the seat's first turn
    prompt (the card drawn is then in the model)."""
    async with asyncio.timeout(10):
        async for message in session:
            tracker.feed(message)
            if isinstance(message, wire.Prompt) and message.seq == tracker.seq:
                if isinstance(message.actions[0], wire.Opening):
                    await session.answer(message, message.actions[0])
                else:
                    return message
    raise AssertionError("the session ended")


async def collect_until_prompt(session: Session) -> list[object]:
    """Every message up to and including the next prompt."""
    messages: list[object] = []
    async with asyncio.timeout(10):
        async for message in session:
            messages.append(message)
            if isinstance(message, wire.Prompt):
                return messages
    raise AssertionError(f"the session ended; got {messages}")


def check_resumed(
    messages: list[object], match_id: str, tracker: Tracker, drawn: str | None
) -> tuple[wire.Snapshot, wire.Prompt]:
    """`joined` for the old seat, a snapshot at the old seq that agrees with what
    the client knew (the same drawn card), then the prompt it had not answered."""
    (joined,) = [m for m in messages if isinstance(m, wire.Joined)]
    (snapshot,) = [m for m in messages if isinstance(m, wire.Snapshot)]
    prompt = messages[-1]
    assert isinstance(prompt, wire.Prompt)
    assert messages.index(joined) < messages.index(snapshot) < messages.index(prompt)
    assert (joined.match, joined.seat, joined.host, joined.id) == (match_id, 0, True, None)
    assert snapshot.seq == tracker.seq  # nothing happened while the seat was away
    assert snapshot.state.drawn == drawn and drawn is not None
    assert snapshot.state.active == 0
    tracker.assert_agrees(snapshot)
    assert prompt.seq == snapshot.seq and prompt.seat == 0
    assert prompt.actions == snapshot.state.legal_actions
    return snapshot, prompt


async def test_reconnect_mid_turn_with_the_token_resumes_the_seat() -> None:
    """Dropped mid-turn, back with the token: joined, the same drawn card, the prompt."""
    rng = random.Random(1)
    async with serve(grace_period=30) as running:
        async with connect(running.url, name="Ada", reconnect=False) as first:
            joined = await first.create_match(
                seats=3, bots=[(1, "easy"), (2, "hard")], first_seat=0
            )
            await first.start()
            tracker = Tracker(0)
            await until_turn_prompt(first, tracker)
            assert tracker.state is not None
            drawn = tracker.state["drawn"]
            token, player = first.token, first.player_id
        # the first connection is gone without an answer to its prompt
        async with connect(running.url, name="Ada", token=token, reconnect=False) as second:
            assert second.player_id == player
            messages = await collect_until_prompt(second)
            _, prompt = check_resumed(messages, joined.match, tracker, drawn)
            await second.answer(prompt, rng.choice(prompt.actions))
            tracker.acted.add(prompt.seq)
            await play_randomly(second, 0, rng, tracker=tracker)
            await finish_and_check(second, tracker)


async def test_sdk_reconnects_by_itself_after_a_drop_mid_turn() -> None:
    """The SDK reconnects by itself mid-turn and gets the seat, drawn card and prompt back."""
    rng = random.Random(2)
    async with (
        serve(grace_period=30) as running,
        connect(running.url, name="Bea", reconnect=True) as session,
    ):
        joined = await session.create_match(seats=2, bots=[(1, "medium")], first_seat=0)
        await session.start()
        tracker = Tracker(0)
        await until_turn_prompt(session, tracker)
        assert tracker.state is not None
        drawn = tracker.state["drawn"]
        player = session.player_id
        connection = session._connection
        assert connection is not None
        connection.transport.abort()  # the network drops: no close handshake
        messages = await collect_until_prompt(session)
        kinds = [type(m) for m in messages]
        assert kinds.index(ConnectionLost) < kinds.index(Reconnected) < kinds.index(wire.Joined)
        assert session.player_id == player
        _, prompt = check_resumed(
            [m for m in messages if isinstance(m, wire.Message)], joined.match, tracker, drawn
        )
        await session.answer(prompt, rng.choice(prompt.actions))
        tracker.acted.add(prompt.seq)
        await play_randomly(session, 0, rng, tracker=tracker)
        await finish_and_check(session, tracker)


async def test_grace_period_a_bot_plays_for_a_player_gone_too_long() -> None:
    """Gone past the grace period: a bot plays the seat, shown disconnected; match ends."""
    grace = 0.2
    async with (
        serve(grace_period=grace) as running,
        connect(running.url, name="Watcher", reconnect=False) as watcher,
    ):
        ada = await connect(running.url, name="Ada", reconnect=False)
        joined = await ada.create_match(seats=3, bots=[(1, "easy"), (2, "medium")], first_seat=0)
        await watcher.watch(joined.match)
        await ada.start()
        await ada.next_of(wire.Prompt, timeout=5)  # her opening choice is due …
        token = ada.token
        await ada.close()  # … and she is gone
        dropped = time.monotonic()
        tracker = Tracker(None)
        updates: list[wire.MatchSummary] = []
        seat0_acted: float | None = None
        async with asyncio.timeout(10):
            async for message in watcher:
                tracker.feed(message)
                if isinstance(message, wire.MatchUpdate):
                    updates.append(message.match)
                if (
                    isinstance(message, wire.Event)
                    and isinstance(message.event, wire.OpeningChosen)
                    and message.event.seat == 0
                ):
                    seat0_acted = time.monotonic()
                if tracker.over:
                    break
        assert seat0_acted is not None and seat0_acted - dropped >= grace / 2  # not at once
        away = [u for u in updates if u.status == "running" and not u.seats[0].connected]
        assert away, "no match_update showed seat 0 disconnected"
        assert away[0].seats[0].kind == "human" and away[0].seats[0].name == "Ada"
        await finish_and_check(watcher, tracker)
        # Ada comes back after the end: her seat, and the final state
        async with connect(running.url, name="Ada", token=token, reconnect=False) as back:
            again = await back.next_of(wire.Joined, timeout=5)
            assert (again.match, again.seat) == (joined.match, 0)
            final = await back.next_of(wire.Snapshot, timeout=5)
            assert final.state.phase == "over" and final.state.scoring == tracker.scoring
            async with asyncio.timeout(5):  # and the watcher sees her seat connected again
                while not (await watcher.next_of(wire.MatchUpdate)).match.seats[0].connected:
                    pass


async def test_turn_timer_a_bot_acts_for_a_player_who_lets_it_run_out() -> None:
    """When the turn timer runs out a bot acts once; the player is prompted again after."""
    timer = MIN_TURN_TIMER  # the shortest the protocol allows
    rng = random.Random(3)
    async with (
        serve() as running,
        connect(running.url, name="Ada", reconnect=False) as ada,
    ):
        await ada.create_match(seats=2, bots=[(1, "hard")], first_seat=0, turn_timer=timer)
        await ada.start()
        tracker = Tracker(0)
        prompted = 0.0
        async with asyncio.timeout(10):
            async for message in ada:  # she reads her opening prompt and does not answer
                tracker.feed(message)
                if isinstance(message, wire.Prompt):
                    assert (
                        message.deadline is not None and 0 < message.deadline <= timer
                    )  # seconds left
                    tracker.acted.add(message.seq)
                    prompted = time.monotonic()
                    break
            async for message in ada:
                tracker.feed(message)
                event = message.event if isinstance(message, wire.Event) else None
                if isinstance(event, wire.OpeningChosen) and event.seat == 0:
                    assert time.monotonic() - prompted >= timer * 0.9
                    assert event.secret is not None  # her own card, shown to her
                    break
        # the server chose for her once; from now on she answers her prompts herself
        await play_randomly(ada, 0, rng, tracker=tracker)
        await finish_and_check(ada, tracker)
        assert tracker.acted - {min(tracker.acted)}, "never prompted again after the timeout"


async def test_turn_timer_does_not_hand_a_seat_that_acted_in_time_to_a_bot() -> None:
    """A seat that always acts in time is never played by a bot, whoever else is slow."""
    async with serve() as running:
        fast = await connect(running.url, name="Fast", reconnect=False)
        slow = await connect(running.url, name="Slow", reconnect=False)
        try:
            joined = await fast.create_match(seats=2, first_seat=0, turn_timer=1.0)
            await slow.join(joined.match)
            await fast.start()

            async def play(session: Session, seat: int, think: float) -> tuple[int, int]:
                """Answer each prompt after ``think`` s until turn 4; (acts, own actions seen)."""
                tracker, acts, own = Tracker(seat), 0, 0
                async for message in session:
                    tracker.feed(message)
                    if isinstance(message, wire.Event):
                        event = message.event
                        if isinstance(event, wire.TurnStarted) and event.turn == 4:
                            return acts, own
                        if not isinstance(event, wire.TurnStarted | wire.CardDrawn):
                            own += getattr(event, "seat", None) == seat
                    if isinstance(message, wire.Prompt) and message.seq == tracker.seq:
                        await asyncio.sleep(think)
                        await session.answer(message, message.actions[0])
                        acts += 1
                raise AssertionError("the session ended")

            async with asyncio.timeout(8):
                (fast_acts, fast_own), (slow_acts, slow_own) = await asyncio.gather(
                    play(fast, 0, 0.0), play(slow, 1, 0.6)
                )
            assert (fast_acts, slow_acts) == (fast_own, slow_own)
        finally:
            await fast.close()
            await slow.close()


async def test_a_closed_session_stops_reconnecting() -> None:
    """`Session.close` while the SDK is reconnecting stops it for good: no task
    of the session runs on, and the session does not reopen."""
    async with serve() as running:
        session = await connect(running.url, name="Ada", reconnect=True)
    # the server is gone: the session keeps trying to reconnect
    async with asyncio.timeout(5):
        async for message in session:
            if isinstance(message, ConnectionLost):
                break
    await asyncio.sleep(0.3)  # a few failed tries
    await session.close()
    running_on = [task for task in asyncio.all_tasks() if "Session" in repr(task.get_coro())]
    assert not running_on, running_on
