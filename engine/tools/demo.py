"""tulips-demo: a match between simple bots, told in plain text.

Every public event as a spectator would see it, then the scoring breakdown;
no server, no network. To play yourself, run "tulips play".
"""

from __future__ import annotations

import argparse
import random
import secrets

from ..bots.policies import greedy_policy, random_policy
from ..match import Match
from ..observation import observe, project_event
from ..ruleset import DEFAULT_RULESET, PLAYER_COUNTS, RulesetError, load_ruleset
from .describe import describe_event, describe_scoring
from .version import add_version_flag

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Play one bot match and print it."""
    parser = argparse.ArgumentParser(prog="tulips-demo", description=__doc__)
    add_version_flag(parser)
    parser.add_argument("--players", type=int, default=4, choices=PLAYER_COUNTS)
    parser.add_argument("--seed", type=int, help="replay a particular match")
    parser.add_argument("--ruleset", help="a ruleset TOML file (R30)")
    args = parser.parse_args(argv)
    try:
        ruleset = load_ruleset(args.ruleset) if args.ruleset else DEFAULT_RULESET
        ruleset.check_players(args.players)
    except RulesetError as exc:
        parser.error(str(exc))
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    match = Match.new(args.players, seed, ruleset)
    policies = [greedy_policy if seat % 2 == 0 else random_policy for seat in range(args.players)]
    rng = random.Random(seed)
    print(f"Gift of Tulips, {args.players} players, seed {seed}")
    print(
        "seats "
        + ", ".join(
            f"{seat}: {'greedy' if p is greedy_policy else 'random'}"
            for seat, p in enumerate(policies)
        )
    )
    for event in match.setup_events:
        print("  " + describe_event(project_event(event, None)))
    while not match.is_over:
        seat = match.to_act[0]
        action = policies[seat](observe(match, seat), rng)
        for event in match.apply(seat, action):
            print("  " + describe_event(project_event(event, None)))
    assert match.scoring is not None
    print()
    print(describe_scoring(match.scoring))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
