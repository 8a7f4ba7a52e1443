"""A scripted stand-in for the SDK session, and fixed protocol messages to feed it.

:class:`ScriptedSession` yields the messages it was given, in order, then
waits (an ended script is not a closed connection). Requests are recorded and
answered from ``answers`` (a callable that may also push follow-up messages),
so a test can drive the app through any screen without a server, a clock or
a random number.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

import msgspec

import protocol as wire
from client.sdk import ConnectionLost, Reconnected, RequestError
from protocol import examples

MATCH = "k7Qm2"
WELCOME = wire.Welcome(
    id=0, server="tulips-server/0.1", versions=(1,), player="p_ada", token="tok-ada", name="Ada"
)


class ScriptedSession:
    """Implements :class:`client.tui.session.SessionLike` from a script."""

    def __init__(
        self,
        script: Iterable[object] = (),
        *,
        matches: Sequence[wire.MatchSummary] = (),
        answers: dict[str, Callable[..., object]] | None = None,
    ) -> None:
        self.token: str | None = None
        self.requests: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.matches = list(matches)
        self.answers = answers or {}
        self._inbox: asyncio.Queue[object] = asyncio.Queue()
        for message in script:
            self._inbox.put_nowait(message)
        self.drained = asyncio.Event()
        self.closed = False

    def feed(self, *messages: object) -> None:
        """Send more messages to the app."""
        self.drained.clear()
        for message in messages:
            self._inbox.put_nowait(message)

    async def open(self) -> wire.Welcome:
        self.token = WELCOME.token
        return WELCOME

    async def close(self) -> None:
        self.closed = True

    def __aiter__(self) -> AsyncIterator[wire.ServerMessage | ConnectionLost | Reconnected]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[Any]:
        while True:
            if self._inbox.empty():
                self.drained.set()
            message = await self._inbox.get()
            yield message

    async def _request(self, kind: str, *args: Any, **kwargs: Any) -> Any:
        self.requests.append((kind, args, kwargs))
        answer = self.answers.get(kind)
        result = answer(*args, **kwargs) if answer is not None else None
        if isinstance(result, wire.Error):
            raise RequestError(result)
        return result

    async def list_matches(self) -> Sequence[wire.MatchSummary]:
        await self._request("list_matches")
        return self.matches

    async def create_match(self, **kwargs: Any) -> wire.Joined:
        return await self._request("create_match", **kwargs)  # type: ignore[no-any-return]

    async def join(self, match: str, seat: int | None = None, join_code: str | None = None) -> Any:
        return await self._request("join", match, seat=seat, join_code=join_code)

    async def watch(self, match: str, join_code: str | None = None) -> Any:
        return await self._request("watch", match, join_code=join_code)

    async def leave(self) -> None:
        await self._request("leave")

    async def start(self, *, without_absent: bool = False) -> None:
        if without_absent:
            await self._request("start", without_absent=True)
        else:
            await self._request("start")

    async def add_bot(self, seat: int | None = None, strength: str = "medium") -> None:
        await self._request("add_bot", seat=seat, strength=strength)

    async def remove_seat(self, seat: int) -> None:
        await self._request("remove_seat", seat=seat)

    async def play_again(self) -> Any:
        return await self._request("play_again")

    async def act(self, action: wire.Action, *, seq: int | None) -> None:
        self.requests.append(("act", (action,), {"seq": seq}))  # answered by the action alone
        answer = self.answers.get("act")
        result = answer(action) if answer is not None else None
        if isinstance(result, wire.Error):
            raise RequestError(result)

    async def sync(self) -> Any:
        return await self._request("sync")

    async def chat(self, text: str) -> None:
        await self._request("chat", text)

    async def replay(
        self, match: str, *, join_code: str | None = None, from_seq: int = 1
    ) -> wire.ReplayPage:
        return await self._request(  # type: ignore[no-any-return]
            "replay", match, join_code=join_code, from_seq=from_seq
        )

    async def profile(self, player: str | None = None) -> wire.ProfileCard:
        return await self._request("profile", player=player)  # type: ignore[no-any-return]

    async def analyse(
        self,
        match: str,
        *,
        seat: int | None = None,
        join_code: str | None = None,
        progress: Callable[[wire.AnalysisProgress], object] | None = None,
    ) -> wire.AnalysisReport:
        return await self._request(  # type: ignore[no-any-return]
            "analyse", match, seat=seat, join_code=join_code, progress=progress
        )

    async def hint(self, seq: int | None = None) -> wire.HintValues:
        return await self._request("hint", seq=seq)  # type: ignore[no-any-return]

    async def leaderboard(self, offset: int = 0, limit: int = 20) -> wire.LeaderboardPage:
        return await self._request(  # type: ignore[no-any-return]
            "leaderboard", offset=offset, limit=limit
        )

    async def history(self, before: int | None = None, limit: int = 10) -> wire.HistoryPage:
        return await self._request(  # type: ignore[no-any-return]
            "history", before=before, limit=limit
        )

    async def link_code(self) -> wire.LinkCodeIssued:
        return await self._request("link_code")  # type: ignore[no-any-return]

    async def rename(self, name: str) -> None:
        await self._request("rename", name)


class _Factory:
    """Hands out one session, whatever it is asked for."""

    def __init__(self, session: ScriptedSession) -> None:
        self.session = session

    def __call__(
        self, url: str, name: str, token: str | None, *, link: str | None = None
    ) -> ScriptedSession:
        return self.session


def factory(session: ScriptedSession) -> _Factory:
    """A session factory that always hands out ``session``."""
    return _Factory(session)


# -- fixed messages ------------------------------------------------------------------------


def summary(
    status: wire.MatchStatus = "running",
    seats: Sequence[wire.SeatInfo] | None = None,
    name: str = "Friday tulips",
    match: str = MATCH,
    **extra: Any,
) -> wire.MatchSummary:
    """A match summary: by default Ada, two bots and Cy (who is away)."""
    if seats is None:
        seats = (
            wire.SeatInfo(seat=0, kind="human", name="Cy", connected=False),
            wire.SeatInfo(seat=1, kind="human", name="Ada", connected=True),
            wire.SeatInfo(seat=2, kind="bot", name="bot 2", strength="easy", connected=True),
            wire.SeatInfo(seat=3, kind="bot", name="bot 3", strength="hard", connected=True),
        )
    fields: dict[str, Any] = {
        "match": match,
        "name": name,
        "status": status,
        "seats": tuple(seats),
        "host": extra.pop("host", "Ada"),
        "has_join_code": False,
        "ruleset": "standard",
    }
    fields.update(extra)
    return wire.MatchSummary(**fields)


def lobby_matches() -> list[wire.MatchSummary]:
    """Three matches: one open and private, one running, one finished."""
    return [
        summary(
            "open",
            seats=(
                wire.SeatInfo(seat=0, kind="human", name="Bea", connected=True),
                wire.SeatInfo(seat=1, kind="bot", name="bot 1", strength="easy", connected=True),
                wire.SeatInfo(seat=2, kind="empty"),
            ),
            name="Bea's garden",
            match="m1",
            host="Bea",
            has_join_code=True,
            turn_timer=60.0,
        ),
        summary("running", match="m2", name="Friday tulips"),
        summary(
            "finished",
            seats=(
                wire.SeatInfo(seat=0, kind="human", name="Dan", connected=False),
                wire.SeatInfo(seat=1, kind="bot", name="bot 1", strength="medium", connected=True),
            ),
            match="m3",
            name="Lunch break",
            host="Dan",
        ),
    ]


def mid_game() -> list[object]:
    """Ada at seat 1 of a 4-seat match, turn 14, her second card drawn (PROTOCOL.md)."""
    return [
        wire.Joined(match=MATCH, seat=1, host=True),
        wire.MatchUpdate(match=summary()),
        examples.SNAPSHOT_4P,
        wire.Event(match=MATCH, seq=80, event=wire.CardKept(seat=1, card="pink-4", points=2)),
        wire.Event(match=MATCH, seq=81, event=wire.TurnStarted(seat=2, turn=15)),
        wire.Event(match=MATCH, seq=82, event=wire.CardDrawn(seat=2, card=None, deck_count=27)),
        wire.Event(
            match=MATCH,
            seq=83,
            event=wire.CardGiven(seat=2, to_seat=1, card="orange-3", points=5),
        ),
        wire.Event(match=MATCH, seq=84, event=wire.CardDrawn(seat=2, card=None, deck_count=26)),
        wire.Event(
            match=MATCH,
            seq=85,
            event=wire.CardAddedFaceUp(
                seat=2, card="blue-4", ranking=("purple", "blue", "orange", "pink")
            ),
        ),
        wire.Event(match=MATCH, seq=86, event=wire.TurnStarted(seat=3, turn=16)),
        wire.Event(match=MATCH, seq=87, event=wire.CardDrawn(seat=3, card=None, deck_count=25)),
        wire.Event(
            match=MATCH,
            seq=88,
            event=wire.CardAddedSecret(seat=3, card=None, secret_count=12),
        ),
        wire.Event(match=MATCH, seq=89, event=wire.CardDrawn(seat=3, card=None, deck_count=24)),
        wire.Event(match=MATCH, seq=90, event=wire.CardKept(seat=3, card="purple-2", points=0)),
        wire.Event(match=MATCH, seq=91, event=wire.TurnStarted(seat=0, turn=17)),
        wire.Event(match=MATCH, seq=92, event=wire.CardDrawn(seat=0, card=None, deck_count=23)),
        wire.Event(match=MATCH, seq=93, event=wire.CardKept(seat=0, card="blue-2", points=0)),
        wire.Event(match=MATCH, seq=94, event=wire.CardDrawn(seat=0, card=None, deck_count=22)),
        wire.Event(
            match=MATCH,
            seq=95,
            event=wire.CardGiven(seat=0, to_seat=3, card="pink-3", points=3),
        ),
        wire.Event(match=MATCH, seq=96, event=wire.TurnStarted(seat=1, turn=18)),
        wire.Event(
            match=MATCH, seq=97, event=wire.CardDrawn(seat=1, card="orange-4", deck_count=21)
        ),
        wire.Prompt(
            match=MATCH,
            seq=97,
            seat=1,
            actions=(
                wire.Keep(),
                wire.Give(to_seat=0),
                wire.Give(to_seat=2),
                wire.Give(to_seat=3),
                wire.AddFaceUp(),
                wire.AddSecret(),
            ),
            points=(1, 5, 5, 5, 0, 0),  # orange is 3rd: keep 1 (R14), give 1 + 4 (R15)
            # face up, orange 6 + 4 = 10 passes purple's 9: 3rd → 1st (R8)
            rankings=(None, None, None, None, ("orange", "purple", "blue", "pink"), None),
        ),
    ]


THREE_SEATS = (
    wire.SeatInfo(seat=0, kind="human", name="Ada", connected=True),
    wire.SeatInfo(seat=1, kind="bot", name="bot 1", strength="easy", connected=True),
    wire.SeatInfo(seat=2, kind="bot", name="bot 2", strength="easy", connected=True),
)


def opening_state() -> wire.State:
    """A 3-seat match in its opening, as Ada (seat 0) sees it (PROTOCOL.md)."""
    return wire.State(
        phase="opening",
        turn=0,
        first_seat=0,
        to_act=(0, 1, 2),
        festival=("pink-4", "blue-4"),
        totals={"purple": 0, "blue": 4, "pink": 4, "orange": 0},
        ranking=("pink", "blue"),
        deck_count=60,
        secret_count=0,
        removed_count=4,
        seats=tuple(
            wire.SeatState(seat=s, bouquet=(), keeping=0, giving=0, opening_done=False)
            for s in range(3)
        ),
        points=examples.STANDARD_POINTS,
        hand=("blue-3", "pink-4"),
        legal_actions=(wire.Opening(secret="blue-3"), wire.Opening(secret="pink-4")),
    )


def opening() -> list[object]:
    """Ada's opening choice, with one bot already chosen."""
    return [
        wire.Joined(match=MATCH, seat=0, host=True),
        wire.MatchUpdate(match=summary(seats=THREE_SEATS, name="Ada vs bots")),
        wire.Snapshot(match=MATCH, seq=4, seat=0, state=opening_state()),
        wire.Prompt(
            match=MATCH,
            seq=4,
            seat=0,
            actions=(wire.Opening(secret="blue-3"), wire.Opening(secret="pink-4")),
            points=(0, 0),  # R11: no points for the opening
        ),
        wire.Event(match=MATCH, seq=5, event=wire.OpeningChosen(seat=1, bouquet=None, secret=None)),
    ]


