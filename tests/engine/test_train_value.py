"""Training the lookahead bot's value network: the rows a match gives, the
reading of secret cards they carry, a fit, and the command line's errors.
Real files in a temporary folder; matches small enough to stay quick."""

from __future__ import annotations

import itertools
import json
import math
import random
from array import array
from pathlib import Path

import numpy as np
import pytest

from engine import ActionKind, Match, observe
from engine.bots.inference import FLOOR, secret_likelihoods
from engine.bots.policies import medium_policy
from engine.bots.table import Table
from engine.bots.value import FEATURES, ValueNet
from engine.lab.train_value import (
    ROW,
    _Reading,
    average,
    fit,
    generate,
    main,
    predictions,
    td_targets,
)


def test_rows_hold_features_and_how_each_seat_ended(tmp_path: Path) -> None:
    """Every turn of a 4-player match gives a row per seat, with the seat's
    share of the victory (R23) and, for the lookahead bot's seat, a flag."""
    medium = tmp_path / "medium.rows"
    assert generate(2, 0, medium, None, 1, workers=1) == 2 * 28 * 4
    rows = array("f", medium.read_bytes())
    for k in range(0, len(rows), ROW):
        row = rows[k : k + ROW]
        assert all(math.isfinite(x) for x in row)
        assert 0.0 <= row[FEATURES] <= 1.0 and row[FEATURES + 2] == 0.0
    net = tmp_path / "net.json"
    assert main(["fit", "--epochs", "1", "--out", str(net), str(medium)]) == 0
    bot = tmp_path / "bot.rows"
    assert generate(1, 5, bot, net, 1, workers=1) == 28 * 4
    flags = array("f", bot.read_bytes())[FEATURES + 2 :: ROW]
    assert sum(flags) == 28  # seat 5 % 4 = 1, one row a turn


def test_a_fit_learns_and_writes_a_network_the_bots_read(tmp_path: Path) -> None:
    """The fitted network predicts better than chance on held-out matches,
    and takes the bot's flag as an extra input once bot rows are in."""
    medium, bot = tmp_path / "m.rows", tmp_path / "b.rows"
    generate(30, 100, medium, None, 1, workers=1)
    first = fit([(medium, 1.0)], epochs=3, log=False)
    assert first.extra_inputs == ()
    weights = tmp_path / "first.json"
    weights.write_text(json.dumps(first.to_mapping()))
    generate(1, 7, bot, weights, 1, workers=1)
    second = fit([(medium, 1.0), (bot, 5.0)], epochs=1, log=False)
    assert second.extra_inputs == (1.0,)
    assert ValueNet.from_mapping(second.to_mapping()) == second


def test_a_fit_can_go_on_from_a_network(tmp_path: Path) -> None:
    """``--start-from`` goes on training a network (to retrain it on the
    games of the bot it makes): with a tiny step it stays where it was; a
    network for other inputs is refused with a reason."""
    medium, bot = tmp_path / "m.rows", tmp_path / "b.rows"
    generate(20, 300, medium, None, 1, workers=1)
    first = fit([(medium, 1.0)], epochs=1, log=False)
    again = fit([(medium, 1.0)], epochs=1, start=first, rate=1e-9, log=False)
    assert max(abs(a - b) for a, b in zip(again.output, first.output, strict=True)) < 1e-6
    assert again != fit([(medium, 1.0)], epochs=1, seed=1, log=False)
    weights = tmp_path / "first.json"
    weights.write_text(json.dumps(first.to_mapping()))
    generate(1, 3, bot, weights, 1, workers=1)
    with pytest.raises(SystemExit, match="takes 71 inputs; these rows give 72"):
        fit([(medium, 1.0), (bot, 5.0)], epochs=1, start=first, log=False)


def test_networks_averaged_into_one_give_the_mean_of_their_outputs(tmp_path: Path) -> None:
    """``fit --nets N`` writes one network whose output on any table is the
    mean of the N networks' outputs; networks for other inputs do not mix."""
    medium, bot = tmp_path / "m.rows", tmp_path / "b.rows"
    generate(20, 200, medium, None, 1, workers=1)
    nets = [fit([(medium, 1.0)], epochs=1, seed=seed, log=False) for seed in (1, 2, 3)]
    mean = average(nets)
    assert len(mean.hidden) == 3 * 32
    match = Match.new(4, 4)
    rng = random.Random(4)
    for _ in range(30):
        seat = match.to_act[0]
        match.apply(seat, medium_policy(observe(match, seat), rng))
        table = Table.from_observation(observe(match, 0))
        expected = sum(net.logit_of(table) for net in nets) / 3
        assert mean.logit_of(table) == pytest.approx(expected, abs=1e-9)
    out = tmp_path / "mean.json"
    argv = ["fit", "--epochs", "1", "--nets", "3", "--seed", "1", "--out", str(out), str(medium)]
    assert main(argv) == 0
    written = ValueNet.from_mapping(json.loads(out.read_text()))
    assert len(written.hidden) == 3 * 32
    weights = tmp_path / "first.json"
    weights.write_text(json.dumps(nets[0].to_mapping()))
    generate(1, 9, bot, weights, 1, workers=1)
    flagged = fit([(medium, 1.0), (bot, 5.0)], epochs=1, log=False)
    with pytest.raises(ValueError, match="take different inputs"):
        average([nets[0], flagged])


