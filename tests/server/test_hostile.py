"""No one client can hurt the server: each attack is made over real sockets on
127.0.0.1, and the server's own accounting says it held.

Clients that never read are closed with TOO_SLOW within their byte budget and
let go of; floods of frames are read at the sender's rate while a normal match
plays on; close reasons never break the 123-byte limit, whatever a client
sent; one address cannot take every slot; web pages from other origins are
refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.protocol import State
from websockets.typing import Origin

from client.sdk import connect
from protocol import CloseCode
from server.cli import parse_args
from server.peer import (
    CLIENT_FAULTS,
    FAULT_CLOSE_TIMEOUT,
    MAX_CLOSE_REASON_BYTES,
    Peer,
    TulipsConnection,
    close_reason,
)

from ..storage.helpers import in_process
from .helpers import RawClient, Running, finish_and_check, play_randomly, raw_frame, serve

# -- helpers ------------------------------------------------------------------------------


async def finished_match(running: Running) -> str:
    """A match played to its end by bots, so that its replay runs to several KiB."""
    async with connect(running.url, name="Host", reconnect=False) as host:
        bots = [(seat, "easy") for seat in range(5)]
        joined = await host.create_match(name="long", seats=5, bots=bots)
        await host.start()
        room = running.lobby.matches[joined.match].core
        async with asyncio.timeout(20):
            while room.status.value != "finished":
                await asyncio.sleep(0.05)
        return joined.match


async def peer_of(running: Running, name: str) -> Peer:
    """The server's side of the connection whose player is ``name`` (once welcomed)."""
    async with asyncio.timeout(5):
        while True:
            found = [p for p in running.server.peers if p.player and p.player.name == name]
            if found:
                return found[0]
            await asyncio.sleep(0.01)


