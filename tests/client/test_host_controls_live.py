"""The host's waiting room against a real server: Ada, in the app, joins
Bea's table; Bea (through the SDK) adds a bot, which Ada sees, then removes
Ada, who is back in the lobby and told so — and can join again."""

from __future__ import annotations

from client.sdk import connect
from client.tui.app import Plan, TulipsApp
from client.tui.screens.lobby import LobbyScreen

from .conftest import Running
from .driver import until
from .screens import screen_text


async def test_a_player_the_host_removes_is_back_in_the_lobby_and_may_join_again(
    server: Running,
) -> None:
    app = TulipsApp(Plan(name="Ada", url=server.url), reveal_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        async with connect(server.url, name="Bea", reconnect=False) as bea:
            await bea.create_match(name="Bea's garden", seats=3)
            await until(pilot, lambda: "Bea's garden" in screen_text(app), what="the new match")
            await pilot.press("enter")
            await until(pilot, lambda: app.follow.seat == 1, what="Ada seated")
            await bea.add_bot(strength="hard")

            def has_bot() -> bool:
                summary = app.follow.summary
                return summary is not None and summary.seats[2].kind == "bot"

            await until(pilot, has_bot, what="the bot Bea added")
            await bea.remove_seat(1)
            await until(
                pilot,
                lambda: app.follow.match_id is None and isinstance(app.screen, LobbyScreen),
                what="Ada back in the lobby",
            )
            notes = [note.message for note in app._notifications]
            assert "Bea removed you from the match." in notes
            await until(pilot, lambda: "Bea's garden" in screen_text(app), what="the match again")
            await pilot.press("enter")
            await until(pilot, lambda: app.follow.seat == 1, what="Ada seated again")
