"""The view-model: folding events into the snapshot's state, and the views
the widgets render — pure functions, checked on fixed messages and, once,
against a live server's own snapshots."""

from __future__ import annotations

import asyncio
import random

import msgspec

import protocol as wire
from client.options import points_by_action
from client.sdk import connect
from client.tui.fold import apply_event
from client.tui.model import Follow, Lobby
from client.tui.narrate import describe
from client.tui.viewmodel import (
    Placement,
    ScoreRow,
    actions_view,
    final_view,
    lobby_rows,
    placement,
    seat_names,
    table_view,
    turns_in_match,
)
from protocol import examples

from . import fakes
from .conftest import Running
from .screens import running, screen_text

STATE = examples.SNAPSHOT_4P.state  # seat 1, second card pink-4 drawn, ranking P O B K


def test_keep_adds_to_the_bouquet_and_the_keeping_points() -> None:
    """card_kept: the card joins the bouquet, its points the seat's keeping."""
    after = apply_event(STATE, wire.CardKept(seat=1, card="pink-4", points=2), me=1)
    assert after.seats[1].bouquet[-1] == "pink-4"
    assert after.seats[1].keeping == STATE.seats[1].keeping + 2
    assert after.drawn is None and after.legal_actions == ()
    assert after.used == "give"  # the turn's first action stays what it was


def test_give_moves_the_card_and_scores_the_giver() -> None:
    """card_given: into the receiver's bouquet; the points are the giver's."""
    after = apply_event(STATE, wire.CardGiven(seat=1, to_seat=3, card="pink-4", points=4), me=1)
    assert after.seats[3].bouquet[-1] == "pink-4"
    assert after.seats[1].giving == STATE.seats[1].giving + 4
    assert after.seats[3].giving == STATE.seats[3].giving


def test_add_face_up_raises_the_total_and_takes_the_ranking_from_the_event() -> None:
    """card_added_face_up: festival, total and the ranking the server sent."""
    ranking: tuple[wire.Colour, ...] = ("purple", "orange", "pink", "blue")
    event = wire.CardAddedFaceUp(seat=1, card="pink-4", ranking=ranking)
    after = apply_event(STATE, event, me=1)
    assert after.festival[-1] == "pink-4" and after.totals["pink"] == 7
    assert after.ranking == ranking


def test_a_secret_card_is_known_only_to_its_owner() -> None:
    """card_added_secret: everyone counts it; only the owner's fold names it."""
    mine = apply_event(STATE, wire.CardAddedSecret(seat=1, card="pink-4", secret_count=12), 1)
    theirs = apply_event(STATE, wire.CardAddedSecret(seat=1, card=None, secret_count=12), 2)
    assert mine.secret_count == theirs.secret_count == 12
    assert mine.my_secret[-1] == "pink-4"
    assert theirs.my_secret == STATE.my_secret


def test_turn_started_resets_the_turn() -> None:
    """turn_started: a new active seat, nothing used yet, nothing to do for others."""
    after = apply_event(STATE, wire.TurnStarted(seat=2, turn=15), me=1)
    assert (after.active, after.turn, after.used, after.to_act) == (2, 15, None, (2,))
    assert after.legal_actions == ()


def test_reveal_and_end() -> None:
    """secret_revealed moves a card from the secret festival; match_ended scores."""
    after = apply_event(STATE, wire.SecretRevealed(card="blue-2", ranking=STATE.ranking), 1)
    assert after.phase == "over" and after.secret_count == STATE.secret_count - 1
    assert after.revealed == ("blue-2",) and after.totals["blue"] == 6
    ended = apply_event(after, wire.MatchEnded(scoring=examples.SCORING_3P), 1)
    assert ended.scoring == examples.SCORING_3P and ended.active is None


def test_opening_choice_and_reveal_as_their_owner_sees_them() -> None:
    """opening_chosen and opening_revealed: bouquets grow, my secret is remembered."""
    state = fakes.opening_state()
    state = apply_event(state, wire.OpeningChosen(seat=0, bouquet="pink-4", secret="blue-3"), 0)
    assert state.hand == () and state.opening == ("pink-4", "blue-3") and 0 not in state.to_act
    state = apply_event(state, wire.OpeningChosen(seat=1, bouquet=None, secret=None), 0)
    state = apply_event(
        state, wire.OpeningRevealed(bouquets=("pink-4", "blue-2", "orange-3"), secret_count=3), 0
    )
    assert [s.bouquet for s in state.seats] == [("pink-4",), ("blue-2",), ("orange-3",)]
    assert state.my_secret == ("blue-3",) and state.secret_count == 3 and state.phase == "turn"