def final_state() -> wire.State:
    """The 3-seat match of PROTOCOL.md after its last turn, before the reveal."""
    bouquets: dict[int, tuple[wire.Card, ...]] = {
        0: ("blue-3", "orange-3", "pink-2", "pink-3", "purple-3", "blue-4", "pink-4"),
        1: ("pink-2", "blue-4", "orange-4", "orange-2", "orange-3"),
        2: ("blue-2", "purple-2", "blue-3", "pink-4", "orange-2", "blue-3"),
    }
    return wire.State(
        phase="turn",
        turn=30,
        first_seat=0,
        to_act=(2,),
        active=2,
        festival=("pink-4", "blue-4", "orange-3", "pink-2", "purple-2", "pink-4", "pink-3"),
        totals={"purple": 2, "blue": 4, "pink": 13, "orange": 3},
        ranking=("pink", "blue", "orange", "purple"),
        deck_count=0,
        secret_count=9,
        removed_count=4,
        seats=tuple(
            wire.SeatState(seat=s, bouquet=b, keeping=k, giving=g, opening_done=True)
            for (s, b), (k, g) in zip(bouquets.items(), ((10, 33), (2, 44), (3, 32)), strict=True)
        ),
        points=examples.STANDARD_POINTS,
        my_secret=("pink-4", "blue-2"),
    )


