"""Identity and authority: only a proved identity holds a seat, nobody acts
for a seat they do not hold, and a refused action changes nothing."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import msgspec
import pytest

import protocol as wire
from client.sdk import ConnectError, RequestError, Session, connect
from protocol import CloseCode

from .helpers import RawClient, Running, Tracker, finish_and_check, play_randomly, strings_in


async def test_unknown_token_is_refused_with_bad_token_and_close_4002(running: Running) -> None:
    """A hello with a token the server never gave out gets bad_token and close 4002."""
    client = await RawClient.connect(running.url)
    answer = await client.request("hello", client="t", name="Eve", token="not-a-token-we-gave")
    assert answer["type"] == "error" and answer["code"] == "bad_token"
    assert answer["id"] == 1
    assert await client.closed() == CloseCode.BAD_TOKEN
    with pytest.raises(ConnectError, match="bad_token"):
        await connect(running.url, name="Eve", token="Zq1x-secret-resume-token-8Jd2")
    # a player id is public and is not a token
    async with connect(running.url, name="Ada", reconnect=False) as ada:
        assert ada.player_id is not None
        with pytest.raises(ConnectError, match="bad_token"):
            await connect(running.url, name="Eve", token=ada.player_id)


async def test_malformed_token_in_hello_is_refused(running: Running) -> None:
    """A token that breaks its schema: bad_message at hello.token; the client may
    say hello again (PROTOCOL.md, before welcome)."""
    client = await RawClient.connect(running.url)
    answer = await client.request("hello", client="t", name="Eve", token="no spaces!")
    assert (answer["code"], answer["path"]) == ("bad_message", "hello.token")
    assert (await client.request("hello", client="t", name="Eve"))["type"] == "welcome"
    await client.close()


async def test_request_before_hello_is_not_welcome(running: Running) -> None:
    """Anything but hello as the first message is answered not_welcome; a hello
    after it is still welcomed."""
    client = await RawClient.connect(running.url)
    answer = await client.request("list_matches")
    assert answer["type"] == "error" and answer["code"] == "not_welcome"
    assert (await client.request("hello", client="t", name="Eve"))["type"] == "welcome"
    await client.close()


async def test_second_hello_is_not_welcome(running: Running) -> None:
    """A second hello on a welcomed connection is answered not_welcome (PROTOCOL.md)."""
    client = await RawClient.open(running.url, "Ada")
    answer = await client.request("hello", client="t", name="Ada")
    assert answer["type"] == "error" and answer["code"] == "not_welcome"
    assert (await client.request("list_matches"))["type"] == "match_list"  # still open
    await client.close()


async def test_unsupported_version_is_refused_with_4001(running: Running) -> None:
    """A hello in a version the server does not speak: unsupported_version, close 4001."""
    client = await RawClient.connect(running.url)
    answer = await client.request("hello", v=2, client="t", name="Eve")
    assert answer["code"] == "unsupported_version" and "1" in answer["message"]
    assert await client.closed() == CloseCode.UNSUPPORTED_VERSION


async def test_same_identity_on_a_new_connection_replaces_the_old_one(running: Running) -> None:
    """A second hello with the same token wins; the older connection gets REPLACED (4004)."""
    old = await RawClient.open(running.url, "Ada")
    assert old.welcome is not None
    new = await RawClient.open(running.url, "Ada", token=old.welcome["token"])
    assert new.welcome is not None and new.welcome["player"] == old.welcome["player"]
    assert await old.closed() == CloseCode.REPLACED
    assert (await new.request("list_matches"))["type"] == "match_list"
    await new.close()


async def test_the_token_is_only_ever_sent_in_welcome(running: Running) -> None:
    """The secret resume token appears in its welcome and in no other frame."""
    ada = await RawClient.open(running.url, "Ada")
    bea = await RawClient.open(running.url, "Bea")
    assert ada.welcome is not None and bea.welcome is not None
    tokens = {ada.welcome["token"], bea.welcome["token"]}
    joined = await ada.request("create_match", name="t", seats=3, bots=[{"seat": 2}])
    await bea.request("join", match=joined["match"])
    await ada.request("chat", text="hello")
    await ada.request("start")
    await bea.request("sync")
    await ada.request("list_matches")
    for client in (ada, bea):
        for message in client.messages[1:]:
            assert not tokens & set(strings_in(message)), message
        await client.close()


# -- acting -------------------------------------------------------------------------------


async def turn_prompt(session: Session, tracker: Tracker, after: int = -1) -> wire.Prompt:
    """Follow the match (choosing openings) until the seat is prompted for a turn
    at a seq beyond ``after``."""
    async with asyncio.timeout(10):
        async for message in session:
            tracker.feed(message)
            if (
                isinstance(message, wire.Prompt)
                and message.seq == tracker.seq
                and message.seq > after
            ):
                if not isinstance(message.actions[0], wire.Opening):
                    return message
                await session.answer(message, message.actions[0])
    raise AssertionError("the session ended")


async def opening_only(session: Session) -> None:
    """Make the opening choice, then stop reading."""
    prompt = await session.next_of(wire.Prompt, timeout=5)
    await session.answer(prompt, prompt.actions[-1])  # one action if both cards are alike


async def refused(
    session: Session, action: wire.Action, code: str, seq: int | None = None
) -> RequestError:
    """``act`` (naming the prompt of ``seq``, or none) is refused with ``code``."""
    with pytest.raises(RequestError) as caught:
        await session.act(action, seq=seq)
    assert caught.value.code == code, caught.value
    return caught.value


async def test_nobody_can_act_for_a_seat_they_do_not_hold(running: Running) -> None:
    """Outsiders, spectators and other seats cannot act for or take a seat; nothing changes."""
    async with (
        connect(running.url, name="Ada", reconnect=False) as ada,
        connect(running.url, name="Bea", reconnect=False) as bea,
        connect(running.url, name="Cy", reconnect=False) as cy,
        connect(running.url, name="Dee", reconnect=False) as dee,
    ):
        joined = await ada.create_match(seats=3, bots=[(2, "easy")], first_seat=0)
        await bea.join(joined.match, seat=1)
        await ada.start()
        await opening_only(bea)
        tracker = Tracker(0)
        prompt = await turn_prompt(ada, tracker)
        before = await ada.sync()
        theirs = prompt.actions[0]
        await refused(cy, theirs, "not_in_match")  # in no match at all
        await cy.watch(joined.match)
        await refused(cy, theirs, "not_in_match")  # a spectator
        with pytest.raises(RequestError) as caught:
            await cy.join(joined.match, seat=0)  # taking the seat
        assert caught.value.code == "match_not_open"
        await refused(bea, theirs, "not_your_turn")  # another seat of the match
        await refused(bea, wire.Give(to_seat=0), "not_your_turn")
        await dee.create_match(seats=2)  # seated in another (open) match
        await refused(dee, theirs, "match_not_ready")
        after = await ada.sync()
        assert after == msgspec_replace_id(before, after.id)
        await ada.answer(prompt, theirs)  # the seat's own player still can


def msgspec_replace_id(snapshot: wire.Snapshot, request_id: Any) -> wire.Snapshot:
    """The snapshot as the answer to another request."""
    return msgspec.structs.replace(snapshot, id=request_id)


async def test_illegal_actions_are_refused_and_change_nothing(running: Running) -> None:
    """Illegal actions get illegal_action and the next snapshot equals the one before."""
    rng = random.Random(7)
    async with connect(running.url, name="Ada", reconnect=False) as ada:
        await ada.create_match(seats=3, bots=[(1, "easy"), (2, "hard")], first_seat=0)
        await ada.start()
        tracker = Tracker(0)
        first = await turn_prompt(ada, tracker)
        assert tracker.state is not None
        drawn = tracker.state["drawn"]

        async def unchanged(action: wire.Action) -> None:
            before = await ada.sync()
            await refused(ada, action, "illegal_action")
            after = await ada.sync()
            assert after == msgspec_replace_id(before, after.id), action

        await unchanged(wire.Give(to_seat=0))  # R15: to another player
        await unchanged(wire.Give(to_seat=5))  # no such seat at a 3-seat table
        await unchanged(wire.Opening(secret=drawn))  # the opening is over
        await ada.answer(first, wire.Keep())
        tracker.acted.add(first.seq)
        await unchanged(wire.Keep())  # R13: the second card needs another action
        second = await turn_prompt(ada, tracker, after=first.seq)
        assert wire.Keep() not in second.actions
        await ada.answer(second, second.actions[0])
        tracker.acted.add(second.seq)
        await play_randomly(ada, 0, rng, tracker=tracker)
        await finish_and_check(ada, tracker)
        await unchanged(wire.Keep())  # R18: the match is over


async def test_act_is_answered_before_the_events_it_causes(running: Running) -> None:
    """The requester's `ok` comes before the events its action caused (PROTOCOL.md, act)."""
    client = await RawClient.open(running.url, "Ada")
    await client.request("create_match", name="t", seats=2, bots=[{"seat": 1}], first_seat=0)
    await client.request("start")
    prompt = await client.next(lambda m: m["type"] == "prompt")
    await client.request("act", action=prompt["actions"][0])
    prompt = await client.next(lambda m: m["type"] == "prompt" and m["seq"] > prompt["seq"])
    request_id = await client.send("act", action=prompt["actions"][0])
    answer = await client.next(lambda m: m.get("id") == request_id)
    assert answer["type"] == "ok"
    index = next(i for i, m in enumerate(client.messages) if m.get("id") == request_id)
    caused = [
        m for m in client.messages[:index] if m["type"] == "event" and m["seq"] > prompt["seq"]
    ]
    assert not caused, f"{len(caused)} events of the action came before its ok: {caused[0]}"
    await client.close()
