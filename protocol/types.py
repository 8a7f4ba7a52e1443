"""The value types messages are made of: cards, colours, actions, seats,
match summaries, the snapshot's state, the final scoring and the events.

They mirror the engine's vocabulary (``engine/cards.py``, ``actions.py``,
``events.py``, ``observation.py``, ``scoring.py``) with types of their own,
because ``protocol`` imports nothing of ours; the server converts.

Invariants:

- Every card, colour and action has exactly one spelling, used in every
  message: a colour is ``"purple"``, a card ``"pink-3"``, an action a map
  tagged by ``kind`` (``{"kind": "give", "to_seat": 2}``).
- Every field's type carries its bounds (``msgspec.Meta``), so the decoder
  validates lengths and ranges in C, and PROTOCOL.md's tables (generated from
  these definitions) state the same bounds.
- A card that a receiver may not see is ``None`` on the wire (R25–R26): the
  fields of an event that can hold one are listed in its ``private``
  class attribute, and they are nullable; the state carries face-down cards of
  other seats only as counts.
- Values are frozen; sequences are tuples.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, get_args

import msgspec
from msgspec import Meta

from .limits import (
    MAX_CHAT_LENGTH,
    MAX_DEADLINE,
    MAX_ID_LENGTH,
    MAX_LIST_LENGTH,
    MAX_NAME_LENGTH,
    MAX_REQUEST_ID,
    MAX_SEATS,
    MAX_STRING_LENGTH,
    MAX_TURN_TIMER,
    MIN_SEATS,
)

__all__ = [
    "ACTION_TYPES",
    "CARDS",
    "COLOURS",
    "EVENT_TYPES",
    "MARKS",
    "STRENGTHS",
    "Action",
    "AddFaceUp",
    "AddSecret",
    "BotSeat",
    "Card",
    "CardAddedFaceUp",
    "CardAddedSecret",
    "CardDrawn",
    "CardGiven",
    "CardKept",
    "CardsDealt",
    "ChatText",
    "Colour",
    "Count",
    "DecidedBy",
    "DecisionReview",
    "FestivalStarted",
    "FinalSeat",
    "GameEvent",
    "Give",
    "Hex256",
    "Identifier",
    "Keep",
    "LeaderboardEntry",
    "MajorityPlace",
    "MajorityResult",
    "Mark",
    "MarkThresholds",
    "MatchEnded",
    "MatchRecord",
    "MatchStatus",
    "MatchSummary",
    "Name",
    "Opening",
    "OpeningChosen",
    "OpeningRevealed",
    "OptionValue",
    "Phase",
    "PlayedBy",
    "PlayerKind",
    "PlayerScore",
    "Points",
    "Rating",
    "RatingChange",
    "RequestId",
    "RulesetInfo",
    "Scoring",
    "Seat",
    "SeatAction",
    "SeatInfo",
    "SeatKind",
    "SeatState",
    "SeatTimer",
    "SecretRevealed",
    "State",
    "Strength",
    "Text",
    "TurnAction",
    "TurnStarted",
]

# -- scalar spellings -------------------------------------------------------

#: A tulip colour (R1).
Colour = Literal["purple", "blue", "pink", "orange"]
#: A card: ``"<colour>-<value>"``, values 2, 3 and 4 (R2).
Card = Literal[
    "purple-2",
    "purple-3",
    "purple-4",
    "blue-2",
    "blue-3",
    "blue-4",
    "pink-2",
    "pink-3",
    "pink-4",
    "orange-2",
    "orange-3",
    "orange-4",
]
#: Who must act: every seat at once (R11), the active seat (R13), nobody (R18).
Phase = Literal["opening", "turn", "over"]
#: The three actions of a turn (R13); both forms of adding are ``"add"`` (R16).
TurnAction = Literal["keep", "give", "add"]
#: A bot's playing strength.
Strength = Literal["easy", "medium", "hard"]
#: A match in the lobby: taking players, being played, or over.
MatchStatus = Literal["open", "running", "paused", "finished"]
#: Who chose an action for a person's seat when they did not (``event.by``).
PlayedBy = Literal["stand_in", "timer"]
#: Who holds a seat.
SeatKind = Literal["human", "bot", "empty"]
#: What decided the winner (R23).
DecidedBy = Literal["points", "tulips", "shared"]
#: Who a rated identity is: a person, or the server's bots of one strength.
PlayerKind = Literal["human", "bot"]
#: How much a decision cost, by the analysis (mildest first): see `analysis.thresholds`.
Mark = Literal["inaccuracy", "mistake", "blunder"]

#: The four colours, in their canonical order (R1).
COLOURS: tuple[Colour, ...] = get_args(Colour)
#: The twelve card spellings, in colour order, then value order.
CARDS: tuple[Card, ...] = get_args(Card)
#: Every strength a bot may have, weakest first: the server's bots and ``tulips-bot``
#: offer these names, and ``tulips play --strength`` asks for them.
STRENGTHS: tuple[Strength, ...] = get_args(Strength)

# `$(?!\n)` is the end of the text both in Python's re, whose `$` alone also
# matches before a final newline (msgspec searches with it), and in ECMA-262,
# so the codec and a JSON Schema validator refuse a name ending in a newline alike.
_END = "$(?!\\n)"
#: The pattern of names and texts: no C0/C1 control characters.
PRINTABLE_PATTERN = "^[^\\x00-\\x1f\\x7f-\\x9f]*" + _END
#: The pattern of ids and tokens: letters, digits, ``_`` and ``-``.
ID_PATTERN = "^[A-Za-z0-9_-]+" + _END

#: A seat number, 0 to 5 (R5).
Seat = Annotated[int, Meta(ge=0, le=MAX_SEATS - 1)]
#: A count of cards, points, turns or events.
Count = Annotated[int, Meta(ge=0)]
#: A player, match or ruleset name: 1 to 40 characters, no control characters.
Name = Annotated[str, Meta(min_length=1, max_length=MAX_NAME_LENGTH, pattern=PRINTABLE_PATTERN)]
#: A short free text.
Text = Annotated[str, Meta(max_length=MAX_STRING_LENGTH, pattern=PRINTABLE_PATTERN)]
#: A chat line: 1 to 500 characters, no control characters.
ChatText = Annotated[str, Meta(min_length=1, max_length=MAX_CHAT_LENGTH, pattern=PRINTABLE_PATTERN)]
#: A match id, player id or token: 1 to 64 of ``A-Z a-z 0-9 _ -``.
Identifier = Annotated[str, Meta(min_length=1, max_length=MAX_ID_LENGTH, pattern=ID_PATTERN)]
#: 32 bytes (256 bits) as 64 lowercase hex digits: a seed commitment or its salt (R27).
Hex256 = Annotated[str, Meta(min_length=64, max_length=64, pattern="^[0-9a-f]{64}" + _END)]
#: A request id: an int 0 to 2**53 - 1, or a string of 1 to 64 characters.
RequestId = (
    Annotated[int, Meta(ge=0, le=MAX_REQUEST_ID)]
    | Annotated[str, Meta(min_length=1, max_length=MAX_ID_LENGTH)]
)

Cards = Annotated[tuple[Card, ...], Meta(max_length=MAX_LIST_LENGTH)]
Ranking = Annotated[tuple[Colour, ...], Meta(max_length=len(COLOURS))]
Seats = Annotated[tuple[Seat, ...], Meta(max_length=MAX_SEATS)]


class _Value(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of the value types: frozen, keyword-only, defaults left off the wire."""


