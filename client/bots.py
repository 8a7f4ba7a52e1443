"""The bot kit: write a bot as a function, or subclass :class:`Bot`.

A strategy receives what the server sent this seat — the snapshot's
``state`` (the seat's own view, R24–R25) and the prompt's legal actions — and
returns one of those actions. It never needs the rules engine::

    def always_keep(state, actions, rng):
        return next((a for a in actions if isinstance(a, wire.Keep)), actions[0])

    asyncio.run(run_bot("ws://host:8765", always_keep, match="a1b2c3d4"))

Two strategies come with the kit: ``random`` and ``medium`` (the most points
now, with an eye on the majorities). The server's own bots, which search with
the engine, are seated with ``create_match(bots=…)``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import protocol as wire

from .sdk import ConnectionLost, Session

__all__ = [
    "STRATEGIES",
    "Bot",
    "Strategy",
    "immediate_points",
    "medium_strategy",
    "random_strategy",
    "run_bot",
]

Strategy = Callable[[wire.State, Sequence[wire.Action], random.Random], wire.Action]

_UNRANKED = 3


def random_strategy(
    state: wire.State, actions: Sequence[wire.Action], rng: random.Random
) -> wire.Action:
    """Any legal action, uniformly at random."""
    return rng.choice(list(actions))


def _colour_and_value(card: str) -> tuple[str, int]:
    colour, _, value = card.partition("-")
    return colour, int(value)


def _rank(state: wire.State, colour: str) -> int:
    ranking = list(state.ranking)
    return ranking.index(colour) if colour in ranking else _UNRANKED


def immediate_points(state: wire.State, action: wire.Action) -> int:
    """What ``action`` scores at once, from the festival cards' points (R14, R15)."""
    if state.drawn is None:
        return 0
    colour, value = _colour_and_value(state.drawn)
    rank = _rank(state, colour)
    if isinstance(action, wire.Keep):
        return state.points.bouquet[rank]
    if isinstance(action, wire.Give):
        return state.points.giving_bonus[rank] + value
    return 0


def _majority_pull(state: wire.State, seat: int, colour: str, to_seat: int | None) -> float:
    """A rough worth of one more card of ``colour`` in a bouquet, for majorities."""
    rank = _rank(state, colour)
    if rank >= len(state.points.majority):
        return 0.0
    counts = [sum(c.startswith(colour + "-") for c in s.bouquet) for s in state.seats]
    target = seat if to_seat is None else to_seat
    best_other = max(n for i, n in enumerate(counts) if i != target) if len(counts) > 1 else 0
    close = counts[target] + 1 >= best_other  # the card makes or keeps a lead
    return state.points.majority[rank][0] / 4 if close else 0.0


def medium_strategy(
    state: wire.State, actions: Sequence[wire.Action], rng: random.Random
) -> wire.Action:
    """The most points now, plus a simple view of majorities: keeping a card
    in a colour you could lead is worth more, giving one to a rival less."""
    seat = state.active if state.active is not None else 0
    if isinstance(actions[0], wire.Opening):
        return min(actions, key=lambda a: _colour_and_value(a.secret)[1])  # type: ignore[union-attr]
    colour = _colour_and_value(state.drawn)[0] if state.drawn else ""

    def worth(action: wire.Action) -> float:
        points = float(immediate_points(state, action))
        if isinstance(action, wire.Keep):
            points += _majority_pull(state, seat, colour, None)
        elif isinstance(action, wire.Give):
            points -= _majority_pull(state, seat, colour, action.to_seat)
        return points + rng.random() * 1e-3

    return max(actions, key=worth)


STRATEGIES: dict[str, Strategy] = {"random": random_strategy, "medium": medium_strategy}


class Bot:
    """Plays one seat: on each prompt, a fresh snapshot and :meth:`decide`."""

    def __init__(self, strategy: Strategy | None = None, seed: int | None = None) -> None:
        self.strategy = strategy
        self.rng = random.Random(seed)

    def decide(self, state: wire.State, actions: Sequence[wire.Action]) -> wire.Action:
        """Choose one of ``actions``; override this, or pass a strategy."""
        if self.strategy is None:
            raise NotImplementedError("pass a strategy or override decide()")
        return self.strategy(state, actions, self.rng)

    async def play(self, session: Session) -> wire.Scoring | None:
        """Answer prompts until the match ends; return its final scoring."""
        answered = -1
        async for message in session:
            if isinstance(message, wire.Prompt):
                if message.seq <= answered:
                    continue  # sent before our last decision (a sync re-sends the prompt)
                snapshot = await session.sync()
                answered = snapshot.seq
                if snapshot.state.legal_actions:
                    state = snapshot.state
                    await session.act(self.decide(state, state.legal_actions))
            elif isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                return message.event.scoring
            elif isinstance(message, ConnectionLost) and not session.reconnect:
                return None
        return None


async def run_bot(
    url: str,
    strategy: Strategy,
    *,
    match: str,
    name: str = "bot",
    seat: int | None = None,
    join_code: str | None = None,
    seed: int | None = None,
) -> wire.Scoring | None:
    """Join ``match`` at ``url`` and play it to the end with ``strategy``."""
    session = Session(url, name)
    await session.open()
    try:
        await session.join(match, seat=seat, join_code=join_code)
        return await Bot(strategy, seed).play(session)
    finally:
        await session.close()