def test_choice_points_are_the_prompts_not_worked_out() -> None:
    """Each choice shows the points its prompt sent for it, whatever they are:
    the view reads them and does no sum of its own."""
    odd = msgspec.structs.replace(examples.PROMPT_4P, points=(7, 3, 1))
    view = table_view(STATE, fakes.summary(), me=1, points=points_by_action(odd))
    assert [(c.key, c.points) for c in view.actions.choices] == [("k", 7), ("f", 3), ("s", 1)]


def test_without_points_from_the_server_no_choice_shows_any() -> None:
    """An older server sends no points: the choices offer none (not a guess)."""
    old = msgspec.structs.replace(examples.PROMPT_4P, points=())
    assert points_by_action(old) == {}
    view = table_view(STATE, fakes.summary(), me=1, points=points_by_action(old))
    assert [(c.key, c.points) for c in view.actions.choices] == [
        ("k", None), ("f", None), ("s", None),
    ]  # fmt: skip
    assert [c.points for c in table_view(STATE, fakes.summary(), me=1).actions.choices] == [
        None, None, None,
    ]  # fmt: skip


def test_the_last_prompt_gives_the_points_while_its_position_lasts() -> None:
    """Follow keeps the last prompt: its points hold through a sync of the same
    seq, and go with the legal actions, or with a snapshot of another seq."""
    follow = Follow(clock=lambda: 0.0)
    follow.join(wire.Joined(match=fakes.MATCH, seat=1, host=False))
    assert follow.snapshot(examples.SNAPSHOT_4P) and follow.points() == {}
    assert follow.prompt(examples.PROMPT_4P)
    said = {wire.Keep(): 2, wire.AddFaceUp(): 0, wire.AddSecret(): 0}
    assert follow.points() == said
    assert follow.snapshot(examples.SNAPSHOT_4P) and follow.points() == said
    kept = wire.CardKept(seat=1, card="pink-4", points=2)
    assert follow.event(wire.Event(match=fakes.MATCH, seq=80, event=kept)) == "applied"
    assert follow.points() == {}
    assert follow.snapshot(examples.SNAPSHOT_4P) and follow.prompt(examples.PROMPT_4P)
    later = msgspec.structs.replace(examples.SNAPSHOT_4P, seq=85)
    assert follow.snapshot(later) and follow.state is not None and follow.state.legal_actions
    assert follow.points() == {}  # the old prompt's points were for seq 79


def test_table_view_of_the_example_snapshot() -> None:
    """Rank rows in rank order with their cards' numbers; players by colour; the
    legal choices with the example prompt's points."""
    view = table_view(STATE, fakes.summary(), me=1, points=points_by_action(examples.PROMPT_4P))
    assert view.festival is not None
    rows = view.festival.rows
    assert [r.colour for r in rows] == ["purple", "orange", "blue", "pink"]
    assert [r.total for r in rows] == [9, 6, 4, 3]
    assert rows[0].majority == (15, 10) and rows[3].majority == ()
    assert (rows[2].give, rows[2].keep) == (1, 1)
    ada = view.players[1]
    assert ada.you and ada.acting and ada.name == "Ada" and ada.score == 18
    assert ada.colours[3] == (3, 8)  # orange-2, orange-2, orange-4
    assert not view.players[0].connected and view.players[2].name == "Bot 3"
    assert [(c.key, c.points) for c in view.actions.choices] == [("k", 2), ("f", 0), ("s", 0)]
    assert view.actions.second_card and view.your_turn


def test_give_choices_ask_whom_then_list_the_receivers() -> None:
    """Several receivers: g opens a picker keyed by seat number, Escape goes back."""
    actions = (wire.Keep(), wire.Give(to_seat=0), wire.Give(to_seat=3))
    state = msgspec.structs.replace(STATE, used=None, legal_actions=actions)
    points: dict[wire.Action, int] = {
        wire.Keep(): 2,
        wire.Give(to_seat=0): 4,
        wire.Give(to_seat=3): 4,
    }
    names = table_view(state, fakes.summary(), me=1, points=points).actions.choices
    assert [(c.key, c.action, c.points) for c in names] == [
        ("k", wire.Keep(), 2), ("g", None, 4),
    ]  # fmt: skip
    picking = table_view(state, fakes.summary(), me=1, picking=True, points=points).actions
    assert picking.mode == "give"
    assert [(c.key, c.name, c.points) for c in picking.choices] == [
        ("1", "Cy", 4), ("4", "Bot 4", 4), ("escape", None, None),
    ]  # fmt: skip
    uneven = {**points, wire.Give(to_seat=3): 6}  # the server's word, not the view's
    (_, give) = table_view(state, fakes.summary(), me=1, points=uneven).actions.choices
    assert give.points is None  # g shows one number only when every receiver scores it


