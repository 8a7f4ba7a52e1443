"""Example messages: one for every message type, action and event kind.

PROTOCOL.md shows them (:mod:`protocol.docs`), the tests decode them back
from the document, and :mod:`protocol.lab.bench` times :data:`SNAPSHOT_4P` and
:data:`ACT`. They are real positions: the snapshot and the events were taken
from matches the engine played, converted the way the server converts them.
"""

from __future__ import annotations

import msgspec

from .messages import (
    Act,
    AddBot,
    Analyse,
    AnalysisProgress,
    AnalysisReport,
    Batch,
    Chat,
    ChatLine,
    CreateMatch,
    Error,
    Event,
    Hello,
    Hint,
    HintValues,
    History,
    HistoryPage,
    Join,
    Joined,
    Leaderboard,
    LeaderboardPage,
    Leave,
    LinkCode,
    LinkCodeIssued,
    ListMatches,
    MatchList,
    MatchRemoved,
    MatchUpdate,
    Message,
    Ok,
    PlayAgain,
    Profile,
    ProfileCard,
    Prompt,
    RatingsChanged,
    RematchOffer,
    Removed,
    RemoveSeat,
    Rename,
    Replay,
    ReplayPage,
    ServerLimits,
    Snapshot,
    Start,
    Sync,
    TurnTimer,
    Watch,
    Welcome,
)
from .types import (
    Action,
    AddFaceUp,
    AddSecret,
    BotSeat,
    CardAddedFaceUp,
    CardAddedSecret,
    CardDrawn,
    CardGiven,
    CardKept,
    CardsDealt,
    DecisionReview,
    FestivalStarted,
    FinalSeat,
    GameEvent,
    Give,
    Keep,
    LeaderboardEntry,
    MajorityPlace,
    MajorityResult,
    MarkThresholds,
    MatchEnded,
    MatchRecord,
    MatchSummary,
    Opening,
    OpeningChosen,
    OpeningRevealed,
    OptionValue,
    PlayerScore,
    Points,
    Rating,
    RatingChange,
    RulesetInfo,
    Scoring,
    SeatAction,
    SeatInfo,
    SeatState,
    SeatTimer,
    SecretRevealed,
    State,
    TurnStarted,
)

__all__ = [
    "ACT",
    "ACTION_EXAMPLES",
    "CLIENT_EXAMPLES",
    "EVENT_EXAMPLES",
    "HOUSE_RULESET",
    "OPEN_BOX_COMMITMENT",
    "OPEN_BOX_SALT",
    "OPEN_BOX_SEED",
    "PROMPT_4P",
    "SCORING_3P",
    "SERVER_EXAMPLES",
    "SNAPSHOT_4P",
    "STANDARD_POINTS",
    "STANDARD_RULESET",
]

MATCH = "k7Qm2"

#: The published game's points (R30) at a 3- or 4-player table.
STANDARD_POINTS = Points(
    giving_bonus=(3, 2, 1, 0),
    bouquet=(0, 0, 1, 2),
    majority=((15, 10, 5), (10, 7, 4), (5, 3, 1)),
    majority_places=2,
)

#: The printed rules (R30) as ``welcome.rulesets`` and ``snapshot.ruleset`` carry them.
STANDARD_RULESET = RulesetInfo(
    name="standard",
    copies=6,
    extra_copies=2,
    extra_from_players=5,
    removed=(18, 4, 6, 14, 10),
    reveal_size=5,
    giving_bonus=(3, 2, 1, 0),
    bouquet=(0, 0, 1, 2),
    majority=((15, 10, 5), (10, 7, 4), (5, 3, 1)),
    majority_places=(1, 2, 2, 3, 3),
)

#: A house ruleset (``tulips-server --ruleset``): a shorter reveal, richer KEEPs.
HOUSE_RULESET = msgspec.structs.replace(
    STANDARD_RULESET,
    name="short reveal",
    reveal_size=3,
    bouquet=(0, 1, 2, 3),
    changes=("reveal_size", "points.bouquet"),
)

