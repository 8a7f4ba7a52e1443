"""``tulips-server --web`` without a browser: each tab its own player and token,
a reloaded tab back in its seat, a limit on tabs with a clear refusal, and no
client process left behind. Tabs are :class:`server.lab.web.probe.Tab`: the same
WebSocket traffic as ``textual.js``, each running a real ``tulips connect``."""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
from pathlib import Path

import aiohttp
import pytest

from server.lab.web.probe import Tab, screen_text
from server.web import WebError, WebFront, loopback_url
from server.web.front import textual_js
from tests.server.helpers import get

from .helpers import Front, alive, front, session_pids, wait_until


def tokens(f: Front) -> dict[Path, str]:
    """The resume token in each of the front's token files."""
    assert f.web.token_dir is not None
    found = {}
    for path in f.web.token_dir.glob("*/identity.json"):
        token = json.loads(path.read_text())["servers"].get(f.web.game_url)
        if token:
            found[path] = token
    return found


async def fetch(url: str) -> tuple[int, str]:
    """GET ``url``: status and body."""
    status, _headers, body = await asyncio.to_thread(get, url)
    return status, body.decode(errors="replace")


async def create_match_with_bots(tab: Tab) -> None:
    """From the lobby: n, Enter (four seats, three bots), and wait for the table."""
    mark = tab.mark()
    await tab.press("n")
    await tab.wait_for("Create", since=mark)
    mark = tab.mark()
    await tab.press("\r")
    await tab.wait_for("Festival", since=mark)


async def test_each_tab_is_its_own_player_with_its_own_token() -> None:
    """Two tabs: two client processes, two token files, two players with their names."""
    async with front() as f, Tab(f.url, "Ana") as ana, Tab(f.url, "Ben / Zoë") as ben:
        await ana.wait_for("playing as Ana")
        await ben.wait_for("playing as Ben / Zoë")
        await wait_until(lambda: len(tokens(f)) == 2)
        found = tokens(f)
        assert len(set(found.values())) == 2
        players = [f.server.lobby.players.by_token(token) for token in found.values()]
        assert {player.name for player in players if player is not None} == {"Ana", "Ben / Zoë"}
        assert len(set(session_pids(f.web))) == 2


async def test_a_reloaded_tab_is_back_in_its_seat() -> None:
    """The same key again (the page keeps it in sessionStorage): the same player,
    straight back at the table, and the old process is gone."""
    async with front() as f:
        key = secrets.token_hex(16)
        async with Tab(f.url, "Ana", key=key) as tab:
            await tab.wait_for("Matches")
            await create_match_with_bots(tab)
            (first,) = session_pids(f.web)
            (token,) = tokens(f).values()
        async with Tab(f.url, "Ana", key=key) as again:
            await again.wait_for("Festival")
            assert "Matches" not in again.text  # not via the lobby: the server seated us
            assert not alive(first)
            assert list(tokens(f).values()) == [token]
            player = f.server.lobby.players.by_token(token)
            (match,) = f.server.lobby.matches.values()
            assert player is not None and match.core.seat_of(player.id) == 0


async def test_another_key_is_another_player() -> None:
    """A new tab (a new key) never gets an earlier tab's token."""
    async with front() as f:
        async with Tab(f.url, "Ana") as tab:
            await tab.wait_for("Matches")
            await wait_until(lambda: len(tokens(f)) == 1)
        async with Tab(f.url, "Ana") as other:
            await other.wait_for("Matches")
            await wait_until(lambda: len(tokens(f)) == 2)


async def test_too_many_tabs_are_refused_clearly_and_start_nothing() -> None:
    """With --web-max-sessions 1, a second tab gets 503 and a page that says why."""
    async with front(max_sessions=1) as f:
        async with Tab(f.url, "Ana") as tab:
            await tab.wait_for("Matches")
            status, page = await fetch(f.url + "/")
            assert status == 503 and "Every browser seat is taken (1 of 1)" in page
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                async with Tab(f.url, "Ben"):
                    pass
            assert refused.value.status == 503
            assert len(f.web.sessions) == 1
            status, body = await fetch(f.url + "/status")
            assert json.loads(body) == {"sessions": 1, "max_sessions": 1, "per_address": 4}
        await wait_until(lambda: not f.web.sessions)
        status, page = await fetch(f.url + "/")
        assert status == 200 and "0 of 1 browser seats in use" in page


async def test_stopping_ends_every_client_process_and_deletes_the_tokens() -> None:
    """WebFront.stop(): no client process survives, the tabs are closed, the token
    files are gone."""
    async with front() as f, Tab(f.url, "Ana") as ana, Tab(f.url, "Ben") as ben:
        await ana.wait_for("Matches")
        await ben.wait_for("Matches")
        pids, token_dir = session_pids(f.web), f.web.token_dir
        assert len(pids) == 2 and all(alive(pid) for pid in pids)
        await f.web.stop()
        assert not any(alive(pid) for pid in pids)
        assert token_dir is not None and not token_dir.exists()
        await wait_until(lambda: ana.closed.is_set() and ben.closed.is_set(), 10)


