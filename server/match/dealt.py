"""What a match core keeps of its engine match, from the deal on.

The engine is deterministic from ``(ruleset, seed, actions)`` (R1–R30), so
what a match has made can be made again: a :class:`DealtMatch` keeps the
engine's :class:`~engine.Match` whole while it is played, but of the events
only their number (a replay deals them again, :meth:`DealtMatch.events`), and
once the match is over only its deal and its actions
(:meth:`DealtMatch.shelve`); :attr:`DealtMatch.match` deals it again for the
one command that needs its state. A finished four-seat match held 24 KiB of
objects (14 of them its events); its deal and actions hold about 1, and
dealing it again takes well under a millisecond.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine import Action, Event, Match, Ruleset

__all__ = ["DealtMatch", "MatchFactory"]

#: How a match is dealt: (players, seed, ruleset, first seat or None for chance)
MatchFactory = Callable[[int, int, Ruleset, int | None], Match]


class DealtMatch:
    """One core's engine match, dealt by ``factory`` from its arguments."""

    __slots__ = ("_deal", "_factory", "_match", "_shelved", "seq")

    def __init__(
        self,
        factory: MatchFactory,
        players: int,
        seed: int,
        ruleset: Ruleset,
        first_seat: int | None,
    ) -> None:
        self._factory = factory
        self._deal = (players, seed, ruleset, first_seat)
        self._match: Match | None = factory(players, seed, ruleset, first_seat)
        #: the actions of a match that is over, while its engine match is let go
        self._shelved: tuple[tuple[int, Action], ...] | None = None
        #: how many events the match has made: the sequence number of the latest
        self.seq = len(self._match.setup_events)

    @property
    def seed(self) -> int:
        """The seed it was dealt from."""
        return self._deal[1]

    @property
    def match(self) -> Match:
        """The engine's match; one that was shelved is dealt again (until the
        next :meth:`shelve`)."""
        match = self._match
        if match is None:
            assert self._shelved is not None
            match = self._match = self._dealt_again(self._shelved, None)
        return match

    @property
    def in_memory(self) -> bool:
        """Whether the engine's match is held now, not only its deal and actions."""
        return self._match is not None

    def apply(self, seat: int, action: Action) -> list[Event]:
        """Apply an accepted action (see :meth:`engine.Match.apply`) and count its events."""
        events = self.match.apply(seat, action)
        self.seq += len(events)
        return events

    def events(self) -> list[Event]:
        """Every event so far, complete (project before sending), dealt again."""
        actions = self._shelved if self._match is None else self._match.history
        assert actions is not None
        made: list[Event] = []
        self._dealt_again(actions, made)
        if len(made) != self.seq:  # the factory dealt something else: a bug
            raise RuntimeError(f"dealt again, {len(made)} events of {self.seq}")
        return made

    def shelve(self) -> None:
        """Once the match is over, keep its actions and let its engine match go."""
        match = self._match
        if match is not None and match.is_over:
            if self._shelved is None:
                self._shelved = match.history
            self._match = None

    def _dealt_again(
        self, actions: Sequence[tuple[int, Action]], events: list[Event] | None
    ) -> Match:
        match = self._factory(*self._deal)
        if events is None:
            for seat, action in actions:
                match.apply_quiet(seat, action)
        else:
            events.extend(match.setup_events)
            for seat, action in actions:
                events.extend(match.apply(seat, action))
        return match