def test_final_view_puts_the_winner_first() -> None:
    """Best first, winners marked, names from the summary, the deciding rule kept."""
    view = final_view(examples.SCORING_3P, fakes.summary(seats=fakes.THREE_SEATS), me=0)
    assert [r.name for r in view.rows] == ["Ada", "Bot 3", "Bot 2"]
    assert view.rows[0].winner and view.you_won and view.decided_by == "points"
    assert view.majorities[0].places[0] == ("Bot 3", 4, 11, 15)


def test_lobby_rows_open_first() -> None:
    """Open matches first, then running, then finished; bots named in the player's language."""
    matches = {m.match: m for m in reversed(fakes.lobby_matches())}
    rows = lobby_rows(matches)
    assert [r.status for r in rows] == ["open", "running", "finished"]
    assert rows[0].players == "Bea, Bot 2 (easy)" and rows[0].free == 1 and rows[0].code


def test_describe_says_what_happened() -> None:
    """The log in words, 'you' for the player's own seat."""
    names = seat_names(fakes.summary(), 4)
    given = wire.CardGiven(seat=2, to_seat=1, card="orange-3", points=5)
    assert describe(given, names, me=1).plain == "Bot 3 gave you ▲3 (+5 for Bot 3)."  # type: ignore[union-attr]
    kept = wire.CardKept(seat=1, card="pink-4", points=2)
    assert describe(kept, names, me=1).plain == "You kept ♥4 (+2)."  # type: ignore[union-attr]
    assert describe(wire.CardDrawn(seat=2, card=None, deck_count=3), names, me=1) is None


async def test_the_fold_agrees_with_the_servers_snapshots(server: Running) -> None:
    """Played live: at every turn prompt the folded state equals a fresh `sync`
    snapshot, and the prompt's points (one per action) are what the view looks up."""
    rng = random.Random(7)
    checked = 0
    answered: set[int] = set()  # a sync repeats the prompt: answer each one once
    async with connect(server.url, name="Ada", reconnect=False) as session:
        await session.create_match(seats=3, bots=[(1, "easy"), (2, "easy")])
        await session.start()
        follow = Follow()
        async with asyncio.timeout(20):
            async for message in session:
                if isinstance(message, wire.Joined):
                    follow.join(message)
                elif isinstance(message, wire.MatchUpdate):
                    follow.update(message.match)
                elif isinstance(message, wire.Snapshot) and follow.state is None:
                    assert follow.snapshot(message)
                elif isinstance(message, wire.Event):
                    assert follow.event(message) in ("applied", "stale")
                    if isinstance(message.event, wire.MatchEnded):
                        break
                elif (
                    isinstance(message, wire.Prompt)
                    and message.seq not in answered
                    and follow.prompt(message)
                ):
                    answered.add(message.seq)
                    assert len(message.points) == len(message.actions)  # the server says
                    assert set(follow.points()) == set(message.actions)
                    if follow.state is not None and follow.state.phase == "turn":
                        fresh = await session.sync()
                        assert fresh.seq == follow.seq
                        assert fresh.state == follow.state
                        checked += 1
                    await session.answer(message, rng.choice(message.actions))
        assert follow.state is not None and follow.state.scoring is not None
        final = await session.sync()
        assert final.state == follow.state
    assert checked >= 10


def test_turns_in_match_and_the_last_turn_from_every_seat_and_every_moment() -> None:
    """Issue 30, "how long is left": at every moment of the turns, for every
    player count and every receiver (a spectator too), the header's total is
    the number of turns the match really has (R4: 2p 12, 3p 10, 4p 7, 5p 7,
    6p 6 each, so in all 24, 30, 28, 35, 36), and the banner shows on each
    seat's last turn only."""
    from engine.match import Match
    from engine.observation import observe
    from server.match.views import state_to_wire

    expected = {2: 24, 3: 30, 4: 28, 5: 35, 6: 36}
    for players, total in expected.items():
        for seed in range(3):
            match = Match.new(players, seed)
            rng = random.Random(seed)
            banners: list[int] = []
            while not match.is_over:
                seat = match.to_act[0]
                for receiver in (seat, None):
                    state = state_to_wire(observe(match, receiver))
                    if state.phase == "turn":
                        assert turns_in_match(state) == total, (players, state.turn)
                view = actions_view(state_to_wire(observe(match, seat)), None, seat)
                if view.mode == "turn" and view.last_turn and banners[-1:] != [seat]:
                    banners.append(seat)
                action = rng.choice(observe(match, seat).legal_actions)
                match.apply(seat, action)
            assert len(banners) == players and len(set(banners)) == players, banners