def ending() -> list[object]:
    """The last card, the reveal of five secret cards, and the final scoring."""
    reveals: tuple[wire.Card, ...] = ("blue-2", "blue-2", "pink-4", "orange-2", "pink-4")
    messages: list[object] = [
        wire.Joined(match=MATCH, seat=0, host=True),
        wire.MatchUpdate(match=summary(seats=THREE_SEATS, name="Ada vs bots")),
        wire.Snapshot(match=MATCH, seq=157, seat=0, state=final_state()),
        wire.Event(
            match=MATCH,
            seq=158,
            event=wire.CardGiven(seat=2, to_seat=1, card="orange-4", points=5),
        ),
    ]
    for i, card in enumerate(reveals):
        messages.append(
            wire.Event(
                match=MATCH,
                seq=159 + i,
                event=wire.SecretRevealed(card=card, ranking=("pink", "blue", "orange", "purple")),
            )
        )
    messages.append(
        wire.Event(match=MATCH, seq=164, event=wire.MatchEnded(scoring=examples.SCORING_3P))
    )
    messages.append(
        wire.MatchUpdate(match=summary("finished", seats=THREE_SEATS, name="Ada vs bots"))
    )
    return messages


def spectator() -> list[object]:
    """Ada watching the example match: public information only."""
    state = msgspec.structs.replace(
        examples.SNAPSHOT_4P.state, drawn=None, my_secret=(), opening=(), legal_actions=()
    )
    return [
        wire.Joined(match=MATCH, seat=None, host=False),
        wire.MatchUpdate(match=summary()),
        wire.Snapshot(match=MATCH, seq=79, seat=None, state=state),
    ]