#: A 4-player match at turn 14, as seat 1 sees it with a card to place.
SNAPSHOT_4P = Snapshot(
    match=MATCH,
    seq=79,
    seat=1,
    state=State(
        phase="turn",
        turn=14,
        first_seat=0,
        active=1,
        to_act=(1,),
        used="give",
        festival=("orange-4", "purple-3", "purple-2", "purple-4", "orange-2", "blue-4", "pink-3"),
        totals={"purple": 9, "blue": 4, "pink": 3, "orange": 6},
        ranking=("purple", "orange", "blue", "pink"),
        deck_count=28,
        secret_count=11,
        removed_count=6,
        seats=(
            SeatState(
                seat=0,
                bouquet=("blue-4", "pink-2", "blue-3", "purple-4", "blue-3", "pink-2", "purple-4"),
                keeping=4,
                giving=10,
                opening_done=True,
            ),
            SeatState(
                seat=1,
                bouquet=("orange-2", "pink-3", "orange-2", "orange-4"),
                keeping=2,
                giving=16,
                opening_done=True,
            ),
            SeatState(
                seat=2, bouquet=("blue-2", "pink-2"), keeping=0, giving=15, opening_done=True
            ),
            SeatState(
                seat=3,
                bouquet=("purple-2", "purple-4", "orange-3", "orange-4", "pink-2", "blue-4"),
                keeping=1,
                giving=5,
                opening_done=True,
            ),
        ),
        points=STANDARD_POINTS,
        opening=("orange-2", "purple-3"),
        drawn="pink-4",
        my_secret=("purple-3", "pink-3", "blue-3"),
        legal_actions=(Keep(), AddFaceUp(), AddSecret()),
    ),
    ruleset=STANDARD_RULESET,
)

#: Seat 1's prompt at :data:`SNAPSHOT_4P`: pink, 4th, keeps for 2 (R14); adding scores 0.
#: Face up, the pink 4 makes pink 7, past orange's 6 and blue's 4: pink 2nd (R8).
PROMPT_4P = Prompt(
    match=MATCH,
    seq=79,
    seat=1,
    actions=(Keep(), AddFaceUp(), AddSecret()),
    deadline=58.5,
    points=(2, 0, 0),
    rankings=(None, ("purple", "pink", "orange", "blue"), None),
)

#: A typical action: give the drawn card to seat 2, with a request id.
ACT = Act(id=12, action=Give(to_seat=2), seq=79)  # answers PROMPT_4P

#: The final scoring of a 3-player match (the one PROTOCOL.md walks through).
SCORING_3P = Scoring(
    players=(
        PlayerScore(
            seat=0,
            keeping=10,
            giving=33,
            majorities={"purple": 0, "blue": 10, "pink": 10, "orange": 0},
            total=63,
            tulips=18,
        ),
        PlayerScore(
            seat=1,
            keeping=2,
            giving=44,
            majorities={"purple": 0, "blue": 0, "pink": 0, "orange": 5},
            total=51,
            tulips=12,
        ),
        PlayerScore(
            seat=2,
            keeping=3,
            giving=32,
            majorities={"purple": 0, "blue": 7, "pink": 15, "orange": 3},
            total=60,
            tulips=15,
        ),
    ),
    majorities=(
        MajorityResult(
            colour="pink",
            rank=0,
            places=(
                MajorityPlace(seat=2, cards=4, value=11, place=0, points=15),
                MajorityPlace(seat=0, cards=3, value=9, place=1, points=10),
            ),
        ),
        MajorityResult(
            colour="blue",
            rank=1,
            places=(
                MajorityPlace(seat=0, cards=4, value=14, place=0, points=10),
                MajorityPlace(seat=2, cards=4, value=10, place=1, points=7),
            ),
        ),
        MajorityResult(
            colour="orange",
            rank=2,
            places=(
                MajorityPlace(seat=1, cards=5, value=15, place=0, points=5),
                MajorityPlace(seat=2, cards=4, value=12, place=1, points=3),
            ),
        ),
    ),
    winners=(0,),
    decided_by="points",
)

_SUMMARY = MatchSummary(
    match=MATCH,
    name="Friday tulips",
    status="open",
    seats=(
        SeatInfo(seat=0, kind="human", name="Ada", connected=True),
        SeatInfo(seat=1, kind="bot", name="Bot Bea", strength="easy"),
        SeatInfo(seat=2, kind="empty"),
    ),
    host="Ada",
    has_join_code=True,
    ruleset="standard",
    turn_timer=60.0,
    hints=True,
)

