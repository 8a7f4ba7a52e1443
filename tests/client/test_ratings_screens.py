"""Rated and unrated matches, the leaderboard's and history's pages, on a
scripted session (issue 31): the lobby and the waiting room say whether a
match is rated, the new-match form's rated tick follows the server's rule
until the host sets it, the final screen shows the rating changes (or
"unrated"), and the pages ask the server for the page wanted."""

from __future__ import annotations

from typing import Any

import msgspec
from textual.pilot import Pilot

import protocol as wire
from client.tui.ratings import change_text, rating_text
from client.tui.screens.dialogs import CreateMatchScreen, Tick
from client.tui.screens.final import FinalScreen
from client.tui.screens.history import HistoryScreen
from client.tui.screens.leaderboard import LeaderboardScreen
from client.tui.screens.pages import PageScreen

from . import fakes
from .driver import until
from .screens import running, screen_text, settle

PROFILES: dict[str, Any] = {"matches": fakes.lobby_matches(), **fakes.PROFILE_ANSWERS}


def _asked(session: fakes.ScriptedSession, kind: str) -> list[dict[str, Any]]:
    return [kwargs for k, _, kwargs in session.requests if k == kind]


async def _page(pilot: Pilot[Any], *keys: str) -> PageScreen:
    for key in keys:
        await pilot.press(key)
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, PageScreen) and app.screen.loaded)
    await pilot.pause()
    assert isinstance(app.screen, PageScreen)
    return app.screen


def test_ratings_read_as_the_ordinal_and_sigma_and_changes_as_the_ordinals_move() -> None:
    """27.4 ±2.1 is μ − 3σ and σ; a change is the ordinal's, signed, and where it ends."""
    assert rating_text(fakes.rating(27.4, 2.1)) == "27.4 ±2.1"
    assert rating_text(fakes.rating(-3.25, 5.0)) == "−3.2 ±5.0"
    assert rating_text(None) == "–"
    up = fakes.rating_change(0, "p_ada", "Ada", 25.6, 27.4)
    down = fakes.rating_change(0, "p_ada", "Ada", 27.4, 26.8)
    assert change_text(up).plain == "+1.8, now 27.4"
    assert change_text(down).plain == "−0.6, now 26.8"


async def test_the_lobby_marks_rated_matches() -> None:
    """A rated match's row says so; the others do not."""
    rated = fakes.summary("running", match="m7", name="Serious tulips", rated=True)
    async with running([], matches=[*fakes.lobby_matches(), rated], size=(120, 30)) as (app, _, _):
        lines = screen_text(app).splitlines()
        (marked,) = [line for line in lines if "(rated)" in line]
        assert "Serious tulips" in marked


async def test_the_waiting_room_says_whether_the_match_is_rated() -> None:
    """Rated: the result changes ratings; unrated: they stay (p: players' cards)."""
    async with running(fakes.rated_waiting_room()) as (app, _, _):
        text = screen_text(app)
        assert "Rated: the result changes" in text and " p " in text
    async with running(fakes.waiting_room()) as (app, _, _):
        assert "Unrated: the ratings stay" in screen_text(app)


async def _create(pilot: Pilot[Any], session: fakes.ScriptedSession, *ticks: str) -> Any:
    await pilot.press("n")
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, CreateMatchScreen), what="the form")
    for tick in ticks:
        await pilot.click(tick)
        await pilot.pause()
    await pilot.press("ctrl+s")
    await until(pilot, lambda: bool(_asked(session, "create_match")), what="create_match")
    await settle(pilot, session)
    return _asked(session, "create_match")[0]["rated"]


async def test_the_rated_tick_follows_the_servers_rule_until_the_host_sets_it() -> None:
    """Untouched: the server's rule (None); open box unticks it (still the
    rule); ticked back with an open box: rated; unticked with the printed
    rules: unrated."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, CreateMatchScreen))
        assert app.screen.query_one("#rated", Tick).value is True
        await pilot.click("#open-box")
        await pilot.pause()
        assert app.screen.query_one("#rated", Tick).value is False
        await pilot.press("escape")
    cases = {(): None, ("#open-box",): None, ("#open-box", "#rated"): True, ("#rated",): False}
    for ticks, wanted in cases.items():
        async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
            assert await _create(pilot, session, *ticks) is wanted, ticks


async def test_the_final_screen_shows_the_rating_changes_when_they_come() -> None:
    """Rated: a note until the ratings notice, then each counted seat's
    "+x, now y" and "not counted" for the others; unrated: it says so."""
    async with running(fakes.rated_ending(), size=(100, 40)) as (app, pilot, session):
        assert isinstance(app.screen, FinalScreen)
        assert "new ratings come in a moment" in screen_text(app)
        session.feed(fakes.ratings_changed())
        await settle(pilot, session)
        text = screen_text(app)
        assert "+1.8, now 27.4" in text and "−0.6, now 25.5" in text
        assert "not counted" in text
    async with running(fakes.ending()) as (app, _, _):
        assert "Unrated match" in screen_text(app)


async def test_your_own_rating_change_shows_under_the_scores_at_80x24() -> None:
    """On the smallest terminal the player's own change is on the screen at once."""
    async with running(fakes.rated_ending()) as (app, pilot, session):
        session.feed(fakes.ratings_changed())
        await settle(pilot, session)
        assert "Your rating: +1.8, now 27.4" in screen_text(app)


