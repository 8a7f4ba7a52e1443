"""A bot on the project's SDK: join a match and take whatever scores most now,
as each prompt says (``prompt.points``).

python examples/sdk_bot.py ws://localhost:8765 MATCH_ID
"""

import asyncio
import sys
from collections.abc import Sequence

import protocol as wire
from client.bots import Bot, Option


class Greedy(Bot):
    """Take the action that the server says scores the most points right now."""

    def decide(self, state: wire.State, options: Sequence[Option]) -> wire.Action:
        openings = [o.action for o in options if isinstance(o.action, wire.Opening)]
        if openings:  # the lower card goes face down, the higher into the bouquet
            return min(openings, key=lambda a: wire.card_value(a.secret))
        return max(options, key=lambda o: o.points or 0).action


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