#: The open-box match of the ``replay`` example below: its salt and seed, and
#: the commitment to them that its summary showed once it was dealt (R27).
OPEN_BOX_SALT = "5f1c0e9a7b3d2846af10c5e7d9b2634a8e0f17c3b5d92a6e4c8f01b7d3e5a962"
OPEN_BOX_SEED = 8817263541
OPEN_BOX_COMMITMENT = "ee9afc1135f78fb8ec33a674407f419bd802542764bfb10fc6f6414f4231693c"

_OPEN_BOX_SUMMARY = MatchSummary(
    match="Bx41q",
    name="Check my shuffle",
    status="running",
    seats=(
        SeatInfo(seat=0, kind="human", name="Ada", connected=True),
        SeatInfo(seat=1, kind="human", name="Bo", bot_in=21.5),  # away: `connected` false
    ),
    host="Ada",
    has_join_code=False,
    ruleset="standard",
    open_box=True,
    seed_commitment=OPEN_BOX_COMMITMENT,
    spectators=2,
    watching=("Cy", "Dee"),
)

#: Ada's rating change in the 3-player match below: she won against a medium bot and Bo.
_ADA_CHANGE = RatingChange(
    seat=0,
    player="p_3fK9",
    name="Ada",
    before=Rating(mu=27.1, sigma=6.2, ordinal=8.5),
    after=Rating(mu=28.9, sigma=5.9, ordinal=11.2),
)

#: A finished, rated 3-player match as Ada's history lists it.
_RECORD = MatchRecord(
    match="r9Tz4",
    name="Sunday tulips",
    ruleset="standard",
    finished_at=1764876543.0,
    seats=(
        FinalSeat(
            seat=0, kind="human", name="Ada", player="p_3fK9", points=63, rank=1, counted=True
        ),
        FinalSeat(
            seat=1,
            kind="bot",
            name="Bot Mo",
            player="bot_medium",
            strength="medium",
            points=51,
            rank=3,
            counted=True,
        ),
        FinalSeat(seat=2, kind="human", name="Bo", player="p_8Lw2", points=60, rank=2),
    ),
    rated=True,
    seat=0,
    rating=_ADA_CHANGE,
)

#: One example per action kind.
ACTION_EXAMPLES: dict[str, Action] = {
    "keep": Keep(),
    "give": Give(to_seat=2),
    "add_face_up": AddFaceUp(),
    "add_secret": AddSecret(),
    "opening": Opening(secret="pink-4"),
}

#: Per event kind: (who sees it this way, the event).
EVENT_EXAMPLES: dict[str, tuple[tuple[str, GameEvent], ...]] = {
    "festival_started": (
        (
            "everyone",
            FestivalStarted(cards=("pink-4", "blue-4"), ranking=("pink", "blue"), first_seat=0),
        ),
    ),
    "cards_dealt": (
        ("seat 0", CardsDealt(seat=0, cards=("blue-3", "pink-4"))),
        ("everyone else", CardsDealt(seat=0, cards=None)),
    ),
    "opening_chosen": (
        ("seat 0", OpeningChosen(seat=0, bouquet="blue-3", secret="pink-4")),
        ("everyone else", OpeningChosen(seat=0, bouquet=None, secret=None)),
    ),
    "opening_revealed": (
        (
            "everyone",
            OpeningRevealed(bouquets=("blue-3", "pink-2", "blue-2"), secret_count=3),
        ),
    ),
    "turn_started": (("everyone", TurnStarted(seat=0, turn=1)),),
    "card_drawn": (
        ("seat 0", CardDrawn(seat=0, card="orange-3", deck_count=59)),
        ("everyone else", CardDrawn(seat=0, card=None, deck_count=59)),
    ),
    "card_kept": (("everyone", CardKept(seat=0, card="orange-3", points=1)),),
    "card_given": (("everyone", CardGiven(seat=1, to_seat=2, card="orange-4", points=6)),),
    "card_added_face_up": (
        (
            "everyone",
            CardAddedFaceUp(seat=0, card="orange-3", ranking=("pink", "blue", "orange")),
        ),
    ),
    "card_added_secret": (
        ("seat 1", CardAddedSecret(seat=1, card="purple-3", secret_count=4)),
        ("everyone else", CardAddedSecret(seat=1, card=None, secret_count=4)),
    ),
    "secret_revealed": (
        (
            "everyone",
            SecretRevealed(card="blue-2", ranking=("pink", "blue", "orange", "purple")),
        ),
    ),
    "match_ended": (("everyone", MatchEnded(scoring=SCORING_3P)),),
}

