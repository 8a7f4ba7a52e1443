"""A bot on the project's SDK: join a match and keep whatever scores most.

python examples/sdk_bot.py ws://localhost:8765 MATCH_ID
"""

import asyncio
import sys
from collections.abc import Sequence

import protocol as wire
from client.bots import Bot, immediate_points


class Greedy(Bot):
    """Take the action that scores the most points right now."""

    def decide(self, state: wire.State, actions: Sequence[wire.Action]) -> wire.Action:
        openings = [a for a in actions if isinstance(a, wire.Opening)]
        if openings:  # the lower card goes face down, the higher into the bouquet
            return min(openings, key=lambda a: int(a.secret[-1]))
        return max(actions, key=lambda a: immediate_points(state, a))


async def main(url: str, match: str) -> None:
    from client.sdk import connect

    async with connect(url, name="greedy-example") as session:
        joined = await session.join(match)
        print(f"seated at {joined.seat}")
        scoring = await Greedy().play(session)
        if scoring:
            print("totals:", [p.total for p in scoring.players], "winners:", scoring.winners)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
