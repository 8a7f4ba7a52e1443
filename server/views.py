"""Where engine and protocol meet: engine values, observations and events
turned into wire messages, and wire actions into engine actions.

Every frame a player receives about a match is built here from that seat's
:func:`engine.observe` or :func:`engine.project_event` — never from the match
itself — so nothing R26 hides can reach the wire.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import engine
import protocol as wire
from engine import all_cards, observe, project_event
from engine import events as ev
from engine.observation import prompt_choices

from .commitment import commitment

if TYPE_CHECKING:
    from .room import Room

__all__ = [
    "EventFrames",
    "action_from_wire",
    "action_to_wire",
    "event_to_wire",
    "match_update_frame",
    "prompt_frame",
    "scoring_to_wire",
    "seed_commitment",
    "snapshot",
    "snapshot_frame",
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

    def _encode(self, index: int, seat: int | None) -> bytes:
        projected = project_event(self._events[index], seat)
        return wire.encode(
            wire.Event(
                match=self._match_id,
                seq=self._first_seq + index,
                event=event_to_wire(projected),
                by=self._by if index == 0 else None,
            )
        )

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
    )


def snapshot(
    room: Room, seat: int | None, request_id: wire.RequestId | None = None
) -> wire.Snapshot:
    """Everything ``seat`` may see of the room's match now."""
    assert room.match is not None
    return wire.Snapshot(
        id=request_id,
        match=room.id,
        seq=len(room.log),
        seat=seat,
        state=state_to_wire(observe(room.match, seat)),
    )


def snapshot_frame(room: Room, seat: int | None) -> bytes:
    """:func:`snapshot`, encoded."""
    return wire.encode(snapshot(room, seat))


def prompt_frame(room: Room, seat: int, deadline: float | None) -> bytes:
    """The prompt for ``seat``: its legal actions and what each scores at once
    (R14–R17), as that seat's observation has them, encoded."""
    assert room.match is not None
    legal, points = prompt_choices(room.match, seat)
    return wire.encode(
        wire.Prompt(
            match=room.id,
            seq=len(room.log),
            seat=seat,
            actions=tuple([action_to_wire(a) for a in legal]),
            deadline=deadline,
            points=points,
        )
    )


def status(room: Room) -> Any:
    """The room's status in its wire spelling."""
    return room.status.value


def summary(room: Room) -> wire.MatchSummary:
    """The room as the lobby lists it."""
    seats = []
    for slot in room.seats:
        if slot.is_bot:
            strength = cast(Any, slot.bot.strength if slot.bot is not None else None)
            seats.append(
                wire.SeatInfo(
                    seat=slot.seat,
                    kind="bot",
                    name=f"bot {slot.seat}",
                    strength=strength,
                    connected=True,
                )
            )
        elif slot.player is not None:
            seats.append(
                wire.SeatInfo(
                    seat=slot.seat,
                    kind="human",
                    name=slot.player.name,
                    connected=room.connected(slot.seat) and not slot.autopilot,
                    bot_in=room.grace_left(slot.seat),
                    stand_in=slot.autopilot,
                )
            )
        else:
            seats.append(wire.SeatInfo(seat=slot.seat, kind="empty"))
    return wire.MatchSummary(
        match=room.id,
        name=room.settings.name,
        status=status(room),
        seats=tuple(seats),
        host=room.host.name,
        has_join_code=room.settings.join_code is not None,
        ruleset=room.settings.ruleset_name,
        turn_timer=room.settings.turn_timer,
        open_box=room.settings.open_box,
        seed_commitment=seed_commitment(room),
        node=room.services.node,
    )


def timers_frame(room: Room) -> bytes:
    """Every running turn timer as a ``turn_timer`` notice, encoded. It is
    public: whose turn it is is (R24), and a number of seconds shows no card."""
    return wire.encode(
        wire.TurnTimer(
            match=room.id,
            seq=len(room.log),
            timers=tuple(
                wire.SeatTimer(seat=seat, seconds=seconds)
                for seat, seconds in room.timers().items()
            ),
        )
    )


def seed_commitment(room: Room) -> str | None:
    """An open-box match's commitment to its seed, once dealt (R27); else None."""
    if not room.settings.open_box or room.match is None or room.salt is None:
        return None
    return commitment(room.salt, room.match.seed)


def match_update_frame(room: Room) -> bytes:
    """The room's summary as a ``match_update``, encoded."""
    return wire.encode(wire.MatchUpdate(match=summary(room)))


def match_removed_frame(match_id: str) -> bytes:
    """A ``match_removed`` for the lobby, encoded."""
    return wire.encode(wire.MatchRemoved(match=match_id))


def new_host_frame(room: Room, seat: int) -> bytes:
    """An unasked ``joined`` telling the player in ``seat`` that they host the
    room now (its host left while it was open), encoded."""
    return wire.encode(wire.Joined(match=room.id, seat=seat, host=True))
