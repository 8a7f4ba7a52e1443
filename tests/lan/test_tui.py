"""The terminal client on the LAN: the live list of servers (fed by a scripted
feed here: no test sends mDNS outside its own namespaces), and trust on first
use against a real TLS server on 127.0.0.1 — asked once, remembered across
runs, and a changed certificate refused with how to reset it."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from client.discovery import ServerInfo
from client.trust import KnownServers
from client.tui import i18n
from client.tui.app import Plan, TulipsApp
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.servers import ServerListScreen
from client.tui.screens.trust import TrustScreen
from protocol.lan import fingerprint
from server.lan import tls
from tests.client import fakes
from tests.client.driver import until
from tests.client.screens import screen_text

from .test_tls import tls_server

ROOT = Path(__file__).resolve().parents[2]
FP = fingerprint(b"kitchen's certificate")


def _server(name: str, host: str, *, players: int = 0, tls: bool = False) -> ServerInfo:
    return ServerInfo(
        name=name,
        host=host,
        port=8765,
        addresses=(host,),
        versions=(1,),
        tls=tls,
        fingerprint=FP if tls else None,
        open_seats=2,
        open_matches=1,
        matches=1,
        players=players,
    )


KITCHEN = _server("Gift of Tulips on kitchen", "192.0.2.7", players=3, tls=True)
ATTIC = _server("Attic", "192.0.2.9")


class Feed:
    """A scripted LAN: yields what ``push`` is given, records the interfaces asked for."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[ServerInfo, ...]] = asyncio.Queue()
        self.interfaces: list[Sequence[str]] = []

    def push(self, *servers: ServerInfo) -> None:
        """The LAN now holds these servers."""
        self.queue.put_nowait(servers)

    async def __call__(self, interfaces: Sequence[str]) -> AsyncIterator[tuple[ServerInfo, ...]]:
        self.interfaces.append(interfaces)
        while True:
            yield await self.queue.get()


async def test_the_server_list_is_live_and_enter_connects_to_the_one_picked() -> None:
    """Servers appear as they are announced; Enter connects to the one under the cursor.
    The fingerprint it announced is kept as a hint for the trust prompt, never pinned
    (issue 29: a discovered fingerprint is not trusted without asking)."""
    feed, session = Feed(), fakes.ScriptedSession()
    urls: list[str] = []

    def sessions(
        url: str, name: str, token: str | None, *, link: str | None = None
    ) -> fakes.ScriptedSession:
        urls.append(url)
        return session

    plan = Plan(name="Ada", discover=True, interfaces=("eth0",))
    app = TulipsApp(plan, sessions=sessions, servers=feed)
    async with app.run_test(size=(100, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ServerListScreen), what="the list")
        assert "Looking for servers" in screen_text(app)
        feed.push(ATTIC)
        await until(pilot, lambda: "Attic" in screen_text(app), what="the first server")
        feed.push(ATTIC, KITCHEN)
        await until(pilot, lambda: "kitchen" in screen_text(app), what="the second server")
        text = screen_text(app)
        assert "wss://192.0.2.7:8765" in text and "ws://192.0.2.9:8765" in text
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
    assert urls == ["wss://192.0.2.7:8765"] and app.fingerprint is None and app.announced == FP
    assert feed.interfaces == [("eth0",)]


async def test_quitting_the_server_list_connects_nowhere() -> None:
    """q on the list: the app ends without a connection or an error."""
    feed = Feed()
    app = TulipsApp(
        Plan(name="Ada", discover=True),
        sessions=fakes.factory(fakes.ScriptedSession()),
        servers=feed,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ServerListScreen), what="the list")
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, what="the end")
    assert app.failure is None and app.return_code == 0


def _untranslated(text: str, data: Sequence[str]) -> list[str]:
    for item in sorted(data, key=len, reverse=True):
        text = text.replace(item, "")
    return [line.strip() for line in text.splitlines() if re.search("[A-Za-z]", line)]


