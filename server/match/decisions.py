"""A running match's open decisions, and who is to take each.

A decision opens when its seat must act and is named by the ``seq`` at which
it opened: the seq of the prompt for it (a prompt sent again later, after a
``sync`` or a return, has a later seq that names the same decision). It is
taken once — by its player, by the timer's stand-in once the turn timer ran
out, or by a bot — and then closes. An ``act`` names the prompt it answers;
:meth:`Decisions.check` refuses one that answers a decision no longer open.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import protocol as wire
from protocol import ErrorCode, PlayedBy

from ..errors import refused
from .seats import Seat

__all__ = ["Decisions"]


@dataclass(slots=True)
class Decisions:
    """The open decisions of one match, by seat, and who has been asked to take them."""

    #: seat -> the seq its open decision opened at
    opened: dict[int, int] = field(default_factory=dict)
    #: seat -> the seq at which its latest decision was taken
    taken: dict[int, int] = field(default_factory=dict)
    #: seat -> the decision its player was prompted for
    prompted: dict[int, int] = field(default_factory=dict)
    #: seat -> the decision a bot was asked to take, and its mark (``event.by``)
    asked: dict[int, tuple[int, PlayedBy | None]] = field(default_factory=dict)
    #: seat -> the decision whose turn timer ran out: the timer's stand-in takes it
    timed_out: dict[int, int] = field(default_factory=dict)
    #: seat -> its running turn timer's name and deadline
    timers: dict[int, tuple[str, float]] = field(default_factory=dict)

    def open(self, to_act: tuple[int, ...], seq: int) -> None:
        """Every seat in ``to_act`` has an open decision: a new one opens at
        ``seq``; one already open stays (during the opening, R11)."""
        for seat in to_act:
            self.opened.setdefault(seat, seq)

    def close(self, seat: int, seq: int) -> str | None:
        """The seat's decision is taken at ``seq``; the name of its turn timer,
        if one was running (to cancel)."""
        self.opened.pop(seat, None)
        self.prompted.pop(seat, None)
        self.asked.pop(seat, None)
        self.timed_out.pop(seat, None)
        self.taken[seat] = seq
        timer = self.timers.pop(seat, None)
        return timer[0] if timer is not None else None

    def by_bot(self, seat: Seat) -> tuple[bool, PlayedBy | None]:
        """Whether a bot takes the seat's open decision, and how it is marked:
        the seat's own bot, the timer's stand-in, or the stand-in for an absent player."""
        if seat.is_bot:
            return True, None
        timed_out = self.timed_out.get(seat.index)
        if timed_out is not None and timed_out == self.opened.get(seat.index):
            return True, "timer"
        if seat.autopilot:
            return True, "stand_in"
        return False, None

    def by_player(self, seat: Seat) -> bool:
        """Whether the seat's player has an open decision to take now."""
        return seat.index in self.opened and not self.by_bot(seat)[0]

    def bot_answer_counts(self, seat: Seat, decision: int) -> tuple[bool, PlayedBy | None]:
        """Whether a bot's answer for ``decision`` still counts — it was asked,
        the decision is open, and it is still a bot's to take — and its mark."""
        asked = self.asked.get(seat.index)
        if asked is None or asked[0] != decision or self.opened.get(seat.index) != decision:
            return False, None
        return self.by_bot(seat)[0], asked[1]

    def check(self, seat: int, seq: int | None, last: int) -> None:
        """Raise unless an ``act`` naming the prompt of ``seq`` answers the seat's
        open decision, ``last`` being the match's last event."""
        opened = self.opened.get(seat)
        if seq is not None and seq > last:
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE,
                f"seq {seq} is beyond the match's last event ({last})",
                path="act.seq",
            )
        if opened is not None and self.timed_out.get(seat) == opened:
            raise refused(
                ErrorCode.DECISION_TAKEN,
                "your turn timer ran out: the server takes this decision for you",
            )
        if seq is None:
            return
        if opened is not None and seq < opened:
            raise refused(
                ErrorCode.DECISION_TAKEN,
                f"your act answers the prompt of seq {seq}, a decision already taken; "
                f"the open one is the prompt of seq {opened}",
            )
        if opened is None and self.taken.get(seat, -1) >= seq:
            raise refused(
                ErrorCode.DECISION_TAKEN,
                f"your act answers the prompt of seq {seq}, a decision already taken",
            )
