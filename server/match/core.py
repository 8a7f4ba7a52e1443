"""One match, sans I/O: commands in, outputs out.

A :class:`MatchCore` owns everything of one match that changes over time —
its engine :class:`~engine.Match`, its seats, who is connected to it, its
decisions, its timers — and changes only in :meth:`MatchCore.handle`, one
command at a time, given the time. It has no asyncio, no sockets and no
clock of its own; it says what to do (:mod:`.outputs`) and its actor
(:mod:`.actor`) does it, in order. The same core runs under the server, a
test's fake clock, or a property test's random interleavings.

Invariants:

- **On disk before anyone is told.** Whatever a request changes that is
  stored (an action, a seat, the seed) is asked for with a waiting
  :class:`~.outputs.Store`, and the answer and everything the change causes
  are made only once the actor reports it stored (:class:`~.commands.Stored`).
  An action is applied to the match only then: until it is, a snapshot
  shows the match without it. If the store fails, nothing changed: an action
  pauses the match, any other request is refused. A store told
  :class:`~server.errors.StorageLocked` is not failed but late (another
  process holds the database's lock, and storage keeps trying): an action is
  held, the match paused as if it had failed but its player not answered,
  until its ``Stored`` comes — then the match resumes by itself and the
  action is carried out; any other change just goes on waiting for its store.
- **A decision is taken once, by whoever it belongs to.** Each seat's open
  decision is named by the ``seq`` at which it opened; an ``act`` that names
  an older one (or comes after the turn timer ran out) is refused with
  ``decision_taken``, and a bot's answer counts only if the decision is still
  open and still the bot's to take: a player who is back plays their own seat.
- **One writer of membership.** Who is in the match is :attr:`MatchCore.members`;
  the rest of the server learns of it only from :class:`~.outputs.Entered`
  and :class:`~.outputs.Exited`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import protocol as wire
from engine import Action, EngineError, Event, Match, Ruleset, observe
from engine.analysis import DecisionValues
from engine.observation import prompt_choices, prompt_rankings
from engine.record import MatchRecord, action_to_data
from protocol import ErrorCode, PlayedBy
from protocol.limits import MIN_SEATS

from ..errors import StorageLocked, error_for, refused
from . import views
from .bots import STRENGTHS, Bot
from .commands import (
    Act,
    AddBot,
    Analyse,
    Attach,
    BotDecided,
    Broadcast,
    Chat,
    Command,
    ConnId,
    Detach,
    Halt,
    Hint,
    HintReady,
    Join,
    Leave,
    Open,
    Person,
    PlayAgain,
    RematchOpened,
    RemoveSeat,
    Replay,
    Resume,
    Start,
    Stored,
    Sync,
    Tick,
    Watch,
)
from .commitment import commitment
from .dealt import DealtMatch, MatchFactory
from .decisions import Decisions
from .info import MatchInfo, Status
from .outputs import (
    AnalysisOrder,
    AskBot,
    AskHint,
    Changed,
    Entered,
    Exited,
    Finished,
    Gone,
    Output,
    Rematch,
    RematchPlan,
    Reply,
    Send,
    Store,
)
from .records import AppendAction, ForgetOpenMatch, MatchRow, SaveMatch, StoredSeat, Write
from .results import MatchResult, SeatResult, places
from .seats import Seat
from .settings import MatchSettings
from .timers import Timers

__all__ = ["CoreConfig", "MatchCore", "MatchFactory", "deal_match"]

log = logging.getLogger(__name__)


def _left(deadline: float, now: float) -> float:
    """Seconds from ``now`` to ``deadline``, to the millisecond (none below 0)."""
    return max(0.0, round(deadline - now, 3))


def deal_match(players: int, seed: int, ruleset: Ruleset, first_seat: int | None) -> Match:
    """The normal way a match is dealt: shuffled from the seed (R4, R10–R12)."""
    return Match.new(players, seed, ruleset, first_seat)


@dataclass(frozen=True, slots=True)
class CoreConfig:
    """What the server lends every match core: timings, bots and dealing."""

    #: keys every bot's generator to the server (Bot.for_seat): made at start, never sent
    bot_secret: bytes
    #: seconds a seat's player may be gone before a bot plays for them
    grace_period: float = 30.0
    #: seconds a bot waits before it acts
    bot_delay: float = 0.0
    #: the strength of the bot that stands in for an absent or timed-out player
    stand_in_strength: str = "medium"
    #: the cluster node that runs the match (its summary names it); None: no cluster
    node: str | None = None
    #: whether the match is stored; without storage nothing is written, so
    #: nothing waits for a disk (an action is applied as it is accepted)
    durable: bool = True
    match_factory: MatchFactory = deal_match


#: an action to carry out once stored: (seat, action, by, conn, request)
_Act = tuple[int, Action, PlayedBy | None, ConnId | None, wire.RequestId | None]


@dataclass(slots=True)
class _Pending:
    """A change waiting for its store: what follows if it is stored, and if not."""

    then: Callable[[], list[Output]] | None
    failed: Callable[[Exception], list[Output]] | None
    row: MatchRow | None = None
    #: restores the seats, members and host as they were before the change
    undo: Callable[[], None] | None = None
    #: an action to apply once stored: (seat, action, by, conn, request), the hot path
    act: _Act | None = None


class MatchCore:
    """A match with its seats, its members (connections in it now) and its
    host's settings, changed one command at a time (:meth:`handle`).

    Of its engine match it keeps what :class:`~.dealt.DealtMatch` keeps: the
    match while it is played, its seed and actions once it is over (dealt
    again for the command that needs it), the number of its events (dealt
    again for a replay).
    """

    # A server holds hundreds of these: slots, not a dictionary per match.
    __slots__ = (
        "_abandon",
        "_audience",
        "_dealt",
        "_decisions",
        "_finished_at",
        "_halted",
        "_held",
        "_hinting",
        "_hints",
        "_kept",
        "_now",
        "_pending",
        "_played",
        "_stored",
        "_timers",
        "_wall",
        "_who",
        "config",
        "created",
        "decisions",
        "host",
        "id",
        "info",
        "members",
        "played_by",
        "rematch_id",
        "salt",
        "seats",
        "settings",
        "stand_ins",
        "status",
    )

    def __init__(
        self,
        match_id: str,
        settings: MatchSettings,
        host: Person,
        seats: list[Seat],
        config: CoreConfig,
        *,
        created: float,
    ) -> None:
        self.id = match_id
        self.settings = settings
        self.host = host
        self.seats = seats
        self.config = config
        self.created = created
        self.status = Status.OPEN
        self._dealt: DealtMatch | None = None  #: the engine's match, once dealt
        #: an open-box match's commitment salt, drawn with the seed (R27)
        self.salt: bytes | None = None
        #: who chose the action whose first event has this sequence number, where
        #: the seat's own player did not (``event.by``; replays show it too)
        self.played_by: dict[int, PlayedBy] = {}
        #: per seat: decisions taken, and those of them the server's stand-in took
        #: (a seat its stand-in mostly played does not count for its player's rating)
        self.decisions: list[int] = [0] * len(seats)
        self.stand_ins: list[int] = [0] * len(seats)
        #: connections in the match now, and the seat each holds (None: a spectator)
        self.members: dict[ConnId, int | None] = {}
        self._who: dict[ConnId, Person] = {}  #: each member's player
        self._audience: dict[int | None, tuple[ConnId, ...]] | None = None  #: members by seat
        #: the rematch of this match, once someone asked for one
        self.rematch_id: str | None = None
        #: the match as others see it (updated with every :class:`~.outputs.Changed`)
        self.info = self._info(0.0)
        self._decisions = Decisions()
        self._timers = Timers()
        self._abandon: str | None = None  #: the open match's countdown to going away
        self._pending: _Pending | None = None
        #: an action whose store waits for another process's lock: the match is
        #: paused until its ``Stored`` comes (no store is pending meanwhile)
        self._held: _Act | None = None
        self._stored: MatchRow | None = None  #: the row last stored (or queued)
        self._finished_at: float | None = None
        self._kept: frozenset[str] = frozenset()  #: players whose seats the rematch keeps
        self._halted = False
        self._played = 0  #: actions applied: the index of the next one stored
        self._now = 0.0
        self._wall = created
        #: hints being computed, by the connection that asked: the decision's seq
        self._hinting: dict[ConnId, int] = {}
        #: per seat: the latest hint computed, and the decision it values
        self._hints: dict[int, tuple[int, DecisionValues]] = {}

    def __repr__(self) -> str:
        return f"<MatchCore {self.id} {self.status.value}>"

    # -- the one door -------------------------------------------------------------------

    def handle(self, command: Command, now: float, wall: float) -> list[Output]:
        """Carry out ``command`` at ``now`` (the actor's monotonic clock, which
        timers use) and ``wall`` (seconds since the epoch, which storage keeps):
        what to do, in order. A request that cannot be granted is answered with
        an ``error`` and changes nothing."""
        if self._pending is not None and not isinstance(command, Stored):
            raise RuntimeError(f"{self!r}: {type(command).__name__} while a store is pending")
        self._now, self._wall = now, wall
        request = getattr(command, "request", None)
        try:
            return self._dispatch(command)
        except Exception as exc:  # a refusal (or a bug): the request is answered all the same
            if not isinstance(exc, wire.ProtocolError | EngineError):
                log.exception("match %s: %s failed", self.id, type(command).__name__)
            conn = getattr(command, "conn", None)
            if conn is None or not hasattr(command, "request"):
                log.debug("match %s: %s refused: %s", self.id, type(command).__name__, exc)
                return []
            return [Reply(conn, error_for(exc, request))]
        finally:
            if self._dealt is not None:
                self._dealt.shelve()

    @property
    def match(self) -> Match | None:
        """The engine's match (None before the deal; a finished one is dealt
        again for the command that asks, see :class:`~.dealt.DealtMatch`)."""
        return None if self._dealt is None else self._dealt.match

    @property
    def seq(self) -> int:
        """How many events the match has made: the sequence number of the latest."""
        return 0 if self._dealt is None else self._dealt.seq

    def events(self) -> list[Event]:
        """Every event of the match so far, complete (project before sending)."""
        return [] if self._dealt is None else self._dealt.events()

    @property
    def waiting(self) -> bool:
        """Whether a store is pending: the next command must be its ``Stored``."""
        return self._pending is not None

    def _dispatch(self, command: Command) -> list[Output]:
        match command:
            case Act():
                return self._act(command)
            case BotDecided():
                return self._bot_decided(command)
            case Stored():
                return self._stored_done(command.error)
            case Tick():
                return self._tick(command.timer)
            case Sync():
                return self._sync(command)
            case Chat():
                return self._chat(command)
            case Join():
                return self._join(command)
            case Watch():
                return self._watch(command)
            case Attach():
                return self._attach(command)
            case Detach():
                return self._detach(command.conn)
            case Leave():
                return self._leave(command)
            case Start():
                return self._start(command)
            case AddBot():
                return self._add_bot(command)
            case RemoveSeat():
                return self._remove_seat(command)
            case Open():
                return self._open(command)
            case Replay():
                return self._replay(command)
            case Analyse():
                return self._analyse(command)
            case Hint():
                return self._hint(command)
            case HintReady():
                return self._hint_ready(command)
            case PlayAgain():
                return self._play_again(command)
            case RematchOpened():
                return self._rematch_opened(command)
            case Broadcast():
                return [Send(self._everyone(), command.frames)] if self.members else []
            case Resume():
                return self._resume()
            case Halt():
                return self._halt()
        raise TypeError(f"not a command: {command!r}")  # pragma: no cover

    # -- reading -------------------------------------------------------------------------

    def seat_of(self, player_id: str) -> int | None:
        """The seat ``player_id`` holds here (left or not), if any."""
        for seat in self.seats:
            if not seat.is_bot and seat.player is not None and seat.player.id == player_id:
                return seat.index
        return None

    def connected(self, seat: int) -> bool:
        """Whether the seat's player has a connection in the match now."""
        return any(held == seat for held in self.members.values())

    def open_decision(self, seat: int) -> int | None:
        """The ``seq`` at which the seat's open decision opened, if it has one."""
        return self._decisions.opened.get(seat)

    def timers(self) -> dict[int, float]:
        """Seconds left on every running turn timer, by seat."""
        now = self._now
        return {s: _left(at, now) for s, (_, at) in sorted(self._decisions.timers.items())}

    def _conns_of(self, seat: int) -> tuple[ConnId, ...]:
        return self._by_seat().get(seat, ())

    def _by_seat(self) -> dict[int | None, tuple[ConnId, ...]]:
        """The members grouped by the seat they hold (None: spectators), kept
        until the members change: every event goes out this way."""
        audience = self._audience
        if audience is None:
            groups: dict[int | None, list[ConnId]] = {}
            for conn, seat in self.members.items():
                groups.setdefault(seat, []).append(conn)
            audience = self._audience = {seat: tuple(conns) for seat, conns in groups.items()}
        return audience

    def _everyone(self) -> tuple[ConnId, ...]:
        return tuple(self.members)

    def _grace_left(self, seat: Seat) -> float | None:
        if seat.grace is None or self.status is not Status.RUNNING:
            return None
        return _left(seat.grace[1], self._now)

    def _info(self, now: float) -> MatchInfo:
        seats = tuple(
            views.seat_info(seat, self.connected(seat.index), self._grace_left(seat))
            for seat in self.seats
        )
        summary = views.summary(
            self.id,
            self.settings,
            self.status.value,
            self.host.name,
            seats,
            self._commitment(),
            self.config.node,
            watching=[self._who[conn].name for conn, seat in self.members.items() if seat is None],
        )
        people = [s.player.id for s in self.seats if s.player is not None and not s.is_bot]
        homes = [
            s.player.id for s in self.seats if s.player is not None and not s.is_bot and not s.left
        ]
        return MatchInfo(
            id=self.id,
            created=self.created,
            status=self.status,
            settings=self.settings,
            host=self.host.id,
            named=frozenset([self.host.id, *people]),
            seated=frozenset(people),
            homes=frozenset(homes),
            free_seats=sum(seat.kind == "empty" for seat in self.seats),
            rematch=self.rematch_id,
            summary=summary,
            update=views.match_update_frame(summary),
        )

    def _commitment(self) -> str | None:
        """An open-box match's commitment to its seed, once dealt (R27)."""
        if not self.settings.open_box or self._dealt is None or self.salt is None:
            return None
        return commitment(self.salt, self._dealt.seed)

    def _changed(self, outs: list[Output]) -> None:
        """Others should see the match as it is now: its members and the lobby."""
        self.info = self._info(self._now)
        outs.append(Changed(self.info))
        if self.members:
            outs.append(Send(self._everyone(), (self.info.update,)))

    # -- storing ------------------------------------------------------------------------

    def row(self, seed: int | None = None, salt: bytes | None = None) -> MatchRow:
        """The match as storage keeps it (its actions are stored one by one);
        ``seed`` and ``salt``: the ones about to be dealt."""
        dealt = self._dealt is not None
        status = self.status.value if self.status is not Status.PAUSED else "running"
        return MatchRow(
            id=self.id,
            host=self.host.id,
            settings=self.settings,
            seats=tuple(seat.stored() for seat in self.seats),
            seed=seed if seed is not None else (self._dealt.seed if self._dealt else None),
            status="running" if seed is not None else status,
            created=self.created,
            finished=self._finished_at,
            salt=salt if seed is not None else (self.salt if dealt else None),
        )

    def mark_stored(self, row: MatchRow) -> None:
        """``row`` is what storage holds of this match (a match restored from it)."""
        self._stored = row
        self._finished_at = row.finished

    def _commit(
        self,
        then: Callable[[], list[Output]],
        failed: Callable[[Exception], list[Output]],
        undo: Callable[[], None] | None,
        row: MatchRow | None = None,
    ) -> list[Output]:
        """Store the match's row if it changed, then carry on with ``then``; if
        it cannot be stored, ``undo`` the change and answer with ``failed``."""
        if not self.config.durable:
            return then()
        row = row if row is not None else self.row()
        if row == self._stored or self.status is Status.PAUSED:
            return then()
        self._pending = _Pending(then=then, failed=failed, row=row, undo=undo)
        return [Store((SaveMatch(row),))]

    def _store_soon(self, outs: list[Output], *writes: Write) -> None:
        """Queue writes that acknowledge nothing (they follow the stored facts)."""
        if self.status is Status.PAUSED or not self.config.durable:
            return
        for write in writes:
            if isinstance(write, SaveMatch):
                if write.row == self._stored:
                    continue
                self._stored = write.row
            outs.append(Store((write,), wait=False))

    def _stored_done(self, error: Exception | None) -> list[Output]:
        if self._pending is None and self._held is not None:
            return self._held_done(error)
        pending, self._pending = self._pending, None
        if pending is None:
            raise RuntimeError(f"{self!r}: Stored without a pending store")
        act = pending.act
        if isinstance(error, StorageLocked):  # not stored yet: storage keeps trying
            if act is None:
                self._pending = pending  # a change of seats or settings just waits
                log.warning("match %s: a change waits for its store: %s", self.id, error)
                return []
            self._held = act
            return self._hold(error)
        if act is not None:  # an action: applied once stored, or the match pauses
            if error is None:
                return self._apply(*act)
            log.error("match %s: could not store an action: %s", self.id, error)
            return self._pause(act[3], act[4])
        assert pending.then is not None and pending.failed is not None
        if error is None:
            if pending.row is not None:
                self._stored = pending.row
            return pending.then()
        log.error("match %s: could not store: %s", self.id, error)
        if pending.undo is not None:
            pending.undo()
        return pending.failed(error)

    def _saved(self) -> Callable[[], None]:
        """What undoes a change of seats, members or host that is not stored
        (and the timers and asks that entering cancels)."""
        seats = [seat.copy() for seat in self.seats]
        members, who, host = dict(self.members), dict(self._who), self.host
        timers, abandon = self._timers.copy(), self._abandon
        asked, prompted = dict(self._decisions.asked), dict(self._decisions.prompted)

        def undo() -> None:
            self.seats, self.members, self._who, self.host = seats, members, who, host
            self._audience = None
            self._timers, self._abandon = timers, abandon
            self._decisions.asked, self._decisions.prompted = asked, prompted

        return undo

    def _refuse_unstored(
        self, conn: ConnId, request: wire.RequestId | None
    ) -> Callable[[Exception], list[Output]]:
        def failed(error: Exception) -> list[Output]:
            return [
                Reply(
                    conn,
                    error_for(
                        refused(
                            ErrorCode.STORAGE_UNAVAILABLE,
                            "the server cannot store this now (its disk is full or "
                            "unwritable); nothing changed, try again later",
                        ),
                        request,
                    ),
                )
            ]

        return failed

    # -- timers -------------------------------------------------------------------------

    def _set_timer(self, outs: list[Output], kind: str, delay: float) -> str:
        timer = self._timers.set(kind, self._now + delay)
        outs.append(timer)
        return timer.name

    def _cancel_timer(self, outs: list[Output], name: str | None) -> None:
        cancel = self._timers.cancel(name)
        if cancel is not None:
            outs.append(cancel)

    def _tick(self, name: str) -> list[Output]:
        if not self._timers.fired(name):
            return []  # cancelled, or replaced, after it fired
        outs: list[Output] = []
        if name == self._abandon:
            self._abandon = None
            if self.status is Status.OPEN and not self.members:
                log.info("match %s: open, and nobody came back to it; it goes", self.id)
                self._go(outs)
            return outs
        for seat in self.seats:
            if seat.grace is not None and seat.grace[0] == name:
                seat.grace = None
                if self.status is Status.RUNNING and not seat.is_bot:
                    self._hand_to_bot(seat, outs)
                return outs
        for index, (timer, _) in list(self._decisions.timers.items()):
            if timer == name:
                self._timed_out(index, outs)
                return outs
        return outs

    def _cancel_all_timers(self, outs: list[Output]) -> None:
        outs.extend(self._timers.cancel_all())
        self._decisions.timers.clear()
        for seat in self.seats:
            seat.grace = None
        self._abandon = None

    def _timers_frame(self) -> bytes:
        return views.timers_frame(self.id, self.seq, self.timers())

    # -- decisions ----------------------------------------------------------------------

    def _bot_decides(self, seat: int) -> tuple[bool, PlayedBy | None]:
        """Whether a bot takes the seat's open decision, and how it is marked."""
        return self._decisions.by_bot(self.seats[seat])

    def _player_decides(self, seat: int) -> bool:
        """Whether the seat's player has an open decision to take now."""
        return self._decisions.by_player(self.seats[seat])

    def _advance(self, outs: list[Output]) -> tuple[set[int], bool]:
        """Open the decisions of the seats that must act: prompt their players
        (and start their turn timers) or ask their bots, each once per decision.
        Returns the seats prompted now and whether every member was told the timers."""
        prompted: set[int] = set()
        if self.status is not Status.RUNNING or self._halted:
            return prompted, False
        match = self.match
        if match is None or match.is_over:
            return prompted, False
        decisions = self._decisions
        timed = False
        for seat in match.to_act:
            decision = decisions.opened[seat]
            bot, by = self._bot_decides(seat)
            if bot:
                if decisions.asked.get(seat, (None,))[0] != decision:
                    decisions.asked[seat] = (decision, by)
                    delay = 0.0 if by == "timer" else self.config.bot_delay
                    outs.append(
                        AskBot(seat, decision, self._bot(seat), observe(match, seat), delay)
                    )
            elif decisions.prompted.get(seat) != decision:
                decisions.prompted[seat] = decision
                timed = self._start_turn_timer(seat, outs) or timed
                prompted.add(seat)
                conns = self._conns_of(seat)
                if conns:
                    outs.append(Send(conns, (self._prompt(seat),)))
        if timed and self.members:
            outs.append(Send(self._everyone(), (self._timers_frame(),)))
        return prompted, timed

    def _open_decisions(self) -> None:
        """Every seat that must act now has an open decision (R11: during the
        opening, each seat's stays open while the others choose)."""
        dealt = self._dealt
        if dealt is not None:
            self._decisions.open(dealt.match.to_act, dealt.seq)

    def _prompt(self, seat: int) -> bytes:
        dealt = self._dealt
        assert dealt is not None
        match = dealt.match
        legal, points = prompt_choices(match, seat)
        rankings = prompt_rankings(match, seat, legal)
        timer = self._decisions.timers.get(seat)
        deadline = _left(timer[1], self._now) if timer is not None else None
        return views.prompt_frame(self.id, dealt.seq, seat, legal, points, deadline, rankings)

    def _start_turn_timer(self, seat: int, outs: list[Output]) -> bool:
        """Start the seat's turn timer, if the match has one; whether it did."""
        self._stop_turn_timer(seat, outs)
        timer = self.settings.turn_timer
        if timer is None:
            return False
        name = self._set_timer(outs, "turn", timer)
        self._decisions.timers[seat] = (name, self._now + timer)
        return True

    def _stop_turn_timer(self, seat: int, outs: list[Output]) -> bool:
        """Stop the seat's turn timer; whether one was running."""
        timer = self._decisions.timers.pop(seat, None)
        if timer is None:
            return False
        self._cancel_timer(outs, timer[0])
        return True

    def _timed_out(self, seat: int, outs: list[Output]) -> None:
        """The turn timer ran out: the timer's stand-in takes this one decision."""
        decisions = self._decisions
        decisions.timers.pop(seat, None)
        decision = decisions.opened.get(seat)
        if decision is None or self.status is not Status.RUNNING or not self._player_decides(seat):
            return
        log.info("match %s: seat %d let its turn timer run out; a bot acts for it", self.id, seat)
        decisions.timed_out[seat] = decision
        self._advance(outs)

    def _close_decision(self, seat: int, outs: list[Output]) -> None:
        self._cancel_timer(outs, self._decisions.close(seat, self.seq))

    def _bot(self, seat: int) -> Bot:
        """The bot that decides for ``seat``: its own, or the stand-in that plays
        for its absent player (made the first time it is needed)."""
        slot = self.seats[seat]
        if slot.bot is None:
            slot.bot = Bot.for_seat(
                self.config.stand_in_strength, self.id, seat, self.config.bot_secret
            )
        return slot.bot

    def _hand_to_bot(self, seat: Seat, outs: list[Output]) -> None:
        """A bot plays for this seat until its player comes back."""
        if seat.autopilot:
            return
        seat.autopilot = True
        log.info("match %s: a bot plays seat %d for now", self.id, seat.index)
        timed = self._stop_turn_timer(seat.index, outs)  # the stand-in does not wait for it
        self._changed(outs)
        if timed and self.members:
            outs.append(Send(self._everyone(), (self._timers_frame(),)))
        self._advance(outs)

    # -- playing --------------------------------------------------------------------------

    def _act(self, command: Act) -> list[Output]:
        seat = self.members.get(command.conn)
        if seat is None:
            if command.conn in self.members:
                raise refused(ErrorCode.NOT_IN_MATCH, "a spectator has no seat to act for")
            raise refused(ErrorCode.NOT_IN_MATCH, "you hold no seat in this match")
        self._check_playing()
        assert self.match is not None
        self._decisions.check(seat, command.seq, self.seq)
        refusal = self.match.refusal(seat, command.action)
        if refusal is not None:
            raise refusal
        return self._propose(seat, command.action, None, command.conn, command.request)

    def _check_playing(self) -> None:
        if self.status is Status.PAUSED:
            raise refused(
                ErrorCode.MATCH_PAUSED, "the server cannot store this match; it is paused"
            )
        if self._halted:
            raise refused(ErrorCode.MATCH_PAUSED, "the server is shutting down; come back later")
        if self._dealt is None:
            raise refused(ErrorCode.MATCH_NOT_READY, "the match has not started")

    def _propose(
        self,
        seat: int,
        action: Action,
        by: PlayedBy | None,
        conn: ConnId | None,
        request: wire.RequestId | None,
    ) -> list[Output]:
        """Store ``seat``'s legal action, then apply it and tell everyone."""
        if not self.config.durable:
            return self._apply(seat, action, by, conn, request)
        write = AppendAction(self.id, self._played, seat, action_to_data(action), by)
        self._pending = _Pending(None, None, act=(seat, action, by, conn, request))
        return [Store((write,))]

    def _apply(
        self,
        seat: int,
        action: Action,
        by: PlayedBy | None,
        conn: ConnId | None,
        request: wire.RequestId | None,
    ) -> list[Output]:
        """The stored action changes the match: ``ok``, then its events, each
        member its own view, then the next decisions."""
        dealt = self._dealt
        assert dealt is not None
        match = dealt.match
        outs: list[Output] = []
        self._close_decision(seat, outs)
        first_seq = dealt.seq + 1
        events = dealt.apply(seat, action)  # cannot be refused: it passed refusal(), is stored
        self._played += 1
        self._count(seat, by)
        if by is not None:
            self.played_by[first_seq] = by
        self._open_decisions()
        if conn is not None and request is not None:
            outs.append(Reply(conn, wire.Ok(id=request)))
        self._publish(outs, first_seq, events, by)
        if match.is_over:
            self.status = Status.FINISHED
            self._finished_at = self._wall
            self._cancel_all_timers(outs)
            self._decisions = Decisions()
            for slot in self.seats:  # a finished match needs no stand-in (each holds a generator)
                if not slot.is_bot:
                    slot.bot = None
            self._store_soon(outs, SaveMatch(self.row()))
            self._changed(outs)
            outs.append(Finished(self.result()))
        else:
            self._advance(outs)
        return outs

    def _count(self, seat: int, by: PlayedBy | None) -> None:
        """One more decision of ``seat``, and whether its stand-in took it."""
        if seat < len(self.decisions):
            self.decisions[seat] += 1
            if by == "stand_in":
                self.stand_ins[seat] += 1

    def result(self) -> MatchResult:
        """The finished match's result: every seat's points and place (R23)."""
        match = self.match
        assert match is not None and match.scoring is not None, "only a finished match"
        scoring = match.scoring
        ranks = places(scoring)
        seats = []
        for slot, score in zip(self.seats, scoring.players, strict=True):
            person = slot.player if not slot.is_bot else None
            seats.append(
                SeatResult(
                    seat=slot.index,
                    player=person.id if person is not None else None,
                    name=person.name if person is not None else f"bot {slot.index}",
                    bot=(slot.bot.strength if slot.bot is not None else None)
                    if slot.is_bot
                    else None,
                    points=score.total,
                    tulips=score.tulips,
                    place=ranks[slot.index],
                    decisions=self.decisions[slot.index],
                    stand_in=self.stand_ins[slot.index],
                )
            )
        return MatchResult(
            match=self.id,
            name=self.settings.name,
            ruleset=self.settings.ruleset_name,
            open_box=self.settings.open_box,
            rated=self.settings.rated,
            finished=self._finished_at if self._finished_at is not None else self._wall,
            seats=tuple(seats),
        )

    def _publish(
        self, outs: list[Output], first_seq: int, events: Sequence[Event], by: PlayedBy | None
    ) -> None:
        """Send each member its own view of ``events``."""
        frames = views.EventFrames(self.id, first_seq, events, by)
        for seat, conns in self._by_seat().items():
            outs.append(Send(conns, frames.for_seat(seat)))

    def _pause(self, conn: ConnId | None, request: wire.RequestId | None) -> list[Output]:
        """An action could not be stored: nothing more is played until a restart."""
        log.error("match %s: an action could not be stored; the match is paused", self.id)
        outs = self._stop_playing()
        if conn is not None:
            error = refused(
                ErrorCode.MATCH_PAUSED,
                "the server could not store your action; the match is paused",
            )
            outs.append(Reply(conn, error_for(error, request)))
        self._changed(outs)
        return outs

    def _hold(self, error: StorageLocked) -> list[Output]:
        """The held action's store waits for a lock: the match pauses as if it
        had failed (everyone sees ``paused``; nothing is played), but the
        player who acted is answered only once it is stored, or finally not."""
        log.warning(
            "match %s: its action waits for the database (%s); paused until it is stored",
            self.id,
            error,
        )
        outs = self._stop_playing()
        self._changed(outs)
        return outs

    def _stop_playing(self) -> list[Output]:
        """Paused: no timer runs and no bot is waited for (what stops them)."""
        outs: list[Output] = []
        self.status = Status.PAUSED
        self._cancel_all_timers(outs)
        self._decisions.asked.clear()
        return outs

    def _held_done(self, error: Exception | None) -> list[Output]:
        """The held action's store ended: stored, the match resumes where it
        was paused and the action is carried out; not, it stays paused."""
        held, self._held = self._held, None
        assert held is not None
        if isinstance(error, StorageLocked):
            self._held = held  # told again: still waiting
            return []
        outs: list[Output] = []
        if error is not None:
            return self._pause(held[3], held[4])
        log.info("match %s: its action that waited for the database is stored; it resumes", self.id)
        self.status = Status.RUNNING
        self._decisions.prompted.clear()  # prompted again, with their turn timers afresh
        self._start_grace_periods(outs)
        self._changed(outs)
        outs.extend(self._apply(*held))
        self._store_soon(outs, SaveMatch(self.row()))  # seats changed while it was paused
        return outs

    def _bot_decided(self, command: BotDecided) -> list[Output]:
        seat = command.seat
        counts, by = self._decisions.bot_answer_counts(self.seats[seat], command.decision)
        if not counts or self.status is not Status.RUNNING or self._halted:
            log.debug("match %s: a bot's decision for seat %d is not needed", self.id, seat)
            return []
        assert self.match is not None
        refusal = self.match.refusal(seat, command.action)
        if refusal is not None:  # a bot must never take the match down
            log.error("match %s: seat %d's bot chose an illegal action: %s", self.id, seat, refusal)
            self._decisions.asked.pop(seat, None)
            return []
        return self._propose(seat, command.action, by, None, None)

    def _start(self, command: Start) -> list[Output]:
        self._check_host_open(command.person, "start the match")
        undo: Callable[[], None] | None = None
        renumbered: list[ConnId] = []
        if command.without_absent:
            here = [s for s in self.seats if s.is_bot or (s.player is not None and not s.reserved)]
            if len(here) < MIN_SEATS:
                raise refused(
                    ErrorCode.MATCH_NOT_READY,
                    f"only {len(here)} seat(s) have someone in them; a match needs {MIN_SEATS}",
                )
            if len(here) < len(self.seats):
                undo = self._saved_with_settings()
                renumbered = self._keep_only(here)
        empty = [seat.index for seat in self.seats if seat.kind == "empty"]
        if empty:
            raise refused(ErrorCode.MATCH_NOT_READY, f"seat {empty[0]} is still empty")
        seed, salt = command.seed, command.salt if self.settings.open_box else None

        def then() -> list[Output]:
            outs: list[Output] = []
            for conn in renumbered:  # told their new seat before the deal
                seat = self.members[conn]
                assert seat is not None
                host = self._who[conn].id == self.host.id
                outs.append(Send((conn,), (views.joined_frame(self.id, seat, host),)))
            if command.request is not None:
                outs.append(Reply(command.conn, wire.Ok(id=command.request)))
            self._deal_match(seed, salt)
            self._start_grace_periods(outs)
            # the summary (after the grace periods: it says when bots take over) goes
            # out before any seat's cards, so an open box's commitment is seen first
            self._changed(outs)
            for conn, seat in self.members.items():
                outs.append(Send((conn,), (self._snapshot(seat),)))
            self._advance(outs)
            return outs

        def failed(error: Exception) -> list[Output]:
            log.error("match %s cannot start (storage_unavailable): %s", self.id, error)
            return self._refuse_unstored(command.conn, command.request)(error)

        # the seed (and the seats it is dealt to) is on disk before anyone sees a card
        return self._commit(then, failed, undo, row=self.row(seed=seed, salt=salt))

    def _saved_with_settings(self) -> Callable[[], None]:
        """What undoes a change of seats that changes the settings too."""
        settings, undo = self.settings, self._saved()

        def undo_all() -> None:
            undo()
            self.settings = settings

        return undo_all

    def _keep_only(self, here: list[Seat]) -> list[ConnId]:
        """The table shrinks to the seats ``here``, numbered again from 0 in
        order (the first seat, if one was chosen, follows its seat or goes
        back to chance); the seated members whose number changed."""
        numbers = {slot.index: new for new, slot in enumerate(here)}
        for new, slot in enumerate(here):
            slot.index = new
        self.seats = here
        moved = [
            conn
            for conn, seat in self.members.items()
            if seat is not None and numbers.get(seat, seat) != seat
        ]
        self.members = {
            conn: (numbers[seat] if seat is not None else None)
            for conn, seat in self.members.items()
        }
        self._audience = None
        first = self.settings.first_seat
        if first is not None:
            self.settings = dataclasses.replace(self.settings, first_seat=numbers.get(first))
        return moved

    # -- the host's waiting room ----------------------------------------------------------

    def _check_host_open(self, person: Person, what: str) -> None:
        """Raise unless ``person`` hosts this match and it has not started."""
        if person.id != self.host.id:
            raise refused(ErrorCode.NOT_HOST, f"only the host can {what}")
        if self.status is not Status.OPEN:
            raise refused(ErrorCode.MATCH_NOT_OPEN, f"match {self.id} has already started")

    def _check_not_tutorial(self, request: str) -> None:
        """Raise in a tutorial: its seats are its fixed deal's (:mod:`.tutorial`)."""
        if self.settings.tutorial:
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE,
                "a tutorial's seats cannot change: its creator plays alone against its bots",
                path=request,
            )

    def _seat_number(self, seat: int, path: str) -> Seat:
        if not 0 <= seat < len(self.seats):
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE,
                f"seat {seat} is not a seat of this match (0 to {len(self.seats) - 1})",
                path=path,
            )
        return self.seats[seat]

    def _add_bot(self, command: AddBot) -> list[Output]:
        """The host puts a bot in a free seat of the open match."""
        self._member_seat(command.conn)
        self._check_host_open(command.person, "add a bot")
        self._check_not_tutorial("add_bot")
        if command.strength not in STRENGTHS:
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE,
                f"unknown strength {command.strength!r}; one of {', '.join(STRENGTHS)}",
                path="add_bot.strength",
            )
        if command.seat is not None:
            self._seat_number(command.seat, "add_bot.seat")
        index = self._free_seat(command.seat, watch_if_full=False)
        assert index is not None
        undo = self._saved()
        slot = self.seats[index]
        slot.is_bot = True
        slot.bot = Bot.for_seat(command.strength, self.id, index, self.config.bot_secret)

        def then() -> list[Output]:
            outs: list[Output] = []
            if command.request is not None:
                outs.append(Reply(command.conn, wire.Ok(id=command.request)))
            self._changed(outs)
            return outs

        return self._commit(then, self._refuse_unstored(command.conn, command.request), undo)

    def _remove_seat(self, command: RemoveSeat) -> list[Output]:
        """The host frees a seat of the open match: its bot goes, or its player
        (a rematch's kept seat too) is put out of the match and told."""
        self._member_seat(command.conn)
        self._check_host_open(command.person, "remove a seat")
        self._check_not_tutorial("remove_seat")
        slot = self._seat_number(command.seat, "remove_seat.seat")
        if slot.kind == "empty":
            raise refused(ErrorCode.SEAT_TAKEN, f"seat {slot.index} is already free")
        removed = None if slot.is_bot else slot.player
        if removed is not None and removed.id == self.host.id:
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE,
                "that is your own seat: to give it up, `leave` the match",
                path="remove_seat.seat",
            )
        undo = self._saved()
        slot.is_bot, slot.bot = False, None
        slot.player, slot.reserved, slot.left = None, False, False
        gone = [c for c in self.members if removed is not None and self._who[c].id == removed.id]
        for conn in gone:
            del self.members[conn]
            self._who.pop(conn, None)
        self._audience = None

        def then() -> list[Output]:
            outs: list[Output] = []
            if gone:
                notice = wire.encode(wire.Removed(match=self.id, host=self.host.name))
                outs.append(Send(tuple(gone), (notice,)))
                outs.extend(Exited(conn) for conn in gone)
            if command.request is not None:
                outs.append(Reply(command.conn, wire.Ok(id=command.request)))
            self._changed(outs)
            return outs

        return self._commit(then, self._refuse_unstored(command.conn, command.request), undo)

    def _deal_match(self, seed: int, salt: bytes | None) -> DealtMatch:
        dealt = self._dealt = DealtMatch(
            self.config.match_factory,
            len(self.seats),
            seed,
            self.settings.ruleset,
            self.settings.first_seat,
        )
        self.salt = salt
        self.status = Status.RUNNING
        self.played_by = {}
        self.decisions = [0] * len(self.seats)
        self.stand_ins = [0] * len(self.seats)
        self._played = 0
        self._decisions = Decisions()
        self._open_decisions()
        return dealt

    def _snapshot(self, seat: int | None, request: wire.RequestId | None = None) -> bytes:
        return wire.encode(self._snapshot_message(seat, request))

    def _snapshot_message(
        self, seat: int | None, request: wire.RequestId | None = None
    ) -> wire.Snapshot:
        assert self.match is not None
        return views.snapshot(self.id, self.seq, seat, observe(self.match, seat), request)

    def _start_grace_periods(self, outs: list[Output]) -> None:
        """Every seat whose player is not here gets the grace period (a player
        who left gets a bot at once)."""
        for seat in self.seats:
            if seat.kind != "human" or self.connected(seat.index) or seat.grace is not None:
                continue
            if seat.left:
                seat.autopilot = True
            else:
                self._start_grace(seat, outs)

    def _start_grace(self, seat: Seat, outs: list[Output]) -> None:
        grace = self.config.grace_period
        seat.grace = (self._set_timer(outs, "grace", grace), self._now + grace)

    def restore(
        self,
        seed: int,
        actions: Sequence[tuple[int, Action]],
        salt: bytes | None = None,
        marks: Mapping[int, PlayedBy] | None = None,
    ) -> None:
        """Rebuild a stored match by replaying its actions (after a restart);
        ``marks`` is who chose which of them (by index), as ``event.by``."""
        dealt = self._deal_match(seed, salt)
        marks = marks or {}
        for index, (seat, action) in enumerate(actions):
            by = marks.get(index)
            if by is not None:
                self.played_by[dealt.seq + 1] = by
            self._count(seat, by)
            self._decisions.opened.pop(seat, None)
            self._decisions.taken[seat] = dealt.seq
            dealt.apply(seat, action)
            self._played += 1
            self._open_decisions()
        if dealt.match.is_over:
            self.status = Status.FINISHED
        self.info = self._info(self._now)
        dealt.shelve()

    def _resume(self) -> list[Output]:
        """After a restart: absent players get their grace period, bots carry on,
        and an open match goes if none of its players comes back in time."""
        outs: list[Output] = []
        if self.status is Status.OPEN:
            self._check_abandoned(outs)
        elif self.status is Status.RUNNING:
            self._start_grace_periods(outs)
            self._advance(outs)
        if self.status is Status.FINISHED and self._finished_at is None:
            self._finished_at = self._wall  # its last action was stored, its end was not
        self._store_soon(outs, SaveMatch(self.row()))
        self.info = self._info(self._now)
        outs.append(Changed(self.info))
        if self.status is Status.FINISHED and self._dealt is not None:
            outs.append(Finished(self.result()))  # the ratings apply it if they have not
        return outs

    def _halt(self) -> list[Output]:
        """Shutting down: no more actions, prompts, timers or bots."""
        self._halted = True
        self._decisions.asked.clear()
        return list(self._timers.cancel_all())

    # -- who is in the match -----------------------------------------------------------

    def _enter(self, conn: ConnId, person: Person, seat: int | None, outs: list[Output]) -> None:
        self.members[conn] = seat
        self._audience = None
        self._who[conn] = person
        self._cancel_timer(outs, self._abandon)
        self._abandon = None
        if seat is None:
            return
        slot = self.seats[seat]
        slot.reserved = False  # a rematch's player who comes has accepted
        if slot.grace is not None:
            self._cancel_timer(outs, slot.grace[0])
            slot.grace = None
        if slot.autopilot and not slot.left:  # the player is back: the decision is theirs
            slot.autopilot = False
            self._decisions.asked.pop(seat, None)
            self._decisions.prompted.pop(seat, None)

    def _greet(self, conn: ConnId, seat: int | None, outs: list[Output], *, told: bool) -> None:
        """A member who has just come in: the match's summary (unless ``told``
        already), and once it is dealt its snapshot, prompt and timers."""
        if not told:
            outs.append(Send((conn,), (self.info.update,)))
        if self._dealt is None:
            return
        outs.append(Send((conn,), (self._snapshot(seat),)))
        prompted, timed = self._advance(outs)
        if seat is not None and seat not in prompted and self._player_decides(seat):
            outs.append(Send((conn,), (self._prompt(seat),)))
        if not timed and self._decisions.timers:
            outs.append(Send((conn,), (self._timers_frame(),)))

    def _open(self, command: Open) -> list[Output]:
        """A new match's host comes in, once the match is on disk."""
        outs_before: list[Output] = []
        if command.seat is not None:
            self.seats[command.seat].player = command.person
        self._enter(command.conn, command.person, command.seat, outs_before)

        def then() -> list[Output]:
            outs = [*outs_before]
            joined = wire.Joined(id=command.request, match=self.id, seat=command.seat, host=True)
            outs.append(Reply(command.conn, joined))
            outs.append(Entered(command.conn))
            self._changed(outs)
            return outs

        def failed(error: Exception) -> list[Output]:
            self.members.pop(command.conn, None)
            self._audience = None
            return [*self._refuse_unstored(command.conn, command.request)(error), Gone()]

        return self._commit(then, failed, None)

    def _seat_player_id(self, seat: int) -> str | None:
        player = self.seats[seat].player
        return player.id if player is not None else None

    def _join(self, command: Join) -> list[Output]:
        person = command.person
        held = self.seat_of(person.id)
        undo = self._saved()
        outs_before: list[Output] = []
        if held is not None:  # a player takes back their own seat, in any match
            slot = self.seats[held]
            slot.left = False
            slot.player = person
            seat: int | None = held
        elif self.status is not Status.OPEN:
            raise refused(ErrorCode.MATCH_NOT_OPEN, f"match {self.id} has already started")
        else:
            self._check_code(command.code)
            seat = self._free_seat(command.seat, watch_if_full=command.watch_if_full)
            if seat is not None:
                self.seats[seat].player = person
        self._enter(command.conn, person, seat, outs_before)

        def then() -> list[Output]:
            outs = [*outs_before]
            outs.append(
                Reply(
                    command.conn,
                    wire.Joined(
                        id=command.request,
                        match=self.id,
                        seat=seat,
                        host=person.id == self.host.id,
                    ),
                )
            )
            outs.append(Entered(command.conn))
            self._changed(outs)
            self._greet(command.conn, seat, outs, told=True)
            return outs

        return self._commit(then, self._refuse_unstored(command.conn, command.request), undo)

    def _free_seat(self, wanted: int | None, *, watch_if_full: bool) -> int | None:
        if wanted is not None:
            if not 0 <= wanted < len(self.seats):
                raise refused(ErrorCode.SEAT_TAKEN, f"seats go from 0 to {len(self.seats) - 1}")
            if self.seats[wanted].kind != "empty":
                raise refused(ErrorCode.SEAT_TAKEN, f"seat {wanted} is taken")
            return wanted
        free = [seat.index for seat in self.seats if seat.kind == "empty"]
        if free:
            return free[0]
        if watch_if_full:
            return None
        raise refused(ErrorCode.SEAT_TAKEN, "every seat is taken")

    def _check_code(self, code: str | None) -> None:
        """Raise unless ``code`` is this match's join code (or it has none),
        in upper or lower case alike: a code is said across a table."""
        wanted = self.settings.join_code
        if wanted is not None and (code is None or code.casefold() != wanted.casefold()):
            raise refused(ErrorCode.BAD_JOIN_CODE, "this match needs the right join code")

    def _watch(self, command: Watch) -> list[Output]:
        self._check_code(command.code)
        outs: list[Output] = []
        self._enter(command.conn, command.person, None, outs)
        outs.append(
            Reply(
                command.conn,
                wire.Joined(id=command.request, match=self.id, seat=None, host=False),
            )
        )
        outs.append(Entered(command.conn))
        self._changed(outs)  # the spectators are counted: everyone sees one more
        self._greet(command.conn, None, outs, told=True)
        return outs

    def _attach(self, command: Attach) -> list[Output]:
        """A returning player's new connection (PROTOCOL.md: ``joined``, then
        ``match_update``, ``snapshot`` and ``prompt``)."""
        seat = self.seat_of(command.person.id)
        if seat is None or self.seats[seat].left:
            return []
        outs: list[Output] = []
        self.seats[seat].player = command.person
        self._enter(command.conn, command.person, seat, outs)
        host = command.person.id == self.host.id
        outs.append(Send((command.conn,), (views.joined_frame(self.id, seat, host),)))
        outs.append(Entered(command.conn))
        self._changed(outs)
        self._greet(command.conn, seat, outs, told=True)
        return outs

    def _detach(self, conn: ConnId) -> list[Output]:
        """A member's connection went away; the grace period starts if it was its
        seat's last."""
        if conn not in self.members:
            return []
        seat = self.members.pop(conn)
        self._audience = None
        self._who.pop(conn, None)
        outs: list[Output] = [Exited(conn)]
        if seat is not None:
            slot = self.seats[seat]
            if self.status is Status.RUNNING and not self.connected(seat) and not slot.autopilot:
                self._start_grace(slot, outs)
        self._changed(outs)  # a spectator gone changes the count
        self._check_abandoned(outs)
        return outs

    def _leave(self, command: Leave) -> list[Output]:
        """The player leaves: an open seat is freed, a running one goes to a bot,
        and a finished one is no longer where the player is put back."""
        person = command.person
        if command.answer and command.conn is not None and command.conn not in self.members:
            raise refused(ErrorCode.NOT_IN_MATCH, "join or watch a match first")
        undo = self._saved()
        outs_before: list[Output] = []
        gone = [c for c in self.members if c == command.conn or self._who[c].id == person.id]
        for conn in gone:
            del self.members[conn]
            self._audience = None
            self._who.pop(conn, None)
        seat = self.seat_of(person.id)
        if seat is not None:
            slot = self.seats[seat]
            if self.status is Status.OPEN:
                slot.player = None
                if person.id == self.host.id:
                    self._pass_host(outs_before)
            else:
                slot.left = True

        def then() -> list[Output]:
            outs = [*outs_before]
            outs.extend(Exited(conn) for conn in gone)
            if command.answer and command.request is not None and command.conn is not None:
                outs.append(Reply(command.conn, wire.Ok(id=command.request)))
            if seat is not None and self.status is Status.RUNNING:
                slot = self.seats[seat]
                if slot.grace is not None:
                    self._cancel_timer(outs, slot.grace[0])
                    slot.grace = None
                self._hand_to_bot(slot, outs)
            self._changed(outs)
            self._check_abandoned(outs)
            return outs

        if not command.answer or command.conn is None:  # going elsewhere: it does not wait
            row = self.row()
            self._store_soon(outs_before, SaveMatch(row))
            return then()
        return self._commit(then, self._refuse_unstored(command.conn, command.request), undo)

    def _pass_host(self, outs: list[Output]) -> None:
        """The host left an open match: the person in the lowest seat hosts it
        now, so that someone can still start it, and is told so."""
        heir = next(
            (seat for seat in self.seats if seat.player is not None and not seat.is_bot), None
        )
        if heir is None or heir.player is None:
            return  # nobody seated: the match goes
        self.host = heir.player
        conns = self._conns_of(heir.index)
        if conns:
            outs.append(Send(conns, (views.joined_frame(self.id, heir.index, True),)))

    def _check_abandoned(self, outs: list[Output]) -> None:
        """An open match with nobody in it goes away: at once if no person holds
        a seat, else once the grace period has passed without one coming back."""
        if self.status is not Status.OPEN or self.members:
            return
        if not any(seat.kind == "human" for seat in self.seats):
            self._go(outs)
        elif self._abandon is None:
            self._abandon = self._set_timer(outs, "abandon", self.config.grace_period)

    def _go(self, outs: list[Output]) -> None:
        self._cancel_all_timers(outs)
        self._halted = True
        self._store_soon(outs, ForgetOpenMatch(self.id))
        outs.append(Gone())

    # -- everything else a member may ask -------------------------------------------------

    def _member_seat(self, conn: ConnId) -> int | None:
        if conn not in self.members:
            raise refused(ErrorCode.NOT_IN_MATCH, "join or watch a match first")
        return self.members[conn]

    def _sync(self, command: Sync) -> list[Output]:
        seat = self._member_seat(command.conn)
        if self._dealt is None:
            raise refused(ErrorCode.MATCH_NOT_READY, "the match has not started")
        outs: list[Output] = [Reply(command.conn, self._snapshot_message(seat, command.request))]
        if seat is not None and self._player_decides(seat):
            outs.append(Send((command.conn,), (self._prompt(seat),)))
        if self._decisions.timers:
            outs.append(Send((command.conn,), (self._timers_frame(),)))
        return outs

    def _chat(self, command: Chat) -> list[Output]:
        seat = self._member_seat(command.conn)
        line = wire.ChatLine(match=self.id, seat=seat, name=command.person.name, text=command.text)
        outs: list[Output] = []
        if command.request is not None:
            outs.append(Reply(command.conn, wire.Ok(id=command.request)))
        outs.append(Send(self._everyone(), (wire.encode(line),)))
        return outs

    def _replay(self, command: Replay) -> list[Output]:
        """The match's events as the person's seat saw them — a seat they left
        included (R27) — or as a spectator did; an open-box match's seed, salt
        and actions too once it is finished."""
        seat = self.seat_of(command.person.id)
        if seat is None:
            self._check_code(command.code)
        published = (
            self.match if self.status is Status.FINISHED and self.settings.open_box else None
        )
        page = views.replay_page(
            command.request,
            self.id,
            self.status.value,
            self.settings,
            len(self.seats),
            seat,
            self.events(),
            self.played_by,
            command.from_seq,
            published,
            self.salt,
        )
        return [Reply(command.conn, page)]

    # -- learning the game ----------------------------------------------------------------

    def _analyse(self, command: Analyse) -> list[Output]:
        """What the analysis of a seat is made from, once the match is finished:
        the person's own seat, or any seat of an open-box match (R27)."""
        own = self.seat_of(command.person.id)
        if own is None:
            self._check_code(command.code)
        if self.status is not Status.FINISHED or self._dealt is None:
            raise refused(
                ErrorCode.NOT_FINISHED, f"match {self.id} is not finished: no analysis yet"
            )
        seat = own if command.seat is None else command.seat
        if seat is None:
            raise refused(
                ErrorCode.NOT_YOUR_SEAT,
                f"you hold no seat in match {self.id}: name one (open-box matches only)",
            )
        if not 0 <= seat < len(self.seats):
            raise wire.ProtocolError(
                ErrorCode.BAD_MESSAGE, f"match {self.id} has no seat {seat}", path="analyse.seat"
            )
        if seat != own and not self.settings.open_box:
            raise refused(
                ErrorCode.NOT_YOUR_SEAT,
                f"seat {seat}'s analysis is its player's only (R27); "
                "any seat's only in a finished open-box match",
            )
        match = self.match
        assert match is not None  # dealt, so made again if let go
        if match.dealt:
            raise refused(
                ErrorCode.INTERNAL_ERROR, "a match dealt by hand cannot be rebuilt for analysis"
            )
        order = AnalysisOrder(command.conn, command.request, self.id, seat, MatchRecord.of(match))
        return [order]

    def _hint(self, command: Hint) -> list[Output]:
        """A player's hint for their open decision: computed away from the
        match (``AskHint``), answered when ``HintReady`` comes back."""
        if not self.settings.hints:
            raise refused(ErrorCode.HINTS_OFF, f"the host of match {self.id} allows no hints")
        seat = self.members.get(command.conn)
        if seat is None:
            raise refused(ErrorCode.NOT_IN_MATCH, "hints are for the players of the match")
        match = self.match
        opened = self._decisions.opened.get(seat)
        if (
            match is None
            or self.status is not Status.RUNNING
            or opened is None
            or not self._player_decides(seat)
        ):
            if command.seq is not None and match is not None:
                raise refused(ErrorCode.DECISION_TAKEN, "that decision has been taken")
            raise refused(ErrorCode.NOT_YOUR_TURN, "you have no decision to take now")
        if command.seq is not None and not opened <= command.seq <= self.seq:
            raise refused(
                ErrorCode.DECISION_TAKEN,
                f"the prompt of seq {command.seq} is not your open decision "
                f"(the prompt of seq {opened} is)",
            )
        seq = opened if command.seq is None else command.seq
        known = self._hints.get(seat)
        if known is not None and known[0] == opened:  # asked again: it costs nothing more
            legal, _ = prompt_choices(match, seat)
            hint = views.hint_values(command.request, self.id, seq, seat, legal, known[1])
            return [Reply(command.conn, hint)]
        if command.conn in self._hinting:
            raise refused(ErrorCode.ANALYSIS_BUSY, "your previous hint is still being computed")
        self._hinting[command.conn] = opened
        seed = f"{self.id}:{seat}:{opened}"
        return [
            AskHint(command.conn, command.request, seat, opened, seq, observe(match, seat), seed)
        ]

    def _hint_ready(self, command: HintReady) -> list[Output]:
        """A hint came back: answered if its decision is still open."""
        if self._hinting.get(command.conn) == command.decision:
            del self._hinting[command.conn]
        values = command.values
        if values is None:
            raise refused(ErrorCode.ANALYSIS_BUSY, command.why or "the hint could not be computed")
        seat = command.seat
        match = self.match
        if match is None or self._decisions.opened.get(seat) != command.decision:
            raise refused(
                ErrorCode.DECISION_TAKEN, "the decision was taken before its hint was ready"
            )
        self._hints[seat] = (command.decision, values)
        legal, _ = prompt_choices(match, seat)
        hint = views.hint_values(command.request, self.id, command.seq, seat, legal, values)
        return [Reply(command.conn, hint)]

    def _play_again(self, command: PlayAgain) -> list[Output]:
        """A rematch: same seats, same bots. The first to ask opens it; the
        other players keep their seats in it and are asked, not moved."""
        self._member_seat(command.conn)
        if self.seat_of(command.person.id) is None:
            raise refused(ErrorCode.NOT_IN_MATCH, "only the match's players can ask for a rematch")
        if self.status is not Status.FINISHED:
            raise refused(ErrorCode.MATCH_NOT_READY, "the match is not over yet")
        if self.rematch_id is not None:
            return [Rematch(self.rematch_id)]
        self.rematch_id = command.new_id
        seats = []
        for seat in self.seats:
            if seat.is_bot:
                seats.append(seat.stored())
            elif seat.player is not None and not seat.left:
                seats.append(StoredSeat(player=seat.player.id))
            else:
                seats.append(StoredSeat())
        self._kept = frozenset(s.player for s in seats if s.player is not None)
        outs: list[Output] = []
        self._changed(outs)
        outs.append(
            Rematch(command.new_id, RematchPlan(self.settings, command.person.id, tuple(seats)))
        )
        return outs

    def _rematch_opened(self, command: RematchOpened) -> list[Output]:
        """Tell the other players still here whose seats the rematch keeps."""
        offer = wire.encode(
            wire.RematchOffer(match=self.id, rematch=command.rematch, host=command.host.name)
        )
        to = tuple(
            conn
            for conn, seat in self.members.items()
            if seat is not None
            and self._seat_player_id(seat) != command.host.id
            and self._seat_player_id(seat) in self._kept
        )
        return [Send(to, (offer,))] if to else []
