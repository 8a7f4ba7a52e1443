"""Who may see what (R24–R26), frame by frame: a spectator receives no private
card at all, and a seated player none but its own."""

from __future__ import annotations

import asyncio
import random
import typing
from typing import Any

import msgpack
import msgspec.inspect as mi

import protocol as wire
from client.sdk import connect

from .helpers import (
    PRIVATE_EVENT_FIELDS,
    PRIVATE_STATE_FIELDS,
    RawClient,
    Running,
    Tracker,
    bots_for,
    check_frame,
    play_randomly,
    serve,
)


async def play_raw(client: RawClient, rng: random.Random) -> None:
    """Answer every fresh prompt with a random legal action until the match ends."""
    answered: set[int] = set()
    async with asyncio.timeout(20):
        while True:
            message = await client.next()
            if message["type"] == "event" and message["event"]["kind"] == "match_ended":
                return
            if message["type"] == "prompt" and message["seq"] not in answered:
                answered.add(message["seq"])
                await client.send("act", action=rng.choice(message["actions"]))


def decoded(frames: list[bytes]) -> list[dict[str, Any]]:
    """The frames as plain maps."""
    return [msgpack.unpackb(frame) for frame in frames]


async def test_spectators_and_seats_never_receive_another_seats_private_cards() -> None:
    """Spectators see no private card in any frame; seats see only their own (R24–R26)."""
    async with serve(bot_delay=0.005) as running:
        await privacy_match(running)


async def privacy_match(running: Running) -> None:
    """The match of the test above, on ``running``."""
    rng = random.Random(5)
    ada = await RawClient.open(running.url, "Ada")
    bea = await RawClient.open(running.url, "Bea")
    early = await RawClient.open(running.url, "Early")
    late = await RawClient.open(running.url, "Late")
    async with connect(running.url, name="Cy", reconnect=False) as cy:
        joined = await ada.request(
            "create_match",
            name="privacy",
            seats=5,
            bots=[{"seat": s, "strength": k} for s, k in bots_for(5, (0, 1, 2))],
        )
        match_id = joined["match"]
        assert (await bea.request("join", match=match_id, seat=1))["seat"] == 1
        assert (await cy.join(match_id, seat=2)).seat == 2
        assert (await early.request("watch", match=match_id))["seat"] is None
        assert (await ada.request("start"))["type"] == "ok"
        cy_play = asyncio.create_task(play_randomly(cy, 2, random.Random(rng.randrange(2**32))))
        players = [
            asyncio.create_task(play_raw(client, random.Random(rng.randrange(2**32))))
            for client in (ada, bea)
        ]
        # a spectator arriving mid-match gets a snapshot, then the events
        await asyncio.sleep(0.05)
        assert (await late.request("watch", match=match_id))["seat"] is None
        first = await late.next(lambda m: m["type"] == "snapshot")
        assert first["state"]["phase"] != "over" and first["seq"] > 10, "not mid-match"
        await late.request("sync")
        async with asyncio.timeout(20):
            await asyncio.gather(*players)
            cy_tracker: Tracker = await cy_play
        for spectator in (early, late):
            await spectator.next(
                lambda m: m["type"] == "event" and m["event"]["kind"] == "match_ended"
            )
            await spectator.request("sync")
    assert cy_tracker.over
    for viewer, client in ((None, early), (None, late), (0, ada), (1, bea)):
        frames = client.frames[1:]  # after the welcome
        for frame in frames:
            check_frame(frame, viewer)
        messages = decoded(frames)
        snapshots = [m for m in messages if m["type"] == "snapshot"]
        assert snapshots and all(s["seat"] == viewer for s in snapshots)
        events = [m["event"] for m in messages if m["type"] == "event"]
        assert any(e["kind"] == "match_ended" for e in events)
        private = [e for e in events if e["kind"] in PRIVATE_EVENT_FIELDS]
        assert private, "no event with private fields was checked"
        shown = [
            e for e in private if any(e[f] is not None for f in PRIVATE_EVENT_FIELDS[e["kind"]])
        ]
        if viewer is None:
            assert not shown
            assert not any(m["type"] == "prompt" for m in messages)
            for snapshot in snapshots:
                assert not any(snapshot["state"].get(f) for f in PRIVATE_STATE_FIELDS)
        else:  # its own draws are shown to it, and only those
            assert shown and all(e["seat"] == viewer for e in shown)
    for client in (ada, bea, early, late):
        await client.close()


def _nullable(field_type: Any) -> bool:
    while isinstance(field_type, mi.Metadata):
        field_type = field_type.type
    return isinstance(field_type, mi.UnionType) and any(
        isinstance(t, mi.NoneType) for t in field_type.types
    )


def test_the_privacy_checks_cover_every_nullable_event_field() -> None:
    """The privacy checks know every nullable (private) event field of the protocol."""
    nullable: dict[str, tuple[str, ...]] = {}
    for cls in typing.get_args(wire.GameEvent):
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType) and isinstance(info.tag, str)
        names = tuple(f.name for f in info.fields if _nullable(f.type))
        if names:
            nullable[info.tag] = names
    assert nullable == PRIVATE_EVENT_FIELDS
    assert set(PRIVATE_STATE_FIELDS) <= set(wire.State.__struct_fields__)


def test_event_frames_show_each_seat_exactly_what_project_event_allows() -> None:
    """R24–R26: the frames a batch of events goes out as, for every seat and a
    spectator, are byte for byte the events as :func:`engine.project_event`
    projects them for that viewer — through a whole 4-player match."""
    import random

    from engine import Match, project_event
    from server.match.views import EventFrames, event_to_wire

    match = Match.new(4, 20261202)
    rng = random.Random(3)
    batches = [list(match.setup_events)]
    while not match.is_over:
        seat = match.to_act[0]
        batches.append(match.apply(seat, rng.choice(match.legal_actions(seat))))
    seq = 1
    for events in batches:
        frames = EventFrames("m1", seq, events)
        for viewer in (None, 0, 1, 2, 3):
            expected = tuple(
                wire.encode(
                    wire.Event(
                        match="m1", seq=seq + i, event=event_to_wire(project_event(e, viewer))
                    )
                )
                for i, e in enumerate(events)
            )
            assert frames.for_seat(viewer) == expected
        seq += len(events)
