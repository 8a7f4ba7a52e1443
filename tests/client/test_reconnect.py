"""A dropped connection: the app shows it, comes back by itself with its
resume token, and lands on the same table with the same seat and prompt. A
new program with the same identity starts with the match's story in its log."""

from __future__ import annotations

from pathlib import Path

import protocol as wire
from client.sdk import connect
from client.tui.app import Plan, QuickMatch, TulipsApp
from client.tui.cards import card_text
from client.tui.identity import IdentityStore
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


async def test_a_new_client_for_a_running_seat_fills_its_log_from_the_record(
    server: Running, tmp_path: Path
) -> None:
    """Ada plays her opening in one program and comes back in another (her
    token kept): the new app's log starts with what happened, read from the
    match's record as her seat saw it — her own opening cards included."""
    first = await connect(server.url, name="Ada", reconnect=False)
    try:
        joined = await first.create_match(seats=2, bots=[(1, "easy")], first_seat=0)
        await first.start()
        prompt = await first.next_of(wire.Prompt, timeout=10)
        opening = prompt.actions[0]
        assert isinstance(opening, wire.Opening)
        await first.answer(prompt, opening)
        await first.next_of(wire.Prompt, timeout=10)  # her first turn: opening revealed
        token = first.token
    finally:
        await first.close()
    store = IdentityStore(tmp_path / "identity.json")
    assert token is not None
    store.remember(server.url, token)
    app = TulipsApp(Plan(name="Ada", url=server.url), identity=store, reveal_delay=0)
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: app.follow.match_id == joined.match, what="her seat")
        await until(
            pilot,
            lambda: any("into the secret festival" in line.plain for line in app.follow.log),
            what="the record in the log",
        )
        log = [line.plain for line in app.follow.log]
        assert log[0].startswith("— earlier in this match")
        mine = next(line for line in log if line.startswith("You put"))
        # her own secret card: the record as her seat saw it (R25)
        assert f"and {card_text(opening.secret).plain} into the secret festival" in mine
        assert any(line.startswith("The festival opens with") for line in log)
        assert isinstance(app.screen, TableScreen)