def test_the_reading_kept_while_playing_is_the_one_an_observation_gives() -> None:
    """What the generator reads move by move is what the bot finds from its
    observation alone (R24), at the start of every seat's turn."""
    match = Match.new(4, 12)
    rngs = [random.Random(f"t:{s}") for s in range(4)]
    reading = _Reading()
    compared = 0
    while not match.is_over:
        seat = match.to_act[0]
        observation = observe(match, seat)
        if observation.legal_actions[0].kind is not ActionKind.OPENING and reading.opened:
            mine = [(s, [max(FLOOR, x) for x in lk]) for s, lk in reading.found if s != seat]
            theirs = [(s, lk) for s, lk in secret_likelihoods(observation) if s != seat]
            assert mine == theirs
            compared += 1
        action = medium_policy(observation, rngs[seat])
        reading.before(match, seat, action)
        match.apply(seat, action)
    assert compared > 40


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["fit", "--out", "x.json", "nowhere.rows"], "no such file of rows"),
        (["fit", "--out", "x.json", "{rows}:lots"], "is not a number"),
        (["generate", "--matches", "0", "--out", "x.rows"], "at least 1"),
        (["generate", "--matches", "1", "--bot-weights", "no.json", "--out", "x"], "no such file"),
        (["recipe"], "--dir"),
        (["fit", "--rate", "2", "--out", "x.json", "{rows}"], "between 0 and 1"),
        (["fit", "--start-from", "{rows}", "--out", "x.json", "{rows}"], "not a network"),
        (["fit", "--start-from", "{rows}", "--nets", "2", "--out", "x", "{rows}"], "leave out"),
        (["recipe", "--dir", "d", "--bot-weights", "no.json"], "no such file"),
        (["recipe", "--dir", "d", "--bot-weights", "{rows}"], "not a network"),
        (["fit", "--teacher", "{rows}", "--out", "x.json", "{rows}"], "not a network"),
        (["fit", "--teacher", "{rows}", "--td", "1.5", "--out", "x", "{rows}"], "between 0 and 1"),
    ],
)
def test_bad_flags_are_refused_with_a_reason(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong flag exits with status 2 and says what was wrong."""
    rows = tmp_path / "r.rows"
    rows.write_bytes(b"")
    with pytest.raises(SystemExit) as exit_:
        main([a.format(rows=rows) for a in argv])
    assert exit_.value.code == 2
    assert says in capsys.readouterr().err


def test_td_targets_mix_each_outcome_with_the_teachers_later_guesses(tmp_path: Path) -> None:
    """A seat's TD(λ) target at its last turn is how its match ended; at every
    earlier turn, (1 - λ) of the teacher's guess at the next turn plus λ of the
    next turn's target. λ = 1 gives the outcomes back."""
    rows_path = tmp_path / "m.rows"
    generate(3, 40, rows_path, None, 1, workers=1)
    rows = np.fromfile(rows_path, dtype=np.float32).reshape(-1, ROW)
    teacher = fit([(rows_path, 1.0)], epochs=1, log=False)
    guesses = predictions(teacher, rows)
    targets = td_targets(rows, teacher, 0.8)
    assert np.allclose(td_targets(rows, teacher, 1.0), rows[:, FEATURES])
    per_match = 28 * 4
    for start in range(0, len(rows), per_match):
        for seat in range(4):
            mine = range(start + seat, start + per_match, 4)
            last = mine[-1]
            assert targets[last] == pytest.approx(rows[last, FEATURES])
            for here, later in itertools.pairwise(mine):
                expected = 0.2 * guesses[later] + 0.8 * targets[later]
                assert targets[here] == pytest.approx(expected)
    table = Table.from_observation(observe(Match.new(4, 3), 1))
    assert guesses.shape == (len(rows),) and 0 < teacher.win_share(table) < 1
    with pytest.raises(ValueError, match="rows missing"):
        td_targets(rows[:-1], teacher, 0.8)


def test_a_fit_learns_td_targets_from_a_teacher_on_the_command_line(tmp_path: Path) -> None:
    """``fit --teacher NET`` trains on the teacher's TD targets: a network
    other than the one the outcomes give, from the same rows and seed."""
    rows = tmp_path / "m.rows"
    generate(6, 60, rows, None, 1, workers=1)
    teacher, taught, plain = tmp_path / "t.json", tmp_path / "td.json", tmp_path / "p.json"
    assert main(["fit", "--epochs", "1", "--out", str(teacher), str(rows)]) == 0
    argv = ["fit", "--epochs", "1", "--seed", "3", "--out"]
    assert main([*argv, str(plain), str(rows)]) == 0
    assert main([*argv, str(taught), "--teacher", str(teacher), "--td", "0.5", str(rows)]) == 0
    read = [ValueNet.from_mapping(json.loads(p.read_text())) for p in (plain, taught)]
    assert read[0] != read[1]
    assert read[1] == fit(
        [(rows, 1.0)],
        epochs=1,
        seed=3,
        teacher=ValueNet.from_mapping(json.loads(teacher.read_text())),
        lam=0.5,
        log=False,
    )
