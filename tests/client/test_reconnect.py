"""A dropped connection: the app shows it, comes back by itself with its
resume token, and lands on the same table with the same seat and prompt."""

from __future__ import annotations

from client.tui.app import Plan, QuickMatch, TulipsApp
from client.tui.screens.table import TableScreen
from client.tui.widgets.bars import TitleBar
from server.peer import Peer

from .conftest import Running
from .driver import until
from .screens import screen_text


def _peer_of(server: Running, name: str) -> Peer:
    return next(p for p in server.server.peers if p.player is not None and p.player.name == name)


async def test_app_reconnects_after_the_server_drops_it(server: Running) -> None:
    """Server closes Ada's connection mid-turn: 'reconnecting' shows, then the table is back."""
    app = TulipsApp(
        Plan(name="Ada", url=server.url, quick=QuickMatch(players=3, strength="easy")),
        reveal_delay=0,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TableScreen), what="the table")
        await until(
            pilot,
            lambda: (
                app.table_screen.view is not None
                and app.table_screen.view.actions.mode == "opening"
            ),
            what="the opening prompt",
        )
        await pilot.press("1")
        await until(
            pilot,
            lambda: (
                app.table_screen.view is not None and app.table_screen.view.actions.mode == "turn"
            ),
            what="Ada's first turn",
        )
        match, seat, drawn = app.follow.match_id, app.follow.seat, app.follow.state.drawn  # type: ignore[union-attr]
        old_peer = _peer_of(server, "Ada")
        seen: list[tuple[str, bool]] = []
        take_in = app.on_server_message

        def spy(message: object) -> None:
            take_in(message)
            title = app.table_screen.query_one(TitleBar).view
            seen.append((type(message).__name__, title.online))

        app.on_server_message = spy  # type: ignore[method-assign]
        old_peer.close(1011, "dropped by the test")
        await until(pilot, lambda: ("Reconnected", True) in seen, what="the reconnect")
        lost = seen.index(("ConnectionLost", False))  # the title bar said so
        assert lost < seen.index(("Reconnected", True))
        await until(
            pilot,
            lambda: (
                app.table_screen.view is not None and app.table_screen.view.actions.mode == "turn"
            ),
            what="the prompt again",
        )
        assert _peer_of(server, "Ada") is not old_peer  # a new connection, the same identity
        assert (app.follow.match_id, app.follow.seat) == (match, seat)
        assert app.follow.state is not None and app.follow.state.drawn == drawn
        assert isinstance(app.screen, TableScreen)
        assert "reconnecting" not in screen_text(app)
        seq = app.follow.seq
        await pilot.press("k")  # and the match goes on
        await until(pilot, lambda: app.follow.seq > seq + 1, what="the events of the move")