async def stalled(running: Running, name: str) -> tuple[RawClient, Peer]:
    """A client that says hello and then never reads again.

    Loopback sockets buffer megabytes, so its receive buffer is made tiny, and
    the server's send buffer for it too, as over a slow network."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", running.server.port))
    client = await RawClient.connect(running.url, sock=sock, max_queue=1)
    client.stop_reading()
    client.ws.transport.pause_reading()  # not even the pongs, which websockets reads itself
    await client.send("hello", client="sloth/1", name=name)
    peer = await peer_of(running, name)
    server_socket: Any = peer.connection.transport.get_extra_info("socket")
    server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    return client, peer


def unsent(peer: Peer) -> int:
    """What the transport holds for the peer, as asyncio itself counts it."""
    transport = peer.connection.transport
    return 0 if transport is None else transport.get_write_buffer_size()


async def watch_budgets(peers: list[Peer], budget: int, stop: asyncio.Event) -> int:
    """Until ``stop``: check that no peer holds more than its budget (plus the
    WebSocket framing of its frames); the most any one held."""
    most = 0
    while not stop.is_set():
        for peer in peers:
            held = peer.held
            assert held <= budget + 1024, f"{peer!r} holds {held} bytes"
            most = max(most, held, unsent(peer))
        await asyncio.sleep(0.005)
    return most


# -- A: clients that never read -------------------------------------------------------------


async def test_clients_that_never_read_are_closed_and_their_buffers_freed() -> None:
    """30 clients that ask for replay pages and never read are closed with TOO_SLOW
    (4005); none ever holds more than its byte budget, and once the server gives
    up on them nothing is held for them at all — though they never leave."""
    budget = 64 * 1024
    async with serve(max_outbox_bytes=budget, close_timeout=0.5) as running:
        match_id = await finished_match(running)
        pairs = [await stalled(running, f"sloth{i}") for i in range(30)]
        peers = [peer for _, peer in pairs]
        stop = asyncio.Event()
        watcher = asyncio.create_task(watch_budgets(peers, budget, stop))

        async def ask_until_closed(client: RawClient, peer: Peer) -> None:
            for _ in range(1000):  # a replay page is ~10 KiB: a dozen or two suffice
                if peer.closing:
                    return
                with contextlib.suppress(ConnectionClosed):
                    await client.send("replay", match=match_id, from_seq=1)
                await asyncio.sleep(0.02)  # within the rate limit: it is never flooding
            raise AssertionError(f"{peer!r} was never closed; it holds {peer.held} bytes")

        async with asyncio.timeout(60):
            await asyncio.gather(*(ask_until_closed(c, p) for c, p in pairs))
            while any(p in running.server.peers for p in peers):
                await asyncio.sleep(0.05)
        stop.set()
        most = await watcher
        assert most > budget // 2, "the attack never filled a budget: the test tests nothing"
        for peer in peers:
            close_sent = peer.connection.protocol.close_sent
            assert close_sent is not None and close_sent.code == CloseCode.TOO_SLOW
            assert peer.peak <= budget
            assert peer.connection.state is State.CLOSED
            assert peer.held == 0
        assert running.server.health()["outbound_bytes"] == 0
        assert not running.server.addresses
        for client, _ in pairs:
            client.ws.transport.abort()


async def test_a_client_that_pings_and_never_reads_is_held_to_its_budget() -> None:
    """websockets answers pings by itself: a client that pings and never reads
    the pongs is closed with TOO_SLOW too, its pongs within the budget."""
    budget = 16 * 1024
    async with serve(max_outbox_bytes=budget, close_timeout=0.5) as running:
        client, peer = await stalled(running, "pinger")
        async with asyncio.timeout(30):
            for n in range(20_000):
                if peer.closing:
                    break
                with contextlib.suppress(ConnectionClosed):
                    await client.ws.ping(n.to_bytes(4, "big") * 31)  # 124 bytes
                if n % 50 == 0:
                    await asyncio.sleep(0.01)  # let the server read them
            assert peer.closing, "20,000 unread pongs and the pinger was not closed"
            while peer in running.server.peers or peer.connection.state is not State.CLOSED:
                await asyncio.sleep(0.05)
        close_sent = peer.connection.protocol.close_sent
        assert close_sent is not None and close_sent.code == CloseCode.TOO_SLOW
        # the budget, plus the pongs of the read that broke it and of one more
        # read while it was being told to go (then it is cut off)
        assert peer.peak <= budget + 2 * TulipsConnection.READ_BYTES
        assert peer.held == 0
        client.ws.transport.abort()


# -- B: floods are read at the sender's rate -------------------------------------------------


async def flood_until_closed(running: Running, name: str) -> tuple[Peer, int | None, float]:
    """One connection sending bad frames (and a good one now and then, so that it is
    not closed for bad frames in a row) as fast as TCP lets it, until it is closed:
    its server side, its close code and the seconds it lived."""
    client = await RawClient.open(running.url, name)
    peer = await peer_of(running, name)
    good = msgpack.packb({"v": 1, "type": "list_matches"})
    with contextlib.suppress(ConnectionClosed):
        for n in range(100_000):
            await client.send_raw(good if n % 10 == 0 else b"\xc1")
            if n % 10 == 0:  # the kernel takes it all: yield, as a separate process would
                await asyncio.sleep(0)
    code = await client.closed(timeout=30)
    return peer, code, time.monotonic() - peer.opened


async def test_floods_are_read_at_their_rate_while_a_match_plays() -> None:
    """Connections flooding bad frames are read no faster than their rate — every
    frame counts, good or bad — and closed with 4008, while a normal match is
    played to its end, each of its requests answered."""
    rate, burst = 50.0, 100
    async with (
        serve(rate_limit=rate, rate_burst=burst) as running,
        connect(running.url, name="Ada", reconnect=False) as ada,
    ):
        await ada.create_match(name="normal", seats=3, bots=[(1, "easy"), (2, "medium")])
        await ada.start()
        floods = [asyncio.create_task(flood_until_closed(running, f"flood{i}")) for i in range(6)]
        tracker = await play_randomly(ada, 0, random.Random(7), timeout=60)
        assert tracker.over
        await finish_and_check(ada, tracker)
        async with asyncio.timeout(60):
            results = await asyncio.gather(*floods)
        for peer, code, lived in results:
            assert code == CloseCode.RATE_LIMITED
            # the token bucket's bound, whatever the machine's speed
            assert peer.received <= burst + rate * lived + 1, (peer.received, lived)
            assert peer.received > burst, "it was closed before it flooded"


# -- C: close reasons ------------------------------------------------------------------------


def test_close_reason_is_cut_by_utf8_bytes_on_a_character_boundary() -> None:
    """A close reason fits RFC 6455's 123 bytes, whatever the characters, and is
    left alone when it already fits."""
    assert close_reason("no hello in time") == "no hello in time"
    assert close_reason("x" * MAX_CLOSE_REASON_BYTES) == "x" * MAX_CLOSE_REASON_BYTES
    for text in ("🌷" * 31, "a" + "🌷" * 40, "é" * 100, "x" * 500, "ab🌷" * 33):
        cut = close_reason(text)
        assert len(cut.encode()) <= MAX_CLOSE_REASON_BYTES
        assert cut.endswith("…") and text.startswith(cut[:-1])


async def test_emoji_in_a_refused_hello_close_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    """Frames before hello whose error texts echo 30 emoji, sent until the
    connection is closed for them: each is answered, the close has its documented
    code and a reason within 123 bytes, and nothing logs a traceback."""
    async with serve(max_bad_frames=3) as running:
        attempts: list[dict[str, Any]] = [
            {"type": "🌷" * 30},
            {"type": "hello", "client": "t", "name": "🌷" * 30, "versions": ["🌷" * 30]},
            {"type": "act", "action": {"kind": "🌷" * 60}},
            {"type": "hello", "client": "t", "name": "🌷" * 30, "token": "🌷" * 30},
        ]
        for fields in attempts:
            client = await RawClient.connect(running.url)
            with contextlib.suppress(ConnectionClosed):
                for _ in range(3):
                    await client.send_raw(msgpack.packb({"v": 1, **fields}))
            code = await client.closed()
            assert code is not None and 4000 <= code < 5000, (fields, code)
            reason = client.ws.close_reason
            assert reason is not None and len(reason.encode()) <= MAX_CLOSE_REASON_BYTES
            assert [m["type"] for m in client.messages] == ["error"] * len(client.messages)
            assert client.messages, fields
        async with connect(running.url, name="🌷" * 40, reconnect=False) as late:
            await late.list_matches()  # the server is well
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


# -- D: one address cannot take every slot ---------------------------------------------------


async def test_one_address_cannot_take_every_connection() -> None:
    """Past ``max_connections_per_address`` the handshake is refused with HTTP 429;
    a slot comes back when one of that address's connections closes."""
    async with serve(max_connections_per_address=3, limit_loopback=True) as running:
        clients = [await RawClient.open(running.url, f"p{i}") for i in range(3)]
        with pytest.raises(InvalidStatus) as refused:
            await RawClient.connect(running.url)
        assert refused.value.response.status_code == 429
        await clients.pop().close()
        async with asyncio.timeout(5):
            while running.server.addresses["127.0.0.1"] >= 3:
                await asyncio.sleep(0.01)
        clients.append(await RawClient.open(running.url, "again"))
        for client in clients:
            await client.close()