# -- actions ----------------------------------------------------------------


class _ActionBase(_Value, frozen=True, tag_field="kind"):
    """Base of the actions: a map tagged by ``kind``."""


class Keep(_ActionBase, frozen=True, tag="keep"):
    """KEEP the drawn card: it goes to your bouquet (R14)."""


class Give(_ActionBase, frozen=True, kw_only=True, tag="give"):
    """GIVE the drawn card to another seat's bouquet (R15)."""

    to_seat: Annotated[Seat, Meta(description="the receiver")]


class AddFaceUp(_ActionBase, frozen=True, tag="add_face_up"):
    """ADD the drawn card face up to the festival (R16)."""


class AddSecret(_ActionBase, frozen=True, tag="add_secret"):
    """ADD the drawn card face down to the secret festival (R16)."""


class Opening(_ActionBase, frozen=True, kw_only=True, tag="opening"):
    """The opening choice: which dealt card goes face down (R11); the other goes
    to your bouquet."""

    secret: Annotated[Card, Meta(description="the dealt card that goes to the secret festival")]


#: What a seat may propose, tagged by ``kind``.
Action = Keep | Give | AddFaceUp | AddSecret | Opening
#: The action types, in the order PROTOCOL.md lists them.
ACTION_TYPES: tuple[type[_ActionBase], ...] = get_args(Action)

Actions = Annotated[tuple[Action, ...], Meta(max_length=MAX_LIST_LENGTH)]

# -- the lobby --------------------------------------------------------------


class SeatAction(_Value, frozen=True, kw_only=True):
    """One accepted action of a finished match, with the seat that played it."""

    seat: Annotated[Seat, Meta(description="the seat that acted")]
    action: Annotated[Action, Meta(description="what it did")]


