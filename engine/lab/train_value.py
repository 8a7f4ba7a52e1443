"""Train the lookahead bot's value network (:mod:`engine.bots.value`).

Three steps, each a subcommand, and ``recipe`` to run them all::

    python -m engine.lab.train_value generate --matches 24000 --out medium.rows
    python -m engine.lab.train_value generate --matches 3000 --start 500000 \\
        --bot-weights engine/bots/value_net.json --samples 16 --out bot1.rows
    python -m engine.lab.train_value fit --nets 8 --seed 1 --out outcomes.json \\
        medium.rows bot1.rows:5
    python -m engine.lab.train_value fit --nets 8 --seed 1 --out td.json \\
        --teacher engine/bots/value_net.json medium.rows bot1.rows:5

``generate`` plays 4-player matches under the standard ruleset — four medium
bots, or the lookahead bot (with the network given) in seat ``i % 4`` against
three — and writes, at the end of every turn, each seat's features with how
that seat's match ended. ``fit`` trains the network on such rows (a file may
carry a weight after a colon); with ``--nets N`` it trains N networks from
different seeds and writes their average as one network. With ``--teacher
NET`` it learns TD(λ) targets instead of bare outcomes: each row's outcome
mixed with what the teacher predicts at the same seat's later turns
(``--td``, λ = 0.8 by default), less noisy than one match's ending.
``recipe`` runs these steps and writes the network the bots ship, the average
of all 16: it learns from the games of the bot with each network given to
``--bot-weights``, oldest first (3000 matches each, from match 500000, then
600000, …; by default only the network that ships now), and the last of them
is the teacher. The network that ships was made by these steps with the
networks of commits 37c1c17 and faf9826, in that order, from bot games that
the lookahead of faf9826 played; since 95df9ae the lookahead draws the
end-of-match reveal differently, so ``recipe`` now plays those games with
other random reveals and makes a network like it, not the same bytes.
``fit --start-from NET`` goes on training a network instead of a fresh one.
Everything is seeded: the same command gives the same rows and, up to the
rounding of the machine's linear algebra, the same net.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from array import array
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..actions import Action, ActionKind
from ..bots.inference import FLOOR, expect_secrets, hidden_likelihood, opening_likelihood
from ..bots.lookahead import PLAYERS, LookaheadPolicy
from ..bots.policies import medium_policy
from ..bots.table import CARD_TYPES, Table, TableRules, card_index, colour_index
from ..bots.value import FEATURES, ValueNet, features
from ..match import Match, Phase
from ..observation import observe

__all__ = [
    "average",
    "end_of_turn_table",
    "fit",
    "generate",
    "main",
    "play_for_rows",
    "predictions",
    "recipe",
    "td_targets",
]

#: Each row: the features, then the seat's share of the victory, its lead
#: over the best other seat, 1.0 if the lookahead bot played the seat, and
#: the match's number.
ROW = FEATURES + 4
#: How far the TD targets look: the weight of the outcome against the teacher's next guess.
TD_LAMBDA = 0.8
#: Networks ``recipe`` trains on the outcomes, and as many on TD targets.
RECIPE_SEEDS = range(1, 9)
_SHIPPED = Path(__file__).resolve().parent.parent / "bots" / "value_net.json"


def end_of_turn_table(match: Match, seat: int) -> Table:
    """``seat``'s table between two turns, as the lookahead scores it: the
    next seat's drawn card still counts in the deck."""
    observation = observe(match, seat)
    table = Table.from_observation(observation)
    if observation.active is not None:
        table.next_seat = observation.active
        table.deck += 1
    else:
        table.next_seat = -1
    return table