def _row(seat: int, name: str, total: int, tulips: int, *, you: bool = False) -> ScoreRow:
    return ScoreRow(
        seat=seat, name=name, you=you, keeping=0, giving=0, majorities=(),
        total=total, tulips=tulips, winner=False,
    )  # fmt: skip


def test_placement_says_where_you_finished_and_against_whom() -> None:
    """Issue 30, "the final screen says where you finished": the place, of how
    many, and the margin to the player just ahead (or, first, to the second);
    level on points, the tulips decided (R23); level on both, the place is shared."""
    cases = [
        ([(31, 9), (28, 7, True), (20, 5), (12, 4)], Placement(2, 4, "behind", "P0", 3)),
        ([(31, 9, True), (28, 7), (20, 5)], Placement(1, 3, "ahead", "P1", 3)),
        ([(30, 9, True), (30, 7)], Placement(1, 2, "ahead_tulips", "P1")),
        ([(30, 9), (30, 7, True), (2, 1)], Placement(2, 3, "behind_tulips", "P0")),
        ([(30, 9), (30, 9, True), (2, 1)], Placement(1, 3, "shared", "P0")),
        ([(40, 9), (30, 9), (30, 9, True)], Placement(2, 3, "shared", "P1")),
        ([(40, 9), (30, 8), (29, 9, True), (1, 1)], Placement(3, 4, "behind", "P1", 1)),
    ]
    for spec, expected in cases:
        rows = [_row(i, f"P{i}", *s[:2], you=len(s) > 2) for i, s in enumerate(spec)]
        assert placement(rows) == expected, spec
    assert placement([_row(0, "A", 1, 1), _row(1, "B", 0, 0)]) is None  # a spectator


async def test_the_final_screen_says_where_you_finished_in_every_language() -> None:
    """The sentence is on the final screen, in English, German and Spanish."""
    from client.tui.i18n import set_language
    from client.tui.screens.final import place_line

    place = Placement(2, 4, "behind", "Bot 2", 3)
    expected = {
        "en": "You finished 2nd of 4, 3 points behind Bot 2.",
        "de": "Du bist 2. von 4, 3 Punkte hinter Bot 2.",
        "es": "Terminaste 2.º de 4, 3 puntos por detrás de Bot 2.",
    }
    try:
        for lang, sentence in expected.items():
            set_language(lang)
            assert place_line(place).plain == sentence
        set_language("en")
        assert place_line(Placement(1, 3, "ahead", "Bea", 1)).plain == (
            "You finished 1st of 3, 1 point ahead of Bea."
        )
    finally:
        set_language("en")
    async with running(fakes.ending()) as (app, _pilot, _session):
        assert "You finished" in screen_text(app)


def test_the_end_of_the_log_says_you_won_not_won_by_you() -> None:
    """Issue 30, cosmetics: "Won by You." reads badly; the winner reads "You
    won!", a shared win names the others, everyone else reads who won."""
    names = {0: "Ada", 1: "Bea", 2: "Cy"}
    alone = msgspec.structs.replace(examples.SCORING_3P, winners=(0,), decided_by="points")
    shared = msgspec.structs.replace(examples.SCORING_3P, winners=(0, 2), decided_by="shared")
    told = describe(wire.MatchEnded(scoring=alone), names, 0)
    assert told is not None and told.plain == "The match is over. You won!"
    told = describe(wire.MatchEnded(scoring=shared), names, 0)
    assert told is not None and told.plain == "The match is over. You share the win with Cy."
    told = describe(wire.MatchEnded(scoring=alone), names, 1)
    assert told is not None and told.plain == "The match is over. Won by Ada."


def test_the_lobby_keeps_the_first_page_as_the_server_follows_it() -> None:
    """PROTOCOL.md, ``match_update``: a new match comes in at the top of a
    full page and pushes the bottom one off; a known one changes in place."""
    lobby = Lobby(limit=2)
    lobby.replace([fakes.summary(match="b"), fakes.summary(match="a")])
    lobby.update(fakes.summary(match="c", status="open"))
    assert list(lobby.matches) == ["c", "b"]
    lobby.update(fakes.summary(match="b", status="finished"))
    assert list(lobby.matches) == ["c", "b"]
    assert lobby.matches["b"].status == "finished"