class BotSeat(_Value, frozen=True, kw_only=True):
    """A seat that a bot takes when the match is created."""

    seat: Annotated[Seat, Meta(description="the bot's seat")]
    strength: Annotated[Strength, Meta(description="how well it plays")] = "medium"


class SeatInfo(_Value, frozen=True, kw_only=True):
    """Who holds one seat of a match, as the lobby shows it."""

    seat: Annotated[Seat, Meta(description="the seat number")]
    kind: Annotated[SeatKind, Meta(description="a person, a bot, or nobody yet")]
    name: Annotated[Name | None, Meta(description="the player's or bot's name")] = None
    strength: Annotated[Strength | None, Meta(description="for a bot: its strength")] = None
    connected: Annotated[bool, Meta(description="for a person: online now")] = False
    player: Annotated[
        Identifier | None,
        Meta(
            description="for a person: their player id (public, as in `welcome`), which "
            "`profile` takes; absent for a bot (its strength's id is `bot_` and the "
            "strength) and an empty seat. Added within version 1"
        ),
    ] = None
    bot_in: Annotated[
        Annotated[float, Meta(ge=0, le=MAX_DEADLINE)] | None,
        Meta(
            description="for a person away from a running match: seconds until the server "
            "plays their seat (what is left of the grace period); absent otherwise. Added "
            "within version 1"
        ),
    ] = None
    stand_in: Annotated[
        bool,
        Meta(
            description="for a person: the server plays their seat now (away too long, or "
            "left), until they are back. Added within version 1"
        ),
    ] = False
    reserved: Annotated[
        bool,
        Meta(
            description="for a person, in an open rematch: the seat is kept for this player "
            "of the last match, who has not accepted (`play_again`) yet. Added within version 1"
        ),
    ] = False


class SeatTimer(_Value, frozen=True, kw_only=True):
    """One seat's running turn timer."""

    seat: Annotated[Seat, Meta(description="the seat that must act")]
    seconds: Annotated[
        Annotated[float, Meta(ge=0, le=MAX_DEADLINE)],
        Meta(description="seconds left before the server plays for it"),
    ]


class MatchSummary(_Value, frozen=True, kw_only=True):
    """A match as the lobby lists it."""

    match: Annotated[Identifier, Meta(description="the match id")]
    name: Annotated[Name, Meta(description="the name its host gave it")]
    status: Annotated[
        MatchStatus,
        Meta(
            description="open (not started yet, even with every seat taken), running, "
            "paused (an action could not be stored yet: play resumes once it is, "
            "or after a server restart) "
            "or finished"
        ),
    ]
    seats: Annotated[
        tuple[SeatInfo, ...],
        Meta(min_length=MIN_SEATS, max_length=MAX_SEATS, description="every seat, by number"),
    ]
    host: Annotated[Name, Meta(description="the host player's name")]
    has_join_code: Annotated[bool, Meta(description="joining and watching need the code")]
    ruleset: Annotated[Name, Meta(description="the ruleset's name (R30)")]
    turn_timer: Annotated[
        Annotated[float, Meta(ge=0, le=MAX_TURN_TIMER)] | None,
        Meta(description="seconds per decision; absent: no timer"),
    ] = None
    open_box: Annotated[
        bool,
        Meta(
            description="an open-box match (R27): once finished, its seed and every action "
            "are published"
        ),
    ] = False
    seed_commitment: Annotated[
        Hex256 | None,
        Meta(
            description="open-box matches, once dealt: SHA-256 of salt ‖ seed, fixed before "
            "anyone sees a card (see [checking a finished match](#checking-a-finished-match))"
        ),
    ] = None
    node: Annotated[
        Identifier | None,
        Meta(
            description="in a cluster: the node that runs the match (absent from a single "
            "server); added within version 1"
        ),
    ] = None
    available: Annotated[
        bool,
        Meta(
            description="in a cluster: false while the node that runs the match is not "
            "answering (or this node cannot reach the cluster's store); `join`, `watch` and "
            "`replay` then get `node_unavailable` or `cluster_unavailable`. Added within "
            "version 1"
        ),
    ] = True
    spectators: Annotated[
        Count,
        Meta(description="how many are watching it now. Added within version 1"),
    ] = 0
    watching: Annotated[
        tuple[Name, ...],
        Meta(
            max_length=MAX_LIST_LENGTH,
            description="the names of those watching, the first ones if many (at most "
            "`spectators`). Added within version 1",
        ),
    ] = ()
    tutorial: Annotated[
        bool,
        Meta(
            description="a tutorial (`create_match.tutorial`): the server's fixed deal against "
            "bots, shown only to its creator. Added within version 1"
        ),
    ] = False
    rated: Annotated[
        bool,
        Meta(
            description="the match changes its players' ratings when it ends (see "
            "[ratings](#ratings)); absent: unrated, or an older server. Added within version 1"
        ),
    ] = False
    hints: Annotated[
        bool,
        Meta(
            description="its host allows hints: a player may ask with `hint` for the "
            "analysis's values of their open decision (see [learning the game]"
            "(#learning-the-game)); such a match is never rated. Added within version 1"
        ),
    ] = False