def waiting_room() -> list[object]:
    """Ada hosting a 3-seat match with one seat still free."""
    seats = (*THREE_SEATS[:2], wire.SeatInfo(seat=2, kind="empty"))
    return [
        wire.Joined(match=MATCH, seat=0, host=True),
        wire.MatchUpdate(match=summary("open", seats=seats, name="Ada vs bots")),
    ]


def _seats_with(**cy: Any) -> tuple[wire.SeatInfo, ...]:
    """The default four seats, Cy's changed by ``cy``."""
    seats = summary().seats
    return (msgspec.structs.replace(seats[0], **cy), *seats[1:])


def away() -> list[object]:
    """Turn 17 is Cy's; Cy drops mid-turn: a bot takes over in 24 s, and Cy's
    turn timer (everyone sees it) has 20 s left. Ada (seat 1) waits."""
    script = mid_game()[:16]  # up to event 92: Cy drew at turn 17
    script[1] = wire.MatchUpdate(match=summary(seats=_seats_with(connected=True)))
    return [
        *script,
        wire.MatchUpdate(match=summary(seats=_seats_with(connected=False, bot_in=24.0))),
        wire.TurnTimer(match=MATCH, seq=92, timers=(wire.SeatTimer(seat=0, seconds=20.0),)),
    ]


def timed_out() -> list[object]:
    """Mid-game, but Cy is away and a bot plays for them (their second move of
    turn 17 marked), and Ada let her timer run out on her first card: the
    server kept it for her. Her second card, with 30 s on the clock."""
    script = mid_game()
    script[1] = wire.MatchUpdate(match=summary(seats=_seats_with(connected=True)))
    given = script[18]
    assert isinstance(given, wire.Event) and given.seq == 95
    script[18] = msgspec.structs.replace(given, by="stand_in")
    script.insert(18, wire.MatchUpdate(match=summary(seats=_seats_with(stand_in=True))))
    prompt = script[-1]
    assert isinstance(prompt, wire.Prompt)
    script[-1] = msgspec.structs.replace(prompt, deadline=30.0)
    return [
        *script,
        wire.Event(
            match=MATCH,
            seq=98,
            event=wire.CardKept(seat=1, card="orange-4", points=1),
            by="timer",
        ),
        wire.Event(
            match=MATCH, seq=99, event=wire.CardDrawn(seat=1, card="purple-3", deck_count=20)
        ),
        wire.Prompt(
            match=MATCH,
            seq=99,
            seat=1,
            actions=(wire.Give(to_seat=0), wire.Give(to_seat=2), wire.Give(to_seat=3)),
            points=(5, 5, 5),
            deadline=30.0,
        ),
        wire.TurnTimer(match=MATCH, seq=99, timers=(wire.SeatTimer(seat=1, seconds=30.0),)),
    ]


