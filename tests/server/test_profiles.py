"""Profiles, ratings, the leaderboard and history over real sockets (issue 31):
unique names, renaming, linking a second device, and the ``ratings`` notice."""

from __future__ import annotations

import asyncio
import random

import pytest

import protocol as wire
from client.sdk import ConnectError, RequestError, Session, connect

from .helpers import Running, play_randomly, serve


async def _wait_for(session: Session, kind: type[wire.Message], timeout: float = 10.0) -> object:
    async with asyncio.timeout(timeout):
        async for message in session:
            if isinstance(message, kind):
                return message
    raise AssertionError(f"no {kind.__name__}")


async def _play_against_bots(
    session: Session, bots: list[tuple[int, str]], seats: int, **options: object
) -> None:
    await session.create_match(seats=seats, bots=bots, **options)  # type: ignore[arg-type]
    await session.start()
    await play_randomly(session, 0, random.Random(7))


async def test_a_rated_match_against_bots_moves_both_ratings_and_is_in_history(
    running: Running,
) -> None:
    """R23: a standard match is rated by default; its players are told how
    their ratings moved (`ratings`), the player's and the bots' strength's,
    and the match is in the player's history, its replay one request away."""
    async with connect(running.url, name="Ada", reconnect=False) as ada:
        await _play_against_bots(ada, [(1, "easy"), (2, "hard")], 3)
        notice = await _wait_for(ada, wire.RatingsChanged)
        assert isinstance(notice, wire.RatingsChanged)
        by_player = {change.player: change for change in notice.changes}
        assert set(by_player) == {ada.player_id, "bot_easy", "bot_hard"}
        assert ada.player_id is not None
        mine = by_player[ada.player_id]
        assert mine.before.mu == pytest.approx(25.0) and mine.after.sigma < mine.before.sigma
        assert mine.after.ordinal == pytest.approx(mine.after.mu - 3 * mine.after.sigma, abs=1e-3)

        card = await ada.profile()
        assert (card.player, card.name, card.matches, card.rated_matches) == (
            ada.player_id,
            "Ada",
            1,
            1,
        )
        assert card.rating is not None and card.rating.mu == pytest.approx(mine.after.mu)
        assert card.mean_points is not None and len(card.recent) == 1

        history = await ada.history()
        assert len(history.matches) == 1 and history.next is None
        record = history.matches[0]
        assert record.rated and record.seat == 0 and record.replay
        assert record.rating is not None and record.rating.after == mine.after
        page = await ada.replay(record.match)
        assert page.seat == 0 and page.status == "finished"

        board = await ada.leaderboard()
        assert board.total == 3 and {e.player for e in board.entries} == set(by_player)
        assert [e.rank for e in board.entries] == [1, 2, 3]
        ordinals = [e.rating.ordinal for e in board.entries]
        assert ordinals == sorted(ordinals, reverse=True)
        assert board.you is not None and board.you.player == ada.player_id

        bots = await ada.profile("bot_hard")
        assert (bots.kind, bots.strength, bots.matches, bots.rated_matches) == (
            "bot",
            "hard",
            1,
            1,
        )


async def test_house_rules_and_open_box_are_unrated_unless_the_host_says(
    running: Running,
) -> None:
    """Open box publishes the seed (R27): unrated by default; `rated` true rates it."""
    async with connect(running.url, name="Ada", reconnect=False) as ada:
        joined = await ada.create_match(seats=2, bots=[(1, "easy")], open_box=True)
        listed = {m.match: m for m in await ada.list_matches()}
        assert listed[joined.match].rated is False
        await ada.leave()
        joined = await ada.create_match(seats=2, bots=[(1, "easy")], open_box=True, rated=True)
        listed = {m.match: m for m in await ada.list_matches()}
        assert listed[joined.match].rated is True
        await ada.leave()
        joined = await ada.create_match(seats=2, bots=[(1, "easy")])
        assert {m.match: m for m in await ada.list_matches()}[joined.match].rated is True