# -- profiles, ratings and history ------------------------------------------

#: A rating's numbers: Weng–Lin's mean and uncertainty, and their conservative estimate.
_Skill = Annotated[float, Meta(ge=-1e6, le=1e6)]


class Rating(_Value, frozen=True, kw_only=True):
    """A player's (or a bot strength's) rating: openskill's Weng–Lin model
    (Plackett–Luce). A new player starts at μ 25, σ 25/3, ordinal 0. Added
    within version 1."""

    mu: Annotated[_Skill, Meta(description="μ, the estimated skill")]
    sigma: Annotated[
        Annotated[float, Meta(ge=0, le=1e6)],
        Meta(description="σ, the uncertainty of μ; it shrinks as more matches are rated"),
    ]
    ordinal: Annotated[
        _Skill,
        Meta(
            description="the conservative rating shown and ranked by: μ − 3σ (openskill's "
            "ordinal); the player is at least this good, almost surely"
        ),
    ]


class RatingChange(_Value, frozen=True, kw_only=True):
    """How one seat's rating moved with a rated match. Added within version 1."""

    seat: Annotated[Seat, Meta(description="the seat")]
    player: Annotated[
        Identifier,
        Meta(
            description="whose rating: a player id, or for a bot its strength's identity "
            "(`bot_easy`, `bot_medium`, `bot_hard`)"
        ),
    ]
    name: Annotated[Name, Meta(description="the player's or bot's name")]
    before: Annotated[Rating, Meta(description="the rating before the match")]
    after: Annotated[Rating, Meta(description="the rating after it")]


class FinalSeat(_Value, frozen=True, kw_only=True):
    """One seat of a finished match, as history and profiles list it. Added
    within version 1."""

    seat: Annotated[Seat, Meta(description="the seat")]
    kind: Annotated[PlayerKind, Meta(description="a person or a bot")]
    name: Annotated[
        Name, Meta(description="the name it played under (`removed player` once removed)")
    ]
    player: Annotated[
        Identifier | None,
        Meta(
            description="the player id (for a bot: its strength's identity); null for a "
            "removed player"
        ),
    ] = None
    strength: Annotated[Strength | None, Meta(description="for a bot: its strength")] = None
    points: Annotated[Count, Meta(description="final points (R20–R22)")] = 0
    rank: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_SEATS,
            description="final place, 1 first; a shared victory is a shared rank (R23), and "
            "so is any tie the rules leave",
        ),
    ] = 1
    counted: Annotated[
        bool,
        Meta(
            description="in a rated match: the result changed this seat's player's rating. "
            "False when the server's stand-in made most of the seat's decisions, or the "
            "match was unrated"
        ),
    ] = False


class MatchRecord(_Value, frozen=True, kw_only=True):
    """A finished match in a player's history or profile. Added within version 1."""

    match: Annotated[Identifier, Meta(description="the match id; `replay` takes it")]
    name: Annotated[Name, Meta(description="the name its host gave it")]
    ruleset: Annotated[Name, Meta(description="the ruleset's name (R30)")]
    finished_at: Annotated[
        Annotated[float, Meta(ge=0)],
        Meta(description="when it ended, seconds since 1970-01-01 UTC"),
    ]
    seats: Annotated[
        tuple[FinalSeat, ...],
        Meta(min_length=MIN_SEATS, max_length=MAX_SEATS, description="every seat, by number"),
    ]
    rated: Annotated[bool, Meta(description="it changed its players' ratings")] = False
    open_box: Annotated[
        bool, Meta(description="an open-box match (R27): its replay shows seed and actions")
    ] = False
    seat: Annotated[
        Seat | None,
        Meta(description="the seat of the player whose history or profile lists it"),
    ] = None
    rating: Annotated[
        RatingChange | None,
        Meta(description="how that seat's player's rating moved with it, if it counted"),
    ] = None
    replay: Annotated[
        bool,
        Meta(
            description="the server keeps its record, in memory or on disk: `replay` "
            "(and `analyse`) of `match` answers (as that seat saw it, R25, R27). False when "
            "it does not (a server without storage keeps only its newest finished matches; "
            "in a cluster, while the node that ran it is down: `replay` is sent there)"
        ),
    ] = True