# -- a whole short match, for the replay viewer --------------------------------------------

REPLAYED = "r6Tq1"


def _turn(seat: int, turn: int, deck: int, *placed: wire.GameEvent) -> list[wire.GameEvent]:
    """A turn as a spectator sees it: two hidden draws, each placed."""
    first, second = placed
    return [
        wire.TurnStarted(seat=seat, turn=turn),
        wire.CardDrawn(seat=seat, card=None, deck_count=deck),
        first,
        wire.CardDrawn(seat=seat, card=None, deck_count=deck - 1),
        second,
    ]


def short_match_scoring() -> wire.Scoring:
    """The final scoring of :func:`short_match` (R20–R23, three players)."""

    def player(seat: int, keeping: int, giving: int, tulips: int, **maj: int) -> wire.PlayerScore:
        majorities = {colour: maj.get(colour, 0) for colour in wire.COLOURS}
        total = keeping + giving + sum(majorities.values())
        return wire.PlayerScore(
            seat=seat,
            keeping=keeping,
            giving=giving,
            majorities=majorities,
            total=total,
            tulips=tulips,
        )

    def place(seat: int, cards: int, value: int, at: int, points: int) -> wire.MajorityPlace:
        return wire.MajorityPlace(seat=seat, cards=cards, value=value, place=at, points=points)

    return wire.Scoring(
        players=(
            player(0, 3, 6, 4, pink=10, blue=10, orange=5),
            player(1, 2, 5, 4, pink=15, blue=7),
            player(2, 2, 5, 4, orange=3),
        ),
        majorities=(
            wire.MajorityResult(
                colour="pink", rank=0, places=(place(1, 1, 3, 0, 15), place(0, 1, 2, 1, 10))
            ),
            wire.MajorityResult(
                colour="blue", rank=1, places=(place(0, 1, 4, 0, 10), place(1, 1, 3, 1, 7))
            ),
            wire.MajorityResult(
                colour="orange", rank=2, places=(place(0, 2, 6, 0, 5), place(2, 2, 5, 1, 3))
            ),
        ),
        winners=(0,),
        decided_by="points",
    )


def short_match() -> list[wire.GameEvent]:
    """Ada and two bots, six turns, as a spectator saw it: 41 events, from the
    starting festival to the final scoring (hand-made to follow R8, R14, R15)."""
    return [
        wire.FestivalStarted(cards=("pink-4", "blue-3"), ranking=("pink", "blue"), first_seat=0),
        *(wire.CardsDealt(seat=s, cards=None) for s in range(3)),
        *(wire.OpeningChosen(seat=s, bouquet=None, secret=None) for s in (1, 2, 0)),
        wire.OpeningRevealed(bouquets=("orange-2", "purple-3", "blue-2"), secret_count=3),
        *_turn(
            0,
            1,
            11,
            wire.CardKept(seat=0, card="orange-4", points=2),
            wire.CardGiven(seat=0, to_seat=1, card="pink-3", points=6),
        ),
        *_turn(
            1,
            2,
            9,
            wire.CardAddedFaceUp(seat=1, card="purple-4", ranking=("purple", "pink", "blue")),
            wire.CardKept(seat=1, card="purple-2", points=0),
        ),
        *_turn(
            2,
            3,
            7,
            wire.CardGiven(seat=2, to_seat=0, card="blue-4", points=5),
            wire.CardKept(seat=2, card="orange-3", points=2),
        ),
        *_turn(
            0,
            4,
            5,
            wire.CardAddedFaceUp(
                seat=0, card="orange-4", ranking=("orange", "purple", "pink", "blue")
            ),
            wire.CardKept(seat=0, card="pink-2", points=1),
        ),
        *_turn(
            1,
            5,
            3,
            wire.CardKept(seat=1, card="blue-3", points=2),
            wire.CardGiven(seat=1, to_seat=2, card="orange-2", points=5),
        ),
        *_turn(
            2,
            6,
            1,
            wire.CardAddedSecret(seat=2, card=None, secret_count=4),
            wire.CardKept(seat=2, card="purple-2", points=0),
        ),
        wire.SecretRevealed(card="blue-4", ranking=("blue", "orange", "purple", "pink")),
        wire.SecretRevealed(card="pink-3", ranking=("pink", "blue", "orange", "purple")),
        wire.MatchEnded(scoring=short_match_scoring()),
    ]


