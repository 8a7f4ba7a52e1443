"""Where engine and protocol meet: engine values, observations and events
turned into wire messages, and wire actions into engine actions.

Every frame a player receives about a match is built here from that seat's
:func:`engine.observe` or :func:`engine.project_event` — never from the match
itself — so nothing R26 hides can reach the wire. Everything here takes plain
values (an observation, events, a seat's facts), never a match's owner.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import msgspec

import engine
import protocol as wire
from engine import all_cards, project_event
from engine import events as ev
from engine.analysis import DecisionValues
from protocol.limits import MAX_REPLAY_EVENTS

from ..rulesets import ruleset_info
from .seats import Seat
from .settings import MatchSettings

#: A summary names at most this many spectators (it counts them all): the
#: waiting room shows a few names, and a crowd must not grow every update.
MAX_WATCHING_LISTED = 8

__all__ = [
    "EventFrames",
    "action_from_wire",
    "action_to_wire",
    "event_to_wire",
    "joined_frame",
    "match_removed_frame",
    "match_update_frame",
    "played_by",
    "points_to_wire",
    "prompt_frame",
    "replay_page",
    "scoring_to_wire",
    "seat_info",
    "snapshot",
    "state_to_wire",
    "summary",
    "timers_frame",
]

_WIRE_EVENTS: dict[type, type[Any]] = {
    ev.FestivalStarted: wire.FestivalStarted,
    ev.CardsDealt: wire.CardsDealt,
    ev.OpeningChosen: wire.OpeningChosen,
    ev.OpeningRevealed: wire.OpeningRevealed,
    ev.TurnStarted: wire.TurnStarted,
    ev.CardDrawn: wire.CardDrawn,
    ev.CardKept: wire.CardKept,
    ev.CardGiven: wire.CardGiven,
    ev.CardAddedFaceUp: wire.CardAddedFaceUp,
    ev.CardAddedSecret: wire.CardAddedSecret,
    ev.SecretRevealed: wire.SecretRevealed,
}
_FIELDS = {cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in _WIRE_EVENTS}
#: per event type with private fields (the engine's table, R24–R26): those fields, null
_BLANK: dict[type, dict[str, None]] = {
    cls: dict.fromkeys(names) for cls, names in ev.PRIVATE_FIELDS.items()
}


#: Each card's and colour's wire spelling: there are twelve cards (R3) and four colours.
_SPELLING: dict[object, str] = {
    **{colour: colour.value for colour in engine.Colour},
    **{card: str(card) for card in all_cards()},
}


def _plain(value: object) -> Any:
    """A card, colour or tuple of them in its one wire spelling (other values as
    they are). Called for every field of every event sent: types are compared,
    not ``isinstance``-checked, and spellings are looked up."""
    kind = type(value)
    if kind is int or value is None:
        return value
    if kind is tuple:
        return tuple([_plain(item) for item in value])  # type: ignore[attr-defined]
    if kind is engine.Card or kind is engine.Colour:
        return _SPELLING[value]
    return value


def _cards(cards: Sequence[engine.Card]) -> tuple[Any, ...]:
    return tuple(str(card) for card in cards)


# -- actions ------------------------------------------------------------------------------


def action_from_wire(action: wire.Action) -> engine.Action:
    """The engine's form of a proposed action (legality is the engine's to judge)."""
    if isinstance(action, wire.Give):
        return engine.Action.give(action.to_seat)
    if isinstance(action, wire.Opening):
        return engine.Action.opening(engine.Card.parse(action.secret))
    if isinstance(action, wire.Keep):
        return engine.Action.keep()
    if isinstance(action, wire.AddFaceUp):
        return engine.Action.add_face_up()
    return engine.Action.add_secret()


def action_to_wire(action: engine.Action) -> wire.Action:
    """The wire form of an engine action."""
    kind = action.kind
    if kind is engine.ActionKind.GIVE:
        assert action.to_seat is not None
        return wire.Give(to_seat=action.to_seat)
    if kind is engine.ActionKind.OPENING:
        return wire.Opening(secret=cast(Any, str(action.secret)))
    if kind is engine.ActionKind.KEEP:
        return _KEEP
    if kind is engine.ActionKind.ADD_FACE_UP:
        return _ADD_FACE_UP
    return _ADD_SECRET


_KEEP = wire.Keep()
_ADD_FACE_UP = wire.AddFaceUp()
_ADD_SECRET = wire.AddSecret()


# -- events -------------------------------------------------------------------------------


def scoring_to_wire(scoring: engine.FinalScoring) -> wire.Scoring:
    """The final scoring breakdown (R20–R23)."""
    return wire.Scoring(
        players=tuple(
            wire.PlayerScore(
                seat=p.seat,
                keeping=p.keeping,
                giving=p.giving,
                majorities={colour.value: points for colour, points in p.majorities},
                total=p.total,
                tulips=p.tulips,
            )
            for p in scoring.players
        ),
        majorities=tuple(
            wire.MajorityResult(
                colour=result.colour.value,
                rank=result.rank,
                places=tuple(
                    wire.MajorityPlace(
                        seat=pl.seat,
                        cards=pl.cards,
                        value=pl.value,
                        place=pl.place,
                        points=pl.points,
                    )
                    for pl in result.places
                ),
            )
            for result in scoring.majorities
        ),
        winners=scoring.winners,
        decided_by=scoring.decided_by.value,
    )


def event_to_wire(event: engine.Event) -> wire.GameEvent:
    """An event already projected for its receiver, in wire form."""
    if isinstance(event, ev.MatchEnded):
        return wire.MatchEnded(scoring=scoring_to_wire(event.scoring))
    cls = _WIRE_EVENTS[type(event)]
    return cls(**{name: _plain(getattr(event, name)) for name in _FIELDS[type(event)]})  # type: ignore[no-any-return]


def played_by(
    marks: Mapping[int, wire.PlayedBy], from_seq: int, count: int
) -> tuple[wire.PlayedBy | None, ...]:
    """``replay.by`` for the ``count`` events from ``from_seq``: each one's mark,
    aligned with them, or () when none of them has one."""
    seqs = range(from_seq, from_seq + count)
    if not any(seq in marks for seq in seqs):
        return ()
    return tuple(marks.get(seq) for seq in seqs)


class EventFrames:
    """The frames of one batch of events, each encoded once per distinct view.

    An event with private fields has two views: its owner's and everyone
    else's (spectators included); any other event has one. Everyone without a
    private event in the batch shares one list of frames. ``by`` goes on the
    first event only: the one that shows the choice.
    """

    def __init__(
        self,
        match_id: str,
        first_seq: int,
        events: Sequence[engine.Event],
        by: wire.PlayedBy | None = None,
    ) -> None:
        self._match_id = match_id
        self._first_seq = first_seq
        self._events = events
        self._by = by
        #: everyone else's view of each event, in order (built on first use)
        self._public: tuple[bytes, ...] | None = None
        #: seat -> the indexes of the events with private fields it owns
        self._owned: dict[int, list[int]] = {}
        self._mine: dict[int, tuple[bytes, ...]] = {}
        #: each event whole, in wire form (built on first use)
        self._full: dict[int, wire.GameEvent] = {}

    def _encode(self, index: int, seat: int | None) -> bytes:
        return self._frame(index, self._wire(index, seat))

    def _frame(self, index: int, event: wire.GameEvent) -> bytes:
        return wire.encode(
            wire.Event(
                match=self._match_id,
                seq=self._first_seq + index,
                event=event,
                by=self._by if index == 0 else None,
            )
        )

    def _wire(self, index: int, seat: int | None) -> wire.GameEvent:
        """Event ``index`` as ``seat`` may see it (R24–R26), in wire form: the
        whole event converted once, its private fields — the engine's table,
        as :func:`engine.project_event` blanks them — set to null for anyone
        but their owner."""
        full = self._full.get(index)
        if full is None:
            full = self._full[index] = event_to_wire(self._events[index])
        event = self._events[index]
        blank = _BLANK.get(type(event))
        if blank is None or (seat is not None and getattr(event, "seat", None) == seat):
            return full
        return msgspec.structs.replace(full, **blank)

    def _public_frames(self) -> tuple[bytes, ...]:
        public = self._public
        if public is None:
            private = ev.PRIVATE_FIELDS
            for index, event in enumerate(self._events):
                owner = getattr(event, "seat", None) if type(event) in private else None
                if owner is not None:
                    self._owned.setdefault(owner, []).append(index)
            public = self._public = tuple(
                self._encode(index, None) for index in range(len(self._events))
            )
        return public

    def for_seat(self, seat: int | None) -> tuple[bytes, ...]:
        """The frames ``seat`` (None: a spectator) receives, in order."""
        if type(seat) is bool:  # pragma: no cover - seats are ints
            raise TypeError("seat must be an int or None")
        public = self._public_frames()
        if seat is None or seat not in self._owned:
            return public
        mine = self._mine.get(seat)
        if mine is None:
            frames = list(public)
            for index in self._owned[seat]:
                frames[index] = self._encode(index, seat)
            mine = self._mine[seat] = tuple(frames)
        return mine


# -- snapshots, prompts, summaries ----------------------------------------------------------


def state_to_wire(view: engine.Observation) -> wire.State:
    """A seat's observation as the snapshot's ``state``."""
    rules = view.ruleset
    return wire.State(
        phase=view.phase.value,
        turn=view.turn,
        first_seat=view.first_seat,
        active=view.active,
        to_act=view.to_act,
        used=view.used.value if view.used is not None else None,
        festival=_cards(view.festival),
        totals={colour.value: total for colour, total in view.totals},
        ranking=tuple(colour.value for colour in view.ranking),
        deck_count=view.deck_count,
        secret_count=view.secret_count,
        removed_count=view.removed_count,
        seats=tuple(
            wire.SeatState(
                seat=s.seat,
                bouquet=_cards(s.bouquet),
                keeping=s.keeping,
                giving=s.giving,
                opening_done=s.opening_done,
            )
            for s in view.seats
        ),
        revealed=_cards(view.revealed),
        scoring=scoring_to_wire(view.scoring) if view.scoring is not None else None,
        hand=_cards(view.hand),
        opening=_cards(view.opening),
        drawn=cast(Any, str(view.drawn)) if view.drawn is not None else None,
        my_secret=_cards(view.my_secret),
        legal_actions=tuple(action_to_wire(a) for a in view.legal_actions),
        points=points_to_wire(rules, view.players),
    )


def points_to_wire(rules: engine.Ruleset, players: int) -> wire.Points:
    """The festival cards' points (R30) of ``rules`` at ``players`` seats: public."""
    return wire.Points(
        giving_bonus=cast(Any, tuple(rules.giving_bonus)),
        bouquet=cast(Any, tuple(rules.bouquet_points)),
        majority=cast(Any, tuple(tuple(row) for row in rules.majority_points)),
        majority_places=rules.majority_places[players],
        reveal_size=rules.reveal_size,
    )


