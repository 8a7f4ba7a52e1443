"""Every frame of real matches fits protocol/schema's JSON Schema.

A real server on 127.0.0.1 plays matches of 2 to 6 seats — two people and
bots, a timed open-box match with a host who removes a seat, chat, a
refused request, a finished match's replay, its analysis and a rematch, then
one match of each larger size with bots and one that allows hints — while a
spectator and a lobby browser watch; some of them ask for ``batch``.
Every frame each of them receives is validated against
``#/$defs/ServerMessage`` (and every frame they send against
``#/$defs/ClientMessage``), and the test asserts that every server→client
message type and every event kind was seen at least once.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection

from protocol import SERVER_MESSAGES
from protocol.types import EVENT_TYPES

from ..protocol.schema_helpers import problems
from .helpers import RawClient, serve

#: Server→client message types this test cannot reach, with the reason. None:
#: every type is reachable on one server.
NOT_REACHABLE: dict[str, str] = {}
#: Event kinds it cannot reach. None: a full match has every kind — though
#: ``festival_started`` and ``cards_dealt`` only in a replay, since the setup
#: is already in the snapshot a match's start sends (PROTOCOL.md's walk-through).
EVENTS_NOT_REACHABLE: dict[str, str] = {}


class Recording(RawClient):
    """A raw client that also keeps every frame it sends."""

    def __init__(self, ws: ClientConnection) -> None:
        super().__init__(ws)
        #: every frame sent, as sent
        self.sent: list[bytes] = []

    async def send(self, type_: str, **fields: Any) -> int:
        """Send a request with a fresh id, and keep the frame."""
        request_id = next(self._ids)
        frame = msgpack.packb({"v": 1, "type": type_, "id": request_id, **fields})
        self.sent.append(frame)
        await self.ws.send(frame)
        return request_id


#: the clients that ask for ``batch`` (the others get every message alone)
BATCHING = {"Lou", "Bob", "Cy"}


async def _open(url: str, name: str) -> Recording:
    client = await Recording.connect(url)
    assert isinstance(client, Recording)
    features = ["batch"] if name in BATCHING else []
    welcome = await client.request("hello", client="schema-test/1", name=name, features=features)
    assert welcome["type"] == "welcome", welcome
    assert welcome.get("features", []) == features
    return client


async def _play(client: RawClient, used: Counter[str], rng: random.Random) -> None:
    """Answer every fresh prompt until the match ends, choosing an action kind
    used least so far (so that every kind of action, and of event, comes up)."""
    answered: set[int] = set()
    while True:
        message = await client.next(timeout=10)
        if message["type"] == "event" and message["event"]["kind"] == "match_ended":
            return
        if message["type"] == "prompt" and message["seq"] not in answered:
            answered.add(message["seq"])
            actions = message["actions"]
            fewest = min(used[a["kind"]] for a in actions)
            action = rng.choice([a for a in actions if used[a["kind"]] == fewest])
            used[action["kind"]] += 1
            await client.send("act", action=action, seq=message["seq"])


async def _until(client: RawClient, type_: str) -> dict[str, Any]:
    return await client.next(lambda m: m["type"] == type_)


async def _record_matches(url: str) -> list[Recording]:
    """Play everything the module docstring lists; the clients, with their frames."""
    rng = random.Random(33)
    used: Counter[str] = Counter()
    lou = await _open(url, "Lou")  # browses the lobby, and stays there
    assert (await lou.request("list_matches"))["type"] == "match_list"
    ada, bob, sam = await asyncio.gather(*(_open(url, n) for n in ("Ada", "Bob", "Sam")))

    # an open match that everyone leaves goes from the lobby (match_removed)
    cy = await _open(url, "Cy")
    await cy.request("create_match", name="gone", seats=2)
    await cy.request("leave")
    await _until(lou, "match_removed")
    assert (await lou.request("join", match="no-such-match"))["type"] == "error"

    # two people, timed and open box; the host removes Bob, who comes back
    joined = await ada.request("create_match", name="pair", seats=2, turn_timer=60, open_box=True)
    match = joined["match"]
    assert (await bob.request("join", match=match))["type"] == "joined"
    assert (await ada.request("remove_seat", seat=1))["type"] == "ok"
    await _until(bob, "removed")
    assert (await bob.request("join", match=match))["type"] == "joined"
    assert (await sam.request("watch", match=match))["seat"] is None
    assert (await ada.request("chat", text="good luck"))["type"] == "ok"
    assert (await ada.request("start"))["type"] == "ok"
    await asyncio.gather(_play(ada, used, rng), _play(bob, used, rng))
    page = await ada.request("replay", match=match)
    assert page["type"] == "replay" and "seed" in page, page
    # issue 32: the analysis of Ada's seat, with its progress
    request = await ada.send("analyse", match=match)
    analysis = await ada.next(
        lambda m: m.get("id") == request and m["type"] != "analysis_progress", timeout=60
    )
    assert analysis["type"] == "analysis", analysis
    assert (await ada.request("play_again"))["type"] == "joined"
    await _until(bob, "rematch")

    # one match of each larger size: Ada and easy bots, Sam watching
    for seats in range(3, 7):
        bots = [{"seat": seat, "strength": "easy"} for seat in range(1, seats)]
        match = (await ada.request("create_match", name=f"six-{seats}", seats=seats, bots=bots))[
            "match"
        ]
        assert (await sam.request("watch", match=match))["type"] == "joined"
        assert (await ada.request("start"))["type"] == "ok"
        await _play(ada, used, rng)
        await sam.next(lambda m: m.get("event", {}).get("kind") == "match_ended")
    # issue 31: profiles, the leaderboard, history, a linked device and a rename
    await _until(ada, "ratings")  # the last match was rated
    assert (await ada.request("profile"))["type"] == "profile"
    assert (await ada.request("profile", player="bot_easy"))["type"] == "profile"
    board = await ada.request("leaderboard", offset=0, limit=5)
    assert board["type"] == "leaderboard" and board["entries"], board
    history = await ada.request("history", limit=2)
    assert history["type"] == "history" and history["matches"] and "next" in history, history
    assert (await ada.request("history", before=history["next"]))["type"] == "history"
    code = await ada.request("link_code")
    assert code["type"] == "link_code"
    tablet = await Recording.connect(url)
    assert isinstance(tablet, Recording)
    linked = await tablet.request("hello", client="schema-test/1", name="x", link=code["code"])
    assert linked["type"] == "welcome" and linked["name"] == "Ada", linked
    assert (await tablet.request("rename", name="Ada L"))["type"] == "ok"
    assert (await bob.request("rename", name="ada l"))["code"] == "name_taken"

    # issue 32: a match with hints (never rated), and one hint; Bob plays it, as
    # Ada's first connection was replaced by her linked tablet's
    bots = [{"seat": 1, "strength": "easy"}]
    await bob.request("create_match", name="hinted", seats=2, bots=bots, hints=True)
    assert (await bob.request("start"))["type"] == "ok"
    prompt = await _until(bob, "prompt")
    assert (await bob.request("hint", seq=prompt["seq"], timeout=30))["type"] == "hint"
    await bob.send("act", action=prompt["actions"][0], seq=prompt["seq"])
    await _play(bob, used, rng)
    assert (await sam.request("sync"))["type"] == "snapshot"
    clients = [lou, ada, bob, sam, cy, tablet]
    for client in clients:
        await client.close()
    return clients


async def test_every_frame_of_real_matches_fits_the_schema() -> None:
    """Every frame the players, the spectator and the lobby browser received
    (and sent) is valid, and every message type and event kind (live or in a replay) came up."""
    async with serve(analysis_deals=2) as running:
        async with asyncio.timeout(90):
            clients = await _record_matches(running.url)
    types: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    seats: set[int] = set()
    for client in clients:
        for frame in client.frames:
            assert problems(msgpack.unpackb(frame), "ServerMessage") == [], frame
            if msgpack.unpackb(frame)["type"] == "batch":
                types["batch"] += 1
        for message in client.messages:  # a batch's one by one
            types[message["type"]] += 1
            if message["type"] == "event":
                kinds[message["event"]["kind"]] += 1
            if message["type"] == "replay":
                kinds.update(event["kind"] for event in message["events"])
            if message["type"] == "snapshot":
                seats.add(len(message["state"]["seats"]))
        for frame in client.sent:
            assert problems(msgpack.unpackb(frame), "ClientMessage") == [], frame
    assert seats == {2, 3, 4, 5, 6}
    # the validator is not vacuous: a seat out of range in a real snapshot is refused
    snapshot = next(m for m in clients[1].messages if m["type"] == "snapshot")
    snapshot["state"]["seats"][0]["seat"] = 6
    assert problems(snapshot, "ServerMessage") == [
        "state/seats/0/seat: 6 is greater than the maximum of 5"
    ]
    missing = set(SERVER_MESSAGES) - set(types) - set(NOT_REACHABLE)
    assert not missing, f"never received: {sorted(missing)} (seen: {dict(types)})"
    all_kinds = {str(cls.__struct_config__.tag) for cls in EVENT_TYPES}
    missing = all_kinds - set(kinds) - set(EVENTS_NOT_REACHABLE)
    assert not missing, f"no event of kind: {sorted(missing)} (seen: {dict(kinds)})"
