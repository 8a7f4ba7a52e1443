"""A prompt's ``rankings`` over a real socket: one entry per action, in the
actions' order — for a face-up add, the festival's ranking that add makes
(R16, R8: its colour goes above every colour it ties with), null otherwise —
checked against the rules applied to what the seat sees, and against the
ranking the event reports once the seat has added the card face up."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import protocol as wire
from client.sdk import connect

from .helpers import Running, Tracker


def expected_ranking(state: dict[str, Any], action: wire.Action) -> tuple[str, ...] | None:
    """R8 worked out apart from the engine: the drawn card's colour, its total
    risen, is taken out of the ranking and put back above the first colour
    whose total it now equals or passes (ties go above); the others keep their
    order. Only the face-up totals count (R19: secret cards wait for the end)."""
    drawn = state.get("drawn")
    if drawn is None or not isinstance(action, wire.AddFaceUp):
        return None
    colour, value = drawn.split("-")
    totals = dict(state["totals"])
    totals[colour] += int(value)
    others = [c for c in state["ranking"] if c != colour]
    place = next((i for i, c in enumerate(others) if totals[c] <= totals[colour]), len(others))
    return (*others[:place], colour, *others[place:])


async def test_r8_r16_prompt_rankings_are_aligned_with_the_actions_and_right(
    running: Running,
) -> None:
    """Every prompt of a whole match has one ranking entry per action, equal to
    R8 applied to the seat's view, and the face-up add then ranks exactly so."""
    rng = random.Random(8)
    async with connect(running.url, name="Ada", reconnect=False) as session:
        joined = await session.create_match(seats=3, bots=[(1, "easy"), (2, "easy")])
        await session.start()
        tracker = Tracker(joined.seat)
        ranked: tuple[str, ...] | None = None  # what the face-up add just sent must rank
        seen: Counter[str] = Counter()
        async with asyncio.timeout(20):
            async for message in session:
                tracker.feed(message)
                if (
                    isinstance(message, wire.Event)
                    and isinstance(message.event, wire.CardAddedFaceUp)
                    and message.event.seat == joined.seat
                ):
                    assert message.event.ranking == ranked, message.event
                    ranked = None
                if (
                    isinstance(message, wire.Prompt)
                    and message.seq == tracker.seq
                    and message.seq not in tracker.acted
                    and not tracker.over
                ):
                    tracker.acted.add(message.seq)
                    assert tracker.state is not None
                    assert len(message.rankings) == len(message.actions), message
                    for action, ranking in zip(message.actions, message.rankings, strict=True):
                        assert ranking == expected_ranking(tracker.state, action), (action, message)
                        seen["ranked" if ranking is not None else type(action).__name__] += 1
                    # add face up more often than at random, to check many previews
                    ups = [
                        i for i, a in enumerate(message.actions) if isinstance(a, wire.AddFaceUp)
                    ]
                    i = (
                        ups[0]
                        if ups and rng.random() < 0.6
                        else rng.randrange(len(message.actions))
                    )
                    chosen = message.actions[i]
                    ranked = message.rankings[i]
                    await session.answer(message, chosen)
                if tracker.over:
                    break
    assert tracker.over
    assert seen["ranked"] > 0 and seen["Keep"] > 0 and seen["Opening"] in (1, 2)