def snapshot(
    match_id: str,
    seq: int,
    seat: int | None,
    view: engine.Observation,
    request_id: wire.RequestId | None = None,
) -> wire.Snapshot:
    """Everything ``seat`` may see of the match after its first ``seq`` events:
    ``view`` is that seat's observation (a spectator's for None)."""
    return wire.Snapshot(
        id=request_id,
        match=match_id,
        seq=seq,
        seat=seat,
        state=state_to_wire(view),
        ruleset=ruleset_info(view.ruleset),
    )


def prompt_frame(
    match_id: str,
    seq: int,
    seat: int,
    legal: Sequence[engine.Action],
    points: Sequence[int],
    deadline: float | None,
    rankings: Sequence[Sequence[engine.Colour] | None] = (),
) -> bytes:
    """The prompt for ``seat``: its legal actions, what each scores at once
    (R14–R17) and, for a face-up add, the ranking it would make (R8, R16), as
    that seat's observation has them, encoded."""
    return wire.encode(
        wire.Prompt(
            match=match_id,
            seq=seq,
            seat=seat,
            actions=tuple([action_to_wire(a) for a in legal]),
            deadline=deadline,
            points=tuple(points),
            rankings=tuple(
                None if r is None else cast(Any, tuple(c.value for c in r)) for r in rankings
            ),
        )
    )