async def test_the_ratings_notice_before_the_final_screen_is_kept_for_it() -> None:
    """The notice may come while the reveals are still being shown: the
    final screen shows it once it opens."""
    script = [*fakes.rated_ending()]
    script.insert(-2, fakes.ratings_changed())  # before match_ended
    async with running(script, size=(100, 40)) as (app, _, _):
        assert isinstance(app.screen, FinalScreen)
        assert "+1.8, now 27.4" in screen_text(app)


async def test_the_leaderboard_pages_and_pins_your_line() -> None:
    """Page 1 highlights Ada's line; n asks for the next page, where her line
    is pinned under the list; y goes back to her page; Esc closes."""
    async with running([], **PROFILES) as (app, pilot, session):
        board = await _page(pilot, "b")
        assert isinstance(board, LeaderboardScreen)
        text = screen_text(app)
        assert "Ada (you)" in text and "Page 1 of 3 · 40 players" in text
        assert "You: 6." not in text
        await _page(pilot, "n")
        assert _asked(session, "leaderboard")[-1] == {"offset": 15, "limit": 15}
        text = screen_text(app)
        assert "Page 2 of 3" in text and "You: 6. · 21.8 ±2.1" in text
        board.loaded = False
        await _page(pilot, "y")
        assert _asked(session, "leaderboard")[-1] == {"offset": 0, "limit": 15}
        await pilot.press("p")  # no page before the first
        await pilot.pause()
        assert len(_asked(session, "leaderboard")) == 3
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.lobby_screen


async def test_history_pages_by_its_cursor_and_says_when_no_replay_is_kept() -> None:
    """n asks for the matches before the page's `next`; p goes back to the
    latest; Enter on a match the server no longer keeps says so."""
    async with running([], **PROFILES) as (app, pilot, session):
        history = await _page(pilot, "h")
        assert isinstance(history, HistoryScreen)
        text = screen_text(app)
        assert "unrated" in text and "not counted" in text and "(no replay)" in text
        history.loaded = False
        await _page(pilot, "n")
        assert _asked(session, "history")[-1] == {"before": 4, "limit": 7}
        history.loaded = False
        await _page(pilot, "p")
        assert _asked(session, "history")[-1] == {"before": None, "limit": 7}
        for _ in range(3):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        assert not _asked(session, "replay")


def test_a_match_record_makes_a_summary_for_the_replay_viewer() -> None:
    """The replay viewer names the seats from the record."""
    from client.tui.ratings import record_summary

    summary = record_summary(fakes.match_record())
    assert summary.status == "finished" and [s.name for s in summary.seats][:2] == [
        "Maximiliane Tulpenfeld",
        "Ada",
    ]
    assert msgspec.json.decode(msgspec.json.encode(summary), type=wire.MatchSummary) == summary


async def test_a_phone_taps_its_way_to_the_leaderboard_a_card_and_the_rename_dialog() -> None:
    """At 40×50 every new page is a tap away: leaderboard, back, profile, rename."""
    from client.tui.i18n import t
    from client.tui.screens.account import RenameScreen
    from client.tui.screens.card import PlayerCardScreen

    from .test_touch import tap

    async with running([], size=(40, 50), **PROFILES) as (app, pilot, _):
        await tap(pilot, t("keys.leaderboard"))
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen))
        await tap(pilot, t("keys.next_page"))
        await tap(pilot, t("keys.back"))
        await until(pilot, lambda: app.screen is app.lobby_screen)
        await tap(pilot, t("keys.profile"))
        await until(pilot, lambda: isinstance(app.screen, PlayerCardScreen))
        await tap(pilot, t("profile.rename"))
        await until(pilot, lambda: isinstance(app.screen, RenameScreen))


def test_connect_takes_a_link_code() -> None:
    """``tulips connect URL --link CODE``: the code goes to the plan's first hello."""
    from client.tui.cli import parse_args

    args = parse_args(["connect", "ws://127.0.0.1:8765", "--link", " K7QM-2XPD "])
    assert args.link == "K7QM-2XPD"
    assert parse_args(["connect", "ws://127.0.0.1:8765"]).link is None


async def test_the_waiting_room_opens_a_seats_card() -> None:
    """p in the waiting room: pick a seat; a bot's card is its strength's, your
    own is yours (a seat does not carry a person's id: see PlayerCardScreen)."""
    from client.tui.screens.card import PlayerCardScreen
    from client.tui.screens.dialogs import PickScreen

    async with running(fakes.rated_waiting_room(), **PROFILES) as (app, pilot, session):
        for key, player in (("2", "bot_easy"), ("1", "p_ada")):
            await pilot.press("p")
            await until(pilot, lambda: isinstance(app.screen, PickScreen))
            await pilot.press(key)
            await until(pilot, lambda: isinstance(app.screen, PlayerCardScreen))
            assert _asked(session, "profile")[-1] == {"player": player}
            card = app.screen
            assert isinstance(card, PlayerCardScreen) and not card.own  # no settings at a table
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.table_screen)
