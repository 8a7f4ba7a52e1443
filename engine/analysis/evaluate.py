"""Valuing one decision from one seat's observation: every legal option's
expected final points and chance to win, over deals of the cards that seat
cannot see (R24–R26).

For each deal, every option is played on the same deal with the same
continuation (common random numbers), so the luck of the deal cancels out of
the comparison between options. Where few enough cards remain unseen that
every consistent deal can be enumerated, they are, each with its weight, and
the values are exact expectations.
"""

from __future__ import annotations

from ..observation import Observation
from .report import DecisionValues

__all__ = ["DEFAULT_DEALS", "HINT_DEALS", "analyse_decision", "hint"]

#: Deals sampled per decision of a post-game analysis, when not enumerated.
DEFAULT_DEALS = 48
#: Deals a hint samples: about the hard bot's thinking time per decision
#: (:data:`engine.bots.search.DEFAULT_BUDGET_MS`) on this project's machines.
HINT_DEALS = 48


def analyse_decision(
    observation: Observation, *, deals: int = DEFAULT_DEALS, seed: int | str = 0
) -> DecisionValues:
    """The values of every legal option of the viewer's decision now.

    Reads nothing but ``observation`` (the viewer's knowledge, R24–R25): two
    matches the viewer cannot tell apart get the same values. The result
    depends only on ``observation``, ``deals`` and ``seed``. Raises
    ValueError for a spectator's observation or a viewer with nothing to do.
    """
    raise NotImplementedError


def hint(observation: Observation, *, seed: int | str = 0) -> DecisionValues:
    """The values of the viewer's options now, for a player learning the game:
    :func:`analyse_decision` with :data:`HINT_DEALS` deals, which costs about
    what the hard bot thinks per decision."""
    return analyse_decision(observation, deals=HINT_DEALS, seed=seed)
