"""tulips-bot: seat a bot in a match on any server, from any machine.

tulips-bot ws://192.168.1.20:8765 --match a1b2c3d4 --strategy medium
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from protocol import STRENGTHS
from protocol.version import add_version_flag

from .bots import STRATEGIES, run_bot
from .sdk import ConnectError, RequestError

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``tulips-bot``."""
    parser = argparse.ArgumentParser(
        prog="tulips-bot", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_version_flag(parser)
    parser.add_argument("url", help="the server, ws://HOST:PORT")
    parser.add_argument("--match", required=True, help="the match id to join")
    parser.add_argument(
        "--strategy",
        choices=STRENGTHS,
        default="medium",
        help="how well it plays, by the server's names for its bots (default: %(default)s)",
    )
    parser.add_argument("--name", default="bot", help="the name shown at the table")
    parser.add_argument("--seat", type=int, help="a seat to take (default: the first free one)")
    parser.add_argument("--join-code", help="the match's join code, if it has one")
    parser.add_argument("--seed", type=int, help="make the bot's choices reproducible")
    args = parser.parse_args(argv)
    if not args.url.startswith(("ws://", "wss://")):
        parser.error(f"the server address starts with ws:// or wss://, got {args.url!r}")
    try:
        scoring = asyncio.run(
            run_bot(
                args.url,
                STRATEGIES[args.strategy],
                match=args.match,
                name=args.name,
                seat=args.seat,
                join_code=args.join_code,
                seed=args.seed,
            )
        )
    except ConnectError as exc:
        print(f"tulips-bot: {exc}", file=sys.stderr)
        return 1
    except RequestError as exc:
        print(f"tulips-bot: the server refused: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    if scoring is None:
        print("tulips-bot: the connection ended before the match did", file=sys.stderr)
        return 1
    totals = ", ".join(f"seat {p.seat}: {p.total}" for p in scoring.players)
    print(f"match over ({totals}); winners: {list(scoring.winners)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