#: Two decisions of seat 1's analysis in the 4-player match of the examples:
#: the opening choice (R11), and a turn where giving the drawn card away was best.
_DECISIONS = (
    DecisionReview(
        index=2,
        seq=6,
        turn=0,
        options=(
            OptionValue(action=Opening(secret="pink-3"), expected_points=48.2, win_chance=0.31),
            OptionValue(action=Opening(secret="blue-4"), expected_points=46.9, win_chance=0.27),
        ),
        chosen=0,
        best=0,
        loss=0.0,
    ),
    DecisionReview(
        index=41,
        seq=79,
        turn=11,
        drawn="orange-2",
        options=(
            OptionValue(action=Keep(), expected_points=44.1, win_chance=0.22),
            OptionValue(action=Give(to_seat=0), expected_points=47.9, win_chance=0.3),
            OptionValue(action=Give(to_seat=2), expected_points=48.4, win_chance=0.31),
            OptionValue(action=Give(to_seat=3), expected_points=47.6, win_chance=0.29),
            OptionValue(action=AddFaceUp(), expected_points=45.0, win_chance=0.24),
            OptionValue(action=AddSecret(), expected_points=45.3, win_chance=0.25),
        ),
        chosen=0,
        best=2,
        loss=4.3,
        mark="mistake",
    ),
)

#: One example per client→server message type.
CLIENT_EXAMPLES: dict[str, Message] = {
    "hello": Hello(id=1, client="tulips-tui/0.1", name="Ada", features=("batch",)),
    "list_matches": ListMatches(id=2),
    "create_match": CreateMatch(
        id=3,
        name="Friday tulips",
        seats=3,
        bots=(BotSeat(seat=1, strength="easy"),),
        join_code="tulip",
        turn_timer=60.0,
        hints=True,
    ),
    "join": Join(id=4, match=MATCH, seat=2, join_code="tulip"),
    "watch": Watch(id=5, match=MATCH, join_code="tulip"),
    "leave": Leave(id=6),
    "start": Start(id=7),
    "add_bot": AddBot(id=16, seat=2, strength="hard"),
    "remove_seat": RemoveSeat(id=17, seat=1),
    "play_again": PlayAgain(id=8),
    "act": ACT,
    "sync": Sync(id=13),
    "replay": Replay(id=15, match="Bx41q"),
    "chat": Chat(id=14, text="good luck, all!"),
    "profile": Profile(id=18, player="p_8Lw2"),
    "leaderboard": Leaderboard(id=19, offset=0, limit=20),
    "history": History(id=20, before=41, limit=10),
    "link_code": LinkCode(id=21),
    "rename": Rename(id=22, name="Ada Lovelace"),
    "analyse": Analyse(id=23, match=MATCH),
    "hint": Hint(id=24, seq=79),
}