def option_values(
    legal: Sequence[engine.Action], values: DecisionValues
) -> tuple[wire.OptionValue, ...]:
    """The analysis's ``values`` of each of ``legal`` (a prompt's actions), in
    that order: ``options[i]`` values ``legal[i]``."""
    options = []
    for action in legal:
        value = values.value_of(action)
        options.append(
            wire.OptionValue(
                action=action_to_wire(action),
                expected_points=value.expected_points,
                win_chance=value.win_chance,
            )
        )
    return tuple(options)


def hint_values(
    request: wire.RequestId | None,
    match_id: str,
    seq: int,
    seat: int,
    legal: Sequence[engine.Action],
    values: DecisionValues,
) -> wire.HintValues:
    """A ``hint``: the values of the prompt's ``legal`` actions, aligned with them."""
    options = option_values(legal, values)
    best = max(range(len(options)), key=lambda i: (options[i].expected_points, -i))
    return wire.HintValues(
        id=request,
        match=match_id,
        seq=seq,
        seat=seat,
        options=options,
        best=best,
        exact=values.exact,
        deals=values.deals,
    )


def seat_info(seat: Seat, connected: bool, bot_in: float | None) -> wire.SeatInfo:
    """One seat as the lobby lists it: ``connected`` whether its player has a
    connection in the match, ``bot_in`` the grace period's seconds left."""
    if seat.is_bot:
        strength = cast(Any, seat.bot.strength if seat.bot is not None else None)
        return wire.SeatInfo(
            seat=seat.index, kind="bot", name=f"bot {seat.index}", strength=strength, connected=True
        )
    if seat.player is not None:
        return wire.SeatInfo(
            seat=seat.index,
            kind="human",
            name=seat.player.name,
            player=seat.player.id,
            connected=connected and not seat.autopilot,
            bot_in=bot_in,
            stand_in=seat.autopilot,
            reserved=seat.reserved,
        )
    return wire.SeatInfo(seat=seat.index, kind="empty")


