"""The tutorial's steps: which rule to explain, and when — from what the
server sends, never from the rules.

A tutorial match (its summary says ``tutorial``: the server's fixed deal
against bots) explains each rule the first time it matters. :class:`Tutorial`
is told every prompt and event the table takes in; each one may queue steps,
which the table shows one at a time (:mod:`client.tui.screens.tutorial`) until
the player goes on. What triggers each step:

- ``opening`` (R11): the first prompt whose actions are opening choices.
- ``turn`` (R13), ``keep`` (R14), ``give`` (R15), ``face_up`` (R16, R8) and
  ``secret`` (R9, R16): the first prompt for a turn's first card, with the
  drawn card and the points the prompt says each action scores.
- ``tie`` (R8): the first prompt whose face-up preview (``prompt.rankings``)
  lifts the drawn card's colour to a total another colour already has — on
  the tutorial's deal, its very first turn (queued after ``face_up``).
- ``second`` (R13): the first prompt for a turn's second card.
- ``reveal`` (R19): the first ``secret_revealed`` event.
- ``majorities`` (R20, R22), ``tiebreak`` (R21) and ``end`` (R23):
  ``match_ended``; the tie-breaker is told with the match's own case when
  the final bouquets had one (two players with as many cards of a ranked
  colour, told apart by their value), and in general otherwise.

Each step is queued once, in this order of need, so a whole match shows all
of :data:`STEPS` whatever the bots do. Nothing here reads a rule of its own:
points, rankings, totals and scores are the server's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

import protocol as wire
from client.options import points_by_action, rankings_by_action

__all__ = ["STEPS", "TUTORIAL_BOTS", "TUTORIAL_SEATS", "Step", "Tutorial", "tie_breaker"]

#: A tutorial's seats, as the protocol asks (``create_match.tutorial``): ours is seat 0.
TUTORIAL_SEATS = 3
#: The bots' strength: medium plays sensibly (one action ahead) and at once; an
#: easy bot's random moves would teach the learner little about what a move is worth.
TUTORIAL_BOTS = "medium"

#: Every step, in the order a match needs them, with the rules it names.
STEPS: tuple[tuple[str, str], ...] = (
    ("opening", "R11"),
    ("turn", "R13"),
    ("keep", "R14"),
    ("give", "R15"),
    ("face_up", "R16 · R8"),
    ("tie", "R8"),
    ("secret", "R9 · R16"),
    ("second", "R13"),
    ("reveal", "R19"),
    ("majorities", "R20 · R22"),
    ("tiebreak", "R21"),
    ("end", "R23"),
)
_RULES = dict(STEPS)
_NUMBER = {key: index + 1 for index, (key, _) in enumerate(STEPS)}
Field = str | int


@dataclass(frozen=True, slots=True)
class Step:
    """One explanation: its key (``tutorial.<key>`` is its text), the rules it
    names, and the fields its text is filled with (cards, colours, points)."""

    key: str
    fields: tuple[tuple[str, Field], ...] = ()
    #: the text's variant, when the match gave it something of its own to say
    variant: str = ""

    @property
    def rule(self) -> str:
        """The rules it explains, e.g. ``R14``."""
        return _RULES[self.key]

    @property
    def number(self) -> int:
        """Its place among :data:`STEPS`, from 1."""
        return _NUMBER[self.key]

    @property
    def message(self) -> str:
        """The message id of its text."""
        return f"tutorial.{self.key}{'_' + self.variant if self.variant else ''}"

    def field_map(self) -> dict[str, Field]:
        """Its fields by name."""
        return dict(self.fields)


class Tutorial:
    """The steps queued for a tutorial match, and those already shown."""

    def __init__(self) -> None:
        self.queued: set[str] = set()
        self._waiting: deque[Step] = deque()
        #: every step shown and gone on from, in order
        self.done: list[Step] = []

    @property
    def current(self) -> Step | None:
        """The step to show now, if any."""
        return self._waiting[0] if self._waiting else None

    def next(self) -> None:
        """The player went on from the current step."""
        if self._waiting:
            self.done.append(self._waiting.popleft())

    def _queue(self, step: Step) -> None:
        if step.key not in self.queued:
            self.queued.add(step.key)
            self._waiting.append(step)

    # -- what arrives ---------------------------------------------------------------------

    def prompt(self, prompt: wire.Prompt, state: wire.State) -> None:
        """A prompt for our seat, on ``state`` (the state it was sent for)."""
        actions = prompt.actions
        if any(isinstance(action, wire.Opening) for action in actions):
            hand = state.hand
            if len(hand) == 2:
                self._queue(Step("opening", (("card", hand[0]), ("card2", hand[1]))))
            return
        drawn = state.drawn
        if drawn is None:
            return
        points = points_by_action(prompt)
        if state.used is None:
            card: tuple[tuple[str, Field], ...] = (("card", drawn),)
            self._queue(Step("turn", card))
            keep = points.get(wire.Keep())
            if keep is not None:
                self._queue(Step("keep", (*card, ("points", keep))))
            gives = [p for action, p in points.items() if isinstance(action, wire.Give)]
            if gives:
                self._queue(Step("give", (*card, ("points", max(gives)))))
            self._queue(Step("face_up", card))
            tie = _tie(prompt, state, drawn)
            if tie is not None:
                self._queue(tie)
            reveal = state.points.reveal_size or 5
            self._queue(Step("secret", (*card, ("reveal", reveal))))
        else:
            tie = _tie(prompt, state, drawn)
            if tie is not None and "face_up" in self.queued:
                self._queue(tie)
            self._queue(Step("second", (("card", drawn), ("used", state.used))))

    def event(self, event: wire.GameEvent, state: wire.State, names: Mapping[int, str]) -> None:
        """An event, applied: ``state`` is the state after it."""
        if isinstance(event, wire.SecretRevealed):
            reveal = state.points.reveal_size or 5
            self._queue(Step("reveal", (("card", event.card), ("reveal", reveal))))
        elif isinstance(event, wire.MatchEnded):
            self._queue(_majorities(event.scoring, names))
            self._queue(_tiebreak(event.scoring, state, names))
            self._queue(Step("end"))


def _tie(prompt: wire.Prompt, state: wire.State, drawn: wire.Card) -> Step | None:
    """The ``tie`` step, if adding ``drawn`` face up would bring its colour to
    another ranked colour's total (the prompt's preview puts it above)."""
    colour, value = wire.card_parts(drawn)
    after = rankings_by_action(prompt).get(wire.AddFaceUp())
    if after is None or colour not in after:
        return None
    total = state.totals.get(colour, 0) + value
    for other in after:
        if other != colour and state.totals.get(other) == total:
            fields: tuple[tuple[str, Field], ...] = (
                ("card", drawn),
                ("colour", colour),
                ("total", total),
                ("other", other),
                ("rank", after.index(colour)),
                ("other_rank", after.index(other)),
            )
            return Step("tie", fields)
    return None


def _majorities(scoring: wire.Scoring, names: Mapping[int, str]) -> Step:
    """The ``majorities`` step, with the match's 1st colour as its example."""
    for result in scoring.majorities:
        if result.places:
            best = result.places[0]
            fields: tuple[tuple[str, Field], ...] = (
                ("colour", result.colour),
                ("rank", result.rank),
                ("name", names.get(best.seat, "?")),
                ("cards", best.cards),
                ("points", best.points),
            )
            return Step("majorities", fields, "example")
    return Step("majorities")


