"""The server keeps PROTOCOL.md's word, over a real socket: version negotiation,
``unsupported_version`` after ``welcome``, ids repeated on envelope errors,
bad frames before ``hello``, the silent 1009 close, and ``welcome.limits``."""

from __future__ import annotations

import contextlib
from typing import Any

import msgpack
from websockets.exceptions import ConnectionClosed

import protocol as wire
from protocol import CloseCode
from protocol.limits import MAX_TURN_TIMER, MIN_TURN_TIMER

from .helpers import RawClient, Running, serve


async def hello(client: RawClient, **envelope: Any) -> dict[str, Any]:
    """Send a hello (``envelope`` may override ``v`` and add ``versions``); its answer."""
    frame = {"v": 1, "type": "hello", "id": 1, "client": "contract/1", "name": "Ada"}
    await client.send_raw(msgpack.packb({**frame, **envelope}))
    return await client.next(lambda m: m.get("id") == 1)


async def test_a_hello_whose_versions_include_1_is_welcomed_in_1(running: Running) -> None:
    """`versions` decides, whatever the hello's own `v`; `welcome.v` is the chosen one."""
    for envelope in ({"versions": [1, 2]}, {"v": 2, "versions": [3, 2, 1]}, {"versions": [1]}):
        client = await RawClient.connect(running.url)
        welcome = await hello(client, **envelope)
        assert (welcome["type"], welcome["v"], welcome["versions"]) == ("welcome", 1, [1])
        assert (await client.request("list_matches"))["type"] == "match_list"
        await client.close()


async def test_a_hello_speaking_no_supported_version_is_refused_with_4001(
    running: Running,
) -> None:
    """`v: 1, versions: [2, 3]` (PROTOCOL.md's example) and `v: 2` alone: refused, closed."""
    for envelope in ({"versions": [2, 3]}, {"v": 2}, {"v": 2, "versions": [2]}):
        client = await RawClient.connect(running.url)
        answer = await hello(client, **envelope)
        assert (answer["type"], answer["code"]) == ("error", "unsupported_version")
        assert answer["message"].endswith("supported versions: 1"), answer
        assert await client.closed() == CloseCode.UNSUPPORTED_VERSION
    assert len(running.lobby.players) == 0  # no identity was made for them


async def test_unsupported_version_after_welcome_closes_with_4001(running: Running) -> None:
    """A welcomed client that sends a v2 message gets `unsupported_version`, then 4001."""
    client = await RawClient.open(running.url, "Ada")
    await client.send_raw(msgpack.packb({"v": 2, "type": "list_matches", "id": 8}))
    answer = await client.next()
    assert (answer["code"], answer["id"]) == ("unsupported_version", 8)
    assert await client.closed() == CloseCode.UNSUPPORTED_VERSION


async def test_envelope_errors_repeat_the_id(running: Running) -> None:
    """A missing `v`, or `v: "1"`, still gets an `error` that repeats a readable `id`,
    before `welcome` and after."""
    client = await RawClient.connect(running.url)
    await client.send_raw(msgpack.packb({"type": "hello", "id": 41, "client": "c", "name": "A"}))
    answer = await client.next()
    assert (answer["code"], answer["path"], answer["id"]) == ("bad_message", "hello.v", 41)
    assert (await hello(client))["type"] == "welcome"
    for frame, path in (
        ({"type": "list_matches", "id": 42}, "list_matches.v"),
        ({"v": "1", "type": "list_matches", "id": "q"}, "list_matches.v"),
        ({"v": 1, "type": 5, "id": 43}, "type"),
    ):
        await client.send_raw(msgpack.packb(frame))
        answer = await client.next()
        assert (answer["code"], answer["path"], answer["id"]) == (
            "bad_message",
            path,
            frame["id"],
        )
    assert (await client.request("list_matches"))["type"] == "match_list"
    await client.close()


