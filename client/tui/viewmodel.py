"""From protocol messages to what the widgets render: pure functions only.

The state comes from the server's snapshot moved forward event by event
(:mod:`client.tui.fold`); the log's words from :mod:`client.tui.narrate`.

- :func:`table_view`, :func:`final_view` and :func:`lobby_rows` build the
  frozen views the widgets render, from the state, the match summary (names,
  connections) and the client's own situation (its seat, whether it is
  choosing a receiver).

What changed since ``since`` (:attr:`client.tui.model.Follow.since`) is
marked: new festival cards and the totals they moved, grown bouquets and
moved scores. Absent players' countdowns and every seat's turn timer come in
as whole seconds (:mod:`client.tui.signals`); the views only carry them.

What a choice scores comes from the seat's last prompt (``prompt.points``,
looked up by action with :func:`client.options.points_by_action`), and so
does where a face-up add puts the colour (``prompt.rankings``); the view
never works either out, and shows none when the server does not say. The
festival's rows show the festival cards' own numbers (``state.points``) for
each colour's rank, the way the printed cards lie on the table: a legend, not
a sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rich.text import Text

import protocol as wire

from .i18n import t

__all__ = [
    "ActionsView",
    "Choice",
    "FestivalView",
    "FinalView",
    "HintValue",
    "LobbyRow",
    "MajorityLine",
    "Mode",
    "PlayerRow",
    "RankMove",
    "RankRow",
    "ScoreRow",
    "TableView",
    "final_view",
    "lobby_rows",
    "seat_names",
    "table_view",
]

COLOURS: tuple[wire.Colour, ...] = wire.COLOURS
UNRANKED = 3  # the festival cards' last column: "4th / unranked" (protocol Points)

# -- names -----------------------------------------------------------------------------------


def seat_names(summary: wire.MatchSummary | None, seats: int) -> dict[int, str]:
    """Every seat's display name: a person's own, a bot's in the player's language."""
    names = {seat: t("seat.numbered", n=seat + 1) for seat in range(seats)}
    if summary is not None:
        for info in summary.seats:
            if info.kind == "bot":
                names[info.seat] = t("seat.bot", n=info.seat + 1)
            elif info.kind == "human" and info.name:
                names[info.seat] = info.name
            else:
                names[info.seat] = t("seat.empty")
    return names


# -- the table ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankRow:
    """One colour of the festival: its rank, total, and the numbers printed on
    the festival card of that rank (a legend from ``state.points``)."""

    colour: wire.Colour
    rank: int | None  # 0 for 1st … 3 for 4th; None: unranked
    total: int
    give: int  # the card's giving bonus
    keep: int  # the card's bouquet points
    majority: tuple[int, ...]  # majority points that score at this table; () for 4th
    values: tuple[int, ...] = ()  # the values of its festival cards, in the order placed
    new: int = 0  # how many of ``values`` (the last ones) came since the marks' baseline
    moved: bool = False  # the total changed since then


@dataclass(frozen=True, slots=True)
class FestivalView:
    """The festival, the deck and the secret festival."""

    rows: tuple[RankRow, ...]
    deck: int
    secret: int
    my_secret: tuple[wire.Card, ...]
    revealed: tuple[wire.Card, ...]
    spectator: bool
    secret_moved: bool = False  # the secret festival's count changed since the baseline
    #: for each of ``my_secret``: whether a card like it was revealed (R19); the
    #: server never says whose a revealed card was (R26), so a card of that
    #: spelling counts, each revealed card once
    mine_revealed: tuple[bool, ...] = ()
    #: show what each rank's festival card gives (False: a replay whose points are unknown)
    legend: bool = True


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """One seat: who holds it, their points so far and their bouquet by colour."""

    seat: int
    name: str
    kind: wire.SeatKind
    you: bool
    acting: bool
    connected: bool
    keeping: int
    giving: int
    colours: tuple[tuple[int, int], ...]  # (cards, total value) in colour order
    tulips: int
    majorities: int = 0  # once scored (R20), the final total includes them
    score_delta: int = 0  # points scored since the marks' baseline
    gained: tuple[bool, ...] = ()  # in colour order: the bouquet got cards of it since then
    stand_in: bool = False  # a bot plays this person's seat now
    bot_in: int | None = None  # seconds until a bot plays for this absent person
    seconds: int | None = None  # seconds left on the seat's turn timer
    #: the bouquet's card values, in colour order, each colour's highest first
    cards: tuple[tuple[int, ...], ...] = ()

    @property
    def score(self) -> int:
        """Points so far (majorities count once the match is scored)."""
        return self.keeping + self.giving + self.majorities


@dataclass(frozen=True, slots=True)
class RankMove:
    """Where a face-up add would put the drawn card's colour (R8), as the
    server said: its rank now and after (0 for 1st; None: unranked now)."""

    colour: wire.Colour
    before: int | None
    after: int


@dataclass(frozen=True, slots=True)
class HintValue:
    """What a hint says of one legal action (issue 32): expected final points,
    win chance (0 to 1), and whether it is the best."""

    points: float
    chance: float
    best: bool


@dataclass(frozen=True, slots=True)
class Choice:
    """Something the player can do now, with the key that does it."""

    key: str
    label: str  # message id
    action: wire.Action | None  # None: a step that opens more choices (give → to whom)
    points: int | None = None
    card: wire.Card | None = None  # the opening: the card that goes face down …
    other: wire.Card | None = None  # … and the one that goes to the bouquet
    name: str | None = None
    #: a face-up add: the colour's rank before and after, when the prompt said
    ranking: RankMove | None = None
    #: what a hint says it is worth (issue 32), while one is shown
    hint: HintValue | None = None


Mode = Literal[
    "connecting",
    "waiting_room",
    "opening",
    "opening_done",
    "turn",
    "give",
    "acting",
    "offline",
    "wait",
    "watch",
    "reveal",
    "over",
]


@dataclass(frozen=True, slots=True)
class ActionsView:
    """The action panel: what the player is asked, and the choices with their points."""

    mode: Mode
    choices: tuple[Choice, ...] = ()
    drawn: wire.Card | None = None
    hand: tuple[wire.Card, ...] = ()
    second_card: bool = False
    #: this turn is the player's last one of the match
    last_turn: bool = False
    waiting_for: tuple[str, ...] = ()
    revealed: tuple[wire.Card, ...] = ()
    seats_taken: int = 0
    seats: int = 0
    host: bool = False
    host_name: str = ""  # who starts the match (the waiting room says so)
    missing: tuple[str, ...] = ()  # seats kept for people who are not here yet
    timer: int | None = None  # seconds left on the timer of those waited for
    #: the waiting room's match is open-box (R27)
    open_box: bool = False
    #: the waiting room's match changes its players' ratings
    rated: bool = False
    #: the private match's join code, shown to its host to pass on
    join_code: str | None = None
    #: the cards left in the deck, shown while the player places a card (R18)
    deck: int | None = None
    #: a rematch's players who have not accepted yet (their seats are kept)
    not_accepted: tuple[str, ...] = ()
    #: how many watch the match now
    spectators: int = 0
    #: the match allows hints (its host said so; such a match is never rated)
    hints: bool = False
    #: a hint was asked for this decision and is being computed
    thinking: bool = False
    #: the choices carry a hint's values
    hinted: bool = False


@dataclass(frozen=True, slots=True)
class TableView:
    """Everything the table screen shows."""

    title: str
    turn: int
    phase: wire.Phase | None
    online: bool
    festival: FestivalView | None
    players: tuple[PlayerRow, ...]
    actions: ActionsView
    log: tuple[Text, ...]
    keys: tuple[tuple[str, str], ...]  # (key label id, description id) for the key bar
    your_turn: bool = False
    seconds_left: int | None = None
    #: how many turns the match has in all, during the turns (R4, R18)
    turns: int | None = None
    #: the chat, oldest first: its own pane, apart from the moves
    chat: tuple[Text, ...] = ()
    #: how many watch the match now (the players' panel says so)
    spectators: int = 0


def _values(festival: Sequence[wire.Card], colour: wire.Colour) -> tuple[int, ...]:
    return tuple(p.value for p in map(wire.card_parts, festival) if p.colour == colour)


def _revealed_mine(mine: Sequence[wire.Card], revealed: Sequence[wire.Card]) -> tuple[bool, ...]:
    left = list(revealed)
    marks = []
    for card in mine:
        marks.append(card in left)
        if card in left:
            left.remove(card)
    return tuple(marks)


def festival_view(
    state: wire.State, me: int | None, since: wire.State | None = None
) -> FestivalView:
    """The festival's colours in rank order, unranked ones last; what changed
    since ``since`` marked."""
    points = state.points
    order = [*state.ranking, *(c for c in COLOURS if c not in state.ranking)]
    rows = []
    for colour in order:
        rank = state.ranking.index(colour) if colour in state.ranking else None
        index = UNRANKED if rank is None else rank
        majority = points.majority[index][: points.majority_places] if index < 3 else ()
        values = _values(state.festival, colour)
        total = state.totals.get(colour, 0)
        new = len(values) - len(_values(since.festival, colour)) if since is not None else 0
        rows.append(
            RankRow(
                colour=colour,
                rank=rank,
                total=state.totals.get(colour, 0),
                give=points.giving_bonus[index],
                keep=points.bouquet[index],
                majority=tuple(majority),
                values=values,
                new=max(0, new),
                moved=since is not None and since.totals.get(colour, 0) != total,
            )
        )
    return FestivalView(
        rows=tuple(rows),
        deck=state.deck_count,
        secret=state.secret_count,
        my_secret=state.my_secret,
        revealed=state.revealed,
        spectator=me is None,
        secret_moved=since is not None and since.secret_count != state.secret_count,
        mine_revealed=_revealed_mine(state.my_secret, state.revealed) if state.revealed else (),
    )


def _colours(bouquet: Sequence[wire.Card]) -> tuple[tuple[int, int], ...]:
    parts = [wire.card_parts(card) for card in bouquet]
    return tuple(
        (
            sum(1 for p in parts if p.colour == colour),
            sum(p.value for p in parts if p.colour == colour),
        )
        for colour in COLOURS
    )


def _cards(bouquet: Sequence[wire.Card]) -> tuple[tuple[int, ...], ...]:
    """The bouquet's values by colour (colour order), each colour's highest first."""
    parts = [wire.card_parts(card) for card in bouquet]
    return tuple(
        tuple(sorted((p.value for p in parts if p.colour == colour), reverse=True))
        for colour in COLOURS
    )


def player_rows(
    state: wire.State | None,
    summary: wire.MatchSummary | None,
    me: int | None,
    since: wire.State | None = None,
    *,
    bot_in: Mapping[int, int] | None = None,
    timers: Mapping[int, int] | None = None,
    online: bool = True,
) -> tuple[PlayerRow, ...]:
    """Every seat, from the state when the match has started, else from the
    summary; what changed since ``since`` marked (offline, our own seat shows
    as away). Once the match is scored, the points are the final ones (R20:
    majorities included)."""
    count = len(state.seats) if state is not None else len(summary.seats) if summary else 0
    names = seat_names(summary, count)
    infos = {info.seat: info for info in summary.seats} if summary is not None else {}
    scores = (
        {p.seat: p for p in state.scoring.players}
        if state is not None and state.scoring is not None
        else {}
    )
    rows = []
    for seat in range(count):
        info = infos.get(seat)
        kind: wire.SeatKind = info.kind if info is not None else "human"
        bouquet: Sequence[wire.Card] = ()
        keeping = giving = majorities = delta = 0
        gained: tuple[bool, ...] = ()
        if state is not None:
            seat_state = state.seats[seat]
            bouquet, keeping, giving = seat_state.bouquet, seat_state.keeping, seat_state.giving
            final = scores.get(seat)
            if final is not None:
                keeping, giving = final.keeping, final.giving
                majorities = final.total - final.keeping - final.giving
        colours = _colours(bouquet)
        if since is not None and seat < len(since.seats):
            before = since.seats[seat]
            delta = keeping + giving - before.keeping - before.giving
            gained = tuple(
                now[0] > old[0] for now, old in zip(colours, _colours(before.bouquet), strict=True)
            )
        rows.append(
            PlayerRow(
                seat=seat,
                name=names[seat],
                kind=kind,
                you=seat == me,
                acting=state is not None and seat in state.to_act,
                connected=(info.connected if info is not None else True) and (online or seat != me),
                keeping=keeping,
                giving=giving,
                colours=colours,
                tulips=len(bouquet),
                majorities=majorities,
                score_delta=delta,
                gained=gained,
                stand_in=info is not None and info.stand_in,
                bot_in=(bot_in or {}).get(seat),
                seconds=(timers or {}).get(seat),
                cards=_cards(bouquet),
            )
        )
    return tuple(rows)


_TURN_KEYS = {"keep": "k", "give": "g", "add_face_up": "f", "add_secret": "s"}


def _rank_move(
    state: wire.State, action: wire.Action, rankings: Mapping[wire.Action, Sequence[wire.Colour]]
) -> RankMove | None:
    """The drawn colour's rank now and after ``action``, from the ranking the
    prompt says it makes; None when it said none (or none that ranks the colour)."""
    after = rankings.get(action)
    if after is None or state.drawn is None:
        return None
    colour = wire.card_colour(state.drawn)
    if colour not in after:
        return None
    before = state.ranking.index(colour) if colour in state.ranking else None
    return RankMove(colour, before, list(after).index(colour))


def _turn_choices(
    state: wire.State,
    names: Mapping[int, str],
    picking: bool,
    points: Mapping[wire.Action, int],
    rankings: Mapping[wire.Action, Sequence[wire.Colour]],
    hint: Mapping[wire.Action, HintValue],
) -> tuple[Choice, ...]:
    actions = state.legal_actions
    gives = [a for a in actions if isinstance(a, wire.Give)]
    if picking and gives:
        return (
            *(
                Choice(
                    key=str(a.to_seat + 1),
                    label="choice.give_to",
                    action=a,
                    points=points.get(a),
                    name=names.get(a.to_seat, str(a.to_seat + 1)),
                    hint=hint.get(a),
                )
                for a in gives
            ),
            Choice(key="escape", label="choice.back", action=None),
        )
    choices = []
    for action in actions:
        if isinstance(action, wire.Give):
            if action is gives[0]:
                if len(gives) == 1:  # one receiver: no need to ask whom
                    choices.append(
                        Choice(
                            "g",
                            "choice.give_to",
                            action,
                            points.get(action),
                            name=names.get(action.to_seat),
                            hint=hint.get(action),
                        )
                    )
                else:
                    best = _best(gives, hint)
                    choices.append(
                        Choice("g", "choice.give", None, _common(gives, points), hint=best)
                    )
            continue
        kind = _kind(action)
        choices.append(
            Choice(
                _TURN_KEYS[kind],
                f"choice.{kind}",
                action,
                points.get(action),
                ranking=_rank_move(state, action, rankings),
                hint=hint.get(action),
            )
        )
    return tuple(choices)


def _best(
    actions: Sequence[wire.Action], hint: Mapping[wire.Action, HintValue]
) -> HintValue | None:
    """The step that opens the receivers: the best of their hinted values."""
    values = [hint[a] for a in actions if a in hint]
    if not values:
        return None
    return max(values, key=lambda v: (v.best, v.points))


def _common(actions: Sequence[wire.Action], points: Mapping[wire.Action, int]) -> int | None:
    """The points every one of ``actions`` scores, if the server says they all
    score the same (the step that opens the receivers shows it); else None."""
    said = {points.get(action) for action in actions}
    return said.pop() if len(said) == 1 else None


def _kind(action: wire.Action) -> str:
    return {
        wire.Keep: "keep",
        wire.Give: "give",
        wire.AddFaceUp: "add_face_up",
        wire.AddSecret: "add_secret",
        wire.Opening: "opening",
    }[type(action)]


def actions_view(
    state: wire.State | None,
    summary: wire.MatchSummary | None,
    me: int | None,
    *,
    host: bool = False,
    picking: bool = False,
    acting: bool = False,
    online: bool = True,
    points: Mapping[wire.Action, int] | None = None,
    timers: Mapping[int, int] | None = None,
    join_code: str | None = None,
    rankings: Mapping[wire.Action, Sequence[wire.Colour]] | None = None,
    hint: Mapping[wire.Action, HintValue] | None = None,
    thinking: bool = False,
) -> ActionsView:
    """What the action panel offers now; ``points`` and ``rankings`` are the
    seat's last prompt's, by action (:mod:`client.options`);
    ``timers`` the seconds left on each seat's turn timer. Offline, a seat is
    offered nothing: a choice could not be sent, and the decision may have
    changed by the time it could (the prompt comes again once back)."""
    names = seat_names(summary, len(state.seats) if state else len(summary.seats) if summary else 0)
    hints = summary is not None and summary.hints
    if state is None:
        if summary is None:
            return ActionsView(mode="connecting")
        return _waiting_room(summary, me, host, names, join_code)
    if state.phase == "over":
        mode: Mode = "over" if state.scoring is not None else "reveal"
        return ActionsView(mode=mode, revealed=state.revealed)
    others = [seat for seat in state.to_act if seat != me]
    waiting = tuple(names.get(seat, "?") for seat in others)
    left = [(timers or {})[seat] for seat in others if seat in (timers or {})]
    timer = min(left) if left else None
    if me is None:
        return ActionsView(mode="watch", waiting_for=waiting, timer=timer)
    if not online:
        return ActionsView(mode="offline", drawn=state.drawn, hand=state.hand)
    if acting:
        return ActionsView(mode="acting", drawn=state.drawn, hand=state.hand)
    openings = [a for a in state.legal_actions if isinstance(a, wire.Opening)]
    if state.phase == "opening":
        if not openings:
            return ActionsView(
                mode="opening_done", waiting_for=waiting, hand=state.opening, timer=timer
            )
        return ActionsView(
            mode="opening",
            hand=state.hand,
            choices=tuple(
                Choice(
                    str(i + 1),
                    "choice.opening",
                    a,
                    card=a.secret,
                    other=next((c for c in state.hand if c != a.secret), a.secret),
                    hint=(hint or {}).get(a),
                )
                for i, a in enumerate(openings)
            ),
            hints=hints,
            thinking=thinking,
            hinted=bool(hint),
        )
    if state.drawn is not None and state.legal_actions and state.active == me:
        gives = any(isinstance(a, wire.Give) for a in state.legal_actions)
        return ActionsView(
            mode="give" if picking and gives else "turn",
            drawn=state.drawn,
            choices=_turn_choices(state, names, picking, points or {}, rankings or {}, hint or {}),
            second_card=state.used is not None,
            last_turn=_last_turn(state),
            deck=state.deck_count,
            hints=hints,
            thinking=thinking,
            hinted=bool(hint),
        )
    return ActionsView(mode="wait", waiting_for=waiting, timer=timer)


def turns_in_match(state: wire.State) -> int | None:
    """How many turns the match has in all, during the turns: those played,
    this one, and one for every two cards the deck holds after this turn's
    draws (R13, R18). A turn starts with an even deck (R4), so the deck's
    parity says how many cards this turn still draws."""
    if state.phase != "turn":
        return None
    odd = state.deck_count % 2
    to_draw = odd if state.used is not None else 2 - odd
    return state.turn + max(0, state.deck_count - to_draw + 1) // 2


def _last_turn(state: wire.State) -> bool:
    """Whether the active seat plays no turn after this one (turns go round, R5)."""
    turns = turns_in_match(state)
    return turns is not None and state.turn + len(state.seats) > turns


def _waiting_room(
    summary: wire.MatchSummary,
    me: int | None,
    host: bool,
    names: Mapping[int, str],
    join_code: str | None = None,
) -> ActionsView:
    """Before the start: the seats taken, who is not here yet, who starts, and
    for the host of a private match, its code to pass on."""
    taken = sum(1 for s in summary.seats if s.kind != "empty")
    here = sum(s.kind == "bot" or (s.kind == "human" and not s.reserved) for s in summary.seats)
    choices: list[Choice] = []
    if host and summary.status == "open":
        if taken == len(summary.seats):
            choices.append(Choice("s", "choice.start", None))
        if here < len(summary.seats) and here >= 2:
            choices.append(Choice("w", "choice.start_here", None))
        if taken < len(summary.seats):
            choices.append(Choice("b", "choice.add_bot", None))
        if any(s.kind != "empty" and s.seat != me for s in summary.seats):
            choices.append(Choice("x", "choice.remove_seat", None))
    missing = tuple(
        names[s.seat]
        for s in summary.seats
        if s.kind == "human" and not s.connected and not s.reserved and s.seat != me
    )
    not_accepted = tuple(
        names[s.seat] for s in summary.seats if s.kind == "human" and s.reserved and s.seat != me
    )
    return ActionsView(
        mode="waiting_room",
        choices=tuple(choices),
        seats_taken=taken,
        seats=len(summary.seats),
        host=host,
        host_name=summary.host,
        missing=missing,
        open_box=summary.open_box,
        hints=summary.hints,
        rated=summary.rated,
        join_code=join_code if host and summary.status == "open" else None,
        not_accepted=not_accepted,
        spectators=summary.spectators,
    )


def _keys(mode: Mode, hints: bool = False) -> tuple[tuple[str, str], ...]:
    always = (("keyname.help", "keys.help"), ("keyname.quit", "keys.quit"))
    lobby = (("keyname.c", "keys.chat"), ("keyname.lobby", "keys.lobby"))
    hint = (("keyname.h", "keys.hint"),) if hints else ()
    if mode == "turn":  # with hints, h takes Tab's place in the bar (Tab still moves the focus)
        return (*(hint or (("keyname.tab", "keys.focus"),)), *lobby, *always)
    if mode == "give":
        return (*hint, ("keyname.escape", "keys.back"), *always)
    if mode == "opening":
        return (*hint, *lobby, *always)
    if mode == "over":
        return (("keyname.scores", "keys.scores"), *lobby, *always)
    if mode == "waiting_room":
        return (("keyname.p", "keys.cards"), *lobby, *always)
    return (*lobby, *always)


def table_view(
    state: wire.State | None,
    summary: wire.MatchSummary | None,
    me: int | None,
    log: Sequence[Text] = (),
    *,
    online: bool = True,
    host: bool = False,
    picking: bool = False,
    acting: bool = False,
    seconds_left: int | None = None,
    points: Mapping[wire.Action, int] | None = None,
    rankings: Mapping[wire.Action, Sequence[wire.Colour]] | None = None,
    since: wire.State | None = None,
    timers: Mapping[int, int] | None = None,
    bot_in: Mapping[int, int] | None = None,
    join_code: str | None = None,
    chat: Sequence[Text] = (),
    hint: Mapping[wire.Action, HintValue] | None = None,
    thinking: bool = False,
) -> TableView:
    """Everything the table screen shows, from what the server sent (``points``:
    what each legal action scores, as the seat's last prompt said; ``rankings``:
    the ranking each face-up add makes, as it said; ``since``:
    the state the marks compare with; ``timers`` and ``bot_in``: seconds left
    on each seat's turn timer and until a bot plays for each absent player)."""
    if summary is not None and timers:  # a bot plays those seats: their timers mean nothing
        stand_ins = {info.seat for info in summary.seats if info.stand_in}
        timers = {seat: left for seat, left in timers.items() if seat not in stand_ins}
    # an absent player's one countdown is beside their note in the players'
    # panel (grace or turn timer, whichever runs out first), not also here
    away = set(bot_in or {})
    actions = actions_view(
        state,
        summary,
        me,
        host=host,
        picking=picking,
        acting=acting,
        online=online,
        points=points,
        timers={seat: left for seat, left in (timers or {}).items() if seat not in away},
        join_code=join_code,
        rankings=rankings,
        hint=hint,
        thinking=thinking,
    )
    return TableView(
        title=summary.name if summary is not None else "",
        turn=state.turn if state is not None else 0,
        phase=state.phase if state is not None else None,
        online=online,
        festival=festival_view(state, me, since) if state is not None else None,
        players=player_rows(state, summary, me, since, bot_in=bot_in, timers=timers, online=online),
        actions=actions,
        log=tuple(log),
        keys=_keys(actions.mode, actions.hints),
        your_turn=actions.mode in ("turn", "give", "opening"),
        seconds_left=seconds_left if actions.mode in ("turn", "give", "opening") else None,
        turns=turns_in_match(state) if state is not None else None,
        chat=tuple(chat),
        spectators=summary.spectators if summary is not None else 0,
    )


# -- the final scoring ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One player's final points, split the way the rules earn them."""

    seat: int
    name: str
    you: bool
    keeping: int
    giving: int
    majorities: tuple[int, ...]  # in colour order
    total: int
    tulips: int
    winner: bool


@dataclass(frozen=True, slots=True)
class MajorityLine:
    """How one ranked colour's majorities went: (name, cards, value, points) per scorer."""

    colour: wire.Colour
    rank: int
    places: tuple[tuple[str, int, int, int], ...]


@dataclass(frozen=True, slots=True)
class FinalView:
    """The final screen: the breakdown, the winners and what decided."""

    title: str
    rows: tuple[ScoreRow, ...]  # best first
    majorities: tuple[MajorityLine, ...]
    winners: tuple[str, ...]
    decided_by: wire.DecidedBy
    you_won: bool
    ranking: tuple[wire.Colour, ...]
    revealed: tuple[wire.Card, ...]
    seated: bool = True  # a player (who may ask for a rematch), not a spectator
    #: where the player finished (None: a spectator)
    placement: Placement | None = None


@dataclass(frozen=True, slots=True)
class Placement:
    """Where the player finished, told against the player next to them.

    ``how``: ``ahead`` (1st, ``margin`` points before ``other``, the 2nd),
    ``ahead_tulips`` (1st, level on points with ``other``, more tulips),
    ``shared`` (level on points and tulips with ``other``, the same place),
    ``behind`` (``margin`` points behind ``other``, the one just ahead),
    ``behind_tulips`` (level on points with ``other``, who had more tulips).
    """

    place: int  # from 1
    players: int
    how: Literal["ahead", "ahead_tulips", "shared", "behind", "behind_tulips"]
    other: str = ""
    margin: int = 0


def placement(rows: Sequence[ScoreRow]) -> Placement | None:
    """Where the player (the row marked ``you``) finished among ``rows``, best
    first (R20–R23: points, then tulips; a tie on both shares the place)."""
    mine = next((i for i, row in enumerate(rows) if row.you), None)
    if mine is None:
        return None
    me = rows[mine]
    place = 1 + sum((r.total, r.tulips) > (me.total, me.tulips) for r in rows)
    level = [r for r in rows if r is not me and (r.total, r.tulips) == (me.total, me.tulips)]
    if level:
        return Placement(place, len(rows), "shared", level[0].name)
    if mine == 0:
        second = rows[1]  # two players at least (R5)
        if second.total == me.total:
            return Placement(1, len(rows), "ahead_tulips", second.name)
        return Placement(1, len(rows), "ahead", second.name, me.total - second.total)
    ahead = rows[mine - 1]
    if ahead.total == me.total:
        return Placement(place, len(rows), "behind_tulips", ahead.name)
    return Placement(place, len(rows), "behind", ahead.name, ahead.total - me.total)


def final_view(
    scoring: wire.Scoring,
    summary: wire.MatchSummary | None,
    me: int | None,
    state: wire.State | None = None,
) -> FinalView:
    """The final scoring, best player first (the server's order breaks ties)."""
    names = seat_names(summary, len(scoring.players))
    rows = tuple(
        sorted(
            (
                ScoreRow(
                    seat=p.seat,
                    name=names.get(p.seat, str(p.seat + 1)),
                    you=p.seat == me,
                    keeping=p.keeping,
                    giving=p.giving,
                    majorities=tuple(p.majorities.get(c, 0) for c in COLOURS),
                    total=p.total,
                    tulips=p.tulips,
                    winner=p.seat in scoring.winners,
                )
                for p in scoring.players
            ),
            key=lambda row: (not row.winner, -row.total, -row.tulips, row.seat),
        )
    )
    return FinalView(
        title=summary.name if summary is not None else "",
        rows=rows,
        majorities=tuple(
            MajorityLine(
                colour=m.colour,
                rank=m.rank,
                places=tuple(
                    (names.get(p.seat, str(p.seat + 1)), p.cards, p.value, p.points)
                    for p in m.places
                ),
            )
            for m in scoring.majorities
        ),
        winners=tuple(names.get(seat, str(seat + 1)) for seat in scoring.winners),
        decided_by=scoring.decided_by,
        you_won=me in scoring.winners,
        ranking=state.ranking if state is not None else (),
        revealed=state.revealed if state is not None else (),
        seated=me is not None,
        placement=placement(rows) if me is not None else None,
    )


# -- the lobby -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LobbyRow:
    """One match in the lobby's list."""

    match: str
    name: str
    status: wire.MatchStatus
    players: str
    free: int
    host: str
    code: bool
    timer: float | None
    full: bool = False  # open, but every seat taken: only the host's start is missing
    #: an open-box match (R27): its seed and actions are published once finished
    open_box: bool = False
    #: in a cluster: the node that runs it is not answering now
    unavailable: bool = False
    #: the ruleset it plays (R30); "standard": the printed rules
    ruleset: str = "standard"
    #: its host allows hints (issue 32)
    hints: bool = False
    #: its result changes the players' ratings
    rated: bool = False


_STATUS_ORDER = {"open": 0, "running": 1, "paused": 2, "finished": 3}


def lobby_rows(matches: Mapping[str, wire.MatchSummary]) -> tuple[LobbyRow, ...]:
    """The matches, open ones first, then running, then finished (as the server lists them)."""
    rows = []
    for index, summary in enumerate(matches.values()):
        names = seat_names(summary, len(summary.seats))
        rows.append(
            (
                _STATUS_ORDER.get(summary.status, 4),
                index,
                LobbyRow(
                    match=summary.match,
                    name=summary.name,
                    status=summary.status,
                    players=", ".join(
                        names[s.seat] + (f" ({t(f'strength.{s.strength}')})" if s.strength else "")
                        for s in summary.seats
                        if s.kind != "empty"
                    ),
                    free=sum(1 for s in summary.seats if s.kind == "empty"),
                    host=summary.host,
                    code=summary.has_join_code,
                    timer=summary.turn_timer,
                    full=all(s.kind != "empty" for s in summary.seats),
                    open_box=summary.open_box,
                    unavailable=not summary.available,
                    ruleset=summary.ruleset,
                    hints=summary.hints,
                    rated=summary.rated,
                ),
            )
        )
    rows.sort(key=lambda item: (item[0], item[1]))
    return tuple(row for _, _, row in rows)