class _Reading:
    """What every seat can read of the others' secret cards, kept up to date
    as a match is played (what :func:`~engine.bots.inference.secret_likelihoods`
    finds from one observation, without replaying the match each time)."""

    def __init__(self) -> None:
        self.found: list[tuple[int, list[float]]] = []
        self.opened = False

    def before(self, match: Match, seat: int, action: Action) -> None:
        """Read ``seat``'s ``action`` before it is applied."""
        observation = observe(match, seat)
        if not self.opened and observation.phase is Phase.TURN:
            self.opened = True
            rules = TableRules.of(match.ruleset, match.players)
            ranking = [colour_index(c) for c in observation.ranking]
            for view in observation.seats:
                kept = card_index(view.bouquet[0])
                self.found.append((view.seat, opening_likelihood(rules, ranking, kept)))
        if action.kind is ActionKind.ADD_SECRET:
            if observation.deck_count > 0:
                table = Table.from_observation(observation)
                likelihood = hidden_likelihood(table, seat, observation.used)
            else:  # the game ends with it: the medium bot then saw a random reveal
                likelihood = [1.0] * CARD_TYPES
            self.found.append((seat, likelihood))

    def table(self, match: Match, seat: int) -> Table:
        """``seat``'s table between two turns, with what it reads of the others."""
        table = end_of_turn_table(match, seat)
        likelihoods = [[max(FLOOR, x) for x in lk] for s, lk in self.found if s != seat]
        if likelihoods:
            expect_secrets(table, likelihoods, table.unseen())
        return table


def play_for_rows(job: tuple[int, str | None, int]) -> bytes:
    """One match's rows (see :data:`ROW`) as float32 bytes."""
    number, weights, samples = job
    match = Match.new(PLAYERS, number)
    rngs = [random.Random(f"g{number}:{s}") for s in range(PLAYERS)]
    bot_seat = number % PLAYERS if weights else -1
    bot = None
    if weights:
        net = ValueNet.from_mapping(json.loads(Path(weights).read_text(encoding="utf-8")))
        bot = LookaheadPolicy(samples=samples, net=net)
    reading = _Reading()
    rows: list[tuple[int, list[float]]] = []
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        policy = bot if bot is not None and seat == bot_seat else medium_policy
        action = policy(observation, rngs[seat])
        reading.before(match, seat, action)
        match.apply(seat, action)
        if match.phase is Phase.TURN and observe(match, seat).used is None:  # a turn begins
            rows.extend((s, features(reading.table(match, s))) for s in range(PLAYERS))
    scoring = match.scoring
    assert scoring is not None
    totals = [player.total for player in scoring.players]
    out = array("f")
    for seat, row in rows:
        share = 1.0 / len(scoring.winners) if seat in scoring.winners else 0.0
        lead = totals[seat] - max(t for s, t in enumerate(totals) if s != seat)
        out.extend(row)
        out.extend((share, lead, 1.0 if seat == bot_seat else 0.0, float(number)))
    return out.tobytes()


def generate(
    matches: int, start: int, out: Path, weights: Path | None, samples: int, workers: int
) -> int:
    """Play ``matches`` matches numbered from ``start`` and write their rows to
    ``out``; returns how many rows."""
    jobs = [(start + i, str(weights) if weights else None, samples) for i in range(matches)]
    if workers > 1:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            chunks = pool.map(play_for_rows, jobs, chunksize=4)
    else:
        chunks = [play_for_rows(job) for job in jobs]
    with out.open("wb") as fh:
        for chunk in chunks:
            fh.write(chunk)
    return sum(len(chunk) for chunk in chunks) // (4 * ROW)


def _inputs(rows: np.ndarray, flagged: bool) -> np.ndarray:
    """A network's inputs from rows: the features, and the bot's flag when it takes one."""
    x = rows[:, :FEATURES]
    return np.concatenate([x, rows[:, FEATURES + 2 : FEATURES + 3]], axis=1) if flagged else x


def predictions(net: ValueNet, rows: np.ndarray) -> np.ndarray:
    """What ``net`` predicts for each row: the seat's share of the victory."""
    out = np.empty(len(rows))
    w1, b1 = np.array(net.hidden), np.array(net.hidden_bias)
    w2 = np.array(net.output)
    for k in range(0, len(rows), 200_000):
        x = _inputs(rows[k : k + 200_000], bool(net.extra_inputs))
        z = np.maximum(x.astype(np.float64) @ w1.T + b1, 0) @ w2 + net.output_bias
        out[k : k + 200_000] = 1 / (1 + np.exp(-z))
    return out


