"""What the client knows: the one mutable aggregate behind the screens.

:class:`Follow` follows the match the player is in (or watches): the
snapshot's state moved forward event by event with
:func:`~client.tui.viewmodel.apply_event`, the match summary (names,
connections, status), the log in words, and the seat's prompt. Invariants:

- ``state`` is exactly the server's view after event ``seq``: an event whose
  ``seq`` is not ``seq + 1`` is not applied (stale ones are dropped, a gap
  asks for a ``sync``), and a snapshot replaces everything.
- Nothing here decides a rule; legal actions come from prompts and snapshots,
  what they score from the last prompt (:meth:`Follow.points`).
- ``last_prompt`` is the prompt behind the state's legal actions, or None:
  it goes when they go, and when a snapshot of another ``seq`` comes.
- ``since`` is the state the table's marks compare with (what changed since
  then is highlighted): for a player, the state when their last turn ended —
  the marks stay through their next turn and clear when it ends; for a
  spectator, the state when the current turn began. None: mark nothing.
- ``signals`` holds every seat's turn timer, absent players' countdowns and
  a rematch offer (:mod:`client.tui.signals`).

:class:`Lobby` holds the server's match list, kept live by ``match_update`` and ``match_removed``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Literal

from rich.text import Text

import protocol as wire
from client.options import points_by_action, rankings_by_action
from protocol.limits import MAX_MATCHES_LISTED

from .fold import apply_event, with_prompt
from .narrate import describe
from .signals import TableSignals, presence_lines
from .viewmodel import seat_names

__all__ = ["Follow", "Lobby", "Outcome"]

#: What became of an event: applied, already known, or proof that some were missed.
Outcome = Literal["applied", "stale", "gap", "elsewhere"]
LOG_LINES = 400


class Lobby:
    """The first page of the server's matches by id, newest first, as the last
    ``match_list`` and updates tell (the server follows the same page)."""

    def __init__(self, limit: int = MAX_MATCHES_LISTED) -> None:
        self.matches: dict[str, wire.MatchSummary] = {}
        #: the page's length: the ``limit`` of ``list_matches``
        self.limit = limit

    def replace(self, matches: tuple[wire.MatchSummary, ...] | list[wire.MatchSummary]) -> None:
        """A fresh ``match_list``."""
        self.matches = {m.match: m for m in matches}

    def update(self, summary: wire.MatchSummary) -> None:
        """One match changed, or a new one came in at the top, pushing the
        bottom one off a full page (PROTOCOL.md: ``match_update``)."""
        if summary.match in self.matches:
            self.matches[summary.match] = summary
            return
        self.matches = {summary.match: summary, **self.matches}
        while len(self.matches) > self.limit:
            self.matches.popitem()

    def remove(self, match_id: str) -> None:
        """A ``match_removed``: the match is no longer there to join or watch."""
        self.matches.pop(match_id, None)


class Follow:
    """The match this client is in: seat, summary, state, log and prompt."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.signals = TableSignals(clock)
        self.leave()

    def leave(self) -> None:
        """Forget the match (back in the lobby)."""
        self.match_id: str | None = None
        self.seat: int | None = None
        self.host = False
        self.summary: wire.MatchSummary | None = None
        self.state: wire.State | None = None
        self.seq = 0
        self.log: list[Text] = []
        self.chat: list[Text] = []
        self.acting = False
        self.last_prompt: wire.Prompt | None = None
        self.since: wire.State | None = None
        self.signals.clear()

    # -- joining ----------------------------------------------------------------------

    def join(self, joined: wire.Joined) -> bool:
        """Now in ``joined.match``; returns whether it is another match than before."""
        other = joined.match != self.match_id
        if other:
            self.summary = None
            self.state = None
            self.seq = 0
            self.log = []
            self.chat = []
            self.last_prompt = None
            self.since = None
            self.signals.clear()
        self.match_id = joined.match
        self.seat = joined.seat
        self.host = joined.host
        self.acting = False
        return other

    def update(self, summary: wire.MatchSummary) -> bool:
        """A ``match_update``; returns whether it is about this match."""
        if summary.match != self.match_id:
            return False
        old, self.summary = self.summary, summary
        self.signals.summary(summary)
        for line in presence_lines(old, summary, self.names(), self.seat):
            self.say(line)
        return True

    # -- the match --------------------------------------------------------------------

    def snapshot(self, snapshot: wire.Snapshot) -> bool:
        """Take the server's word for everything; False if it is another match's."""
        if snapshot.match != self.match_id:
            return False
        self.state = snapshot.state
        self.seq = snapshot.seq
        self.seat = snapshot.seat
        self.acting = False
        self.since = snapshot.state if snapshot.state.scoring is None else None
        # the server follows a snapshot with every timer that runs (a turn_timer
        # notice, a prompt's deadline): none after it means none runs — one from
        # before (a server restart, a long time away) must not go on counting
        self.signals.timers.clear()
        if self.last_prompt is not None and (
            self.last_prompt.seq != snapshot.seq or not snapshot.state.legal_actions
        ):
            self.last_prompt = None  # its points were for another position
        return True

    def event(self, message: wire.Event) -> Outcome:
        """Apply one event if it is the next one."""
        if message.match != self.match_id or self.state is None:
            return "elsewhere"
        if message.seq <= self.seq:
            return "stale"
        if message.seq != self.seq + 1:
            return "gap"
        self.seq = message.seq
        event = message.event
        before = self.state
        self._mark_from(before, event)
        self.state = apply_event(before, event, self.seat)
        if before.legal_actions and not self.state.legal_actions:
            self.acting = False
            self.last_prompt = None
        self.signals.keep_timers_of(self.state.to_act)
        line = describe(event, self.names(), self.seat, message.by)
        if line is not None:
            self.say(line)
        return "applied"

    def _mark_from(self, before: wire.State, event: wire.GameEvent) -> None:
        """Move the marks' baseline (see ``since``) for an event about to apply."""
        if isinstance(event, wire.MatchEnded):
            self.since = None  # the final table shows totals, not changes
        elif isinstance(event, wire.TurnStarted) and (
            self.seat is None or before.active == self.seat or self.since is None
        ):
            self.since = before

    def prompt(self, prompt: wire.Prompt) -> bool:
        """The seat's legal actions, if the prompt is for the state we have."""
        if prompt.match != self.match_id or self.state is None or prompt.seq != self.seq:
            return False
        self.state = with_prompt(self.state, prompt)
        self.last_prompt = prompt
        self.acting = False
        self.signals.own_deadline(prompt.seat, prompt.deadline)
        return True

    def turn_timer(self, notice: wire.TurnTimer) -> bool:
        """Every seat's running timer; False if it is about another match."""
        if notice.match != self.match_id:
            return False
        self.signals.turn_timer(notice)
        return True

    def rematch(self, offer: wire.RematchOffer) -> bool:
        """Someone opened the rematch of this match (for us to join or not)."""
        if offer.match != self.match_id or self.seat is None:
            return False
        self.signals.rematch = offer
        return True

    def points(self) -> Mapping[wire.Action, int]:
        """What each legal action scores at once, as the last prompt said
        (empty when the server did not say)."""
        return points_by_action(self.last_prompt)

    def rankings(self) -> Mapping[wire.Action, tuple[wire.Colour, ...]]:
        """The ranking each face-up add would make (R8), as the last prompt
        said (empty when the server did not say)."""
        return rankings_by_action(self.last_prompt)

    def seconds_left(self) -> int | None:
        """Whole seconds before the turn timer plays for us, if one runs."""
        if self.seat is None:
            return None
        return self.signals.seconds().get(self.seat)

    @property
    def running(self) -> bool:
        """Whether we hold a seat in a match that is being played."""
        return self.seat is not None and self.state is not None and self.state.phase != "over"

    def names(self) -> dict[int, str]:
        """Every seat's display name."""
        seats = (
            len(self.state.seats) if self.state else len(self.summary.seats) if self.summary else 0
        )
        return seat_names(self.summary, seats)

    def say(self, line: Text) -> None:
        """Add a line to the log (the oldest go when it is long)."""
        self.log.append(line)
        del self.log[:-LOG_LINES]

    def chat_line(self, line: Text) -> None:
        """Add a line to the chat, kept apart from the moves (the oldest go when it is long)."""
        self.chat.append(line)
        del self.chat[:-LOG_LINES]

    def recall(self, at: int, lines: list[Text]) -> None:
        """Put ``lines`` (from the match's record) into the log before its
        line ``at`` — where they happened."""
        at = max(0, min(at, len(self.log)))
        self.log[at:at] = lines
        del self.log[:-LOG_LINES]