async def test_a_client_that_quits_closes_its_tab() -> None:
    """q in the client ends its process and the tab's socket, and frees the seat."""
    async with front() as f, Tab(f.url, "Ana") as tab:
        await tab.wait_for("Matches")
        (pid,) = session_pids(f.web)
        await tab.press("q")
        async with asyncio.timeout(15):
            await tab.closed.wait()
        await wait_until(lambda: not f.web.sessions and not alive(pid))


@pytest.mark.parametrize(
    "path",
    ["/ws/short/Ana", "/ws/" + "a" * 32 + "/%20", "/ws/" + "a" * 32 + "/" + "n" * 41],
    ids=["short key", "blank name", "long name"],
)
async def test_a_bad_key_or_name_is_refused(path: str) -> None:
    """400 and no process for a key or name the page would never send."""
    async with front() as f:
        status, _ = await fetch(f.url + path)
        assert status == 400 and not f.web.sessions


async def test_a_page_from_elsewhere_cannot_start_a_player() -> None:
    """A WebSocket whose Origin is another site is refused (403), no process started."""
    async with front() as f:
        tab = Tab(f.url, "Ana")
        async with aiohttp.ClientSession() as http:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(tab.url, origin="http://elsewhere.example")
            assert refused.value.status == 403
            async with http.ws_connect(tab.url, origin=f.url) as socket_:
                await socket_.close()  # the page's own origin is welcome
        await wait_until(lambda: not f.web.sessions)


async def test_everything_the_page_loads_comes_from_this_server() -> None:
    """The pages name no outside address; textual.js and its font are served here."""
    async with front() as f:
        for path in ("/", "/play"):
            status, page = await fetch(f.url + path)
            assert status == 200 and "https://" not in page and "http://" not in page
        for asset in ("/static/js/textual.js", "/static/fonts/RobotoMono-VariableFont_wght.ttf"):
            status, _ = await fetch(f.url + asset)
            assert status == 200


async def test_the_page_gets_its_terminal_from_textual_js() -> None:
    """The textual.js served hands each page its terminal (``element.textual``),
    which a phone's page needs to change the font size as the phone turns; the
    page is laid out at the device's width."""
    script, changed = textual_js()
    assert changed and script.count(b"e.textual=") == 1
    async with front() as f:
        status, body = await fetch(f.url + "/static/js/textual.js")
        assert status == 200 and body.encode() == script
        status, page = await fetch(f.url + "/play")
        assert status == 200
        assert '<meta name="viewport" content="width=device-width' in page
        assert 'inputmode", "none"' in page


async def test_a_taken_port_is_a_clear_error() -> None:
    """Starting on a port something listens on says which port and why."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        web = WebFront(host="127.0.0.1", port=port, game_port=1)
        with pytest.raises(WebError) as error:
            await web.start()
        assert str(error.value) == (
            f"cannot serve browsers on 127.0.0.1:{port}: Address already in use"
        )
        assert web.token_dir is None


def test_browser_sessions_reach_the_game_server_over_loopback() -> None:
    """A server bound to every interface is reached at 127.0.0.1 (or ::1)."""
    assert loopback_url("0.0.0.0", 5) == "ws://127.0.0.1:5"
    assert loopback_url("::", 5) == "ws://[::1]:5"
    assert loopback_url("192.168.1.20", 5) == "ws://192.168.1.20:5"


def test_screen_text_drops_escape_sequences() -> None:
    """Colours, cursor moves and titles go; the words stay."""
    data = b"\x1b[?1049h\x1b[1;1H\x1b[38;2;255;0;0mMat\x1b[0mches\x1b]0;title\x07!"
    assert screen_text(data) == "Matches!"


async def test_with_tls_the_page_is_https_and_the_tab_plays_over_pinned_wss(
    tmp_path: Path,
) -> None:
    """`--tls --web`: pages over https, and each tab's client reaches the game over
    wss:// pinned to the server's fingerprint, so nothing crosses the LAN in clear."""
    async with front(tls_dir=tmp_path) as f, Tab(f.url, "Ana") as ana:
        assert f.url.startswith("https://") and f.web.game_url.startswith("wss://")
        assert all(url.startswith("https://") for url in f.web.share_urls())
        await ana.wait_for("playing as Ana")
        (pid,) = session_pids(f.web)
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            argv = cmdline.read().split(b"\0")
        assert f.web.fingerprint is not None
        assert b"--fingerprint=" + f.web.fingerprint.encode() in argv
        await wait_until(lambda: len(f.server.lobby.players) == 1)
