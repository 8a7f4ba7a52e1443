"""Issue 29 in the terminal client: servers called alike are distinct rows, and a
server picked from the LAN list is trusted only when the player says so.

The list is fed by a scripted LAN (no mDNS leaves any namespace here); the
servers picked are real TLS servers on 127.0.0.1, so the certificate checked
is a real one, over a real socket.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from client.discovery import ServerInfo
from client.trust import KnownServers
from client.tui.app import Plan, TulipsApp
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.servers import ServerListScreen
from client.tui.screens.trust import TrustScreen
from protocol.lan import fingerprint
from tests.client import fakes
from tests.client.driver import until
from tests.client.screens import screen_text

from .test_tls import tls_server
from .test_tui import Feed

IMPOSTOR_FP = fingerprint(b"the impostor's certificate")


def _announced(name: str, host: str, port: int, fp: str | None) -> ServerInfo:
    return ServerInfo(
        name=name,
        host=host,
        port=port,
        addresses=(host,),
        versions=(1,),
        tls=fp is not None,
        fingerprint=fp,
        open_seats=0,
        open_matches=0,
        matches=0,
        players=0,
    )


def _pairs(fp: str) -> str:
    return fp.removeprefix("SHA256:")[:11]


async def test_two_servers_called_alike_are_two_rows_told_apart() -> None:
    """Issue 29: "two servers with the same name are shown as two entries with their
    addresses" — and, after the name, the start of each one's own fingerprint, at the
    smallest terminal (80 columns); Enter on the second row picks that announcement,
    not the first one of that name."""
    real = _announced("Friday table", "192.0.2.7", 8765, fingerprint(b"the real one"))
    other = _announced("Friday table", "192.0.2.66", 8765, IMPOSTOR_FP)
    feed, session = Feed(), fakes.ScriptedSession()
    picked: list[str] = []

    def sessions(
        url: str, name: str, token: str | None, *, link: str | None = None
    ) -> fakes.ScriptedSession:
        picked.append(url)
        return session

    app = TulipsApp(Plan(name="Ada", discover=True), sessions=sessions, servers=feed)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ServerListScreen), what="the list")
        feed.push(real, other)
        await until(pilot, lambda: "192.0.2.66" in screen_text(app), what="both rows")
        text = screen_text(app)
        assert text.count("Friday table") == 2, text
        assert "wss://192.0.2.7:8765" in text and "wss://192.0.2.66:8765" in text
        assert real.fingerprint is not None
        assert _pairs(real.fingerprint) in text and _pairs(IMPOSTOR_FP) in text
        rows = [line for line in text.splitlines() if "Friday table" in line]
        assert [_pairs(IMPOSTOR_FP) in row for row in rows] == [False, True], rows
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
    assert picked == ["wss://192.0.2.66:8765"] and app.announced == IMPOSTOR_FP


async def _pick(pilot: Pilot[Any], feed: Feed, entries: list[ServerInfo], shown: str) -> None:
    """Once the server list is up, announce ``entries``, wait until ``shown``
    is on screen, and pick the row under the cursor (the first)."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, ServerListScreen), what="list")
    feed.push(*entries)
    await until(pilot, lambda: shown in screen_text(app), what="the rows")
    await pilot.press("enter")


async def test_a_discovered_server_asks_and_declining_leaves_known_servers_alone(
    tmp_path: Path,
) -> None:
    """Issue 29: "a fingerprint learned from mDNS is never trusted without the same
    prompt as a typed address". The server announced its own, true fingerprint;
    still the dialog asks (and says the announcement proves nothing); n connects to
    nothing and writes nothing."""
    known = KnownServers(tmp_path / "known_servers")
    known.remember("192.0.2.1:9", IMPOSTOR_FP)  # another server's line stays as it is
    before = known.path.read_bytes()
    async with tls_server(tmp_path / "data") as (server, url):
        assert server.tls is not None
        entry = _announced("Friday table", "127.0.0.1", server.port, server.tls.fingerprint)
        feed = Feed()
        app = TulipsApp(Plan(name="Ada", discover=True), known_servers=known, servers=feed)
        async with app.run_test(size=(100, 30)) as pilot:
            await _pick(pilot, feed, [entry], "Friday table")
            await until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the question")
            await until(pilot, lambda: "proves nothing" in screen_text(app), what="the hint")
            shown = screen_text(app)
            fp = server.tls.fingerprint
            assert fp[:54] in shown and fp[55:] in shown and url.removeprefix("wss://") in shown
            await pilot.press("n")
            await until(pilot, lambda: not app.is_running, what="the end")
    assert app.failure is not None and "was not trusted" in app.failure
    assert known.path.read_bytes() == before


async def test_accepting_a_discovered_server_stores_the_one_fingerprint_of_that_entry(
    tmp_path: Path,
) -> None:
    """Issue 29: y on the prompt for a picked server stores that server's address with
    the fingerprint its entry showed (its certificate's) — one line, nothing else."""
    known = KnownServers(tmp_path / "known_servers")
    async with tls_server(tmp_path / "data") as (server, url):
        assert server.tls is not None
        fp = server.tls.fingerprint
        decoy = _announced("Friday table", "192.0.2.66", 8765, IMPOSTOR_FP)
        entry = _announced("Friday table", "127.0.0.1", server.port, fp)
        feed = Feed()
        app = TulipsApp(Plan(name="Ada", discover=True), known_servers=known, servers=feed)
        async with app.run_test(size=(100, 30)) as pilot:
            await _pick(pilot, feed, [entry, decoy], "192.0.2.66")  # 127.0.0.1 sorts first
            await until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the question")
            await pilot.press("y")
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
    key = url.removeprefix("wss://")
    lines = [x for x in known.path.read_text().splitlines() if not x.startswith("#")]
    assert lines == [f"{key} {fp}"]


async def test_a_discovered_server_with_another_certificate_is_refused_unasked(
    tmp_path: Path,
) -> None:
    """Issue 29, "never merge one announcement's address with another's fingerprint":
    an entry naming a fingerprint the server at its address does not have is not that
    server. The app does not connect, asks nothing, stores nothing, and says why."""
    known = KnownServers(tmp_path / "known_servers")
    async with tls_server(tmp_path / "data") as (server, url):
        entry = _announced("Friday table", "127.0.0.1", server.port, IMPOSTOR_FP)
        feed = Feed()
        app = TulipsApp(Plan(name="Ada", discover=True), known_servers=known, servers=feed)
        async with app.run_test(size=(100, 30)) as pilot:
            await _pick(pilot, feed, [entry], "Friday table")
            await until(
                pilot,
                lambda: not app.is_running or isinstance(app.screen, TrustScreen),
                what="the refusal",
            )
            assert not app.is_running, "it asked about a certificate its entry did not name"
    assert app.failure is not None
    assert IMPOSTOR_FP in app.failure and "announcement" in app.failure, app.failure
    assert url.removeprefix("wss://") in app.failure
    assert not known.path.exists()
