"""Golden playthroughs: a whole seeded bot match written out as text, every
step as every seat and the spectator saw it.

Modelled on OpenSpiel's ``integration_tests/playthroughs``: the text of a few
seeded matches is committed under ``tests/engine/golden/`` and a test diffs a
fresh rendering against it, so a rules change shows up as a readable diff and
a leaked card (R24–R26) as a one-line one.

Invariants:

* :func:`render_playthrough` is a pure function of ``(players, seed,
  first_seat, ruleset)`` and does no I/O: the match's own seed drives chance,
  and the bots (even seats :func:`~engine.bots.policies.greedy_policy`, odd seats
  :func:`~engine.bots.policies.random_policy`) draw from ``random.Random(seed)``.
* What a viewer sees is built only from :func:`~engine.observation.observe`
  and :func:`~engine.observation.project_event`; the match's hidden state is
  never printed. The one exception is the heading of each step, which names
  the action the acting seat chose (the script of the match, as in OpenSpiel).
* An event or the public part of the observations is written once, marked
  ``everyone``, only when every seat and the spectator see exactly the same
  text; otherwise every viewer gets its own line. A leak therefore changes
  the text of the file, and never hides behind the grouping.

``python -m engine.tools.playthrough --players 3 --seed 11`` prints one;
``python -m engine.tools.playthrough --regenerate`` rewrites the golden files.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..actions import Action
from ..bots.policies import Policy, greedy_policy, random_policy
from ..cards import Card
from ..events import Event
from ..match import Match
from ..observation import Observation, observe, project_event
from ..ruleset import DEFAULT_RULESET, PLAYER_COUNTS, Ruleset
from .describe import describe_event, describe_scoring

__all__ = [
    "GOLDEN_CASES",
    "REGENERATE",
    "golden_dir",
    "golden_name",
    "main",
    "policies_for",
    "render_observation",
    "render_playthrough",
    "render_private",
    "render_public",
]

#: The committed golden playthroughs, as ``(players, seed)``.
GOLDEN_CASES: tuple[tuple[int, int], ...] = ((2, 1), (2, 7), (3, 11), (5, 5))

#: The command that rewrites the golden files.
REGENERATE = ".venv/bin/python -m engine.tools.playthrough --regenerate"


def golden_name(players: int, seed: int) -> str:
    """The file name of one golden playthrough."""
    return f"playthrough_{players}p_seed{seed}.txt"


def golden_dir() -> Path:
    """Where the golden playthroughs live in a source checkout."""
    return Path(__file__).resolve().parents[2] / "tests" / "engine" / "golden"


def policies_for(players: int) -> list[Policy]:
    """The bots of a playthrough: greedy on even seats, random on odd ones."""
    return [greedy_policy if seat % 2 == 0 else random_policy for seat in range(players)]


def _viewer(seat: int | None) -> str:
    return "spectator" if seat is None else f"seat {seat}"


def _cards(cards: Sequence[Card]) -> str:
    return " ".join(map(str, cards)) if cards else "-"


def _bouquet(cards: Sequence[Card]) -> str:
    """A bouquet as the multiset the rules look at: ``blue-4 pink-3x2``."""
    counts = Counter(cards)
    return " ".join(
        str(card) if counts[card] == 1 else f"{card}x{counts[card]}"
        for card in sorted(counts, key=lambda c: (c.colour.index, c.value))
    )


def _event_lines(event: Event, players: int) -> list[str]:
    """One line if every viewer sees the event alike, else one line per viewer."""
    viewers: list[int | None] = [*range(players), None]
    seen = [describe_event(project_event(event, viewer)) for viewer in viewers]
    if all(text == seen[0] for text in seen):
        return [f"  [everyone] {seen[0]}"]
    return [f"  [{_viewer(viewer)}] {text}" for viewer, text in zip(viewers, seen, strict=True)]


def render_public(obs: Observation) -> list[str]:
    """The public part of an observation (R24), a few lines."""
    totals = dict(obs.totals)
    ranked = " > ".join(f"{colour.value} {totals[colour]}" for colour in obs.ranking)
    unranked = ", ".join(
        f"{colour.value} {total}" for colour, total in obs.totals if colour not in obs.ranking
    )
    status = f"phase {obs.phase.value}, turn {obs.turn}"
    if obs.active is not None:
        status += f", seat {obs.active} active"
    if obs.used is not None:
        status += f", first card used {obs.used.value}"
    status += f"; to act: {', '.join(map(str, obs.to_act)) or '-'}"
    return [
        status,
        f"ranking {ranked or '-'}; unranked {unranked or '-'}; festival {len(obs.festival)} cards",
        f"deck {obs.deck_count}, secret {obs.secret_count}, removed {obs.removed_count},"
        f" revealed {_cards(obs.revealed)}",
        *(
            f"s{view.seat} {view.keeping}+{view.giving}"
            + ("" if view.opening_done else " (choosing)")
            + f": {_bouquet(view.bouquet) or '-'}"
            for view in obs.seats
        ),
    ]


def render_private(obs: Observation) -> str:
    """The viewer's private part of an observation (R25), on one line."""
    legal = ", ".join(map(str, obs.legal_actions)) or "-"
    drawn = "-" if obs.drawn is None else str(obs.drawn)
    return (
        f"hand {_cards(obs.hand)}; opening {_cards(obs.opening)}; drawn {drawn};"
        f" my secret {_cards(obs.my_secret)}; legal {legal}"
    )


