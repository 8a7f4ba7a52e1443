"""The web port's door (server/web/guard.py), attacked for real over 127.0.0.1.

Issue 29, "Half-open HTTP requests take the whole server": 2,169 connections
from one address sent ``GET / HTTP/1.1``, ``Host: x`` and nothing more, held
the web port for good, took the descriptors and the game port with them.
Build: "The web port: header and idle (keep-alive) timeouts, a per-address connection cap
... the game port stays reachable and the log stays small (one line per
condition, not per retry)".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import resource
import ssl
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from server.app import TulipsServer
from server.cli import parse_args
from server.config import ServerConfig
from server.lab.web.siege import newcomer
from server.lan import tls
from server.web import WebFront
from server.web.guard import Admission, ConnectionGuard, GuardedSite, GuardLimits, mark_upgraded

HALF_OPEN = b"GET / HTTP/1.1\r\nHost: x\r\n"


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes | None:
    """What the server sent before closing, if it closed within ``seconds``; else None."""
    data = b""
    try:
        async with asyncio.timeout(seconds):
            while chunk := await reader.read(4096):
                data += chunk
    except TimeoutError:
        return None
    except ConnectionError:
        pass
    return data


#: The writers of the half-open connections: a writer that is collected closes its socket.
_WRITERS: list[asyncio.StreamWriter] = []


async def _half_open(port: int, source: str = "127.0.0.1") -> asyncio.StreamReader:
    """A connection that sends the start of a request head, and no more."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(HALF_OPEN)
    _WRITERS.append(writer)
    return reader


@pytest.fixture(autouse=True)
async def _close_writers() -> AsyncIterator[None]:
    yield
    for writer in _WRITERS:
        writer.transport.abort()
    _WRITERS.clear()
    await asyncio.sleep(0)


def _guard_lines(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "server.web.guard" and text in r.getMessage()
    ]


# -- the counting alone, no socket --------------------------------------------------------


def test_admission_counts_per_address_in_total_and_keeps_a_descriptor_reserve() -> None:
    """A cap per address, one for the port, and the process's last descriptors kept."""
    admission = Admission(GuardLimits(per_address=2, max_connections=3, fd_reserve=10), 100)
    assert admission.admit("a", 5) is None
    assert admission.admit("a", 6) is None
    assert admission.admit("a", 7) == "address"
    assert admission.admit("b", 7) is None
    assert admission.admit("c", 8) == "full"
    admission.release("a")
    assert admission.admit("c", 90) == "reserve"  # fds 0..89 in use: within 10 of 100
    assert admission.admit("c", 89) is None
    assert admission.total == 3 and dict(admission.by_address) == {"a": 1, "b": 1, "c": 1}


def test_limits_refuse_nonsense() -> None:
    """A cap below 1 or a timeout of 0 is refused with the field's name."""
    with pytest.raises(ValueError, match="per_address"):
        GuardLimits(per_address=0)
    with pytest.raises(ValueError, match="header_timeout"):
        GuardLimits(header_timeout=0)


# -- the real front: the attack of the issue, at a smaller scale ------------------------------


@contextlib.asynccontextmanager
async def _front(limits: GuardLimits) -> AsyncIterator[tuple[TulipsServer, WebFront]]:
    server = TulipsServer(ServerConfig(host="127.0.0.1", port=0, ping_interval=None))
    await server.start()
    front = WebFront(host="127.0.0.1", port=0, game_port=server.port, connections=limits)
    try:
        await front.start()
        yield server, front
    finally:
        await front.stop()
        await server.stop()


async def test_half_open_requests_past_the_cap_are_closed_at_once_the_rest_at_the_header_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """200 half-open requests from one address with a cap of 5 and a 2 s header
    timeout: 195 are told 429 and closed at once, the 5 others are closed at
    2 s; a newcomer on the game port is welcomed meanwhile, a visitor from
    another address gets the page, and the log has one line per condition."""
    caplog.set_level(logging.INFO, logger="server.web.guard")
    limits = GuardLimits(per_address=5, max_connections=100, header_timeout=2.0)
    async with _front(limits) as (server, front):
        started = time.monotonic()
        readers = [await _half_open(front.port) for _ in range(200)]
        answers = await asyncio.gather(*(_closed_within(r, 0.5) for r in readers))
        refused = [a for a in answers if a is not None]
        held = [r for r, a in zip(readers, answers, strict=True) if a is None]
        assert len(refused) == 195
        assert all(a.startswith(b"HTTP/1.1 429 ") for a in refused)
        assert len(held) == 5

        wait = await newcomer(f"ws://127.0.0.1:{server.port}")
        assert wait < 1.0
        other = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))  # another address
        async with (
            aiohttp.ClientSession(connector=other) as session,
            session.get(f"http://127.0.0.1:{front.port}/") as page,
        ):
            assert page.status == 200

        late = await asyncio.gather(*(_closed_within(r, 3.0) for r in held))
        assert all(a == b"" for a in late)  # closed without a word
        assert time.monotonic() - started >= 2.0
        assert front._site is not None and front._site.guard.open == 0

    assert len(_guard_lines(caplog, "the most one address may")) == 1
    assert len(_guard_lines(caplog, "sent no request in 2 s")) == 1