class LeaderboardEntry(_Value, frozen=True, kw_only=True):
    """One line of the leaderboard. Added within version 1."""

    rank: Annotated[int, Meta(ge=1, description="the place, 1 first, by `rating.ordinal`")]
    player: Annotated[
        Identifier, Meta(description="the player id, or a bot strength's (`bot_medium`)")
    ]
    name: Annotated[Name, Meta(description="the player's name, or the bots'")]
    kind: Annotated[PlayerKind, Meta(description="a person or the server's bots")]
    rating: Annotated[Rating, Meta(description="the rating")]
    matches: Annotated[Count, Meta(description="rated matches that counted")]
    wins: Annotated[Count, Meta(description="of those, the ones won (shared wins too, R23)")]
    strength: Annotated[Strength | None, Meta(description="for bots: their strength")] = None


# -- learning the game: analyses and hints ----------------------------------

#: The marks, mildest first.
MARKS: tuple[Mark, ...] = get_args(Mark)

_Points = Annotated[float, Meta(ge=-1e6, le=1e6)]
_Chance = Annotated[float, Meta(ge=0.0, le=1.0)]


class OptionValue(_Value, frozen=True, kw_only=True):
    """One legal option of a decision and what the analysis expects it to be
    worth to the seat, from that seat's knowledge only (R24–R26). Added within
    version 1."""

    action: Annotated[Action, Meta(description="the option, as `act` would send it")]
    expected_points: Annotated[
        _Points, Meta(description="the seat's expected final points (R14–R22) after it")
    ]
    win_chance: Annotated[
        _Chance,
        Meta(description="the seat's expected share of the victory, 0 to 1 (R23: shared wins)"),
    ]


class DecisionReview(_Value, frozen=True, kw_only=True):
    """One decision of a seat, judged by the analysis: every option's value,
    which was chosen, which was best, and what the choice cost. Added within
    version 1."""

    index: Annotated[
        Count,
        Meta(
            description="the decision's place among the match's actions, from 0 (an open-box "
            "replay's `actions[index]` is it)"
        ),
    ]
    seq: Annotated[
        Count,
        Meta(
            description="the events the decision's prompt followed (`prompt.seq`): the "
            "decision was taken after event `seq` of the replay, and its first event is "
            "`seq + 1`"
        ),
    ]
    turn: Annotated[Count, Meta(description="the turn it was made in; 0 for the opening (R11)")]
    drawn: Annotated[
        Card | None,
        Meta(description="the card the seat had drawn for this turn (its own, R25); null: opening"),
    ] = None
    options: Annotated[
        tuple[OptionValue, ...],
        Meta(min_length=1, max_length=MAX_LIST_LENGTH, description="every legal option"),
    ]
    chosen: Annotated[Count, Meta(description="the option taken: an index into `options`")]
    best: Annotated[
        Count,
        Meta(
            description="the option with the most expected points (the first such): an index "
            "into `options`"
        ),
    ]
    loss: Annotated[
        Annotated[float, Meta(ge=0.0, le=1e6)],
        Meta(description="expected points the choice gave up against the best; 0 if best"),
    ]
    mark: Annotated[
        Mark | None,
        Meta(description="what the loss earns by `analysis.thresholds`; absent: none"),
    ] = None
    forced: Annotated[
        bool,
        Meta(description="only one option: no choice, not counted in the summary"),
    ] = False
    exact: Annotated[
        bool,
        Meta(
            description="the values are exact expectations over every possible deal of the "
            "unseen cards; false: an average over `deals` sampled deals"
        ),
    ] = False


class MarkThresholds(_Value, frozen=True, kw_only=True):
    """The least loss, in expected points, that earns each mark. Added within version 1."""

    inaccuracy: Annotated[_Points, Meta(description="a loss of at least this is an inaccuracy")]
    mistake: Annotated[_Points, Meta(description="a loss of at least this is a mistake")]
    blunder: Annotated[_Points, Meta(description="a loss of at least this is a blunder")]


# -- the snapshot -----------------------------------------------------------


class SeatState(_Value, frozen=True, kw_only=True):
    """What everyone may see of one seat (R24)."""

    seat: Annotated[Seat, Meta(description="the seat number")]
    bouquet: Annotated[Cards, Meta(description="face-up cards, in the order received")]
    keeping: Annotated[Count, Meta(description="points scored by KEEP so far (R14)")]
    giving: Annotated[Count, Meta(description="points scored by GIVE so far (R15)")]
    opening_done: Annotated[bool, Meta(description="has made the opening choice (not which one)")]