async def test_loopback_is_not_capped_unless_asked() -> None:
    """By default the per-address cap leaves loopback alone (tests, loadtest)."""
    async with serve(max_connections_per_address=2) as running:
        clients = [await RawClient.open(running.url, f"p{i}") for i in range(5)]
        assert running.server.addresses["127.0.0.1"] == 5
        for client in clients:
            await client.close()


# -- E: web pages ----------------------------------------------------------------------------


async def origin_status(url: str, origin: str | None) -> int:
    """The HTTP status of a handshake sending ``origin`` (101 when it is accepted)."""
    try:
        header = None if origin is None else Origin(origin)
        async with asyncio.timeout(5), ws_connect(url, origin=header) as ws:
            assert ws.response is not None
            return ws.response.status_code
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_web_pages_from_unknown_origins_are_refused() -> None:
    """A browser's handshake with an Origin the operator did not allow gets 403;
    a client without Origin is never refused; "*" allows every page."""
    async with serve() as running:
        assert await origin_status(running.url, "http://evil.example") == 403
        assert await origin_status(running.url, None) == 101
    allowed = ("http://tulips.lan:8080",)
    async with serve(allowed_origins=allowed) as running:
        assert await origin_status(running.url, "http://tulips.lan:8080") == 101
        assert await origin_status(running.url, "HTTP://Tulips.LAN:8080/") == 101
        assert await origin_status(running.url, "http://tulips.lan:9999") == 403
        assert await origin_status(running.url, "null") == 403
    async with serve(allowed_origins=("*",)) as running:
        assert await origin_status(running.url, "http://anything.example") == 101


