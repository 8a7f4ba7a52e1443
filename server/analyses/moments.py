"""A seat's decisions in a match record: for each, where it stands in the
match (its action's index, the seq of its prompt, the turn, the card drawn)
and the seat's observation then — what its analysis is computed from.

The match is rebuilt from its record (ruleset, seed, actions); each
observation is that seat's own (R24–R26), as :func:`engine.observe` makes
it. Decisions are those :func:`engine.analysis.analyse_seat` values: each
action of the seat that was legal when taken.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import Action, Card, Match, Observation, observe
from engine.record import MatchRecord

__all__ = ["Moment", "seat_moments"]


@dataclass(frozen=True, slots=True)
class Moment:
    """One decision of a seat, and what the seat knew when it took it."""

    index: int  #: its action's place in the record's actions
    seq: int  #: the events before its prompt (the decision opened after event ``seq``)
    drawn: Card | None  #: the card the seat had drawn, for a turn's decision
    observation: Observation  #: the seat's knowledge then (R24–R26)
    chosen: Action


def seat_moments(record: MatchRecord, seat: int) -> list[Moment]:
    """Every decision of ``seat`` in the match of ``record``, in play order.

    A decision's ``seq`` is the number of events when the seat's decision
    opened — what the server's prompt of it says (R11: during the opening,
    every seat's decision opens when the cards are dealt).
    """
    if not 0 <= seat < record.players:
        raise ValueError(f"seat must be from 0 to {record.players - 1}, got {seat!r}")
    match = Match.new(record.players, record.seed, record.ruleset, record.first_seat)
    events = len(match.setup_events)
    opened: dict[int, int] = {s: events for s in match.to_act}
    moments: list[Moment] = []
    for index, (actor, action) in enumerate(record.actions):
        if actor == seat and action in match.legal_actions(seat):
            observation = observe(match, seat)
            moments.append(
                Moment(index, opened.get(seat, events), observation.drawn, observation, action)
            )
        opened.pop(actor, None)
        events += len(match.apply(actor, action))
        for s in match.to_act:
            opened.setdefault(s, events)
    return moments
