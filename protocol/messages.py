"""One definition per message type: the envelope, the client→server requests
and the server→client messages, and the registries that name them.

Every message is a MessagePack map. Its envelope is ``v`` (the protocol
version), ``type`` (the message type, the struct's tag) and, on requests and
their answers, an optional ``id``; the message's own fields sit beside them
in the same map. These classes are the only definition: the codec
(:mod:`protocol.codec`) encodes, decodes and validates with them, and
PROTOCOL.md's message tables are generated from them (:mod:`protocol.docs`).

Invariants:

- ``v`` is always on the wire: it defaults to :data:`PROTOCOL_VERSION` through
  a factory, which ``omit_defaults`` never leaves off.
- Optional fields default to ``None`` or ``()`` and are left off the wire
  when they have that value; a receiver treats a missing optional field and
  a ``nil`` one alike.
- Receivers ignore fields they do not know (forward compatibility within v1).
- A server→client message's ``sent_to`` says who receives it; a request's
  ``answer`` says what answers it. Both are rendered into PROTOCOL.md.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, get_args

import msgspec
from msgspec import Meta

from .limits import (
    MAX_ANALYSIS_DECISIONS,
    MAX_BATCH_MESSAGES,
    MAX_DEADLINE,
    MAX_ERROR_LENGTH,
    MAX_HISTORY_PAGE,
    MAX_ID_LENGTH,
    MAX_LEADERBOARD_PAGE,
    MAX_LIST_LENGTH,
    MAX_MATCHES_LISTED,
    MAX_RECENT_MATCHES,
    MAX_REPLAY_EVENTS,
    MAX_RULESETS,
    MAX_SEATS,
    MAX_TURN_TIMER,
    MIN_SEATS,
    MIN_TURN_TIMER,
)
from .types import (
    Action,
    Actions,
    BotSeat,
    ChatText,
    Count,
    DecisionReview,
    GameEvent,
    Hex256,
    Identifier,
    LeaderboardEntry,
    MarkThresholds,
    MatchRecord,
    MatchStatus,
    MatchSummary,
    Name,
    OptionValue,
    PlayedBy,
    PlayerKind,
    Points,
    Ranking,
    Rating,
    RatingChange,
    RequestId,
    RulesetInfo,
    Seat,
    SeatAction,
    SeatTimer,
    State,
    Strength,
    Text,
)

__all__ = [
    "CLIENT_MESSAGES",
    "FEATURES",
    "PROTOCOL_VERSION",
    "SERVER_MESSAGES",
    "SUPPORTED_VERSIONS",
    "Act",
    "AddBot",
    "Analyse",
    "AnalysisProgress",
    "AnalysisReport",
    "Batch",
    "BatchedMessage",
    "Chat",
    "ChatLine",
    "ClientMessage",
    "CreateMatch",
    "Error",
    "Event",
    "Feature",
    "Hello",
    "Hint",
    "HintValues",
    "History",
    "HistoryPage",
    "Join",
    "Joined",
    "Leaderboard",
    "LeaderboardPage",
    "Leave",
    "LinkCode",
    "LinkCodeIssued",
    "ListMatches",
    "MatchList",
    "MatchRemoved",
    "MatchUpdate",
    "Message",
    "Ok",
    "PlayAgain",
    "Profile",
    "ProfileCard",
    "Prompt",
    "RatingsChanged",
    "RematchOffer",
    "RemoveSeat",
    "Removed",
    "Rename",
    "Replay",
    "ReplayPage",
    "ServerLimits",
    "ServerMessage",
    "Snapshot",
    "Start",
    "Sync",
    "TurnTimer",
    "Watch",
    "Welcome",
]

#: The version this package speaks, and puts in every message's ``v``.
PROTOCOL_VERSION = 1
#: Every version this package can decode.
SUPPORTED_VERSIONS: tuple[int, ...] = (PROTOCOL_VERSION,)

Version = Annotated[int, Meta(ge=1, le=65535)]
#: A feature a client may ask for in ``hello.features``; one the server does not
#: know is left out of ``welcome.features`` (see :data:`FEATURES`).
Feature = Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
#: The features this package speaks: ``batch``, several messages in one frame.
FEATURES: tuple[str, ...] = ("batch",)
MatchId = Annotated[Identifier, Meta(description="the match id")]


def _current_version() -> int:
    return PROTOCOL_VERSION


class Message(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag_field="type"):
    """Base of every message: the envelope fields ``v`` and ``id``; ``type`` is the tag."""

    v: Annotated[int, Meta(description="protocol version")] = msgspec.field(
        default_factory=_current_version
    )
    id: Annotated[
        RequestId | None,
        Meta(description="request id: an int 0..2**53 − 1 or a string; repeated on the answer"),
    ] = None


class _Request(Message, frozen=True):
    """Base of client→server messages."""

    answer: ClassVar[str] = "`ok`, or `error`"


class _Notice(Message, frozen=True):
    """Base of server→client messages."""

    sent_to: ClassVar[str] = ""


# -- client → server: connecting ------------------------------------------


class Hello(_Request, frozen=True, kw_only=True, tag="hello"):
    """The first message on a connection: who the client is, and which versions
    it speaks. With ``token`` it resumes an identity after a reconnect."""

    answer = (
        "`welcome` (then, when resuming a seat, `joined`, `match_update`, `snapshot`, `prompt`),"
        " or `error`"
    )

    client: Annotated[Text, Meta(description="the client program, e.g. `tulips-tui/0.1`")]
    name: Annotated[Name, Meta(description="the player's display name")]
    token: Annotated[
        Identifier | None, Meta(description="the resume token of an earlier `welcome`")
    ] = None
    link: Annotated[
        Identifier | None,
        Meta(
            description="instead of `token`: a one-time code that another device of the "
            "player got with `link_code`. `welcome` then names that player (same `player` "
            "id and name) with a new token of this device's own. Case and `-` do not "
            "matter. Added within version 1"
        ),
    ] = None
    versions: Annotated[
        Annotated[tuple[Version, ...], Meta(max_length=16)] | None,
        Meta(description="every version the client speaks; default `[v]`"),
    ] = None
    features: Annotated[
        tuple[Feature, ...],
        Meta(
            max_length=16,
            description="what the client would like beyond the version: `batch` (after the "
            "`welcome`, whatever leaves for this connection at once comes as one `batch` "
            "message). A feature the server does not know is ignored; `welcome.features` "
            "says which are on. Added within version 1",
        ),
    ] = ()


# -- client → server: the lobby --------------------------------------------


class ListMatches(_Request, frozen=True, kw_only=True, tag="list_matches"):
    """Ask for a page of the open, running and finished matches, newest
    first; until you enter a match (or ask again), the lobby stays live for
    the matches of that page (see `match_update`)."""

    answer = "`match_list`"

    status: Annotated[
        tuple[MatchStatus, ...],
        Meta(
            max_length=4,
            description="only matches with one of these statuses; default (empty): every "
            "one. Added within version 1",
        ),
    ] = ()
    offset: Annotated[
        Count,
        Meta(description="matches to skip: 0 for the newest. Added within version 1"),
    ] = 0
    limit: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_MATCHES_LISTED,
            description=f"matches wanted (default {MAX_MATCHES_LISTED}). Added within version 1",
        ),
    ] = MAX_MATCHES_LISTED


class CreateMatch(_Request, frozen=True, kw_only=True, tag="create_match"):
    """Create a match and host it, in its lowest seat without a bot (or as a
    spectator, if bots hold every seat)."""

    answer = "`joined` (and `match_update`s as the seats fill), or `error`"

    name: Annotated[Name, Meta(description="the match's name in the lobby")]
    seats: Annotated[int, Meta(ge=MIN_SEATS, le=MAX_SEATS, description="number of seats")]
    bots: Annotated[
        tuple[BotSeat, ...],
        Meta(
            max_length=MAX_SEATS,
            description="seats taken by bots, with strength (all of them: the creator watches)",
        ),
    ] = ()
    join_code: Annotated[
        Name | None,
        Meta(description="if set, `join` and `watch` must give it, in any case (`Tulip`: `tulip`)"),
    ] = None
    turn_timer: Annotated[
        Annotated[float, Meta(ge=MIN_TURN_TIMER, le=MAX_TURN_TIMER)] | None,
        Meta(description="seconds per decision; on timeout the server plays for the seat"),
    ] = None
    ruleset: Annotated[
        Name | None,
        Meta(
            description="a ruleset the server offers (their names are in `welcome.rulesets`); "
            "default `standard`, the printed rules"
        ),
    ] = None
    first_seat: Annotated[
        Seat | None, Meta(description="who plays first (R12); default: chance")
    ] = None
    open_box: Annotated[
        bool,
        Meta(
            description="an open-box match (R27): once finished, `replay` publishes its seed "
            "and every action"
        ),
    ] = False
    tutorial: Annotated[
        bool,
        Meta(
            description="a tutorial: the server deals its fixed tutorial deal (the same cards "
            "every time) to 3 seats, the creator in seat 0 playing first and `bots` in seats 1 "
            "and 2; `join_code`, `turn_timer`, `ruleset`, `first_seat` and `open_box` stay "
            "unset, and anything else is refused with `bad_message`. Never listed: only its "
            "creator may join, watch or replay it (to anyone else it is `no_such_match`), and "
            "its seats cannot change. Added within version 1"
        ),
    ] = False
    rated: Annotated[
        bool | None,
        Meta(
            description="whether the match changes its players' ratings (see "
            "[ratings](#ratings)). Null: the server's rule — rated unless it is played with "
            "a house ruleset or open box. Added within version 1"
        ),
    ] = None
    hints: Annotated[
        bool,
        Meta(
            description="allow hints: each player may ask with `hint` for the analysis's "
            "values of their open decision (see [learning the game](#learning-the-game)). "
            "The lobby and the waiting room show it (`MatchSummary.hints`); such a match is "
            "never rated. Added within version 1"
        ),
    ] = False


class Join(_Request, frozen=True, kw_only=True, tag="join"):
    """Take a seat in an open match, or take back your own seat in any match."""

    answer = "`joined` then `snapshot` (once started), or `error`"

    match: MatchId
    seat: Annotated[Seat | None, Meta(description="the seat wanted; default: lowest free")] = None
    join_code: Annotated[Name | None, Meta(description="the match's join code, if it has one")] = (
        None
    )


class Watch(_Request, frozen=True, kw_only=True, tag="watch"):
    """Watch a match as a spectator: public information only (R24)."""

    answer = "`joined` with `seat` null, then `snapshot` (once started), or `error`"

    match: MatchId
    join_code: Annotated[Name | None, Meta(description="the match's join code, if it has one")] = (
        None
    )


class Leave(_Request, frozen=True, tag="leave"):
    """Leave the current match. An open match's seat is freed; a running
    match's seat is played by the server until its owner comes back with
    ``join``."""


class Start(_Request, frozen=True, kw_only=True, tag="start"):
    """The host starts the match once every seat is taken."""

    without_absent: Annotated[
        bool,
        Meta(
            description="start with those who are here: the empty seats and the seats a "
            "rematch keeps for players who have not accepted yet (`reserved`) are dropped, "
            "and the seats left are numbered again from 0, in order, before the deal; at "
            "least 2 must be left. Added within version 1"
        ),
    ] = False


class AddBot(_Request, frozen=True, kw_only=True, tag="add_bot"):
    """The host puts a bot in a free seat of the open match they are in.
    Added within version 1."""

    answer = "`ok` (and a `match_update` to everyone in the match), or `error`"

    seat: Annotated[Seat | None, Meta(description="the seat; default: the lowest free")] = None
    strength: Annotated[Strength, Meta(description="how well the bot plays")] = "medium"


class RemoveSeat(_Request, frozen=True, kw_only=True, tag="remove_seat"):
    """The host frees a seat of the open match they are in: a bot goes, a
    player (or a rematch's seat kept for one) is put out of the match and told
    with `removed`; they may join again. Not your own seat: `leave`. Added
    within version 1."""

    answer = "`ok` (and a `match_update` to everyone in the match), or `error`"

    seat: Annotated[Seat, Meta(description="the seat to free")]


class PlayAgain(_Request, frozen=True, tag="play_again"):
    """After a match ends: a rematch with the same settings, bots and players.

    The first to ask opens and hosts it; every other player of the old match
    keeps their old seat in it and is sent ``rematch``, and takes the seat with
    their own ``play_again``.
    """

    answer = "`joined` for the new match, or `error`"


# -- client → server: the match --------------------------------------------


class Act(_Request, frozen=True, kw_only=True, tag="act"):
    """Propose an action for your seat; it must be one of the prompt's."""

    answer = "`ok` before the events it causes, or `error` (the match is unchanged)"

    action: Annotated[Action, Meta(description="the action, one of the prompt's `actions`")]
    seq: Annotated[
        Count | None,
        Meta(
            description="the `seq` of the prompt this act answers: if that decision was "
            "taken meanwhile (a timer, a stand-in, another connection), the act is refused "
            "with `decision_taken`. Absent: whatever decision is open when the act arrives, "
            "which a late act may not be (added within version 1)"
        ),
    ] = None


class Sync(_Request, frozen=True, tag="sync"):
    """Ask for a fresh snapshot (after a gap in ``seq``, or any time)."""

    answer = "`snapshot` (then `prompt`, if you must act), or `error`"


class Replay(_Request, frozen=True, kw_only=True, tag="replay"):
    """Ask for a match's record: every event as a spectator saw it, in order —
    or, if you hold a seat in it (one you left included), as your seat saw
    it (R25, R27: what a player knew stays theirs). Once an
    open-box match is finished, also its seed and every action, so anyone can
    replay the shuffle with the rules engine and check it."""

    answer = "`replay` (one or more pages), or `error`"

    match: MatchId
    join_code: Annotated[
        Name | None, Meta(description="needed if the match has one, unless you hold a seat")
    ] = None
    from_seq: Annotated[
        int, Meta(ge=1, description="the first event wanted (for the next page)")
    ] = 1


class Chat(_Request, frozen=True, kw_only=True, tag="chat"):
    """Say something to everyone in your match."""

    text: Annotated[ChatText, Meta(description="the line")]


# -- client → server: learning the game --------------------------------------


class Analyse(_Request, frozen=True, kw_only=True, tag="analyse"):
    """Ask for the post-game analysis of one seat's decisions in a finished
    match: each decision's options valued from that seat's knowledge at that
    moment (R24–R26), which was chosen, the best, the loss and its mark, and a
    summary. Only your own seat (R27: what a player knew stays theirs); in a
    finished open-box match, any seat. Computed once (a fixed number of deals,
    so the same match always gets the same analysis), then stored. Added
    within version 1."""

    answer = (
        "`analysis_progress` (zero or more, same `id`) while it waits or is computed, then "
        "`analysis`; or `error` (`not_finished`, `not_your_seat`, `analysis_busy`, "
        "`no_such_match`, `bad_join_code`, `elsewhere`)"
    )

    match: MatchId
    seat: Annotated[
        Seat | None,
        Meta(
            description="the seat to analyse; default: yours. Another seat only in a finished "
            "open-box match"
        ),
    ] = None
    join_code: Annotated[
        Name | None, Meta(description="needed if the match has one, unless you hold a seat")
    ] = None


class Hint(_Request, frozen=True, kw_only=True, tag="hint"):
    """In a match that allows hints (`MatchSummary.hints`), ask for the
    analysis's values of your open decision, from your seat's knowledge only
    (R24–R26). It takes about as long as the hard bot thinks; nobody's turn
    waits for it. Added within version 1."""

    answer = (
        "`hint`, or `error` (`hints_off`, `not_in_match`, `not_your_turn`, "
        "`decision_taken`, `analysis_busy`)"
    )

    seq: Annotated[
        Count | None,
        Meta(
            description="the `seq` of the prompt it is for: if that decision was taken "
            "meanwhile, or is taken before the hint is ready, the answer is `decision_taken`. "
            "Absent: the decision open now"
        ),
    ] = None


# -- client → server: profiles, ratings and history --------------------------


class Profile(_Request, frozen=True, kw_only=True, tag="profile"):
    """Ask for a player's card: matches, wins, mean points, rating and recent
    matches. Added within version 1."""

    answer = "`profile`, or `error` (`no_such_player`)"

    player: Annotated[
        Identifier | None,
        Meta(
            description="the player id (from `welcome`, a seat, a leaderboard line), or a "
            "bot strength's (`bot_easy`, `bot_medium`, `bot_hard`); default: you"
        ),
    ] = None


class Leaderboard(_Request, frozen=True, kw_only=True, tag="leaderboard"):
    """Ask for one page of the leaderboard: every rated player and bot
    strength, best conservative rating (`ordinal`) first. Added within version 1."""

    answer = "`leaderboard`"

    offset: Annotated[Count, Meta(description="lines to skip: 0 for the top")] = 0
    limit: Annotated[
        int, Meta(ge=1, le=MAX_LEADERBOARD_PAGE, description="lines wanted (default 20)")
    ] = 20


class History(_Request, frozen=True, kw_only=True, tag="history"):
    """Ask for your finished matches, latest first, one page at a time. Added
    within version 1."""

    answer = "`history`"

    before: Annotated[
        Count | None,
        Meta(description="the `next` of the page before, for the next page; default: the latest"),
    ] = None
    limit: Annotated[
        int, Meta(ge=1, le=MAX_HISTORY_PAGE, description="matches wanted (default 10)")
    ] = 10


class LinkCode(_Request, frozen=True, tag="link_code"):
    """Ask for a one-time code that links another device to you: say `hello`
    there with `link` set to it. Asking again replaces the code not yet used.
    Added within version 1."""

    answer = "`link_code`, or `error` (`rate_limited`)"


class Rename(_Request, frozen=True, kw_only=True, tag="rename"):
    """Change your name, on every device, for the matches to come (those
    played keep the name they were played under). Added within version 1."""

    answer = "`ok`, or `error` (`name_taken`)"

    name: Annotated[
        Name,
        Meta(
            description="the new name: no other player of this server may have it, in any "
            "case (`anna` is `Anna`'s)"
        ),
    ]


# -- server → client ------------------------------------------------------


_NonNegative = Annotated[float, Meta(ge=0)]


class ServerLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The timings and thresholds this server enforces on every connection, so a
    client can keep within them (sent in ``welcome``)."""

    hello_timeout: Annotated[
        _NonNegative,
        Meta(
            description="seconds a connection has, once open, to send a `hello` that is "
            "welcomed; then it is closed with 4003"
        ),
    ]
    max_bad_frames: Annotated[
        Count,
        Meta(
            description="errors in a row that close the connection with 4000: `bad_frame`, "
            "`bad_message`, `unknown_type` and, before `welcome`, `not_welcome`",
        ),
    ]
    rate_limit: Annotated[
        _NonNegative,
        Meta(
            description="frames (messages, pings and pongs) per second a connection may send, "
            "on average"
        ),
    ]
    rate_burst: Annotated[
        Count,
        Meta(description="frames it may send at once, beyond that average"),
    ]
    grace_period: Annotated[
        _NonNegative,
        Meta(
            description="seconds a running match waits for a seated player who lost their "
            "connection; then the server plays the seat until they come back"
        ),
    ]
    min_turn_timer: Annotated[
        _NonNegative, Meta(description="the shortest `create_match.turn_timer` it accepts")
    ]
    max_turn_timer: Annotated[
        _NonNegative, Meta(description="the longest `create_match.turn_timer` it accepts")
    ]
    max_connections_per_address: Annotated[
        Count | None,
        Meta(
            description="connections your address may hold at once; one more is refused at "
            "the handshake with HTTP 429. Absent: not limited for your address (loopback, "
            "unless the operator limits it too), or an older server"
        ),
    ] = None
    new_players_per_minute: Annotated[
        _NonNegative | None,
        Meta(
            description="`hello`s without a `token` (each makes a new player) your address "
            "may send a minute, in bursts of as many; beyond it `rate_limited`. Absent: as "
            "for `max_connections_per_address`"
        ),
    ] = None
    join_code_tries: Annotated[
        Count | None,
        Meta(
            description="wrong `join_code`s (of `join`, `watch`, `replay`) your address may "
            "try on one match; then `locked_out` for `join_code_lockout` seconds. Absent: "
            "an older server"
        ),
    ] = None
    join_code_lockout: Annotated[
        _NonNegative | None,
        Meta(description="seconds of that lockout. Absent: an older server"),
    ] = None


class Welcome(_Notice, frozen=True, kw_only=True, tag="welcome"):
    """The answer to ``hello``: the server, the versions it speaks, and your identity.

    Its ``v`` is the version chosen for the connection, the highest one both
    ``hello.versions`` and ``versions`` hold; both sides speak it from now on.
    """

    sent_to = "the connection that said `hello`"

    server: Annotated[Text, Meta(description="the server program, e.g. `tulips-server/0.1`")]
    versions: Annotated[
        tuple[Version, ...], Meta(max_length=16, description="every version the server speaks")
    ]
    player: Annotated[Identifier, Meta(description="your player id (public)")]
    token: Annotated[
        Identifier, Meta(description="your secret resume token: send it in a later `hello`")
    ]
    name: Annotated[Name, Meta(description="your display name, as the server will show it")]
    limits: Annotated[
        ServerLimits | None,
        Meta(description="the server's timings and thresholds; absent from older servers"),
    ] = None
    rulesets: Annotated[
        tuple[RulesetInfo, ...],
        Meta(
            max_length=MAX_RULESETS,
            description="the rulesets `create_match.ruleset` may name, `standard` (the "
            "printed rules) first, each with every number and what differs from the "
            "printed rules. Added within version 1: empty from older servers, which offer "
            "`standard` only",
        ),
    ] = ()
    features: Annotated[
        tuple[Feature, ...],
        Meta(
            max_length=16,
            description="the features of `hello.features` that are on for this connection "
            "(`batch`); absent: none. Added within version 1",
        ),
    ] = ()


class Ok(_Notice, frozen=True, tag="ok"):
    """A request that carried an ``id`` succeeded and has no other answer."""

    sent_to = "the requester"


class Error(_Notice, frozen=True, kw_only=True, tag="error"):
    """A request failed, or a frame could not be read."""

    sent_to = "the requester only"

    code: Annotated[
        str,
        Meta(
            min_length=1,
            max_length=MAX_ID_LENGTH,
            description="from the error code table; an unknown code means `internal_error`",
        ),
    ]
    message: Annotated[
        str, Meta(max_length=MAX_ERROR_LENGTH, description="what went wrong, for people")
    ]
    path: Annotated[
        Text | None, Meta(description="the offending field, e.g. `act.action.to_seat`")
    ] = None
    url: Annotated[
        Text | None,
        Meta(
            description="`elsewhere`: the URL of the node where the match lives; connect there "
            "(added within version 1)"
        ),
    ] = None
    match: Annotated[
        Identifier | None,
        Meta(
            description="`elsewhere` and `node_unavailable`: the match concerned "
            "(added within version 1)"
        ),
    ] = None
    fingerprint: Annotated[
        Text | None,
        Meta(
            description="`elsewhere`, to a `wss://` node: the fingerprint of that node's "
            "certificate (`SHA256:…`). A client that checked this server's certificate may "
            "expect it there (added within version 1)"
        ),
    ] = None


class MatchList(_Notice, frozen=True, kw_only=True, tag="match_list"):
    """The answer to ``list_matches``: one page of the matches."""

    sent_to = "the requester"

    matches: Annotated[
        tuple[MatchSummary, ...],
        Meta(
            max_length=MAX_MATCHES_LISTED,
            description="the page, newest first",
        ),
    ]
    offset: Annotated[
        Count, Meta(description="the matches skipped before `matches`. Added within version 1")
    ] = 0
    total: Annotated[
        Count | None,
        Meta(
            description="how many matches pass the `status` filter in all; absent from an "
            "older server. Added within version 1"
        ),
    ] = None


class Joined(_Notice, frozen=True, kw_only=True, tag="joined"):
    """You are in a match now: in a seat, or watching."""

    sent_to = (
        "the requester; also unasked, when `hello` resumes a seat, and to the player who "
        "hosts an open match now because its host left"
    )

    match: MatchId
    seat: Annotated[Seat | None, Meta(description="your seat; null for a spectator")]
    host: Annotated[bool, Meta(description="you are the host (you may `start`)")]


class MatchUpdate(_Notice, frozen=True, kw_only=True, tag="match_update"):
    """A match's seats, connections or status changed."""

    sent_to = (
        "every player and spectator of the match, and every client in no match whose "
        "last `list_matches` page holds the match (the lobby stays live until it joins or "
        "watches one). On the first page (`offset` 0) a match that enters its filter (a "
        "new one, or one whose status became one asked for) comes in at the top, and once "
        "the page holds more than its `limit` the match at the bottom falls off: no more "
        "updates of it. A match whose status leaves the filter is sent once more, then no "
        "more. To lobby browsers, at most one per match every quarter of a second, with "
        "the match as it is then (a burst of changes is one update; the latest is always "
        "sent)"
    )

    match: Annotated[MatchSummary, Meta(description="the match as it is now")]


class MatchRemoved(_Notice, frozen=True, kw_only=True, tag="match_removed"):
    """A match left the lobby: an open match that everyone left, or a finished
    match older than the ones the lobby lists. ``join`` and ``watch`` of it now
    answer ``no_such_match``, and so does ``replay`` of an open one; a server
    with storage still answers ``replay`` and ``analyse`` of a finished one,
    from its disk (one without storage: ``no_such_match``)."""

    sent_to = (
        "every client in no match whose `list_matches` page holds the match (a match "
        "leaves only once nobody is in it)"
    )

    match: MatchId


class Snapshot(_Notice, frozen=True, kw_only=True, tag="snapshot"):
    """Everything the receiver may see of the match now (R24–R25).

    Sent when the match starts, on ``join``/``watch`` of a started match, on
    resuming, and in answer to ``sync``. It reflects the match's first ``seq``
    events; the next ``event`` has ``seq + 1``.
    """

    sent_to = (
        "one receiver; its `state` is built for that seat (private fields: only yours) "
        "or, for a spectator, public information only"
    )

    match: MatchId
    seq: Annotated[Count, Meta(description="the events it reflects")]
    seat: Annotated[Seat | None, Meta(description="the seat it is built for; null: spectator")]
    state: Annotated[State, Meta(description="the state")]
    ruleset: Annotated[
        RulesetInfo | None,
        Meta(
            description="every number of the match's ruleset (R30), with what differs from "
            "the printed rules. Added within version 1: absent from older servers"
        ),
    ] = None


class Event(_Notice, frozen=True, kw_only=True, tag="event"):
    """Something happened in the match.

    Events are numbered from 1 per match. A client that receives a ``seq``
    other than the last one plus 1 has missed something and sends ``sync``.
    """

    sent_to = (
        "every player and spectator, each its own projection: private fields are "
        "null except for their owner (see the events table)"
    )

    match: MatchId
    seq: Annotated[Count, Meta(description="this event's number, from 1")]
    event: Annotated[GameEvent, Meta(description="what happened, tagged by `kind`")]
    by: Annotated[
        PlayedBy | None,
        Meta(
            description="on the first event of an action a person's seat did not choose: "
            "`stand_in` (the server plays the seat while its player is away) or `timer` (the "
            "turn timer ran out); absent otherwise. Added within version 1"
        ),
    ] = None


class Prompt(_Notice, frozen=True, kw_only=True, tag="prompt"):
    """It is your turn to act: choose one of ``actions`` and send ``act``;
    ``points`` says what each one scores at once, ``rankings`` where each
    face-up add would put the festival's colours."""

    sent_to = "the seat that must act (during the opening, every seat)"

    match: MatchId
    seq: Annotated[Count, Meta(description="the events the prompt follows")]
    seat: Annotated[Seat, Meta(description="your seat")]
    actions: Annotated[Actions, Meta(min_length=1, description="your legal actions")]
    deadline: Annotated[
        Annotated[float, Meta(ge=0, le=MAX_DEADLINE)] | None,
        Meta(description="seconds left; absent: no timer"),
    ] = None
    points: Annotated[
        tuple[Count, ...],
        Meta(
            max_length=MAX_LIST_LENGTH,
            description="the points each action scores at once (R14, R15, R17), aligned "
            "with `actions`: `points[i]` is what `actions[i]` scores (0 for `add` and "
            "`opening`); added within version 1, so absent from older servers",
        ),
    ] = ()
    rankings: Annotated[
        tuple[Ranking | None, ...],
        Meta(
            max_length=MAX_LIST_LENGTH,
            description="the festival's ranking, 1st first, that each action would make "
            "(R16, R8), aligned with `actions`: for an `add_face_up`, the ranked colours "
            "once the drawn card is face up (its colour goes above every colour it ties "
            "with); null for every other action. Only face-up cards count: a secret card "
            "counts once revealed at the end (R19), which no preview foresees. Added "
            "within version 1, so absent (empty) from older servers",
        ),
    ] = ()


class TurnTimer(_Notice, frozen=True, kw_only=True, tag="turn_timer"):
    """Whose turn timer runs, and how many seconds each has left. Added within
    version 1: older servers send none (only the seat that must act learns its
    own, from ``prompt.deadline``)."""

    sent_to = (
        "every player and spectator of a timed match, whenever a seat's timer starts or "
        "stops before the seat acts (a stand-in takes the seat); and one member, after "
        "its snapshot, while a timer runs"
    )

    match: MatchId
    seq: Annotated[Count, Meta(description="the events it follows")]
    timers: Annotated[
        tuple[SeatTimer, ...],
        Meta(max_length=MAX_SEATS, description="every running timer, by seat"),
    ]


class RematchOffer(_Notice, frozen=True, kw_only=True, tag="rematch"):
    """Someone opened the rematch of a finished match: its other players may
    join it with ``play_again`` (their seats are kept for them). Added within
    version 1."""

    sent_to = "every other player of the finished match who is in it when the rematch opens"

    match: Annotated[Identifier, Meta(description="the finished match")]
    rematch: Annotated[Identifier, Meta(description="the rematch, open now")]
    host: Annotated[Name, Meta(description="who opened it (and hosts it)")]


class Removed(_Notice, frozen=True, kw_only=True, tag="removed"):
    """The host of an open match took your seat away (`remove_seat`): you are
    in no match now, back in the lobby. Added within version 1."""

    sent_to = "every connection of the player removed that was in the match"

    match: MatchId
    host: Annotated[Name, Meta(description="who removed you (the host)")]


class ReplayPage(_Notice, frozen=True, kw_only=True, tag="replay"):
    """A match's events from ``from_seq`` on, as ``seat`` saw them (null: as a
    spectator did); ``next_seq`` is set when more remain (ask again with
    ``from_seq = next_seq``). ``seed``, ``salt``, ``first_seat`` and
    ``actions`` appear only for an open-box match once it is finished: R26
    and R27 hide them otherwise, for ever."""

    sent_to = "the requester"

    match: MatchId
    status: Annotated[MatchStatus, Meta(description="open, running, paused or finished")]
    ruleset: Annotated[Name, Meta(description="the ruleset's name (R30)")]
    from_seq: Annotated[Count, Meta(description="the number of the first event here")]
    events: Annotated[
        tuple[GameEvent, ...],
        Meta(
            max_length=MAX_REPLAY_EVENTS,
            description="the events, as `seat` saw them: private fields only its own",
        ),
    ]
    next_seq: Annotated[
        Count | None, Meta(description="set when more events remain: ask from here")
    ] = None
    by: Annotated[
        tuple[PlayedBy | None, ...],
        Meta(
            max_length=MAX_REPLAY_EVENTS,
            description="each event's `event.by`, aligned with `events` (`by[i]` goes with "
            "`events[i]`); empty when none of them has one. Added within version 1",
        ),
    ] = ()
    points: Annotated[
        Points | None,
        Meta(
            description="the festival cards' points of the match's ruleset and seat count "
            "(R30, public), as in `state.points`. Added within version 1"
        ),
    ] = None
    seat: Annotated[
        Seat | None,
        Meta(description="your seat, whose view the events are; null: a spectator's view"),
    ] = None
    seed: Annotated[
        Annotated[int, Meta(ge=0, le=2**63 - 1)] | None,
        Meta(description="open box, once finished: the match's seed"),
    ] = None
    salt: Annotated[
        Hex256 | None,
        Meta(description="open box, once finished: the salt of the seed commitment"),
    ] = None
    first_seat: Annotated[
        Seat | None,
        Meta(description="open box, once finished: the host's first seat (null: chance)"),
    ] = None
    actions: Annotated[
        tuple[SeatAction, ...],
        Meta(
            max_length=MAX_REPLAY_EVENTS,
            description="open box, once finished: every action, in order",
        ),
    ] = ()


class ChatLine(_Notice, frozen=True, kw_only=True, tag="chat"):
    """A chat line said in the match."""

    sent_to = "every player and spectator of the match, the speaker included"

    match: MatchId
    seat: Annotated[Seat | None, Meta(description="the speaker's seat; null: a spectator")]
    name: Annotated[Name, Meta(description="the speaker's name")]
    text: Annotated[ChatText, Meta(description="the line")]


class ProfileCard(_Notice, frozen=True, kw_only=True, tag="profile"):
    """A player's (or a bot strength's) card. Added within version 1."""

    sent_to = "the requester"

    player: Annotated[Identifier, Meta(description="the player id")]
    name: Annotated[Name, Meta(description="the player's name now")]
    kind: Annotated[PlayerKind, Meta(description="a person or the server's bots")]
    strength: Annotated[Strength | None, Meta(description="for bots: their strength")] = None
    matches: Annotated[
        Count, Meta(description="finished matches played (for bots: by bots of that strength)")
    ] = 0
    wins: Annotated[Count, Meta(description="of those, the ones won (shared wins too, R23)")] = 0
    mean_points: Annotated[
        Annotated[float, Meta(ge=0)] | None,
        Meta(description="the mean of their final points; absent before the first match"),
    ] = None
    rated_matches: Annotated[
        Count, Meta(description="rated matches whose result counted for the rating")
    ] = 0
    rating: Annotated[
        Rating | None,
        Meta(description="the rating now; absent before the first rated match that counted"),
    ] = None
    rank: Annotated[
        Annotated[int, Meta(ge=1)] | None,
        Meta(description="the place on the leaderboard; absent when not on it"),
    ] = None
    since: Annotated[
        Annotated[float, Meta(ge=0)] | None,
        Meta(description="when the player was first seen, seconds since 1970-01-01 UTC"),
    ] = None
    recent: Annotated[
        tuple[MatchRecord, ...],
        Meta(
            max_length=MAX_RECENT_MATCHES, description="the latest finished matches, newest first"
        ),
    ] = ()


class LeaderboardPage(_Notice, frozen=True, kw_only=True, tag="leaderboard"):
    """One page of the leaderboard. Added within version 1."""

    sent_to = "the requester"

    offset: Annotated[Count, Meta(description="the lines skipped before `entries`")]
    total: Annotated[Count, Meta(description="lines on the whole leaderboard")]
    entries: Annotated[
        tuple[LeaderboardEntry, ...],
        Meta(max_length=MAX_LEADERBOARD_PAGE, description="the page, best first"),
    ]
    you: Annotated[
        LeaderboardEntry | None,
        Meta(description="your own line, wherever it is; absent when you are not on the board"),
    ] = None


class HistoryPage(_Notice, frozen=True, kw_only=True, tag="history"):
    """One page of your finished matches, latest first; each can be opened with
    `replay`. Added within version 1."""

    sent_to = "the requester"

    matches: Annotated[
        tuple[MatchRecord, ...],
        Meta(max_length=MAX_HISTORY_PAGE, description="the matches, latest first"),
    ]
    next: Annotated[
        Count | None,
        Meta(description="set when older matches remain: ask with `before` = this"),
    ] = None


class LinkCodeIssued(_Notice, frozen=True, kw_only=True, tag="link_code"):
    """A one-time code to link another device: shown on this one, typed there
    into `hello.link`. Added within version 1."""

    sent_to = "the requester"

    code: Annotated[
        Identifier,
        Meta(description="the code, e.g. `K7QM-2XPD`: used once, then it is spent"),
    ]
    expires_in: Annotated[
        Annotated[float, Meta(ge=0)], Meta(description="seconds until it expires unused")
    ]


class RatingsChanged(_Notice, frozen=True, kw_only=True, tag="ratings"):
    """A rated match's result was applied to its players' ratings. Added within
    version 1."""

    sent_to = (
        "every player and spectator of the match still in it when its ratings are applied, "
        "shortly after `match_ended`"
    )

    match: MatchId
    changes: Annotated[
        tuple[RatingChange, ...],
        Meta(
            max_length=MAX_SEATS,
            description="one per seat whose result counted, by seat (a seat the server's "
            "stand-in mostly played has none)",
        ),
    ]


class AnalysisProgress(_Notice, frozen=True, kw_only=True, tag="analysis_progress"):
    """An `analyse` is under way: waiting behind others, or computed decision
    by decision. Added within version 1."""

    sent_to = "the requester, with the `analyse` request's `id`, until `analysis` answers it"

    match: MatchId
    seat: Annotated[Seat, Meta(description="the seat being analysed")]
    queued: Annotated[
        Count,
        Meta(
            description="its place in the line of analyses waiting for a worker (1: the next "
            "to start); 0 once it is being computed"
        ),
    ]
    done: Annotated[Count, Meta(description="decisions valued so far")] = 0
    total: Annotated[Count, Meta(description="the seat's decisions; 0 while queued")] = 0


class AnalysisReport(_Notice, frozen=True, kw_only=True, tag="analysis"):
    """The analysis of one seat's decisions in a finished match, from that
    seat's knowledge at each decision (R24–R26): enough to show it without
    knowing the rules. Added within version 1."""

    sent_to = "the requester"

    match: MatchId
    seat: Annotated[Seat, Meta(description="the seat analysed")]
    decisions: Annotated[
        tuple[DecisionReview, ...],
        Meta(max_length=MAX_ANALYSIS_DECISIONS, description="every decision, in play order"),
    ]
    mean_loss: Annotated[
        Annotated[float, Meta(ge=0.0, le=1e6)],
        Meta(description="mean expected points lost per decision that was not `forced`"),
    ]
    accuracy: Annotated[
        Annotated[float, Meta(ge=0.0, le=100.0)],
        Meta(description="percentage of decisions (not `forced`) that earned no mark"),
    ]
    costliest: Annotated[
        tuple[Count, ...],
        Meta(
            max_length=MAX_LIST_LENGTH,
            description="the `index` of the (at most three) decisions that lost most, costliest "
            "first; those that lost nothing are left out",
        ),
    ]
    inaccuracies: Annotated[Count, Meta(description="decisions marked `inaccuracy`")] = 0
    mistakes: Annotated[Count, Meta(description="decisions marked `mistake`")] = 0
    blunders: Annotated[Count, Meta(description="decisions marked `blunder`")] = 0
    thresholds: Annotated[MarkThresholds, Meta(description="the least loss that earns each mark")]
    deals: Annotated[
        Count, Meta(description="deals of the unseen cards sampled per decision (when not exact)")
    ]


class HintValues(_Notice, frozen=True, kw_only=True, tag="hint"):
    """The analysis's values of your open decision, from your seat's knowledge
    only (R24–R26). Added within version 1."""

    sent_to = "the requester only"

    match: MatchId
    seq: Annotated[Count, Meta(description="the `seq` of the prompt whose decision it values")]
    seat: Annotated[Seat, Meta(description="your seat")]
    options: Annotated[
        tuple[OptionValue, ...],
        Meta(
            min_length=1,
            max_length=MAX_LIST_LENGTH,
            description="aligned with that prompt's `actions`: `options[i]` values `actions[i]`",
        ),
    ]
    best: Annotated[Count, Meta(description="the option with the most expected points: an index")]
    exact: Annotated[
        bool, Meta(description="exact expectations; false: averaged over `deals` sampled deals")
    ] = False
    deals: Annotated[Count, Meta(description="deals sampled (or enumerated when exact)")] = 0


#: Every message a client may send.
ClientMessage = (
    Hello
    | ListMatches
    | CreateMatch
    | Join
    | Watch
    | Leave
    | Start
    | AddBot
    | RemoveSeat
    | PlayAgain
    | Act
    | Sync
    | Replay
    | Chat
    | Profile
    | Leaderboard
    | History
    | LinkCode
    | Rename
    | Analyse
    | Hint
)
#: Every message a server may send on its own or in a ``batch``.
BatchedMessage = (
    Welcome
    | Ok
    | Error
    | MatchList
    | Joined
    | MatchUpdate
    | MatchRemoved
    | Snapshot
    | Event
    | Prompt
    | ReplayPage
    | ChatLine
    | TurnTimer
    | RematchOffer
    | Removed
    | ProfileCard
    | LeaderboardPage
    | HistoryPage
    | LinkCodeIssued
    | RatingsChanged
    | AnalysisProgress
    | AnalysisReport
    | HintValues
)


class Batch(_Notice, frozen=True, kw_only=True, tag="batch"):
    """Several messages in one frame: read each of ``messages`` in order as if
    it had come in a frame of its own. Added within version 1."""

    sent_to = (
        "a connection whose `hello.features` held `batch` (its `welcome.features` says so), "
        "whenever two or more messages leave for it at once — everything one request, "
        "action or timer causes for it: the `ok`, the events, the prompt, the timers, the "
        "match's update; never the `welcome`, never inside another `batch`"
    )

    messages: Annotated[
        tuple[BatchedMessage, ...],
        Meta(
            min_length=2,
            max_length=MAX_BATCH_MESSAGES,
            description="the messages, in the order they were sent (each a whole message "
            "with its own `v` and `type`; one of a type you do not know is ignored, as on "
            "its own)",
        ),
    ]


#: Every message a server may send.
ServerMessage = BatchedMessage | Batch


def _registry(union: object) -> dict[str, type[Message]]:
    registry: dict[str, type[Message]] = {}
    for cls in get_args(union):
        tag = cls.__struct_config__.tag
        assert isinstance(tag, str) and tag not in registry
        registry[tag] = cls
    return registry


#: Client→server message types by their ``type`` tag, in document order.
CLIENT_MESSAGES: dict[str, type[Message]] = _registry(ClientMessage)
#: Server→client message types by their ``type`` tag, in document order.
SERVER_MESSAGES: dict[str, type[Message]] = _registry(ServerMessage)