def short_match_as_ada() -> list[wire.GameEvent]:
    """:func:`short_match` as Ada (seat 0) saw it: her deal, opening and draws."""
    events = short_match()
    drawn: dict[int, wire.Card] = {9: "orange-4", 11: "pink-3", 24: "orange-4", 26: "pink-2"}
    events[1] = wire.CardsDealt(seat=0, cards=("orange-2", "pink-3"))
    events[6] = wire.OpeningChosen(seat=0, bouquet="orange-2", secret="pink-3")
    for index, card in drawn.items():
        draw = events[index]
        assert isinstance(draw, wire.CardDrawn) and draw.seat == 0
        events[index] = wire.CardDrawn(seat=0, card=card, deck_count=draw.deck_count)
    return events


def replayed_summary() -> wire.MatchSummary:
    """The lobby's line for :func:`short_match`: finished."""
    return summary("finished", seats=THREE_SEATS, match=REPLAYED, name="Short and sweet")


def replay_pages(
    events: Sequence[wire.GameEvent],
    match: str = REPLAYED,
    size: int = 16,
    seat: int | None = None,
    by: Mapping[int, wire.PlayedBy] | None = None,
    points: wire.Points | None = None,
) -> Callable[..., wire.ReplayPage | wire.Error]:
    """Answers ``replay`` requests with ``events`` in pages of ``size``, as the
    server does (``seat``: the requester's, whose view they are; ``by``: the
    marks, by event number; ``points``: the festival cards', which an older
    server does not send); another match is ``no_such_match``."""

    def answer(asked: str, *, join_code: str | None = None, from_seq: int = 1) -> object:
        if asked != match:
            return wire.Error(code="no_such_match", message=f"no match {asked!r}")
        page = tuple(events[from_seq - 1 : from_seq - 1 + size])
        more = from_seq - 1 + len(page) < len(events)
        seqs = range(from_seq, from_seq + len(page))
        marks = by or {}
        return wire.ReplayPage(
            by=tuple(marks.get(seq) for seq in seqs) if any(q in marks for q in seqs) else (),
            points=points,
            match=match,
            status="finished",
            ruleset="standard",
            from_seq=from_seq,
            events=page,
            next_seq=from_seq + len(page) if more else None,
            seat=seat,
        )

    return answer  # type: ignore[return-value]


def rematch_waiting_room() -> list[object]:
    """Ada hosting a rematch: Bea's seat is kept but she has not accepted,
    a bot holds seat 2, and two people watch."""
    seats = (
        THREE_SEATS[0],
        wire.SeatInfo(seat=1, kind="human", name="Bea", reserved=True),
        THREE_SEATS[2],
    )
    return [
        wire.Joined(match=MATCH, seat=0, host=True),
        wire.MatchUpdate(
            match=summary("open", seats=seats, name="Rematch", spectators=2, watching=("Cy", "Dee"))
        ),
    ]


#: A server's offer with a house ruleset (R30), as ``welcome.rulesets`` has it.
RULESETS = {info.name: info for info in (examples.STANDARD_RULESET, examples.HOUSE_RULESET)}


def house_waiting_room() -> list[object]:
    """:func:`waiting_room` of a match that plays the house ruleset "short reveal"."""
    joined, update = waiting_room()
    assert isinstance(update, wire.MatchUpdate)
    house = msgspec.structs.replace(update.match, ruleset=examples.HOUSE_RULESET.name)
    return [joined, wire.MatchUpdate(match=house)]


# -- profiles, ratings and history ---------------------------------------------------------

#: the names on the fake leaderboard, long ones among them
BOARD_NAMES = (
    "Maximiliane Tulpenfeld", "Bea", "bot (hard)", "Cy", "Dee", "Ada", "Eve", "Fritz",
    "Gundula Blumenbeet", "Hal", "Ines", "Jo", "Kai", "Lia", "Mo",
)  # fmt: skip


def rating(ordinal: float, sigma: float = 2.1) -> wire.Rating:
    """A rating of that ordinal and σ (μ = ordinal + 3σ)."""
    return wire.Rating(mu=ordinal + 3 * sigma, sigma=sigma, ordinal=ordinal)