def td_targets(rows: np.ndarray, teacher: ValueNet, lam: float) -> np.ndarray:
    """Each row's TD(λ) return: how its seat's match ended, mixed with what
    ``teacher`` predicts at that seat's later turns, the next weighing
    ``1 - lam``, the one after ``lam * (1 - lam)``, and so on. Rows come as
    :func:`generate` writes them: match after match, a row per seat per turn."""
    values = predictions(teacher, rows)
    targets = np.empty(len(rows))
    numbers = rows[:, FEATURES + 3]
    starts = np.flatnonzero(np.r_[True, numbers[1:] != numbers[:-1]])
    for start, end in zip(starts, np.r_[starts[1:], len(rows)], strict=True):
        if (end - start) % PLAYERS:
            raise ValueError(f"match {int(numbers[start])} has rows missing")
        later = values[start:end].reshape(-1, PLAYERS)
        returns = np.empty_like(later)
        returns[-1] = rows[end - PLAYERS : end, FEATURES]
        for k in range(len(returns) - 2, -1, -1):
            returns[k] = (1 - lam) * later[k + 1] + lam * returns[k + 1]
        targets[start:end] = returns.reshape(-1)
    return targets


def fit(
    sources: Sequence[tuple[Path, float]],
    *,
    hidden: int = 32,
    epochs: int = 6,
    seed: int = 0,
    start: ValueNet | None = None,
    rate: float = 1e-3,
    teacher: ValueNet | None = None,
    lam: float = TD_LAMBDA,
    log: bool = True,
) -> ValueNet:
    """Train a network on the rows of ``sources`` (each with a weight) to
    predict the seat's share of the victory; matches whose number ends in 0
    are held out to report the loss on. With rows of the lookahead bot among
    them, the network takes one more input, 1.0 on the bot's own rows.
    ``start`` is a network to go on training instead of a fresh one. With a
    ``teacher``, the network learns :func:`td_targets` instead of the outcomes
    (and the loss it reports is against them)."""
    parts = []
    for path, weight in sources:
        rows = np.fromfile(path, dtype=np.float32).reshape(-1, ROW)
        if teacher is not None:
            rows[:, FEATURES] = td_targets(rows, teacher, lam)
        parts.append((rows, weight))
    data = np.concatenate([rows for rows, _ in parts]).astype(np.float64)
    weights = np.concatenate([np.full(len(rows), w) for rows, w in parts])
    flagged = bool(data[:, FEATURES + 2].any())
    x = _inputs(data, flagged)
    y = data[:, FEATURES]
    held = (data[:, FEATURES + 3].astype(np.int64) % 10) == 0
    xt, yt, wt, xv, yv = x[~held], y[~held], weights[~held], x[held], y[held]
    rng = np.random.default_rng(seed)
    inputs = x.shape[1]
    if start is not None:
        if len(start.hidden[0]) != inputs:
            raise SystemExit(
                f"the network to start from takes {len(start.hidden[0])} inputs;"
                f" these rows give {inputs}"
            )
        w1, b1 = np.array(start.hidden), np.array(start.hidden_bias)
        w2, b2 = np.array(start.output), np.array([start.output_bias])
    else:
        w1 = rng.normal(0, 1 / np.sqrt(inputs), (hidden, inputs))
        b1 = np.zeros(hidden)
        w2 = rng.normal(0, 1 / np.sqrt(hidden), hidden)
        b2 = np.zeros(1)
    params = [w1, b1, w2, b2]
    moment = [np.zeros_like(p) for p in params]
    square = [np.zeros_like(p) for p in params]

    def forward(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        h = x @ params[0].T + params[1]
        relu = np.maximum(h, 0)
        return h, relu, relu @ params[2] + params[3][0]

    def loss(x: np.ndarray, y: np.ndarray) -> float:
        p = np.clip(1 / (1 + np.exp(-forward(x)[2])), 1e-7, 1 - 1e-7)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))

    beta1, beta2, step, batch = 0.9, 0.999, 0, 512
    for epoch in range(epochs):
        order = rng.permutation(len(xt))
        for k in range(0, len(order), batch):
            idx = order[k : k + batch]
            xb, yb, wb = xt[idx], yt[idx], wt[idx]
            h, relu, z = forward(xb)
            g = (1 / (1 + np.exp(-z)) - yb) * wb / len(idx)
            gh = np.outer(g, params[2]) * (h > 0)
            grads = [gh.T @ xb + 1e-5 * params[0], gh.sum(0), relu.T @ g, np.array([g.sum()])]
            step += 1
            for i, (param, grad) in enumerate(zip(params, grads, strict=True)):
                moment[i] = beta1 * moment[i] + (1 - beta1) * grad
                square[i] = beta2 * square[i] + (1 - beta2) * grad * grad
                m_hat = moment[i] / (1 - beta1**step)
                v_hat = square[i] / (1 - beta2**step)
                param -= rate * m_hat / (np.sqrt(v_hat) + 1e-8)
        if epoch == epochs - 3:
            rate *= 0.3
        if log:
            print(f"epoch {epoch}: held-out loss {loss(xv, yv):.4f}", file=sys.stderr, flush=True)
    return ValueNet(
        hidden=tuple(tuple(float(w) for w in row) for row in params[0]),
        hidden_bias=tuple(float(b) for b in params[1]),
        output=tuple(float(w) for w in params[2]),
        output_bias=float(params[3][0]),
        extra_inputs=(1.0,) if flagged else (),
    )