async def test_an_unrated_match_is_in_history_but_changes_no_rating(running: Running) -> None:
    """An unrated match counts for matches and wins, not for the rating."""
    async with connect(running.url, name="Ada", reconnect=False) as ada:
        await _play_against_bots(ada, [(1, "easy")], 2, rated=False)
        for _ in range(100):
            if (await ada.history()).matches:
                break
            await asyncio.sleep(0.05)
        card = await ada.profile()
        assert (card.matches, card.rated_matches, card.rating) == (1, 0, None)
        record = (await ada.history()).matches[0]
        assert not record.rated and record.rating is None
        assert all(not seat.counted for seat in record.seats)
        assert (await ada.leaderboard()).total == 0


async def test_names_are_unique_in_any_case(running: Running) -> None:
    """A taken name gets a free variant at hello; rename refuses a taken one."""
    async with (
        connect(running.url, name="Anna", reconnect=False) as first,
        connect(running.url, name="anna", reconnect=False) as second,
        connect(running.url, name="Bo", reconnect=False) as bo,
    ):
        assert first.name == "Anna" and second.name == "anna 2"
        with pytest.raises(RequestError) as refused:
            await bo.rename("ANNA")
        assert refused.value.code == "name_taken" and refused.value.path == "rename.name"
        await bo.rename("Bea")
        assert (await bo.profile()).name == "Bea"
        await first.rename("anna")  # one's own name in another case is free
        assert (await second.profile(first.player_id)).name == "anna"
        with pytest.raises(RequestError) as unknown:
            await bo.profile("nobody-here")
        assert unknown.value.code == "no_such_player"


async def test_a_second_device_links_with_a_one_time_code(running: Running) -> None:
    """The code names the same player on another device, with a token of its
    own; it works once; a wrong one closes the connection with 4002."""
    async with connect(running.url, name="Ada", reconnect=False) as laptop:
        issued = await laptop.link_code()
        assert len(issued.code) == 9 and issued.expires_in > 0
        typed = issued.code.lower().replace("-", "")
        async with connect(running.url, name="whoever", link=typed, reconnect=False) as browser:
            assert browser.player_id == laptop.player_id and browser.name == "Ada"
            assert browser.token != laptop.token
            again = Session(running.url, "Ada", token=browser.token, reconnect=False)
            assert (await again.open()).player == laptop.player_id
            await again.close()
        with pytest.raises(ConnectError) as spent:
            await connect(running.url, name="Eve", link=issued.code, reconnect=False)
        assert spent.value.code == "bad_link_code"
        # the first device's token still works
        back = Session(running.url, "Ada", token=laptop.token, reconnect=False)
        assert (await back.open()).player == laptop.player_id
        await back.close()


async def test_wrong_link_codes_lock_the_address_out() -> None:
    """Guessing is slowed: after five wrong codes, even a right one is refused a while."""
    async with serve() as running, connect(running.url, name="Ada", reconnect=False) as ada:
        for _ in range(5):
            with pytest.raises(ConnectError) as wrong:
                await connect(running.url, name="Eve", link="AAAA-AAAA", reconnect=False)
            assert wrong.value.code == "bad_link_code"
        code = (await ada.link_code()).code
        with pytest.raises(ConnectError) as locked:
            await connect(running.url, name="Eve", link=code, reconnect=False)
        assert locked.value.code == "rate_limited"


async def test_a_seat_the_stand_in_played_does_not_count_for_its_player(
    running: Running,
) -> None:
    """Bo leaves as the match starts: the server's stand-in plays his seat to
    the end, so the result rates Ada and the bot only (as a zombie's seat on
    Board Game Arena); Bo's history lists the match, not counted."""
    async with (
        connect(running.url, name="Ada", reconnect=False) as ada,
        connect(running.url, name="Bo", reconnect=False) as bo,
    ):
        joined = await ada.create_match(seats=3, bots=[(2, "medium")])
        await bo.join(joined.match)
        await ada.start()
        await bo.leave()
        await play_randomly(ada, 0, random.Random(11))
        notice = await _wait_for(ada, wire.RatingsChanged)
        assert isinstance(notice, wire.RatingsChanged)
        assert {change.seat for change in notice.changes} == {0, 2}
        record = (await bo.history()).matches[0]
        assert record.seat == 1 and record.rating is None
        assert [seat.counted for seat in record.seats] == [True, False, True]
        card = await bo.profile()
        assert (card.matches, card.rated_matches, card.rating) == (1, 0, None)