def board_entry(rank: int, name: str) -> wire.LeaderboardEntry:
    """One leaderboard line; ``bot (hard)`` is the hard bots' line, ``Ada`` is p_ada."""
    bot = name.startswith("bot")
    return wire.LeaderboardEntry(
        rank=rank,
        player="bot_hard" if bot else "p_ada" if name == "Ada" else f"p_{name.lower()[:8]}",
        name=name,
        kind="bot" if bot else "human",
        strength="hard" if bot else None,
        rating=rating(30.0 - rank * 1.37, 1.5 + rank / 10),
        matches=120 - rank * 3,
        wins=40 - rank,
    )


def leaderboard_page(offset: int = 0, limit: int = 15, you: bool = True) -> wire.LeaderboardPage:
    """A page of a 40-line leaderboard (the names repeat after the first page)."""
    entries = tuple(
        board_entry(rank, BOARD_NAMES[(rank - 1) % len(BOARD_NAMES)] + ("" if rank <= 15 else "·"))
        for rank in range(offset + 1, min(40, offset + limit) + 1)
    )
    return wire.LeaderboardPage(
        id=1,
        offset=offset,
        total=40,
        entries=entries,
        you=board_entry(6, "Ada") if you else None,
    )


def rating_change(
    seat: int, player: str, name: str, before: float, after: float
) -> wire.RatingChange:
    """A seat's rating move, from one ordinal to another."""
    return wire.RatingChange(
        seat=seat, player=player, name=name, before=rating(before), after=rating(after, 2.0)
    )


def match_record(
    match: str = "h1", *, rated: bool = True, counted: bool = True, replay: bool = True
) -> wire.MatchRecord:
    """Ada's finished match: 2nd of 4 behind Maximiliane, a bot and Cy after her."""
    seats = (
        wire.FinalSeat(seat=0, kind="human", name="Maximiliane Tulpenfeld", player="p_maximili",
                       points=41, rank=1, counted=rated),
        wire.FinalSeat(seat=1, kind="human", name="Ada", player="p_ada", points=33, rank=2,
                       counted=rated and counted),
        wire.FinalSeat(seat=2, kind="bot", name="bot 3", player="bot_hard", strength="hard",
                       points=30, rank=3, counted=rated),
        wire.FinalSeat(seat=3, kind="human", name="Cy", player="p_cy", points=12, rank=4,
                       counted=rated),
    )  # fmt: skip
    change = rating_change(1, "p_ada", "Ada", 20.2, 22.0) if rated and counted else None
    return wire.MatchRecord(
        match=match,
        name="Friday night tulips with the neighbours" if match == "h1" else "Lunch break",
        ruleset="standard",
        finished_at=1_796_000_000.0,
        seats=seats,
        rated=rated,
        seat=1,
        rating=change,
        replay=replay,
    )


def history_page(before: int | None = None, limit: int = 7) -> wire.HistoryPage:
    """Ada's latest matches: rated, not counted, unrated, one without a replay."""
    return wire.HistoryPage(
        id=1,
        matches=(
            match_record("h1"),
            match_record("h2", counted=False),
            match_record("h3", rated=False),
            match_record("h4", replay=False),
        ),
        next=4 if before is None else None,
    )


def profile_card(player: str | None = None) -> wire.ProfileCard:
    """Ada's card (or the hard bots', for ``bot_hard``)."""
    if player == "bot_hard":
        return wire.ProfileCard(
            id=1, player="bot_hard", name="bot (hard)", kind="bot", strength="hard", matches=312,
            wins=101, mean_points=29.4, rated_matches=300, rating=rating(25.9, 0.8), rank=3,
            recent=history_page().matches[:2],
        )  # fmt: skip
    return wire.ProfileCard(
        id=1, player=player or "p_ada", name="Ada", kind="human", matches=57, wins=21,
        mean_points=31.25, rated_matches=49, rating=rating(21.8), rank=6,
        since=1_790_000_000.0, recent=history_page().matches,
    )  # fmt: skip


#: the answers of a server that keeps profiles (``running(**PROFILE_ANSWERS)``)
PROFILE_ANSWERS: dict[str, Callable[..., object]] = {
    "leaderboard": leaderboard_page,
    "history": history_page,
    "profile": profile_card,
    "link_code": lambda: wire.LinkCodeIssued(id=1, code="K7QM-2XPD", expires_in=600.0),
}


def _rated(messages: list[object]) -> list[object]:
    """The same script, its match rated."""
    return [
        wire.MatchUpdate(match=msgspec.structs.replace(m.match, rated=True))
        if isinstance(m, wire.MatchUpdate)
        else m
        for m in messages
    ]