def tie_breaker(
    scoring: wire.Scoring, state: wire.State
) -> tuple[wire.Colour, int, int, int, int, int] | None:
    """A majority the tie-breaker decided (R21), from the final bouquets: the
    colour, the seat ranked higher and the one below, their number of cards,
    and each one's total value — or None if no such tie mattered."""
    for result in scoring.majorities:
        scored = {place.seat for place in result.places}
        holdings = []
        for held in state.seats:
            parts = [wire.card_parts(card) for card in held.bouquet]
            values = [value for colour, value in parts if colour == result.colour]
            if values:
                holdings.append((len(values), sum(values), held.seat))
        for count, value, seat in holdings:
            for other_count, other_value, other in holdings:
                if count == other_count and value > other_value and seat in scored:
                    return result.colour, seat, other, count, value, other_value
    return None


def _tiebreak(scoring: wire.Scoring, state: wire.State, names: Mapping[int, str]) -> Step:
    """The ``tiebreak`` step: this match's own case if it had one."""
    case = tie_breaker(scoring, state)
    if case is None:
        return Step("tiebreak")
    colour, seat, other, cards, value, other_value = case
    fields: tuple[tuple[str, Field], ...] = (
        ("colour", colour),
        ("first", names.get(seat, "?")),
        ("second", names.get(other, "?")),
        ("cards", cards),
        ("value", value),
        ("other_value", other_value),
    )
    return Step("tiebreak", fields, "here")