def summary(
    match_id: str,
    settings: MatchSettings,
    status: str,
    host: str,
    seats: Iterable[wire.SeatInfo],
    commitment: str | None,
    node: str | None,
    *,
    watching: Sequence[str] = (),
) -> wire.MatchSummary:
    """A match as the lobby lists it; ``host`` is the host's name, ``status``
    its wire spelling, ``commitment`` an open box's seed commitment once dealt,
    ``watching`` the names of its spectators now."""
    return wire.MatchSummary(
        match=match_id,
        name=settings.name,
        status=cast(Any, status),
        seats=tuple(seats),
        host=host,
        has_join_code=settings.join_code is not None,
        ruleset=settings.ruleset_name,
        turn_timer=settings.turn_timer,
        open_box=settings.open_box,
        tutorial=settings.tutorial,
        rated=settings.rated,
        hints=settings.hints,
        seed_commitment=commitment,
        node=node,
        spectators=len(watching),
        watching=tuple(watching[:MAX_WATCHING_LISTED]),
    )


def timers_frame(match_id: str, seq: int, timers: Mapping[int, float]) -> bytes:
    """Every running turn timer (seconds left, by seat) as a ``turn_timer``
    notice, encoded. It is public: whose turn it is is (R24), and a number of
    seconds shows no card."""
    return wire.encode(
        wire.TurnTimer(
            match=match_id,
            seq=seq,
            timers=tuple(
                wire.SeatTimer(seat=seat, seconds=seconds)
                for seat, seconds in sorted(timers.items())
            ),
        )
    )


def match_update_frame(summary: wire.MatchSummary) -> bytes:
    """A summary as a ``match_update``, encoded."""
    return wire.encode(wire.MatchUpdate(match=summary))


def match_removed_frame(match_id: str) -> bytes:
    """A ``match_removed`` for the lobby, encoded."""
    return wire.encode(wire.MatchRemoved(match=match_id))


def joined_frame(match_id: str, seat: int | None, host: bool) -> bytes:
    """An unasked ``joined``: a resumed seat, or (``host`` True) a player who
    hosts the open match now because its host left, encoded."""
    return wire.encode(wire.Joined(match=match_id, seat=seat, host=host))


def replay_page(
    request_id: wire.RequestId | None,
    match_id: str,
    status: str,
    settings: MatchSettings,
    players: int,
    seat: int | None,
    log: Sequence[engine.Event],
    marks: Mapping[int, wire.PlayedBy],
    from_seq: int,
    published: engine.Match | None,
    salt: bytes | None,
) -> wire.ReplayPage:
    """One page of a match's record from event ``from_seq``, as ``seat`` saw
    it (None: as a spectator did); ``published`` is the match itself once an
    open box publishes its seed and actions (R27), else None."""
    start = from_seq - 1
    page = log[start : start + MAX_REPLAY_EVENTS]
    more = start + len(page) < len(log)
    return wire.ReplayPage(
        id=request_id,
        match=match_id,
        status=cast(Any, status),
        ruleset=settings.ruleset_name,
        from_seq=from_seq,
        events=tuple(event_to_wire(project_event(e, seat)) for e in page),
        next_seq=from_seq + len(page) if more else None,
        by=played_by(marks, from_seq, len(page)),
        points=points_to_wire(settings.ruleset, players),
        seat=seat,
        seed=published.seed if published is not None else None,
        salt=salt.hex() if published is not None and salt is not None else None,
        first_seat=settings.first_seat if published is not None else None,
        actions=tuple(
            wire.SeatAction(seat=actor, action=action_to_wire(action))
            for actor, action in (published.history if published is not None else ())
        ),
    )