# -- the guard on a bare application: what a browser needs ------------------------------------


async def _echo(request: web.Request) -> web.WebSocketResponse:
    socket_ = web.WebSocketResponse()
    await socket_.prepare(request)
    mark_upgraded(request)
    async for message in socket_:
        await socket_.send_str(message.data)
    return socket_


async def _page(_request: web.Request) -> web.Response:
    return web.Response(text="page")


async def _big(_request: web.Request) -> web.Response:
    return web.Response(body=b"x" * (16 * 2**20))


@contextlib.asynccontextmanager
async def _guarded(
    limits: GuardLimits, context: ssl.SSLContext | None = None, quiet: float = 30.0
) -> AsyncIterator[tuple[int, ConnectionGuard]]:
    app = web.Application()
    app.add_routes([web.get("/", _page), web.get("/big", _big), web.get("/ws", _echo)])
    guard = ConnectionGuard(limits, quiet=quiet)
    guard.install(app)
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=limits.keepalive_timeout)
    await runner.setup()
    site = GuardedSite(runner, "127.0.0.1", 0, guard=guard, ssl_context=context)
    await site.start()
    try:
        yield runner.addresses[0][1], guard
    finally:
        await runner.cleanup()


async def test_a_websocket_outlives_the_header_timeout_and_an_idle_connection_is_closed() -> None:
    """An upgraded WebSocket plays on past the header timeout; a keep-alive
    connection with no new request is closed after the keep-alive timeout."""
    limits = GuardLimits(header_timeout=0.5, keepalive_timeout=1.0, lifetime=1.2)
    async with _guarded(limits) as (port, guard), aiohttp.ClientSession() as session:
        async with session.ws_connect(f"http://127.0.0.1:{port}/ws") as ws:
            await asyncio.sleep(1.5)  # three header timeouts, past its keep-alive and lifetime
            await ws.send_str("still here")
            assert (await ws.receive(timeout=2)).data == "still here"

        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        answered = time.monotonic()
        head = await reader.readuntil(b"page")
        assert head.startswith(b"HTTP/1.1 200 ")
        assert await _closed_within(reader, 0.6) is None  # kept alive for a while
        assert await _closed_within(reader, 3.0) == b""
        assert 0.9 <= time.monotonic() - answered < 3.5
        writer.close()
        await asyncio.sleep(0.05)
        assert guard.open == 0


async def test_a_connection_that_is_no_websocket_is_closed_at_the_end_of_its_lifetime(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A connection kept busy (a request every 0.3 s) and one that never reads
    its response are both closed ``lifetime`` seconds after they came: neither
    timeout alone ends them. Logged once for the address."""
    caplog.set_level(logging.INFO, logger="server.web.guard")
    limits = GuardLimits(header_timeout=0.5, keepalive_timeout=10.0, lifetime=1.5)
    async with _guarded(limits) as (port, guard):
        busy_reader, busy = await asyncio.open_connection("127.0.0.1", port)
        _, slow = await asyncio.open_connection("127.0.0.1", port)
        assert isinstance(slow.transport, asyncio.Transport)
        slow.transport.pause_reading()  # the 16 MiB answer is never read
        slow.write(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        came = time.monotonic()
        answers = 0
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while time.monotonic() - came < 4.0:
                busy.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                await busy_reader.readuntil(b"page")
                answers += 1
                await asyncio.sleep(0.3)
        assert 1.3 <= time.monotonic() - came < 3.0
        assert answers >= 3  # served until then
        await asyncio.sleep(0.1)
        assert guard.open == 0  # the slow reader too
        assert len(_guard_lines(caplog, "--web-connection-lifetime")) == 1
        for writer in (busy, slow):
            writer.transport.abort()


async def test_the_port_cap_leaves_room_for_no_one_and_its_end_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Three addresses fill a port cap of 5 (2 each at most): the sixth gets
    503 at once; once they are gone, new ones come in, and the log says when
    the condition started and when it stopped."""
    caplog.set_level(logging.INFO, logger="server.web.guard")
    limits = GuardLimits(per_address=2, max_connections=5, header_timeout=5.0)
    async with _guarded(limits, quiet=0.4) as (port, guard):
        readers = []
        for source in ("127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3", "127.0.0.4"):
            readers.append(await _half_open(port, source))
        await asyncio.sleep(0.1)
        assert guard.open == 5
        for _ in range(20):
            late = await _half_open(port, "127.0.0.5")
            answer = await _closed_within(late, 0.5)
            assert answer is not None and answer.startswith(b"HTTP/1.1 503 ")
        for writer in _WRITERS:
            writer.transport.abort()
        await _wait(lambda: guard.open == 0 and bool(_guard_lines(caplog, "has stopped")))
    assert len(_guard_lines(caplog, "the most it holds")) == 1
    assert len(_guard_lines(caplog, "closed 20 connection(s) with the web port full")) == 1


async def _wait(check: object, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.05)


async def test_with_tls_a_handshake_that_never_comes_is_timed_and_counted(tmp_path: Path) -> None:
    """Over TLS the guard counts the TCP connection before the handshake: a
    client that never sends its ClientHello holds a place, and is closed at
    the header timeout; a real https request is served."""
    setup = tls.self_signed(tmp_path / "cert.pem", tmp_path / "key.pem", "localhost")
    limits = GuardLimits(per_address=2, header_timeout=0.8)
    async with _guarded(limits, setup.context) as (port, guard):
        silent = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
        _WRITERS.extend(writer for _reader, writer in silent)
        await asyncio.sleep(0.1)
        assert guard.open == 2
        third = await asyncio.open_connection("127.0.0.1", port)
        _WRITERS.append(third[1])
        assert await _closed_within(third[0], 0.5) == b""  # past the cap: closed, no answer
        for reader, _writer in silent:
            assert await _closed_within(reader, 3.0) == b""
        client = ssl.create_default_context()
        client.check_hostname = False
        client.verify_mode = ssl.CERT_NONE
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"https://127.0.0.1:{port}/", ssl=client) as page,
        ):
            assert page.status == 200 and await page.text() == "page"
        await _wait(lambda: guard.open <= 1)


