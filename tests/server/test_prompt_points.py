"""A prompt's ``points`` over a real socket: one entry per action, in the
actions' order, each what that action scores at once (R14–R17) — checked
against the rules applied to what the seat sees, and against the points the
event reports once the seat has acted."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import protocol as wire
from client.sdk import connect

from .helpers import Running, Tracker

#: R7: an unranked colour scores as 4th for keeping and giving
UNRANKED = 3


def expected_points(state: dict[str, Any], action: wire.Action) -> int:
    """What ``action`` scores at once, from the seat's own state: KEEP the bouquet
    points of the drawn card's rank (R14), GIVE the giving bonus of that rank
    plus the card's value (R15), anything else nothing (R11, R16)."""
    drawn = state.get("drawn")
    if drawn is None or not isinstance(action, wire.Keep | wire.Give):
        return 0
    colour, value = drawn.split("-")
    ranking = state["ranking"]
    rank = ranking.index(colour) if colour in ranking else UNRANKED
    table = state["points"]
    if isinstance(action, wire.Keep):
        return int(table["bouquet"][rank])
    return int(table["giving_bonus"][rank]) + int(value)


async def test_r14_r17_prompt_points_are_aligned_with_the_actions_and_right(
    running: Running,
) -> None:
    """Every prompt of a whole match has one point figure per action, equal to
    the rules applied to the seat's view, and the event then scores exactly it."""
    rng = random.Random(14)
    async with connect(running.url, name="Ada", reconnect=False) as session:
        joined = await session.create_match(seats=3, bots=[(1, "easy"), (2, "easy")])
        await session.start()
        tracker = Tracker(joined.seat)
        scored: int | None = None  # what the action just sent must score, if KEEP or GIVE
        priced: Counter[str] = Counter()
        async with asyncio.timeout(20):
            async for message in session:
                tracker.feed(message)
                if (
                    isinstance(message, wire.Event)
                    and isinstance(message.event, wire.CardKept | wire.CardGiven)
                    and message.event.seat == joined.seat
                ):
                    assert message.event.points == scored, message.event
                    scored = None
                if (
                    isinstance(message, wire.Prompt)
                    and message.seq == tracker.seq
                    and message.seq not in tracker.acted
                    and not tracker.over
                ):
                    tracker.acted.add(message.seq)
                    assert tracker.state is not None
                    assert len(message.points) == len(message.actions), message
                    for action, points in zip(message.actions, message.points, strict=True):
                        assert points == expected_points(tracker.state, action), (action, message)
                        priced[type(action).__name__] += 1
                    i = rng.randrange(len(message.actions))
                    chosen = message.actions[i]
                    scores = isinstance(chosen, wire.Keep | wire.Give)
                    scored = message.points[i] if scores else None
                    await session.answer(message, chosen)
                if tracker.over:
                    break
    assert tracker.over and scored is None
    # two opening options, or one when both dealt cards are alike (R11)
    assert priced["Opening"] in (1, 2) and priced["Keep"] > 0 and priced["Give"] > 0