#: A number for each rank, 1st, 2nd, 3rd and 4th/unranked (R14, R15).
ByRank = tuple[Count, Count, Count, Count]
#: For ranks 1st–3rd, the 1st, 2nd and 3rd majority points (R20).
MajorityTable = tuple[
    tuple[Count, Count, Count], tuple[Count, Count, Count], tuple[Count, Count, Count]
]


class Points(_Value, frozen=True, kw_only=True):
    """The festival cards' points (R30), by rank 1st, 2nd, 3rd, 4th/unranked."""

    giving_bonus: Annotated[ByRank, Meta(description="GIVE bonus by rank (R15)")]
    bouquet: Annotated[ByRank, Meta(description="KEEP points by rank (R14)")]
    majority: Annotated[
        MajorityTable,
        Meta(description="for ranks 1st–3rd: 1st, 2nd, 3rd majority points (R20)"),
    ]
    majority_places: Annotated[
        int, Meta(ge=0, le=3, description="majority places that score at this table size")
    ]
    reveal_size: Annotated[
        Count | None,
        Meta(
            description="secret cards the reveal turns face up at the end (R19; a house "
            "ruleset may change it). Added within version 1: absent from older servers, "
            "which reveal 5"
        ),
    ] = None


_Places = Annotated[int, Meta(ge=0, le=3)]
#: A number for each table size, 2 to 6 players, in that order.
ByPlayers = tuple[Count, Count, Count, Count, Count]


class RulesetInfo(_Value, frozen=True, kw_only=True):
    """Every number of a ruleset (R30), the printed rules' or a house ruleset's,
    in the layout of a ruleset file (see the server's ``--ruleset``). Added
    within version 1."""

    name: Annotated[
        Name, Meta(description="how the server offers it; `standard`: the printed rules")
    ]
    copies: Annotated[Count, Meta(description="copies of each colour-value pair in the deck (R3)")]
    extra_copies: Annotated[
        Count, Meta(description="more copies of each pair for large tables (R3)")
    ]
    extra_from_players: Annotated[
        Count, Meta(description="the table size from which `extra_copies` are added (R3)")
    ]
    removed: Annotated[
        ByPlayers,
        Meta(description="cards removed unseen before the deal (R4), for 2, 3, 4, 5, 6 players"),
    ]
    reveal_size: Annotated[
        Count, Meta(description="secret cards the reveal turns face up at the end (R19)")
    ]
    giving_bonus: Annotated[ByRank, Meta(description="GIVE bonus by rank (R15)")]
    bouquet: Annotated[ByRank, Meta(description="KEEP points by rank (R14)")]
    majority: Annotated[
        MajorityTable,
        Meta(description="for ranks 1st–3rd: 1st, 2nd, 3rd majority points (R20)"),
    ]
    majority_places: Annotated[
        tuple[_Places, _Places, _Places, _Places, _Places],
        Meta(description="majority places that score (R20), for 2, 3, 4, 5, 6 players"),
    ]
    changes: Annotated[
        tuple[Annotated[str, Meta(min_length=1, max_length=MAX_ID_LENGTH)], ...],
        Meta(
            max_length=32,
            description="the fields that differ from the printed rules, as paths of a "
            "ruleset file: `reveal_size`, `deck.copies`, `deck.extra_copies`, "
            "`deck.extra_from_players`, `removed.N`, `points.giving_bonus`, "
            "`points.bouquet`, `points.majority`, `majority_places.N` (N: players); "
            "empty for the printed rules",
        ),
    ] = ()


class MajorityPlace(_Value, frozen=True, kw_only=True):
    """One seat's standing for a colour's majority (R20–R21)."""

    seat: Annotated[Seat, Meta(description="the seat")]
    cards: Annotated[Count, Meta(description="its cards of the colour")]
    value: Annotated[Count, Meta(description="their total value (the tie-breaker, R21)")]
    place: Annotated[int, Meta(ge=0, le=2, description="0 for the first majority, …")]
    points: Annotated[Count, Meta(description="points scored")]


class MajorityResult(_Value, frozen=True, kw_only=True):
    """How one ranked colour's majorities were scored (R20–R22)."""

    colour: Annotated[Colour, Meta(description="the colour")]
    rank: Annotated[int, Meta(ge=0, le=2, description="0 for 1st, 1 for 2nd, 2 for 3rd")]
    places: Annotated[
        tuple[MajorityPlace, ...],
        Meta(max_length=MAX_SEATS, description="only the seats that scored"),
    ]


