"""Issue 30, "a spectator's turn timer after a server restart": a spectator
is not put back after a lost connection (PROTOCOL.md, resuming), so the app
watches again, and a snapshot drops every timer from before it. Against a
real server, stopped and started again on the same data directory and port."""

from __future__ import annotations

from pathlib import Path

from client.sdk import connect
from client.tui.app import Plan, TulipsApp
from client.tui.screens.lobby import LobbyScreen
from server.app import TulipsServer
from server.config import ServerConfig

from .driver import until
from .screens import screen_text

TIMER = 30.0


def _config(data: Path, port: int) -> ServerConfig:
    return ServerConfig(host="127.0.0.1", port=port, data_dir=data, bot_delay=0, ping_interval=None)


async def test_a_spectator_after_a_restart_counts_the_timer_that_runs_now(
    tmp_path: Path,
) -> None:
    """Bea watches Ada's timed match; the server restarts while Ada's timer
    runs. Bea's app watches again and shows the timer the server runs now
    (from the full time), not the old one counting on to 0."""
    data = tmp_path / "data"
    first = TulipsServer(_config(data, 0))
    await first.start()
    port = first.port
    url = f"ws://127.0.0.1:{port}"
    ada = await connect(url, name="Ada", reconnect=False)
    joined = await ada.create_match(
        name="Timed", seats=2, bots=[(1, "easy")], first_seat=0, turn_timer=TIMER
    )
    await ada.start()
    now = [1000.0]  # Bea's clock, moved by hand: the server's runs as it will
    app = TulipsApp(Plan(name="Bea", url=url), reveal_delay=0, clock=lambda: now[0])
    second: TulipsServer | None = None
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await until(pilot, lambda: "Timed" in screen_text(app), what="the match")
            await pilot.press("w")
            await until(pilot, lambda: 0 in app.follow.signals.seconds(), what="Ada's timer")
            now[0] += 3.0  # on Bea's clock the old timer is 3 s down (and goes on)
            await ada.close()
            await first.stop()
            await until(pilot, lambda: not app.online, what="the lost connection")
            second = TulipsServer(_config(data, port))
            await second.start()
            await until(pilot, lambda: app.online, what="back")
            # watching again, Bea is told the timer the restarted server runs,
            # from the full time (the old one was 3 s down, and going on)
            await until(
                pilot,
                lambda: app.follow.signals.seconds().get(0, 0) >= TIMER - 1.5,
                timeout=10,
                what="the new timer",
            )
            assert app.follow.match_id == joined.match and app.follow.state is not None
    finally:
        await ada.close()
        await first.stop()
        if second is not None:
            await second.stop()
