"""A learned evaluation: how likely the viewer is to win from a table.

A small neural network (71 public features, one hidden layer, one output)
reads a :class:`~engine.bots.table.Table` at the end of a turn and returns the
logit of the viewer's expected share of the victory (R23). It was trained on
4-player matches under the standard ruleset, by
:mod:`engine.lab.train_value`: sixteen networks of 32 hidden units, eight
fitted on how matches ended and eight on TD targets, averaged into one of 512.
Its weights ship beside this module as ``value_net.json``. The features use
only what the viewer may know (R24–R25) and the secret cards a lookahead
inferred (:mod:`engine.bots.inference`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from operator import mul
from typing import Any

import numpy as np

from ..cards import COLOURS, VALUES
from .table import Table

__all__ = ["FEATURES", "ValueNet", "features", "shipped_net"]

#: How many features :func:`features` gives.
FEATURES = 71

_C = len(COLOURS)
_V = len(VALUES)


def features(t: Table) -> list[float]:
    """The network's inputs for table ``t``, from the viewer's side."""
    players, me = t.rules.players, t.me
    counts, values, totals, seen = t.counts, t.values, t.totals, t.seen
    others = [p for p in range(players) if p != me]
    order = t.ranking + [c for c in range(_C) if c not in t.ranking]
    unknown = t.secret_size - sum(t.secret_counts) - t.expected_size
    copies = t.rules.copies
    unseen_n = [copies * _V - sum(seen[c * _V : c * _V + _V]) for c in range(_C)]
    unseen_v = [
        copies * sum(VALUES) - sum(map(mul, VALUES, seen[c * _V : c * _V + _V])) for c in range(_C)
    ]
    all_unseen = sum(unseen_n) or 1
    reveal = t.rules.reveal_size
    share = reveal / t.secret_size if t.secret_size > reveal else 1.0
    added = [
        share * (t.secret_values[c] + t.expected[c] + unknown * unseen_v[c] / all_unseen)
        for c in range(_C)
    ]
    f: list[float] = []
    for k in range(_C):
        c = order[k]
        total = totals[c]
        f.append(total / 10.0)
        f.append((totals[order[k - 1]] - total) / 5.0 if k else 0.0)
        f.append((total - totals[order[k + 1]]) / 5.0 if k < _C - 1 else total / 5.0)
        m = counts[me][c]
        theirs = sorted([counts[p][c] for p in others], reverse=True)
        o1, o2 = theirs[0], theirs[1]
        rival = max(others, key=lambda p: (counts[p][c], values[p][c]))
        mine_key, rival_key = (m, values[me][c]), (counts[rival][c], values[rival][c])
        f.append(m / 3.0)
        f.append(o1 / 3.0)
        f.append(o2 / 3.0)
        f.append((m - o1) / 2.0)
        first = mine_key > rival_key
        f.append(1.0 if first and m > 0 else 0.0)
        f.append(1.0 if m > 0 and mine_key == rival_key else 0.0)
        f.append(1.0 if m > 0 and mine_key > (o2, 0) and not first else 0.0)
        f.append(t.secret_counts[c] / 2.0)
        f.append(added[c] / 5.0)
        f.append(unseen_n[c] / 9.0)
    f.append(t.deck / 56.0)
    f.append(t.secret_size / 10.0)
    points = t.points
    theirs_points = sorted((points[p] for p in others), reverse=True)
    f.append((points[me] - theirs_points[0]) / 10.0)
    f.append((points[me] - theirs_points[1]) / 10.0)
    f.append((points[me] - sum(theirs_points) / len(theirs_points)) / 10.0)
    majorities = t.majorities(order)
    standing = [points[p] + majorities[p] for p in range(players)]
    theirs_standing = sorted((standing[p] for p in others), reverse=True)
    for rival_standing in theirs_standing[:3]:
        f.append((standing[me] - rival_standing) / 10.0)
    f.append(majorities[me] / 10.0)
    f.append(max(majorities[p] for p in others) / 10.0)
    expected_totals = [totals[c] + added[c] for c in range(_C)]
    expected_order = sorted(range(_C), key=lambda c: -expected_totals[c])
    scoring = len(t.rules.majority)
    same_places = expected_order[:scoring] == order[:scoring]
    expected_majorities = majorities if same_places else t.majorities(expected_order)
    expected = [points[p] + expected_majorities[p] for p in range(players)]
    f.append((expected[me] - max(expected[p] for p in others)) / 10.0)
    f.append(expected_majorities[me] / 10.0)
    sizes = [sum(row) for row in counts]
    f.append((sizes[me] - max(sizes[p] for p in others)) / 3.0)
    offset = (t.next_seat - me) % players if t.next_seat >= 0 else 0
    f.extend(1.0 if offset == k else 0.0 for k in range(players))
    f.append(_my_turns(offset, t.deck // 2, players) / 7.0)
    f.append(1.0)
    return f


def _my_turns(offset: int, turns: int, players: int) -> int:
    """How many of the next ``turns`` turns are the viewer's, when the first
    of them is the seat ``offset`` places after the viewer's."""
    ahead = -offset % players
    return (turns - ahead + players - 1) // players if turns > ahead else 0