def test_the_command_line_sets_every_limit() -> None:
    """--max-connections-per-address, --allow-origin (repeatable),
    --new-players-per-minute, --forget-players-after (days) and --ipv6-prefix
    reach the config; an origin
    that is not one, or a prefix length that is not one, is refused with exit
    code 2."""
    origins = ["--allow-origin", "http://tulips.lan:8080", "--allow-origin", "*"]
    config = parse_args(["--max-connections-per-address", "5", *origins])
    assert config.max_connections_per_address == 5
    assert config.allowed_origins == ("http://tulips.lan:8080", "*")
    limits = ["--new-players-per-minute", "2", "--forget-players-after", "0.5"]
    config = parse_args(limits)
    assert config.new_players_per_minute == 2
    assert config.forget_players_after == 43200
    assert parse_args([]).allowed_origins == ()
    assert parse_args(["--ipv6-prefix", "56"]).ipv6_prefix == 56
    assert parse_args([]).ipv6_prefix == 64
    for bad in (
        ["--allow-origin", "tulips.lan"],
        ["--allow-origin", "http://x/page"],
        ["--ipv6-prefix", "129"],
        ["--ipv6-prefix", "eight"],
    ):
        with pytest.raises(SystemExit) as exited:
            parse_args(bad)
        assert exited.value.code == 2
    with pytest.raises(SystemExit):
        parse_args(["--forget-players-after", "0"])


# -- F: floods of identities and guesses -----------------------------------------------------


