"""A prompt's options: each legal action with the points the server says it
scores at once.

``prompt.points`` is aligned with ``prompt.actions`` (PROTOCOL.md): what
``actions[i]`` scores is ``points[i]``. Clients show and weigh those numbers;
they never work them out, so they need no rules. A server of version 1 from
before the field sends no points: then every option's ``points`` is None,
and a client shows none (it does not guess).

``prompt.rankings`` is aligned the same way: for a face-up add, the
festival's ranking that add would make (R8: ties go above), worked out by
the server; :func:`rankings_by_action` looks them up, and a client without
them shows no preview.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import protocol as wire

__all__ = ["Option", "options", "points_by_action", "rankings_by_action"]


@dataclass(frozen=True, slots=True)
class Option:
    """One legal action and what it scores at once (None: the server did not say)."""

    action: wire.Action
    points: int | None


def options(prompt: wire.Prompt) -> tuple[Option, ...]:
    """The prompt's actions in its order, each with its points.

    Points that do not line up with the actions (none sent, or a count that
    differs) are not trusted: every option then has ``points=None``.
    """
    if len(prompt.points) != len(prompt.actions):
        return tuple(Option(action, None) for action in prompt.actions)
    return tuple(
        Option(action, points) for action, points in zip(prompt.actions, prompt.points, strict=True)
    )


def points_by_action(prompt: wire.Prompt | None) -> Mapping[wire.Action, int]:
    """What each of the prompt's actions scores, for looking up by action;
    empty without a prompt or without points."""
    if prompt is None:
        return {}
    return {o.action: o.points for o in options(prompt) if o.points is not None}


def rankings_by_action(prompt: wire.Prompt | None) -> Mapping[wire.Action, tuple[wire.Colour, ...]]:
    """The ranking each of the prompt's face-up adds would make, by action;
    empty without a prompt, without rankings, or when they do not line up
    with the actions (then none is trusted)."""
    if prompt is None or len(prompt.rankings) != len(prompt.actions):
        return {}
    return {
        action: ranking
        for action, ranking in zip(prompt.actions, prompt.rankings, strict=True)
        if ranking is not None
    }