def render_observation(obs: Observation) -> list[str]:
    """One observation in full: who sees, the public lines, the private line."""
    lines = [f"{_viewer(obs.viewer)} sees:", *("  " + line for line in render_public(obs))]
    if obs.viewer is not None:
        lines.append("  private: " + render_private(obs))
    return lines


def _views(match: Match) -> list[str]:
    """Every viewer's observation; the public part once if all see it alike."""
    observations = [observe(match, viewer) for viewer in [*range(match.players), None]]
    public = [render_public(obs) for obs in observations]
    if any(lines != public[0] for lines in public):  # a leak or a bug: show every view
        return ["  " + line for obs in observations for line in render_observation(obs)]
    lines = ["  everyone sees:", *("    " + line for line in public[0])]
    lines.extend(
        f"  seat {obs.viewer} private: {render_private(obs)}"
        for obs in observations
        if obs.viewer is not None
    )
    return lines


def render_playthrough(
    players: int,
    seed: int,
    first_seat: int | None = None,
    ruleset: Ruleset = DEFAULT_RULESET,
) -> str:
    """The whole bot match ``Match.new(players, seed, ruleset, first_seat)`` as text."""
    match = Match.new(players, seed, ruleset, first_seat)
    policies = policies_for(players)
    rng = random.Random(seed)
    chosen = "chosen by chance" if first_seat is None else "chosen by the host"
    lines = [
        f"# Gift of Tulips playthrough: {players} players, seed {seed},"
        f" first seat {match.first_seat} ({chosen}), ruleset {ruleset.name!r}",
        "# bots: "
        + ", ".join(
            f"seat {seat} {'greedy' if policy is greedy_policy else 'random'}"
            for seat, policy in enumerate(policies)
        ),
        f"# regenerate the golden files with: {REGENERATE}",
        "",
        "== setup",
    ]
    for event in match.setup_events:
        lines.extend(_event_lines(event, players))
    lines.extend(_views(match))
    step = 0
    while not match.is_over:
        step += 1
        seat = match.to_act[0]
        action: Action = policies[seat](observe(match, seat), rng)
        lines += ["", f"== step {step}: seat {seat} plays {action}"]
        for event in match.apply(seat, action):
            lines.extend(_event_lines(event, players))
        lines.extend(_views(match))
    assert match.scoring is not None
    lines += ["", "== scoring", describe_scoring(match.scoring), ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print one playthrough, or rewrite the golden files with ``--regenerate``."""
    parser = argparse.ArgumentParser(
        prog="python -m engine.tools.playthrough",
        description="Print a seeded bot match as every seat saw it, or rewrite the golden files.",
    )
    parser.add_argument("--players", type=int, default=3, choices=PLAYER_COUNTS)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--first-seat", type=int, help="the host's pick (R12); default: chance")
    parser.add_argument(
        "--regenerate", action="store_true", help="rewrite every golden playthrough file"
    )
    parser.add_argument(
        "--golden-dir", type=Path, help="where --regenerate writes (default: tests/engine/golden)"
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.first_seat is not None and not 0 <= args.first_seat < args.players:
        parser.error(f"--first-seat must be a seat from 0 to {args.players - 1}")
    if not args.regenerate:
        print(render_playthrough(args.players, args.seed, args.first_seat), end="")
        return 0
    directory: Path = args.golden_dir or golden_dir()
    directory.mkdir(parents=True, exist_ok=True)
    for players, seed in GOLDEN_CASES:
        path = directory / golden_name(players, seed)
        path.write_text(render_playthrough(players, seed), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