async def from_address(running: Running, address: str) -> RawClient:
    """A connection (without hello) from another loopback address, 127.0.0.x:
    a second machine, as far as the per-address limits can tell."""
    sock = socket.socket()
    sock.bind((address, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", running.server.port))
    return await RawClient.connect(running.url, sock=sock)


async def hello(client: RawClient, name: str, token: str | None = None) -> dict[str, Any]:
    """Say hello; the answer (welcome or error)."""
    fields: dict[str, Any] = {"client": "t/1", "name": name}
    if token is not None:
        fields["token"] = token
    return await client.request("hello", **fields)


async def test_one_address_makes_only_so_many_new_identities() -> None:
    """Past ``new_players_per_minute`` a hello without a token is refused with
    rate_limited (the connection stays, and may say hello with its token);
    other addresses, and returning players, are not held back."""
    async with serve(limit_loopback=True, new_players_per_minute=3) as running:
        first = await from_address(running, "127.0.0.2")
        welcome = await hello(first, "p0")
        assert welcome["type"] == "welcome"
        for n in range(1, 3):
            assert (await hello(await from_address(running, "127.0.0.2"), f"p{n}"))["type"] == (
                "welcome"
            )
        extra = await from_address(running, "127.0.0.2")
        refused = await hello(extra, "p3")
        assert (refused["type"], refused["code"]) == ("error", "rate_limited")
        assert (await hello(extra, "p0", welcome["token"]))["type"] == "welcome"
        assert (await hello(await from_address(running, "127.0.0.3"), "q"))["type"] == "welcome"
        assert len(running.lobby.players) == 4


async def test_players_unused_for_long_are_forgotten_in_memory_and_on_disk(
    tmp_path: Path,
) -> None:
    """forget_players drops the players not connected since a time whom no match
    names: their tokens stop working, after a restart too; a match's host stays."""
    async with in_process(tmp_path) as running:
        ada = await RawClient.open(running.url, "Ada")
        await ada.request("create_match", name="waiting", seats=3, bots=[{"seat": 2}])
        bob = await RawClient.open(running.url, "Bob")
        tokens = {c.welcome["name"]: c.welcome["token"] for c in (ada, bob) if c.welcome}
        await ada.close()
        await bob.close()
        async with asyncio.timeout(5):
            while any(player.connected for player in running.lobby.players):
                await asyncio.sleep(0.01)
        assert await running.lobby.forget_players(time.time() - 3600) == 0  # seen just now
        assert await running.lobby.forget_players(time.time() + 1) == 1
        answer = await hello(await RawClient.connect(running.url), "Bob", tokens["Bob"])
        assert answer["code"] == "bad_token"
    async with in_process(tmp_path) as running:
        answer = await hello(await RawClient.connect(running.url), "Bob", tokens["Bob"])
        assert answer["code"] == "bad_token"
        ada = await RawClient.connect(running.url)
        assert (await hello(ada, "Ada", tokens["Ada"]))["type"] == "welcome"
        joined = await ada.next(lambda m: m["type"] == "joined")  # put back in her seat
        assert joined["seat"] == 0


async def test_a_join_code_is_the_same_in_any_case() -> None:
    """Issue 30: a code said across the table ("Tulip") is typed as it comes:
    ``TULIP`` and ``tulip`` join and watch; another word is still refused."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        joined = await ada.request(
            "create_match", name="private", seats=3, join_code="Tulip", bots=[{"seat": 2}]
        )
        match = joined["match"]
        bob = await RawClient.open(running.url, "Bob")
        assert (await bob.request("join", match=match, join_code="tulips"))["code"] == (
            "bad_join_code"
        )
        assert (await bob.request("join", match=match, join_code="TULIP"))["type"] == "joined"
        cy = await RawClient.open(running.url, "Cy")
        assert (await cy.request("watch", match=match, join_code="tulip"))["type"] == "joined"
        for client in (ada, bob, cy):
            await client.close()


async def test_guessing_a_join_code_locks_the_guesser_out() -> None:
    """After ``join_code_tries`` wrong codes an address is refused locked_out for
    that match, even with the right code (join, watch and replay), until the
    lockout ends; everyone else is unaffected."""
    async with serve(join_code_tries=3, join_code_lockout=0.5) as running:
        ada = await RawClient.open(running.url, "Ada")
        joined = await ada.request(
            "create_match", name="private", seats=3, join_code="tulip", bots=[{"seat": 2}]
        )
        match = joined["match"]
        mallory = await from_address(running, "127.0.0.2")
        await hello(mallory, "Mallory")
        for guess in ("rose", "daisy", "lily"):
            answer = await mallory.request("join", match=match, join_code=guess)
            assert answer["code"] == "bad_join_code"
        for request in ("join", "watch", "replay"):
            answer = await mallory.request(request, match=match, join_code="tulip")
            assert answer["code"] == "locked_out", answer
            assert "try again in 1 s" in answer["message"]
        bob = await RawClient.open(running.url, "Bob")  # another address
        assert (await bob.request("join", match=match, join_code="tulip"))["type"] == "joined"
        await bob.request("leave")
        await asyncio.sleep(0.6)  # the lockout is over
        answer = await mallory.request("join", match=match, join_code="tulip")
        assert answer["type"] == "joined", answer


# -- G: empty matches ------------------------------------------------------------------------


async def test_an_open_match_nobody_is_in_goes_away() -> None:
    """An open match goes when its last person leaves and no one holds a seat,
    or when its seated players stay away past the grace period; one whose
    player comes back in time stays."""
    async with serve(grace_period=0.3) as running:
        rooms = running.lobby.matches
        host = await RawClient.open(running.url, "Host")
        bots_only = await host.request(
            "create_match", name="b", seats=2, bots=[{"seat": 0}, {"seat": 1}]
        )
        assert bots_only["match"] in rooms
        await host.request("leave")
        assert bots_only["match"] not in rooms  # nobody in it, nobody seated

        ada = await RawClient.open(running.url, "Ada")
        match = (await ada.request("create_match", name="w", seats=3, bots=[{"seat": 2}]))["match"]
        bob = await RawClient.open(running.url, "Bob")
        assert (await bob.request("join", match=match))["type"] == "joined"
        await ada.close()
        await bob.close()
        async with asyncio.timeout(5):
            while match in rooms:
                await asyncio.sleep(0.02)

    async with serve(grace_period=30) as running:
        ada = await RawClient.open(running.url, "Ada")
        match = (await ada.request("create_match", name="w", seats=3, bots=[{"seat": 2}]))["match"]
        assert ada.welcome is not None
        token = ada.welcome["token"]
        await ada.close()
        back = await RawClient.connect(running.url)
        await hello(back, "Ada", token)
        await back.next(lambda m: m["type"] == "joined")
        room = running.lobby.matches[match].core
        assert room._abandon is None  # the countdown stopped when she came back


async def test_an_open_match_nobody_holds_a_seat_in_is_not_restored(tmp_path: Path) -> None:
    """After a restart, an open match that no person holds a seat in is gone;
    one with a seated player is back."""
    async with in_process(tmp_path, grace_period=30) as running:
        host = await RawClient.open(running.url, "Host")
        bots = [{"seat": 0}, {"seat": 1}]
        watched = (await host.request("create_match", name="b", seats=2, bots=bots))["match"]
        ada = await RawClient.open(running.url, "Ada")
        seated = (await ada.request("create_match", name="w", seats=2, bots=[{"seat": 1}]))["match"]
        assert {watched, seated} <= set(running.lobby.matches)
    async with in_process(tmp_path, grace_period=30) as running:
        assert set(running.lobby.matches) == {seated}


async def test_a_player_hosts_only_the_open_match_they_are_in() -> None:
    """A connection is in one match at a time: a player who creates match after
    match hosts only the one they are in, each match left behind passing to its
    guest (so no limit on hosted matches is needed, and none is told)."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        assert ada.welcome is not None
        assert "max_open_matches_per_player" not in ada.welcome["limits"]
        made = []
        for n in range(4):
            match = (await ada.request("create_match", name=f"m{n}", seats=3))["match"]
            guest = await RawClient.open(running.url, f"guest{n}")  # keeps it from emptying
            assert (await guest.request("join", match=match))["type"] == "joined"
            made.append(match)
        hosts = [running.lobby.matches[m].core.host.name for m in made]
        assert hosts == ["guest0", "guest1", "guest2", "Ada"]


async def test_one_connection_creating_matches_cannot_fill_the_server() -> None:
    """One connection asking for match after match (within its rate) holds one
    open match at a time, so however long it keeps on, others still create,
    join and finish theirs."""
    async with serve(max_matches=10) as running:
        spammer = await RawClient.open(running.url, "spam")
        for n in range(60):  # six times max_matches
            bots = [{"seat": 0}, {"seat": 1}] if n % 2 else [{"seat": 1}]
            answer = await spammer.request("create_match", name=f"s{n}", seats=2, bots=bots)
            assert answer["type"] == "joined", answer
        assert len(running.lobby.matches) == 1
        async with (
            connect(running.url, name="Bea", reconnect=False) as bea,
            connect(running.url, name="Cy", reconnect=False) as cy,
        ):
            joined = await bea.create_match(name="real", seats=2)
            await cy.join(joined.match)
            await bea.start()
            trackers = await asyncio.gather(
                play_randomly(bea, 0, random.Random(1), timeout=60),
                play_randomly(cy, 1, random.Random(2), timeout=60),
            )
            assert all(tracker.over for tracker in trackers)


# -- clients that ignore the close they earned ----------------------------------------------


async def _ignores_the_close(
    port: int, data: bytes
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A bare WebSocket client that sends ``data`` after the handshake, then
    neither answers the server's close nor hangs up (while its writer is kept)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101"), head
    writer.write(data)
    return reader, writer


@pytest.mark.parametrize(
    ("what", "frame", "code"),
    [
        ("an unmasked frame", raw_frame(b"x", masked=False), 1002),
        (
            "a hello of an unknown version",
            raw_frame(msgpack.packb({"type": "hello", "v": 99, "client": "t", "name": "x"})),
            CloseCode.UNSUPPORTED_VERSION,
        ),
    ],
)
async def test_a_client_that_ignores_the_close_it_earned_is_dropped_soon(
    what: str, frame: bytes, code: int
) -> None:
    """A client closed for a fault of its own (here: {what}) that never answers
    the close is cut off after FAULT_CLOSE_TIMEOUT, not after the patient
    ``close_timeout`` an innocent client gets: one that reconnects at once
    cannot pile up closing connections in the server."""
    assert code in CLIENT_FAULTS and FAULT_CLOSE_TIMEOUT <= 2
    async with serve(close_timeout=60.0) as running:
        reader, writer = await _ignores_the_close(running.server.port, frame)
        async with asyncio.timeout(10):  # far below close_timeout, far above the fault one
            received = b""
            with contextlib.suppress(ConnectionError):
                while chunk := await reader.read(4096):
                    received += chunk
        assert code.to_bytes(2, "big") in received  # the close frame came, then the hang-up
        async with asyncio.timeout(5):
            while running.server.peers:
                await asyncio.sleep(0.01)
        writer.close()
