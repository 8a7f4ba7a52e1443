"""Issue 29's attacks on the browser front's tabs, made for real: WebSockets
over 127.0.0.1 (other visitors from other loopback addresses, 127.0.0.2 and
up), real client processes, real token files."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from websockets.asyncio.client import connect as ws_connect

from protocol.tabs import TAB_PASS_ENV, TAB_PASS_HEADER
from server.lab.web.probe import Tab
from server.web.session import can_cap_memory
from tests.server.helpers import get

from .helpers import Front, alive, front, session_pids, wait_until


def client_processes() -> list[int]:
    """This process's children that run a tab's client (``client.tui``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == os.getpid() and b"client.tui" in cmdline and fields[0] != "Z":
            found.append(int(entry.name))
    return found


async def count_while(task: asyncio.Future[Any], peak: list[int]) -> None:
    """Record the most client processes alive at once until ``task`` is done."""
    while not task.done():
        peak[0] = max(peak[0], len(client_processes()))
        await asyncio.sleep(0.02)


def token_of(f: Front, key: str) -> str | None:
    """The resume token in ``key``'s token file, if there is one."""
    from server.web.tokens import TokenShelf

    assert f.web.token_dir is not None
    path = f.web.token_dir / TokenShelf.digest(key) / "identity.json"
    try:
        token = json.loads(path.read_text())["servers"].get(f.web.game_url)
    except (OSError, ValueError, KeyError):
        return None
    return str(token) if token else None


async def open_socket(
    http: aiohttp.ClientSession, url: str
) -> aiohttp.ClientWebSocketResponse | int:
    """A tab's WebSocket, or the HTTP status it was refused with."""
    try:
        return await http.ws_connect(url)
    except aiohttp.WSServerHandshakeError as refused:
        return refused.status


@pytest.mark.slow
async def test_one_key_never_runs_two_processes_nor_passes_the_cap() -> None:
    """Issue 29, "one tab key past the cap": twelve concurrent WebSockets of one
    key, with --web-max-sessions 2, run one client process at a time and end
    with one; waves of them never pile up, nor pass the cap with other keys."""
    async with front(max_sessions=2, per_address=2) as f, aiohttp.ClientSession() as http:
        key = secrets.token_hex(16)
        url = Tab(f.url, "Ana", key=key).url
        peak = [0]
        sockets: list[aiohttp.ClientWebSocketResponse | int] = []
        for _wave in range(2):
            wave: asyncio.Future[list[aiohttp.ClientWebSocketResponse | int]]
            wave = asyncio.gather(*(open_socket(http, url) for _ in range(12)))
            watch = asyncio.ensure_future(count_while(wave, peak))
            sockets += await wave
            await watch
            await wait_until(lambda: len(client_processes()) <= 1, 15)
        other = await open_socket(http, Tab(f.url, "Ben").url)
        third = await open_socket(http, Tab(f.url, "Cy").url)
        assert third == 503
        await wait_until(lambda: len(client_processes()) == 2, 15)
        _, _, body = await asyncio.to_thread(get, f.url + "/status")
        assert json.loads(body)["sessions"] == 2
        assert peak[0] <= 2, f"{peak[0]} client processes at once"
        assert len(session_pids(f.web)) == 2
        for socket_ in [*sockets, other]:
            if not isinstance(socket_, int):
                await socket_.close()
        await wait_until(lambda: not client_processes(), 15)


async def test_one_visitor_gets_its_share_and_others_still_play() -> None:
    """Issue 29, "one visitor holds every browser seat": with a share of 2, the
    third tab of 127.0.0.1 is refused (503, saying why), and another visitor
    still gets a seat; the welcome page tells the first visitor too."""
    async with (
        front(max_sessions=8, per_address=2) as f,
        Tab(f.url, "A1") as a1,
        Tab(f.url, "A2") as a2,
    ):
        await a1.wait_for("Matches")
        await a2.wait_for("Matches")
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            async with Tab(f.url, "A3"):
                pass
        assert refused.value.status == 503
        status, _, page = await asyncio.to_thread(get, f.url + "/")
        assert status == 503 and b"share of the browser seats (2)" in page
        async with Tab(f.url, "B1", source="127.0.0.2") as b1:
            await b1.wait_for("playing as B1")
            assert f.web.seats.by_address() == {"127.0.0.1": 2, "127.0.0.2": 1}


async def test_an_idle_tab_is_closed_and_its_reload_resumes() -> None:
    """Issue 29, "idle tabs are never closed": a tab that sends nothing for the
    idle timeout is closed and its process ended; reloading it is the same
    player."""
    async with front(idle_timeout=3.0) as f:
        key = secrets.token_hex(16)
        async with Tab(f.url, "Ana", key=key) as tab:
            await tab.wait_for("Matches")
            (pid,) = session_pids(f.web)
            token = token_of(f, key)
            assert token is not None
            async with asyncio.timeout(10):
                await tab.closed.wait()
            await wait_until(lambda: not alive(pid) and not f.web.seats, 10)
        async with Tab(f.url, "Ana", key=key) as again:
            await again.wait_for("Matches")
            assert token_of(f, key) == token


@pytest.mark.slow
async def test_a_disconnected_players_token_survives_a_stream_of_other_tabs() -> None:
    """Issue 29, "a reload can be broken by others": a visitor at 127.0.0.3
    opening and closing many tabs with fresh keys does not push out the key of
    a player at 127.0.0.2, whose reload is the same player."""
    async with front(max_sessions=8, per_address=1, keys_per_address=2) as f:
        key = secrets.token_hex(16)
        async with Tab(f.url, "Ana", key=key, source="127.0.0.2") as tab:
            await tab.wait_for("Matches")
            await wait_until(lambda: token_of(f, key) is not None)
        token = token_of(f, key)
        for n in range(5):  # more than the 2 keys an address keeps
            async with Tab(f.url, f"Mal{n}", source="127.0.0.3") as other:
                await other.wait_for("Matches")
            await wait_until(lambda: len(f.web.seats) == 0, 10)
        assert f.web.token_dir is not None
        assert len(list(f.web.token_dir.glob("*/identity.json"))) == 1 + 2
        async with Tab(f.url, "Ana", key=key, source="127.0.0.2") as again:
            await again.wait_for("Matches")
            assert token_of(f, key) == token
            player = f.server.lobby.players.by_token(token or "")
            assert player is not None and player.name == "Ana"


async def test_each_tab_counts_as_its_own_browsers_address() -> None:
    """Issue 29, "all tabs share one address": with per-address limits on
    loopback and one connection per address, two visitors' tabs both play;
    the game server counts each as its browser's address, not 127.0.0.1."""
    config = {"limit_loopback": True, "max_connections_per_address": 1}
    async with front(config=config) as f:
        async with (
            Tab(f.url, "Ana", source="127.0.0.2") as ana,
            Tab(f.url, "Ben", source="127.0.0.3") as ben,
        ):
            await ana.wait_for("playing as Ana")
            await ben.wait_for("playing as Ben")
            await wait_until(lambda: len(f.server.peers) == 2)
            assert {peer.address for peer in f.server.peers} == {"127.0.0.2", "127.0.0.3"}
            assert dict(f.server.addresses) == {"127.0.0.2": 1, "127.0.0.3": 1}
            assert len(f.web.tab_addresses) == 2
        await wait_until(lambda: not f.web.tab_addresses)


async def test_a_forged_or_dead_pass_counts_as_its_own_address() -> None:
    """A client that sends a pass the front did not issue (or no longer holds)
    is counted at its own address: nothing a client sends makes it another."""
    config = {"limit_loopback": True, "max_connections_per_address": 1}
    async with front(config=config) as f:
        url = f"ws://127.0.0.1:{f.server.port}"
        headers = [(TAB_PASS_HEADER, "forged")]
        async with ws_connect(url, additional_headers=headers):
            await wait_until(lambda: dict(f.server.addresses) == {"127.0.0.1": 1})
            with pytest.raises(Exception, match="429"):
                async with ws_connect(url, additional_headers=[(TAB_PASS_HEADER, "other")]):
                    pass


def test_a_pass_is_believed_only_from_loopback_and_once_per_connection() -> None:
    """A live pass shown by a connection from another machine is not believed
    (the game server checks the raw peer address first)."""
    from websockets.datastructures import Headers

    from server.app import TulipsServer
    from server.config import ServerConfig

    server = TulipsServer(ServerConfig(host="127.0.0.1", port=0))
    server.tab_addresses["live"] = ("192.168.1.7", "192.168.1.2")

    class Stub:
        def __init__(self, remote: str) -> None:
            self.remote_address = (remote, 40000)
            self.local_address = ("127.0.0.1", 8765)
            self.request = type("R", (), {"headers": Headers([(TAB_PASS_HEADER, "live")])})()

    assert server.address_of(Stub("127.0.0.1")) == "192.168.1.7"  # type: ignore[arg-type]
    assert server.address_of(Stub("192.168.1.9")) == "192.168.1.9"  # type: ignore[arg-type]

    # decided once per connection: the tab's pass going meanwhile changes nothing
    tab = Stub("127.0.0.1")
    assert server.address_of(tab) == "192.168.1.7"  # type: ignore[arg-type]
    del server.tab_addresses["live"]
    assert server.address_of(tab) == "192.168.1.7"  # type: ignore[arg-type]
    assert server.address_of(Stub("127.0.0.1")) == "127.0.0.1"  # type: ignore[arg-type]


async def test_the_pass_is_in_the_environment_not_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tab's pass never shows in ``ps``: it is in its client's environment,
    which holds nothing else of the server's but what a program needs to run
    (the operator's secrets stay the server's)."""
    monkeypatch.setenv("TULIPS_REDIS_PASSWORD", "hunter2")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-for-tabs")
    monkeypatch.setenv(TAB_PASS_ENV, "a-pass-of-the-server-itself")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    async with front() as f, Tab(f.url, "Ana") as tab:
        await tab.wait_for("Matches")
        (pid,) = session_pids(f.web)
        (tab_pass,) = f.web.tab_addresses
        assert tab_pass.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert f"{TAB_PASS_ENV}={tab_pass}".encode() in environ
        names = {entry.partition(b"=")[0].decode() for entry in environ if entry}
        assert {"TULIPS_REDIS_PASSWORD", "AWS_SECRET_ACCESS_KEY"}.isdisjoint(names)
        assert b"hunter2" not in b"\0".join(environ)
        assert b"LC_ALL=C.UTF-8" in environ and "PATH" in names and "HOME" in names


async def test_no_deflate_and_a_bounded_message() -> None:
    """Issue 29, "one tab can burn a core": the web port offers no
    permessage-deflate, and a message past 16 KiB closes the tab (1009)."""
    async with front() as f, aiohttp.ClientSession() as http:
        socket_ = await http.ws_connect(Tab(f.url, "Ana").url, compress=15)
        assert socket_.compress == 0
        assert "Sec-WebSocket-Extensions" not in socket_._response.headers
        await socket_.send_str(json.dumps(["stdin", "x" * 20_000]))
        message = await asyncio.wait_for(socket_.receive(), 10)
        while message.type == aiohttp.WSMsgType.BINARY:
            message = await asyncio.wait_for(socket_.receive(), 10)
        assert socket_.close_code == 1009 or message.data == 1009
        await socket_.close()
        await wait_until(lambda: not client_processes(), 15)


async def test_pings_spend_from_the_input_budget() -> None:
    """Issue 29, "one tab can burn a core": a tab's pings are answered within
    its input budget (each costs MIN_CHARGE bytes), not as fast as it sends."""
    from server.web.inputs import BURST, MIN_CHARGE, RATE

    async with front() as f, aiohttp.ClientSession() as http:
        socket_ = await http.ws_connect(Tab(f.url, "Ana").url, autoping=False)
        first = await asyncio.wait_for(socket_.receive(), 20)
        assert first.type == aiohttp.WSMsgType.BINARY  # the client is drawing
        loop = asyncio.get_running_loop()

        async def ping_on() -> None:
            for _ in range(800):  # past what the budget answers in the time measured
                await socket_.ping(b"p")

        pinger = asyncio.ensure_future(ping_on())
        started, pongs = loop.time(), 0
        while loop.time() - started < 1.5:
            with contextlib.suppress(TimeoutError):
                message = await asyncio.wait_for(socket_.receive(), 0.2)
                pongs += message.type == aiohttp.WSMsgType.PONG
        elapsed = loop.time() - started
        assert 0 < pongs <= (BURST + elapsed * RATE) / MIN_CHARGE + 16
        pinger.cancel()
        await asyncio.gather(pinger, return_exceptions=True)
        await f.web.stop()  # the front closes the tab it is not reading (quicker)
        await socket_.close()


async def test_a_key_flood_is_read_at_the_budgets_pace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: 9 MiB of keystrokes into one tab cost its client a core. Keys
    past the burst are read at RATE bytes a second: what reaches the client
    in two seconds is bounded, however fast the tab sends."""
    from server.web.inputs import BURST, MAX_MESSAGE_BYTES, RATE
    from server.web.session import BrowserSession

    passed = [0]
    original = BrowserSession.send_bytes

    async def counting(self: BrowserSession, data: bytes) -> bool:
        passed[0] += len(data)
        return await original(self, data)

    monkeypatch.setattr(BrowserSession, "send_bytes", counting)
    assert MAX_MESSAGE_BYTES >= 8000
    async with front() as f, Tab(f.url, "Ana") as tab:
        await tab.wait_for("Matches")
        started = asyncio.get_running_loop().time()
        sender = asyncio.ensure_future(_flood(tab, 8000, 1200))  # 9.6 MB
        await asyncio.sleep(2.0)
        elapsed = asyncio.get_running_loop().time() - started
        assert passed[0] <= BURST + elapsed * RATE + 8000
        assert not sender.done()  # held back by TCP, not dropped
        sender.cancel()
        await f.web.stop()  # the front closes the tab it is not reading (quicker)


async def _flood(tab: Tab, size: int, count: int) -> None:
    for _ in range(count):
        await tab.press("\x1b[A" * (size // 8))  # 8 bytes of JSON each


async def test_resizes_are_bounded_and_coalesced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: a resize to 1000x1000 is drawn at most 400x150, and fifty
    resizes at once reach the client as a few, the latest last."""
    from server.web.session import BrowserSession

    sizes: list[tuple[int, int]] = []
    original = BrowserSession.set_terminal_size

    async def recording(self: BrowserSession, width: int, height: int) -> None:
        sizes.append((width, height))
        await original(self, width, height)

    monkeypatch.setattr(BrowserSession, "set_terminal_size", recording)
    async with front() as f, Tab(f.url, "Ana", width=1000, height=1000) as tab:
        await tab.wait_for("Matches")
        await wait_until(lambda: sizes == [(400, 150)])
        for width in range(60, 110):
            await tab._send(["resize", {"width": width, "height": 30}])
        await wait_until(lambda: sizes[-1:] == [(109, 30)])
        assert len(sizes) <= 4


@pytest.mark.skipif(not can_cap_memory(), reason="needs util-linux's prlimit")
async def test_each_tabs_client_has_a_memory_cap() -> None:
    """Issue 29: a tab's client process is capped (RLIMIT_AS), at the front's
    tab_memory."""
    async with front(tab_memory=300 * 2**20) as f, Tab(f.url, "Ana") as tab:
        await tab.wait_for("Matches")
        (pid,) = session_pids(f.web)
        limits = Path(f"/proc/{pid}/limits").read_text()
        (line,) = [row for row in limits.splitlines() if row.startswith("Max address space")]
        assert line.split()[3:5] == [str(300 * 2**20)] * 2


async def test_a_name_starting_with_a_dash_plays() -> None:
    """Issue 29: a name starting with ``-`` is a name, not an option."""
    async with front() as f, Tab(f.url, "-rf --help") as tab:
        await tab.wait_for("playing as -rf --help")


async def test_dns_rebinding_is_refused() -> None:
    """Issue 29: ``Host: evil.example`` with ``Origin: http://evil.example`` is
    refused (403), as the game port refuses it; the server's own names pass."""
    async with front() as f, aiohttp.ClientSession() as http:
        url = Tab(f.url, "Ana").url
        evil = f"http://evil.example:{f.web.port}"
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(url, origin=evil, headers={"Host": f"evil.example:{f.web.port}"})
        assert refused.value.status == 403
        for origin in (f"http://localhost:{f.web.port}", f"http://127.0.0.1:{f.web.port}"):
            socket_ = await http.ws_connect(url, origin=origin)
            await socket_.close()
        await wait_until(lambda: not f.web.sessions and not client_processes(), 15)


async def test_allow_origin_lets_a_named_page_open_tabs() -> None:
    """The front honours --allow-origin, as the game port does."""
    async with front(allowed_origins=["http://tulips.lan:8080"]) as f:
        async with aiohttp.ClientSession() as http:
            socket_ = await http.ws_connect(Tab(f.url, "Ana").url, origin="http://tulips.lan:8080")
            await socket_.close()
        await wait_until(lambda: not f.web.sessions)


async def test_tabs_ignore_the_host_users_known_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29, certificates: the host user's known_servers says another
    fingerprint for the game server (an old certificate); the tab plays all
    the same, pinned by the server, and the host's file is left as it was."""
    config_home = tmp_path / "host-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    certs = tmp_path / "certs"
    certs.mkdir()
    async with front(tls_dir=certs) as f:
        known = config_home / "gift-of-tulips" / "known_servers"
        known.parent.mkdir(parents=True)
        old = "SHA256:" + ":".join(["AB"] * 32)
        known.write_text(f"127.0.0.1:{f.server.port} {old}\n")
        async with Tab(f.url, "Ana") as tab:
            await tab.wait_for("playing as Ana")
        assert known.read_text() == f"127.0.0.1:{f.server.port} {old}\n"


async def test_wrong_join_codes_from_one_tab_lock_only_its_browsers_address() -> None:
    """Issue 29, "five wrong join codes from one tab lock every other tab out":
    tabs' clients all come from 127.0.0.1, but each shows its pass, so the
    lockout falls on the guessing tab's browser address only (a second tab of
    that browser is locked too; another visitor's tab joins)."""
    from tests.server.helpers import RawClient, serve

    async with serve(join_code_tries=3, join_code_lockout=60) as running:
        running.server.tab_addresses.update(
            {"pass-a": ("192.168.1.7", None), "pass-b": ("192.168.1.8", None)}
        )

        async def tab_client(tab_pass: str, name: str) -> RawClient:
            client = await RawClient.connect(
                running.url, additional_headers=[(TAB_PASS_HEADER, tab_pass)]
            )
            welcome = await client.request("hello", client="t/1", name=name)
            assert welcome["type"] == "welcome", welcome
            return client

        ada = await RawClient.open(running.url, "Ada")
        joined = await ada.request(
            "create_match", name="private", seats=4, join_code="tulip", bots=[{"seat": 3}]
        )
        match = joined["match"]
        mallory = await tab_client("pass-a", "Mallory")
        for guess in ("rose", "daisy", "lily"):
            answer = await mallory.request("join", match=match, join_code=guess)
            assert answer["code"] == "bad_join_code"
        again = await tab_client("pass-a", "Mallory 2")
        answer = await again.request("join", match=match, join_code="tulip")
        assert answer["code"] == "locked_out", answer
        bob = await tab_client("pass-b", "Bob")
        answer = await bob.request("join", match=match, join_code="tulip")
        assert answer["type"] == "joined", answer
