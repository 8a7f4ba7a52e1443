"""The bot kit: write a bot as a function, or subclass :class:`Bot`.

A strategy receives what the server sent this seat — the snapshot's
``state`` (the seat's own view, R24–R25) and the prompt's options (each legal
action with the points the server says it scores at once, :mod:`client.options`)
— and returns one of those actions. It never needs the rules engine::

    def greedy(state, options, rng):
        return max(options, key=lambda o: o.points or 0).action

    asyncio.run(run_bot("ws://host:8765", greedy, match="a1b2c3d4"))

Three strategies come with the kit, by the server's names for its bots'
strengths (``STRATEGIES``): ``easy`` (at random), ``medium`` (the most points
now, with an eye on the majorities) and ``hard`` (its lead over the best rival,
majorities projected in full). The server's own bots, which search with the
engine, are seated with ``create_match(bots=…)``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import protocol as wire

from .majorities import projected_majorities
from .options import Option, options
from .sdk import ConnectionLost, RequestError, Session

__all__ = [
    "STRATEGIES",
    "Bot",
    "Option",
    "Strategy",
    "hard_strategy",
    "medium_strategy",
    "random_strategy",
    "run_bot",
]

Strategy = Callable[[wire.State, Sequence[Option], random.Random], wire.Action]


def random_strategy(
    state: wire.State, options: Sequence[Option], rng: random.Random
) -> wire.Action:
    """Any legal action, uniformly at random."""
    return rng.choice(list(options)).action


def _secret_value(option: Option) -> int:
    """The value of the card an opening option puts face down."""
    action = option.action
    assert isinstance(action, wire.Opening)
    return wire.card_value(action.secret)


def _majority_pull(state: wire.State, seat: int, colour: str, to_seat: int | None) -> float:
    """A rough worth of one more card of ``colour`` in a bouquet, for majorities:
    a quarter of the first majority of the colour's rank, when the card makes or
    keeps a lead (ranks without majority points, and unranked colours, count 0)."""
    if colour not in state.ranking:
        return 0.0
    rank = state.ranking.index(colour)
    if rank >= len(state.points.majority):
        return 0.0
    counts = [sum(wire.card_colour(c) == colour for c in s.bouquet) for s in state.seats]
    target = seat if to_seat is None else to_seat
    best_other = max(n for i, n in enumerate(counts) if i != target) if len(counts) > 1 else 0
    close = counts[target] + 1 >= best_other
    return state.points.majority[rank][0] / 4 if close else 0.0


def medium_strategy(
    state: wire.State, options: Sequence[Option], rng: random.Random
) -> wire.Action:
    """The most points now (as the prompt says), plus a simple view of
    majorities: keeping a card in a colour you could lead is worth more,
    giving one to a rival less. The opening hides the lower card."""
    seat = state.active if state.active is not None else 0
    if isinstance(options[0].action, wire.Opening):
        return min(options, key=_secret_value).action
    colour = wire.card_colour(state.drawn) if state.drawn else ""

    def worth(option: Option) -> float:
        points = float(option.points or 0)
        action = option.action
        if isinstance(action, wire.Keep):
            points += _majority_pull(state, seat, colour, None)
        elif isinstance(action, wire.Give):
            points -= _majority_pull(state, seat, colour, action.to_seat)
        return points + rng.random() * 1e-3

    return max(options, key=worth).action


def _receiver(action: wire.Action, seat: int) -> int | None:
    """The seat whose bouquet the drawn card joins with ``action`` (None: the festival)."""
    if isinstance(action, wire.Keep):
        return seat
    if isinstance(action, wire.Give):
        return action.to_seat
    return None


#: How much of the projected majorities :func:`hard_strategy` counts: the ranking
#: still moves, and counting them in full won fewer matches (17 of 40 against medium).
MAJORITY_WEIGHT = 0.5


def hard_strategy(state: wire.State, options: Sequence[Option], rng: random.Random) -> wire.Action:
    """Play for the lead: each option's worth is this seat's margin over its best
    rival were the match to end after it: points so far and now (as the prompt
    says), plus half of every seat's majorities under the current ranking
    (:mod:`client.majorities`). The opening hides the lower card, as medium does.

    Without the rules engine it cannot search: in 120 four-player matches, two
    against two, it won 58 to medium's 62, within chance of even. The server's
    own hard bot (``create_match(bots=[(seat, "hard")])``) searches sampled deals
    and is the strong one."""
    seat = state.active if state.active is not None else 0
    if isinstance(options[0].action, wire.Opening) or not state.drawn:
        return medium_strategy(state, options, rng)
    drawn = state.drawn
    bouquets = [list(s.bouquet) for s in state.seats]
    scored = [s.keeping + s.giving for s in state.seats]

    def margin(option: Option) -> float:
        receiver = _receiver(option.action, seat)
        after = [[*b, drawn] if i == receiver else b for i, b in enumerate(bouquets)]
        projected = projected_majorities(state, after)
        totals = [p + MAJORITY_WEIGHT * m for p, m in zip(scored, projected, strict=True)]
        totals[seat] += option.points or 0
        rivals = [total for i, total in enumerate(totals) if i != seat]
        return totals[seat] - max(rivals, default=0) + rng.random() * 1e-3

    return max(options, key=margin).action


#: The kit's strategies by the server's names for its bots' strengths
#: (``protocol.STRENGTHS``), which ``tulips-bot --strategy`` offers.
STRATEGIES: dict[str, Strategy] = {
    "easy": random_strategy,
    "medium": medium_strategy,
    "hard": hard_strategy,
}


class Bot:
    """Plays one seat: on each prompt, the state at that prompt and :meth:`decide`."""

    def __init__(self, strategy: Strategy | None = None, seed: int | None = None) -> None:
        self.strategy = strategy
        self.rng = random.Random(seed)

    def decide(self, state: wire.State, options: Sequence[Option]) -> wire.Action:
        """Choose the action of one of ``options``; override this, or pass a strategy."""
        if self.strategy is None:
            raise NotImplementedError("pass a strategy or override decide()")
        return self.strategy(state, options, self.rng)

    async def play(self, session: Session) -> wire.Scoring | None:
        """Answer prompts until the match ends; return its final scoring.

        A prompt is answered with the snapshot of the same ``seq`` (asked for
        with ``sync`` when the last one is older). When the snapshot has moved
        on, the prompt is stale: the server follows the snapshot with a fresh
        prompt if the seat must still act, and that one is answered."""
        answered = -1
        snapshot: wire.Snapshot | None = None
        async for message in session:
            if isinstance(message, wire.Snapshot):
                snapshot = message
            elif isinstance(message, wire.Prompt):
                if message.seq <= answered:
                    continue  # sent before our last decision (a sync re-sends the prompt)
                if snapshot is None or snapshot.seq != message.seq:
                    snapshot = await session.sync()
                if snapshot.seq != message.seq:
                    continue  # stale: the prompt that follows the snapshot is the current one
                answered = message.seq
                try:
                    await session.answer(message, self.decide(snapshot.state, options(message)))
                except RequestError as exc:
                    if exc.code != "decision_taken":
                        raise  # too late (a turn timer): the next prompt is answered

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