# -- the descriptor reserve, in a server with few descriptors ---------------------------------


async def _logged_port(log: Path, pattern: str) -> int:
    """The port the server's log names in ``pattern``'s group, once it does."""
    async with asyncio.timeout(30):
        while not (found := re.search(pattern, log.read_text(errors="replace"))):
            await asyncio.sleep(0.1)
    return int(found.group(1))


def _few_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


async def test_the_web_port_leaves_the_last_descriptors_to_the_game_port(tmp_path: Path) -> None:
    """tulips-server --web with 256 descriptors and the web port's caps lifted:
    300 half-open requests take what the web port may have, no more. Past it
    they are closed at once, the game port never runs out (no "cannot accept"
    line) and welcomes a newcomer at once; the log says so in one line."""
    log = tmp_path / "server.log"
    lifted = ["--web-max-connections-per-address", "10000", "--web-max-connections", "10000"]
    with log.open("wb") as sink:
        server = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", "0",
            "--no-storage", "--no-announce", "--web", "0", *lifted,
            stdout=sink, stderr=sink, preexec_fn=_few_descriptors,
        )  # fmt: skip
    try:
        game = await _logged_port(log, r"port (\d+) \(ws://")
        web_port = await _logged_port(log, r"Browsers can play at http://[^ ]+:(\d+)")
        readers = []
        for _ in range(300):
            with contextlib.suppress(OSError):
                readers.append(await _half_open(web_port))
        answers = await asyncio.gather(*(_closed_within(r, 1.0) for r in readers))
        held = sum(a is None for a in answers)
        assert 20 <= held <= 256 - 128
        assert await newcomer(f"ws://127.0.0.1:{game}") < 1.0
        text = log.read_text()
        assert text.count("within 128 of its 256 file descriptors") == 1
        assert "cannot accept connections" not in text and "Traceback" not in text
    finally:
        if server.returncode is None:
            server.terminate()
        async with asyncio.timeout(20):
            await server.wait()


# -- the flags ---------------------------------------------------------------------------


def test_the_flags_reach_the_config_and_nonsense_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--web-max-connections-per-address`` and friends set the config; a
    timeout of 0 or a cap of 0 is a usage error that names the flag."""
    config = parse_args(
        ["--web-max-connections-per-address", "4", "--web-max-connections", "40",
         "--web-header-timeout", "2.5", "--web-keepalive-timeout", "7",
         "--web-connection-lifetime", "30"]
    )  # fmt: skip
    assert (config.web_max_connections_per_address, config.web_max_connections) == (4, 40)
    assert (config.web_header_timeout, config.web_keepalive_timeout) == (2.5, 7.0)
    assert config.web_connection_lifetime == 30.0
    for flag, value in [
        ("--web-header-timeout", "0"),
        ("--web-max-connections", "0"),
        ("--web-connection-lifetime", "-1"),
    ]:
        with pytest.raises(SystemExit) as exited:
            parse_args([flag, value])
        assert exited.value.code == 2
        assert flag in capsys.readouterr().err