class PlayerScore(_Value, frozen=True, kw_only=True):
    """One seat's final points, split the way the rules earn them."""

    seat: Annotated[Seat, Meta(description="the seat")]
    keeping: Annotated[Count, Meta(description="KEEP points (R14)")]
    giving: Annotated[Count, Meta(description="GIVE points (R15)")]
    majorities: Annotated[
        dict[Colour, Count], Meta(description="majority points per colour, every colour listed")
    ]
    total: Annotated[Count, Meta(description="keeping + giving + every majority")]
    tulips: Annotated[Count, Meta(description="cards in the bouquet: the tie-breaker (R23)")]


class Scoring(_Value, frozen=True, kw_only=True):
    """The final scoring breakdown (R20–R23)."""

    players: Annotated[
        tuple[PlayerScore, ...], Meta(max_length=MAX_SEATS, description="one per seat")
    ]
    majorities: Annotated[
        tuple[MajorityResult, ...],
        Meta(max_length=3, description="the colours ranked 1st to 3rd, in rank order"),
    ]
    winners: Annotated[Seats, Meta(description="the winning seats (more than one if shared)")]
    decided_by: Annotated[DecidedBy, Meta(description="what decided the winner (R23)")]


class State(_Value, frozen=True, kw_only=True):
    """Everything one seat — or a spectator — may know of a match now (R24–R25).

    The public part is the same for every receiver. ``hand``, ``opening``,
    ``drawn``, ``my_secret`` and ``legal_actions`` are the receiver's own and
    are empty (left off) for a spectator. Cards that other seats put face down
    appear only in ``secret_count`` (R26).
    """

    phase: Annotated[Phase, Meta(description="opening, turn or over")]
    turn: Annotated[Count, Meta(description="the turn number, from 1; 0 during the opening")]
    first_seat: Annotated[Seat, Meta(description="who plays the first turn (R12)")]
    to_act: Annotated[Seats, Meta(description="the seats that must act now")]
    festival: Annotated[Cards, Meta(description="face-up festival cards, in the order placed")]
    totals: Annotated[dict[Colour, Count], Meta(description="every colour's festival total (R6)")]
    ranking: Annotated[Ranking, Meta(description="the ranked colours, 1st first (R7)")]
    deck_count: Annotated[Count, Meta(description="cards left in the deck")]
    secret_count: Annotated[Count, Meta(description="cards in the secret festival (R9)")]
    removed_count: Annotated[Count, Meta(description="cards removed unseen at setup (R4)")]
    seats: Annotated[
        tuple[SeatState, ...],
        Meta(min_length=MIN_SEATS, max_length=MAX_SEATS, description="every seat, by number"),
    ]
    points: Annotated[Points, Meta(description="the festival cards' points (R30)")]
    active: Annotated[Seat | None, Meta(description="whose turn it is, during a turn")] = None
    used: Annotated[
        TurnAction | None, Meta(description="the action the turn's first card used (R13)")
    ] = None
    revealed: Annotated[
        Cards, Meta(description="secret cards turned face up at the end (R19)")
    ] = ()
    scoring: Annotated[Scoring | None, Meta(description="the final scoring, once over")] = None
    hand: Annotated[
        Cards, Meta(description="yours: your two dealt cards until you choose (R11)")
    ] = ()
    opening: Annotated[
        Cards, Meta(description="yours: once chosen, your bouquet card and your secret card")
    ] = ()
    drawn: Annotated[
        Card | None, Meta(description="yours: the card you drew and must place (R13)")
    ] = None
    my_secret: Annotated[
        Cards,
        Meta(
            description="yours: every card you put in the secret festival (R25), in order — "
            "after the reveal (R19) too, those it turned face up included (`revealed` says "
            "which)"
        ),
    ] = ()
    legal_actions: Annotated[
        Actions, Meta(description="yours: what you may do now (empty if nothing)")
    ] = ()


# -- events -----------------------------------------------------------------


class _EventBase(_Value, frozen=True, tag_field="kind"):
    """Base of the events: a map tagged by ``kind``.

    ``private`` names the fields only ``seat`` sees; everyone else receives
    them as ``None`` (R25–R26).
    """

    private: ClassVar[tuple[str, ...]] = ()


class FestivalStarted(_EventBase, frozen=True, kw_only=True, tag="festival_started"):
    """The two cards that start the festival, and the ranking they give (R10).

    ``cards`` are in rank order: the 1st-ranked colour's card first (the higher
    value; on equal values, the card turned over first), so ``ranking`` holds
    their colours in the same order, and so does the state's ``festival``.
    """

    cards: Annotated[Cards, Meta(description="the two starting cards, 1st-ranked first")]
    ranking: Annotated[Ranking, Meta(description="the ranking they give")]
    first_seat: Annotated[Seat, Meta(description="who plays the first turn (R12)")]


