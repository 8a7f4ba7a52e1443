"""What a thinking bot found when it chose: shared by the hard bot's two
ways of thinking (:mod:`engine.bots.search`, :mod:`engine.bots.lookahead`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..actions import Action

__all__ = ["SearchResult"]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a search found: each legal action's mean outcome."""

    action: Action
    actions: tuple[Action, ...]
    values: tuple[float, ...]  #: mean outcome of each action, same order
    simulations: int  #: deals sampled (each tried with every action); 0 if none