def average(nets: Sequence[ValueNet]) -> ValueNet:
    """One network whose output is the mean of ``nets``' outputs: their hidden
    units side by side, each output weight divided by how many there are."""
    if not nets:
        raise ValueError("no network to average")
    extra = nets[0].extra_inputs
    if any(net.extra_inputs != extra for net in nets):
        raise ValueError("the networks to average take different inputs")
    k = len(nets)
    return ValueNet(
        hidden=tuple(row for net in nets for row in net.hidden),
        hidden_bias=tuple(b for net in nets for b in net.hidden_bias),
        output=tuple(w / k for net in nets for w in net.output),
        output_bias=sum(net.output_bias for net in nets) / k,
        extra_inputs=extra,
    )


def recipe(directory: Path, bot_nets: Sequence[Path], workers: int) -> ValueNet:
    """The network the bots ship: medium bots' games, the games of the bot
    with each of ``bot_nets`` in turn (the last is the network it replaces),
    and 16 networks fitted on them — 8 on the outcomes, 8 on TD targets that
    the last of ``bot_nets`` teaches — averaged into one. Rows go to ``directory``."""
    if not bot_nets:
        raise ValueError("the recipe learns from at least one network's games")
    directory.mkdir(parents=True, exist_ok=True)
    medium = directory / "medium.rows"
    generate(24000, 0, medium, None, 16, workers)
    sources = [(medium, 1.0)]
    for k, weights in enumerate(bot_nets):
        rows = directory / f"bot{k + 1}.rows"
        generate(3000, 500000 + 100000 * k, rows, weights, 16, workers)
        sources.append((rows, 5.0))
    teacher = _read_network(bot_nets[-1])
    nets = [fit(sources, seed=seed) for seed in RECIPE_SEEDS]
    nets += [fit(sources, seed=seed, teacher=teacher) for seed in RECIPE_SEEDS]
    return average(nets)


def _read_network(path: Path) -> ValueNet:
    return ValueNet.from_mapping(json.loads(path.read_text(encoding="utf-8")))


def _network_or_error(parser: argparse.ArgumentParser, flag: str, path: Path) -> ValueNet:
    try:
        return _read_network(path)
    except (OSError, ValueError, KeyError, TypeError) as error:
        parser.error(f"{flag} {str(path)!r}: not a network ({error})")