# -- learning the game (issue 32): an analysis of Ada's seat, hints ---------------------------


def _values(*options: tuple[wire.Action, float, float]) -> tuple[wire.OptionValue, ...]:
    return tuple(wire.OptionValue(action=a, expected_points=p, win_chance=c) for a, p, c in options)


def analysis_report(match: str = MATCH) -> wire.AnalysisReport:
    """Ada's (seat 0) decisions in :func:`short_match_as_ada`: her opening
    (best), her first card kept (a mistake) and her second given (a blunder)."""
    decisions = (
        wire.DecisionReview(
            index=2,
            seq=6,
            turn=0,
            options=_values(
                (wire.Opening(secret="pink-3"), 31.5, 0.34),
                (wire.Opening(secret="orange-2"), 30.9, 0.31),
            ),
            chosen=0,
            best=0,
            loss=0.0,
        ),
        wire.DecisionReview(
            index=3,
            seq=10,
            turn=1,
            drawn="orange-4",
            options=_values(
                (wire.Keep(), 28.1, 0.22),
                (wire.Give(to_seat=1), 29.0, 0.25),
                (wire.Give(to_seat=2), 29.4, 0.26),
                (wire.AddFaceUp(), 32.3, 0.36),
                (wire.AddSecret(), 30.2, 0.29),
            ),
            chosen=0,
            best=3,
            loss=4.2,
            mark="mistake",
        ),
        wire.DecisionReview(
            index=4,
            seq=12,
            turn=1,
            drawn="pink-3",
            options=_values(
                (wire.Keep(), 33.0, 0.41),
                (wire.Give(to_seat=1), 25.5, 0.12),
                (wire.Give(to_seat=2), 26.0, 0.13),
            ),
            chosen=1,
            best=0,
            loss=7.5,
            mark="blunder",
        ),
    )
    return wire.AnalysisReport(
        match=match,
        seat=0,
        decisions=decisions,
        mean_loss=3.9,
        accuracy=33.3,
        costliest=(4, 3),
        mistakes=1,
        blunders=1,
        thresholds=wire.MarkThresholds(inaccuracy=1.0, mistake=3.0, blunder=6.0),
        deals=64,
    )


def analysed(
    match: str = MATCH, *, heard: list[wire.AnalysisProgress] | None = None
) -> Callable[..., wire.AnalysisReport]:
    """An ``analyse`` answer: two progress notices, then :func:`analysis_report`."""

    def answer(match_id: str, **kwargs: Any) -> wire.AnalysisReport:
        progress = kwargs.get("progress")
        for notice in (
            wire.AnalysisProgress(match=match_id, seat=0, queued=1),
            wire.AnalysisProgress(match=match_id, seat=0, queued=0, done=3, total=3),
        ):
            if heard is not None:
                heard.append(notice)
            if progress is not None:
                progress(notice)
        return analysis_report(match_id)

    return answer


def with_hints(messages: list[object]) -> list[object]:
    """The same script, its match allowing hints (so unrated)."""
    return [
        wire.MatchUpdate(match=msgspec.structs.replace(m.match, hints=True))
        if isinstance(m, wire.MatchUpdate)
        else m
        for m in messages
    ]


def rated_waiting_room() -> list[object]:
    """The waiting room of a rated match."""
    return _rated(waiting_room())


def rated_ending() -> list[object]:
    """The end of a rated match, before its ratings notice."""
    return _rated(ending())


def ratings_changed() -> wire.RatingsChanged:
    """The ratings notice of :func:`rated_ending`: Ada and the hard bot moved."""
    return wire.RatingsChanged(
        match=MATCH,
        changes=(
            rating_change(0, "p_ada", "Ada", 25.6, 27.4),
            rating_change(2, "bot_hard", "bot 3", 26.1, 25.5),
        ),
    )


def hint_for(messages: list[object]) -> Callable[..., wire.HintValues]:
    """A ``hint`` answer for the script's last prompt: each action valued, the
    last one best."""
    prompt = [m for m in messages if isinstance(m, wire.Prompt)][-1]

    def answer(**_kwargs: Any) -> wire.HintValues:
        count = len(prompt.actions)
        options = _values(
            *((a, 40.0 + 1.5 * i, 0.1 + 0.05 * i) for i, a in enumerate(prompt.actions))
        )
        return wire.HintValues(
            match=prompt.match, seq=prompt.seq, seat=prompt.seat, options=options,
            best=count - 1, deals=64,
        )  # fmt: skip

    return answer