async def test_bad_frames_before_hello_are_answered_and_the_hello_still_counts() -> None:
    """Before `welcome` each bad frame or early request gets its error, the connection
    stays open below the threshold, and a correct `hello` is then welcomed."""
    async with serve(max_bad_frames=4) as running:
        client = await RawClient.connect(running.url)
        await client.send_raw(b"\xc1")
        assert (await client.next())["code"] == "bad_frame"
        assert (await client.request("list_matches"))["code"] == "not_welcome"
        answer = await client.request("hello", client="c", name="A", token="no spaces")
        assert (answer["code"], answer["path"]) == ("bad_message", "hello.token")
        assert (await hello(client))["type"] == "welcome"
        await client.close()


async def test_too_many_bad_frames_before_hello_close_with_4000() -> None:
    """`max_bad_frames` errors in a row before `welcome`: each answered, then 4000."""
    async with serve(max_bad_frames=3) as running:
        client = await RawClient.connect(running.url)
        with contextlib.suppress(ConnectionClosed):
            for frame in (b"\xc1", msgpack.packb([1]), msgpack.packb({"v": 1, "type": "leave"})):
                await client.send_raw(frame)
        assert await client.closed() == CloseCode.PROTOCOL_VIOLATION
        codes = [m["code"] for m in client.messages]
        assert codes == ["bad_frame", "bad_frame", "not_welcome"]


async def test_bad_frames_do_not_extend_the_hello_timeout() -> None:
    """The hello timeout runs from the connection's opening, bad frames or not."""
    async with serve(hello_timeout=0.5, max_bad_frames=1000) as running:
        client = await RawClient.connect(running.url)
        await client.send_raw(b"\xc1")
        assert (await client.next())["code"] == "bad_frame"
        assert await client.closed() == CloseCode.HELLO_TIMEOUT


async def test_a_too_large_frame_closes_with_1009_and_no_error(running: Running) -> None:
    """The close-code table's word: refused unread, no `error` sent."""
    client = await RawClient.open(running.url, "big")
    big = msgpack.packb({"v": 1, "type": "chat", "text": "x" * wire.MAX_FRAME_BYTES})
    await client.send_raw(big)
    assert await client.closed() == CloseCode.MESSAGE_TOO_BIG
    assert [m["type"] for m in client.messages] == ["welcome"]


async def _welcome_limits(url: str) -> wire.ServerLimits:
    """The `limits` of the welcome a new client gets."""
    client = await RawClient.open(url, "Ada")
    welcome = wire.decode_server_message(client.frames[0])
    await client.close()
    assert isinstance(welcome, wire.Welcome) and welcome.limits is not None
    return welcome.limits


async def test_welcome_states_the_servers_limits() -> None:
    """`welcome.limits` holds this server's own timings and thresholds, the
    per-address ones included where they apply to the client's address."""
    expected = wire.ServerLimits(
        hello_timeout=7.5,
        max_bad_frames=9,
        rate_limit=25.0,
        rate_burst=60,
        grace_period=12.0,
        min_turn_timer=MIN_TURN_TIMER,
        max_turn_timer=MAX_TURN_TIMER,
        max_connections_per_address=5,
        new_players_per_minute=4.0,
        join_code_tries=3,
        join_code_lockout=30.0,
    )
    settings = {  # every limit but the protocol's own is a setting of the same name
        name: getattr(expected, name)
        for name in expected.__struct_fields__
        if name not in ("min_turn_timer", "max_turn_timer")
    }
    async with serve(**settings, limit_loopback=True) as running:
        assert await _welcome_limits(running.url) == expected


async def test_welcome_leaves_out_per_address_limits_that_do_not_apply() -> None:
    """A client on loopback, which the per-address limits spare by default, is
    not told limits it is not held to; the others it is told."""
    async with serve(max_connections_per_address=5, join_code_tries=3) as running:
        limits = await _welcome_limits(running.url)
    assert limits.max_connections_per_address is None
    assert limits.new_players_per_minute is None
    assert limits.join_code_tries == 3