#: One example per server→client message type.
SERVER_EXAMPLES: dict[str, Message] = {
    "welcome": Welcome(
        id=1,
        server="tulips-server/0.1",
        versions=(1,),
        player="p_3fK9",
        token="Zq1x-secret-resume-token-8Jd2",
        name="Ada",
        limits=ServerLimits(
            hello_timeout=10.0,
            max_bad_frames=20,
            rate_limit=50.0,
            rate_burst=100,
            grace_period=30.0,
            min_turn_timer=1.0,
            max_turn_timer=3600.0,
            max_connections_per_address=64,
            new_players_per_minute=20.0,
            join_code_tries=5,
            join_code_lockout=60.0,
        ),
        rulesets=(STANDARD_RULESET, HOUSE_RULESET),
        features=("batch",),
    ),
    "ok": Ok(id=7),
    "error": Error(
        id=12,
        code="bad_message",
        message="expected int, got str",
        path="act.action.to_seat",
    ),
    "match_list": MatchList(id=2, matches=(_SUMMARY,)),
    "joined": Joined(id=3, match=MATCH, seat=0, host=True),
    "match_update": MatchUpdate(match=_OPEN_BOX_SUMMARY),
    "match_removed": MatchRemoved(match=MATCH),
    "snapshot": SNAPSHOT_4P,
    "event": Event(match=MATCH, seq=80, event=CardKept(seat=1, card="pink-4", points=2)),
    "prompt": PROMPT_4P,
    "replay": ReplayPage(
        id=15,
        match="Bx41q",
        status="finished",
        ruleset="standard",
        from_seq=1,
        events=(TurnStarted(seat=1, turn=1), CardDrawn(seat=1, card=None, deck_count=59)),
        next_seq=3,
        seed=OPEN_BOX_SEED,
        salt=OPEN_BOX_SALT,
        actions=(SeatAction(seat=0, action=Opening(secret="pink-3")),),
    ),
    "chat": ChatLine(match=MATCH, seat=0, name="Ada", text="good luck, all!"),
    "turn_timer": TurnTimer(match=MATCH, seq=97, timers=(SeatTimer(seat=1, seconds=58.5),)),
    "rematch": RematchOffer(match=MATCH, rematch="p2Xw9", host="Ada"),
    "removed": Removed(match=MATCH, host="Ada"),
    "profile": ProfileCard(
        id=18,
        player="p_3fK9",
        name="Ada",
        kind="human",
        matches=42,
        wins=17,
        mean_points=55.4,
        rated_matches=38,
        rating=Rating(mu=28.9, sigma=5.9, ordinal=11.2),
        rank=3,
        since=1762000000.0,
        recent=(_RECORD,),
    ),
    "leaderboard": LeaderboardPage(
        id=19,
        offset=0,
        total=57,
        entries=(
            LeaderboardEntry(
                rank=1,
                player="bot_hard",
                name="Bots (hard)",
                kind="bot",
                strength="hard",
                rating=Rating(mu=31.2, sigma=2.1, ordinal=24.9),
                matches=310,
                wins=140,
            ),
            LeaderboardEntry(
                rank=2,
                player="p_8Lw2",
                name="Bo",
                kind="human",
                rating=Rating(mu=29.5, sigma=4.8, ordinal=15.1),
                matches=61,
                wins=25,
            ),
        ),
        you=LeaderboardEntry(
            rank=3,
            player="p_3fK9",
            name="Ada",
            kind="human",
            rating=Rating(mu=28.9, sigma=5.9, ordinal=11.2),
            matches=38,
            wins=17,
        ),
    ),
    "history": HistoryPage(id=20, matches=(_RECORD,), next=40),
    "link_code": LinkCodeIssued(id=21, code="K7QM-2XPD", expires_in=300.0),
    "ratings": RatingsChanged(
        match="r9Tz4",
        changes=(
            _ADA_CHANGE,
            RatingChange(
                seat=1,
                player="bot_medium",
                name="Bot Mo",
                before=Rating(mu=26.0, sigma=3.0, ordinal=17.0),
                after=Rating(mu=25.2, sigma=3.0, ordinal=16.2),
            ),
        ),
    ),
    "analysis_progress": AnalysisProgress(id=23, match=MATCH, seat=1, queued=0, done=9, total=24),
    "analysis": AnalysisReport(
        id=23,
        match=MATCH,
        seat=1,
        decisions=_DECISIONS,
        mean_loss=2.15,
        accuracy=50.0,
        costliest=(41,),
        mistakes=1,
        thresholds=MarkThresholds(inaccuracy=1.0, mistake=3.0, blunder=6.0),
        deals=48,
    ),
    "hint": HintValues(
        id=24,
        match=MATCH,
        seq=79,
        seat=1,
        options=(
            OptionValue(action=Keep(), expected_points=44.1, win_chance=0.22),
            OptionValue(action=AddFaceUp(), expected_points=45.0, win_chance=0.24),
            OptionValue(action=AddSecret(), expected_points=45.3, win_chance=0.25),
        ),
        best=2,
        deals=48,
    ),
    # what seat 1's keep (ACT's neighbour: it answers PROMPT_4P with keep) caused for
    # seat 1: the answer, the event, the next turn
    "batch": Batch(
        messages=(
            Ok(id=13),
            Event(match=MATCH, seq=80, event=CardKept(seat=1, card="pink-4", points=2)),
            Event(match=MATCH, seq=81, event=TurnStarted(seat=2, turn=21)),
        )
    ),
}
