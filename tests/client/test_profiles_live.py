"""Profiles, ratings, the leaderboard and history in the terminal client,
against a real server on 127.0.0.1 (issue 31): the leaderboard after rated
bot matches and a card from it, the rating change on the final screen and a
card from there, the history one key from the replay viewer, renaming (and a
name another player has), and linking a second client by code."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

from textual.widgets import Input

from client.sdk import Session, connect
from client.tui.app import Plan, QuickMatch, TulipsApp
from client.tui.identity import IdentityStore
from client.tui.screens.account import LinkCodeScreen, RenameScreen, UseLinkScreen
from client.tui.screens.card import PlayerCardScreen
from client.tui.screens.dialogs import PickScreen
from client.tui.screens.final import FinalScreen
from client.tui.screens.history import HistoryScreen
from client.tui.screens.leaderboard import LeaderboardScreen
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.pages import PageScreen
from client.tui.screens.replay import ReplayScreen
from tests.server.helpers import play_randomly

from .conftest import Running
from .driver import play_to_the_end, until
from .screens import screen_text

#: A rating change as the final screen says it: "+1.8, now 27.4".
CHANGE = re.compile(r"[+−]\d+\.\d, now −?\d+\.\d")


async def _rated_bot_matches(session: Session, count: int) -> None:
    """Play ``count`` rated matches against an easy and a hard bot, at random."""
    for number in range(count):
        await session.create_match(
            name=f"Warm-up {number}", seats=3, bots=[(1, "easy"), (2, "hard")]
        )
        await session.start()
        await play_randomly(session, 0, random.Random(number))
        await session.leave()


async def _loaded(pilot: object, app: TulipsApp, kind: type[PageScreen]) -> PageScreen:
    await until(pilot, lambda: isinstance(app.screen, kind), what=kind.__name__)  # type: ignore[arg-type]
    screen = app.screen
    assert isinstance(screen, PageScreen)
    await until(pilot, lambda: screen.loaded, what="the page's answer")  # type: ignore[arg-type]
    await pilot.pause()  # type: ignore[attr-defined]
    assert screen.failure is None, screen.failure
    return screen


async def test_the_leaderboard_after_rated_bot_matches_opens_cards_and_replays(
    server: Running,
) -> None:
    """Bea plays two rated matches against bots; Ada's leaderboard (b) lists
    Bea and the bots' strengths, best first, marked; Enter on Bea's line
    opens her card (2 matches, rated), and Enter there replays her latest."""
    async with connect(server.url, name="Bea", reconnect=False) as bea:
        await _rated_bot_matches(bea, 2)
        app = TulipsApp(Plan(name="Ada", url=server.url), reveal_delay=0)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await pilot.press("b")
            board = await _loaded(pilot, app, LeaderboardScreen)
            assert isinstance(board, LeaderboardScreen) and board.page is not None
            entries = board.page.entries
            assert {e.player for e in entries} == {bea.player_id, "bot_easy", "bot_hard"}
            assert [e.rank for e in entries] == [1, 2, 3]
            assert board.page.you is None  # Ada has played no rated match
            text = screen_text(app)
            assert "Bea" in text and text.count("(bot)") == 2
            assert "not on the leaderboard yet" in text
            assert re.search(r"−?\d+\.\d ±\d+\.\d", text), text
            line = next(i for i, e in enumerate(entries) if e.player == bea.player_id)
            for _ in range(line):
                await pilot.press("down")
            await pilot.press("enter")
            card = await _loaded(pilot, app, PlayerCardScreen)
            assert isinstance(card, PlayerCardScreen) and card.card is not None
            assert (card.card.name, card.card.matches, card.card.rated_matches) == ("Bea", 2, 2)
            text = screen_text(app)
            assert "Bea" in text and "2 matches" in text and "Warm-up 1" in text
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the replay")
            replay = app.screen
            assert isinstance(replay, ReplayScreen) and replay.match == card.card.recent[0].match
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is card, what="back on the card")


async def test_the_final_screen_shows_the_rating_change_and_the_history_replays(
    server: Running,
) -> None:
    """A quick match against a bot is rated (the printed rules, a closed box):
    the final screen says "+x.y, now z.w" for both seats once the ratings come;
    p picks the bot and shows its card; in the lobby, h lists the match with
    its change, and Enter opens it in the replay viewer."""
    plan = Plan(name="Ada", url=server.url, quick=QuickMatch(2, "easy"))
    app = TulipsApp(plan, reveal_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.follow.state is not None, timeout=15, what="the deal")
        assert app.follow.summary is not None and app.follow.summary.rated
        await play_to_the_end(pilot, app, random.Random(3))
        final = app.screen
        assert isinstance(final, FinalScreen) and final.rated
        await until(pilot, lambda: final.ratings is not None, what="the ratings notice")
        await pilot.pause()
        text = screen_text(app)
        assert len(CHANGE.findall(text)) == 2, text
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, PickScreen), what="whose card")
        await pilot.press("2")  # the bot's seat
        card = await _loaded(pilot, app, PlayerCardScreen)
        assert isinstance(card, PlayerCardScreen) and card.card is not None
        assert (card.card.player, card.card.kind) == ("bot_easy", "bot")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is final, what="back on the scores")
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        await pilot.press("h")
        history = await _loaded(pilot, app, HistoryScreen)
        assert isinstance(history, HistoryScreen) and history.page is not None
        (record,) = history.page.matches
        assert record.rated and record.rating is not None and record.replay
        assert CHANGE.search(screen_text(app))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the replay")
        replay = app.screen
        assert isinstance(replay, ReplayScreen) and replay.match == record.match
        await until(pilot, lambda: replay.replay is not None, what="the record")


async def test_a_card_from_the_waiting_room_is_the_seats_own_player(server: Running) -> None:
    """In the waiting room, p and a seat open that seat's person's card by the
    id the seat carries (`SeatInfo.player`), even before they have a rating."""
    async with connect(server.url, name="Bea", reconnect=False) as bea:
        await bea.create_match(name="Tea", seats=3, bots=[(2, "easy")])
        app = TulipsApp(Plan(name="Ada", url=server.url), reveal_delay=0)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await until(pilot, lambda: "Tea" in screen_text(app), what="Bea's match")
            await pilot.press("enter")
            await until(pilot, lambda: app.follow.seat is not None, what="a seat")
            await pilot.press("p")
            await until(pilot, lambda: isinstance(app.screen, PickScreen), what="whose card")
            await pilot.press("1")  # Bea hosts in seat 1
            card = await _loaded(pilot, app, PlayerCardScreen)
            assert isinstance(card, PlayerCardScreen) and card.card is not None
            assert (card.card.player, card.card.name) == (bea.player_id, "Bea")
            assert card.card.rating is None  # no rated match yet: only her id found her


async def test_rename_says_a_taken_name_and_takes_a_free_one(server: Running) -> None:
    """p, e: "bea" is Bea's (names are unique in any case) — the dialog says so
    and stays; "Ada Lovelace" is free — the lobby and the server know her by it."""
    async with connect(server.url, name="Bea", reconnect=False) as bea:
        app = TulipsApp(Plan(name="Ada", url=server.url), reveal_delay=0)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await pilot.press("p")
            await _loaded(pilot, app, PlayerCardScreen)
            await pilot.press("e")
            await until(pilot, lambda: isinstance(app.screen, RenameScreen), what="the dialog")
            field = app.screen.query_one(Input)
            field.value = "bea"
            await pilot.press("enter")
            await until(pilot, lambda: "is taken" in screen_text(app), what="name_taken")
            assert isinstance(app.screen, RenameScreen)
            field.value = "Ada Lovelace"
            await pilot.press("enter")
            await until(pilot, lambda: not isinstance(app.screen, RenameScreen), what="closed")
            assert app.player_name == "Ada Lovelace"
            assert app.player_id is not None
            card = await bea.profile(app.player_id)
            assert card.name == "Ada Lovelace"
            await pilot.press("escape")
            await until(pilot, lambda: "Ada Lovelace" in screen_text(app), what="the lobby's name")


async def test_a_code_shown_on_one_device_links_another(server: Running, tmp_path: Path) -> None:
    """The first client shows a code (p, k); a second client given it
    (``tulips connect --link``) is the same player, and keeps that player's
    token for the server; a third types a code into its profile (p, u) and
    becomes that player too, its token replaced."""
    first = TulipsApp(Plan(name="Ada", url=server.url), reveal_delay=0)
    async with first.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(first.screen, LobbyScreen), what="the lobby")
        await pilot.press("p")
        await _loaded(pilot, first, PlayerCardScreen)
        await pilot.press("k")
        await until(pilot, lambda: isinstance(first.screen, LinkCodeScreen), what="the code")
        shown = first.screen
        assert isinstance(shown, LinkCodeScreen) and shown.code in screen_text(first)
        assert "10 minutes" in screen_text(first) or "minute" in screen_text(first)
        ada = first.player_id
        assert first.session is not None
        code = (await first.session.link_code()).code  # the first code is replaced: use this one
    assert ada is not None

    store = IdentityStore(tmp_path / "phone.json")
    phone = TulipsApp(Plan(name="Phone", url=server.url, link=code), identity=store)
    async with phone.run_test(size=(40, 50)) as pilot:
        await until(pilot, lambda: isinstance(phone.screen, LobbyScreen), what="the lobby")
        assert phone.player_id == ada and phone.player_name == "Ada"
        assert phone.session is not None and store.token_for(server.url) == phone.session.token
        code = (await phone.session.link_code()).code

    other = IdentityStore(tmp_path / "laptop.json")
    laptop = TulipsApp(Plan(name="Laptop", url=server.url), identity=other)
    async with laptop.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(laptop.screen, LobbyScreen), what="the lobby")
        before = other.token_for(server.url)
        assert laptop.player_id != ada and before is not None
        await pilot.press("p")
        await _loaded(pilot, laptop, PlayerCardScreen)
        await pilot.press("u")
        await until(pilot, lambda: isinstance(laptop.screen, UseLinkScreen), what="the dialog")
        field = laptop.screen.query_one(Input)
        field.value = "WRNG-CODE"
        await pilot.press("enter")
        await until(pilot, lambda: "wrong, used or expired" in screen_text(laptop), what="refused")
        field.value = code
        await pilot.press("enter")
        await until(pilot, lambda: laptop.player_id == ada, what="linked")
        await until(pilot, lambda: not isinstance(laptop.screen, UseLinkScreen), what="closed")
        assert laptop.session is not None and other.token_for(server.url) == laptop.session.token
        assert other.token_for(server.url) != before
        await asyncio.sleep(0)
        assert laptop.online
        await pilot.press("escape")
        await until(pilot, lambda: "playing as Ada" in screen_text(laptop), what="the lobby")


async def test_a_wrong_code_at_start_says_so_and_stops(server: Running, tmp_path: Path) -> None:
    """``tulips connect --link`` with a code the server never gave: one clear
    line for the command line, and no token kept."""
    store = IdentityStore(tmp_path / "identity.json")
    app = TulipsApp(Plan(name="Eve", url=server.url, link="NOPE-NOPE"), identity=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.failure is not None, what="the refusal")
    assert app.failure is not None and "wrong, used or expired" in app.failure
    assert store.token_for(server.url) is None