@dataclass(frozen=True)
class ValueNet:
    """A one-hidden-layer network: features → ReLU → logit."""

    hidden: tuple[tuple[float, ...], ...]  #: one row of input weights per hidden unit
    hidden_bias: tuple[float, ...]
    output: tuple[float, ...]  #: one weight per hidden unit
    output_bias: float
    extra_inputs: tuple[float, ...] = ()  #: constant inputs after the features

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> ValueNet:
        """Read the JSON form written by :meth:`to_mapping`."""
        hidden = tuple(tuple(float(w) for w in row) for row in data["W1"])
        extra = tuple(float(x) for x in data.get("extra_inputs", ()))
        if any(len(row) != FEATURES + len(extra) for row in hidden):
            raise ValueError(f"each hidden row needs {FEATURES + len(extra)} weights")
        return cls(
            hidden=hidden,
            hidden_bias=tuple(float(b) for b in data["B1"]),
            output=tuple(float(w) for w in data["W2"]),
            output_bias=float(data["B2"]),
            extra_inputs=extra,
        )

    def to_mapping(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "W1": [list(row) for row in self.hidden],
            "B1": list(self.hidden_bias),
            "W2": list(self.output),
            "B2": self.output_bias,
            "extra_inputs": list(self.extra_inputs),
        }

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The weights as arrays: the features' columns of the hidden layer (one row a feature),
        the hidden biases with the extra inputs' part folded in, the output row."""
        hidden = np.array(self.hidden)
        bias = np.array(self.hidden_bias) + hidden[:, FEATURES:] @ np.array(self.extra_inputs)
        return np.ascontiguousarray(hidden[:, :FEATURES].T), bias, np.array(self.output)

    def logit(self, inputs: Sequence[float]) -> float:
        """The network's output for ``inputs`` (the features, without the extras)."""
        weights, bias, output = self._arrays
        h = np.array(inputs) @ weights
        h += bias
        np.maximum(h, 0.0, out=h)
        return float(h @ output) + self.output_bias

    def logit_of(self, t: Table) -> float:
        """The network's output for table ``t``: the win share's logit."""
        return self.logit(features(t))

    def win_share(self, t: Table) -> float:
        """The viewer's expected share of the victory from table ``t``."""
        x = self.logit_of(t)
        return 1.0 / (1.0 + math.exp(-x)) if x > -30 else 0.0


@cache
def shipped_net() -> ValueNet:
    """The network that ships with the bots (4 players, standard ruleset)."""
    text = resources.files(__package__).joinpath("value_net.json").read_text(encoding="utf-8")
    return ValueNet.from_mapping(json.loads(text))