class CardsDealt(_EventBase, frozen=True, kw_only=True, tag="cards_dealt"):
    """A seat was dealt its two starting cards (R11)."""

    private = ("cards",)

    seat: Annotated[Seat, Meta(description="the seat dealt to")]
    cards: Annotated[Cards | None, Meta(description="the two cards; null for other seats")]


class OpeningChosen(_EventBase, frozen=True, kw_only=True, tag="opening_chosen"):
    """A seat made its opening choice (R11); which card went where stays private
    until every seat has chosen."""

    private = ("bouquet", "secret")

    seat: Annotated[Seat, Meta(description="the seat that chose")]
    bouquet: Annotated[Card | None, Meta(description="its bouquet card; null for others")]
    secret: Annotated[Card | None, Meta(description="its secret card; null for others")]


class OpeningRevealed(_EventBase, frozen=True, kw_only=True, tag="opening_revealed"):
    """Every seat has chosen: each seat's bouquet card is now face up (R11)."""

    bouquets: Annotated[Cards, Meta(description="each seat's bouquet card, by seat")]
    secret_count: Annotated[Count, Meta(description="cards now in the secret festival")]


class TurnStarted(_EventBase, frozen=True, kw_only=True, tag="turn_started"):
    """A seat's turn begins (R13)."""

    seat: Annotated[Seat, Meta(description="the active seat")]
    turn: Annotated[Count, Meta(description="the turn number, from 1")]


class CardDrawn(_EventBase, frozen=True, kw_only=True, tag="card_drawn"):
    """The active seat drew a card; only that seat sees which (R25)."""

    private = ("card",)

    seat: Annotated[Seat, Meta(description="the seat that drew")]
    card: Annotated[Card | None, Meta(description="the card; null for other seats")]
    deck_count: Annotated[Count, Meta(description="cards left in the deck")]


class CardKept(_EventBase, frozen=True, kw_only=True, tag="card_kept"):
    """KEEP: the card went to the seat's bouquet for these points (R14)."""

    seat: Annotated[Seat, Meta(description="the seat that kept")]
    card: Annotated[Card, Meta(description="the card")]
    points: Annotated[Count, Meta(description="points scored")]


class CardGiven(_EventBase, frozen=True, kw_only=True, tag="card_given"):
    """GIVE: the card went to ``to_seat``'s bouquet; the giver scored (R15)."""

    seat: Annotated[Seat, Meta(description="the giver")]
    to_seat: Annotated[Seat, Meta(description="the receiver")]
    card: Annotated[Card, Meta(description="the card")]
    points: Annotated[Count, Meta(description="points the giver scored")]


class CardAddedFaceUp(_EventBase, frozen=True, kw_only=True, tag="card_added_face_up"):
    """ADD: the card went face up into the festival, giving a new ranking (R16, R8)."""

    seat: Annotated[Seat, Meta(description="the seat that added")]
    card: Annotated[Card, Meta(description="the card")]
    ranking: Annotated[Ranking, Meta(description="the ranking after it")]


class CardAddedSecret(_EventBase, frozen=True, kw_only=True, tag="card_added_secret"):
    """ADD: a card went face down; only its owner knows which (R16, R25–R26)."""

    private = ("card",)

    seat: Annotated[Seat, Meta(description="the seat that added")]
    card: Annotated[Card | None, Meta(description="the card; null for other seats")]
    secret_count: Annotated[Count, Meta(description="cards now in the secret festival")]


class SecretRevealed(_EventBase, frozen=True, kw_only=True, tag="secret_revealed"):
    """One secret-festival card turned face up at the end, and the new ranking (R19).

    The card leaves the secret festival for the festival: after each of these
    events the state's ``secret_count`` is one less, and the card is in its
    ``festival`` (its colour's total raised) and in ``revealed``.
    """

    card: Annotated[Card, Meta(description="the card")]
    ranking: Annotated[Ranking, Meta(description="the ranking after it")]


class MatchEnded(_EventBase, frozen=True, kw_only=True, tag="match_ended"):
    """The match is over: the final scoring (R20–R23)."""

    scoring: Annotated[Scoring, Meta(description="the breakdown")]


#: Something that happened in a match, tagged by ``kind``.
GameEvent = (
    FestivalStarted
    | CardsDealt
    | OpeningChosen
    | OpeningRevealed
    | TurnStarted
    | CardDrawn
    | CardKept
    | CardGiven
    | CardAddedFaceUp
    | CardAddedSecret
    | SecretRevealed
    | MatchEnded
)
#: The event types, in the order PROTOCOL.md lists them.
EVENT_TYPES: tuple[type[_EventBase], ...] = get_args(GameEvent)