async def test_the_server_list_and_the_trust_dialog_pass_through_the_catalogue() -> None:
    """Under the pseudo-language only names, addresses and fingerprints stay plain."""
    i18n.set_language("en", pseudo=True)
    feed = Feed()
    app = TulipsApp(
        Plan(name="Ada", discover=True),
        sessions=fakes.factory(fakes.ScriptedSession()),
        servers=feed,
    )
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ServerListScreen), what="the list")
        feed.push(KITCHEN, ATTIC)
        await until(pilot, lambda: "Attic" in screen_text(app), what="the servers")
        data = ("Gift of Tulips on kitchen", "Attic", "wss://192.0.2.7:8765", "ws://192.0.2.9:8765")
        assert not _untranslated(screen_text(app), data), screen_text(app)
        app.push_screen(TrustScreen("192.0.2.7:8765", FP))
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the dialog")
        await pilot.pause()
        halves = ("SHA256:" + FP[7:54], FP[55:])
        assert not _untranslated(screen_text(app), (*data, *halves)), screen_text(app)


async def test_trust_on_first_use_in_the_app(tmp_path: Path) -> None:
    """First run: the fingerprint is shown and y trusts it; next run: straight to the
    lobby; after the server makes a new certificate: refused, with how to reset it."""
    known = KnownServers(tmp_path / "known_servers")
    data = tmp_path / "data"
    async with tls_server(data) as (server, url):
        assert server.tls is not None
        first = server.tls.fingerprint
        app = TulipsApp(Plan(name="Ada", url=url), known_servers=known)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the question")
            shown = screen_text(app)
            assert first[:54] in shown and first[55:] in shown  # in two lines of 16 pairs
            assert url.removeprefix("wss://") in shown
            await pilot.press("y")
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
        assert known.get(url.removeprefix("wss://")) == first
        again = TulipsApp(Plan(name="Ada", url=url), known_servers=KnownServers(known.path))
        async with again.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: isinstance(again.screen, LobbyScreen), what="the lobby")
        port = server.port
    for stale in (data / tls.CERT_FILE, data / tls.KEY_FILE):
        stale.unlink()
    async with tls_server(data, port) as (server, url):
        changed = TulipsApp(Plan(name="Ada", url=url), known_servers=KnownServers(known.path))
        async with changed.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: not changed.is_running, what="the refusal")
    assert changed.failure is not None
    assert "HAS CHANGED" in changed.failure and first in changed.failure
    assert (
        f"tulips forget 127.0.0.1:{port}" in changed.failure and str(known.path) in changed.failure
    )


async def test_declining_a_new_certificate_does_not_connect(tmp_path: Path) -> None:
    """n (the default answer) leaves: nothing remembered, and the app says why."""
    known = KnownServers(tmp_path / "known_servers")
    async with tls_server(tmp_path / "data") as (_, url):
        app = TulipsApp(Plan(name="Ada", url=url), known_servers=known)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the question")
            await pilot.press("n")
            await until(pilot, lambda: not app.is_running, what="the end")
    assert app.failure is not None and "was not trusted" in app.failure
    assert not known.path.exists()


def _tulips(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(config), "LANG": "C"}
    env.pop("LC_ALL", None)
    return subprocess.run(
        [sys.executable, "-m", "client.tui.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_tulips_forget_drops_the_line_from_the_users_known_servers(tmp_path: Path) -> None:
    """The file in the user's config directory (XDG_CONFIG_HOME here); a second forget
    says there is nothing to forget."""
    path = tmp_path / "gift-of-tulips" / "known_servers"
    KnownServers(path).remember("10.1.2.3:8765", FP)
    KnownServers(path).remember("kitchen:9000", FP)
    done = _tulips("forget", "10.1.2.3:8765", config=tmp_path)
    assert done.returncode == 0 and "forgot the certificate of 10.1.2.3:8765" in done.stdout
    assert KnownServers(path).get("10.1.2.3:8765") is None
    assert KnownServers(path).get("kitchen:9000") == FP
    again = _tulips("forget", "wss://10.1.2.3:8765", config=tmp_path)
    assert again.returncode == 1 and "no certificate of 10.1.2.3:8765" in again.stderr


def test_a_bad_fingerprint_or_timeout_is_one_line_and_status_2(tmp_path: Path) -> None:
    """argparse refuses them before anything starts."""
    bad = _tulips("connect", "wss://127.0.0.1:1", "--fingerprint", "SHA256:12", config=tmp_path)
    assert bad.returncode == 2 and "not a fingerprint" in bad.stderr
    slow = _tulips("servers", "--timeout", "-1", config=tmp_path)
    assert slow.returncode == 2 and "timeout" in slow.stderr