def _source(text: str) -> tuple[Path, float]:
    path, _, weight = text.partition(":")
    try:
        value = float(weight) if weight else 1.0
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the weight after ':' is not a number"
        ) from None
    if not Path(path).is_file():
        raise argparse.ArgumentTypeError(f"{path!r}: no such file of rows")
    return Path(path), value


def _network_file(text: str) -> Path:
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"{text!r}: no such file")
    return Path(text)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def _write(net: ValueNet, out: Path) -> None:
    data = {"about": "Value network of the lookahead bot: 4 players, standard ruleset."}
    data.update(net.to_mapping())
    out.write_text(json.dumps(data), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m engine.lab.train_value", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="play matches and write their rows")
    gen.add_argument("--matches", type=_positive, required=True)
    gen.add_argument("--start", type=int, default=0, help="number of the first match")
    gen.add_argument(
        "--bot-weights", type=_network_file, help="seat the lookahead bot with this network"
    )
    gen.add_argument("--samples", type=_positive, default=16, help="the bot's deals a decision")
    gen.add_argument("--workers", type=_positive, default=2)
    gen.add_argument("--out", type=Path, required=True)
    fitp = sub.add_parser("fit", help="train a network on rows")
    fitp.add_argument("sources", nargs="+", type=_source, metavar="ROWS[:WEIGHT]")
    fitp.add_argument("--hidden", type=_positive, default=32)
    fitp.add_argument("--epochs", type=_positive, default=6)
    fitp.add_argument("--start-from", type=Path, metavar="NET", help="go on training this network")
    fitp.add_argument("--rate", type=_rate, default=1e-3, help="Adam's step size")
    fitp.add_argument("--nets", type=_positive, default=1, help="train this many and average them")
    fitp.add_argument("--seed", type=int, default=0, help="the first network's seed")
    fitp.add_argument(
        "--teacher", type=_network_file, metavar="NET", help="learn TD targets this network sets"
    )
    fitp.add_argument(
        "--td", type=_rate, default=TD_LAMBDA, metavar="LAMBDA", help="with --teacher: λ"
    )
    fitp.add_argument("--out", type=Path, required=True)
    rec = sub.add_parser("recipe", help="every step, writing the network the bots ship")
    rec.add_argument("--dir", type=Path, required=True, help="where the rows go")
    rec.add_argument("--out", type=Path, default=_SHIPPED)
    rec.add_argument(
        "--bot-weights",
        type=_network_file,
        nargs="+",
        metavar="NET",
        help="the networks whose games it learns from, oldest first (default: the shipped one)",
    )
    rec.add_argument("--workers", type=_positive, default=2)
    args = parser.parse_args(argv)
    if args.command == "generate":
        began = time.perf_counter()
        rows = generate(
            args.matches, args.start, args.out, args.bot_weights, args.samples, args.workers
        )
        print(f"{rows} rows from {args.matches} matches in {time.perf_counter() - began:.0f} s")
    elif args.command == "fit":
        start = None
        if args.start_from is not None:
            if args.nets > 1:
                parser.error("--start-from goes on training one network; leave out --nets")
            start = _network_or_error(parser, "--start-from", args.start_from)
        teacher = None
        if args.teacher is not None:
            teacher = _network_or_error(parser, "--teacher", args.teacher)
        nets = [
            fit(
                args.sources,
                hidden=args.hidden,
                epochs=args.epochs,
                seed=args.seed + k,
                start=start,
                rate=args.rate,
                teacher=teacher,
                lam=args.td,
            )
            for k in range(args.nets)
        ]
        _write(average(nets), args.out)
        print(f"wrote {args.out}")
    else:
        bot_nets = args.bot_weights or [_SHIPPED]
        for path in bot_nets:
            _network_or_error(parser, "--bot-weights", path)
        _write(recipe(args.dir, bot_nets, args.workers), args.out)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
