"""The box stays closed after the end (R27), checked on the wire.

* A finished match's ``replay`` shows a stranger exactly the events a
  spectator saw live, byte for byte, and nothing else: no seed, no salt, no
  actions, no private card (R25–R26 hold after the end).
* A player who held a seat gets that seat's own view — its dealt cards, its
  draws, its own secret cards — and nobody else's, during play and after.
* An open-box match says so in the lobby before anyone sits down, commits to
  its seed when it is dealt, and once finished publishes seed, salt and
  actions: the commitment checks, and the engine replays them to the very
  events everyone saw. The choice and the salt outlive a restart.
* Bots' generators come from a server secret, not from the public match id.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

import protocol as wire
from engine import DEFAULT_RULESET, project_event
from engine.record import MatchRecord, action_from_data
from server.match import views
from server.match.bots import Bot

from ..protocol.doc_examples import blocks
from ..storage.helpers import in_process, open_session
from .helpers import PRIVATE_EVENT_FIELDS, RawClient, Tracker, play_randomly, serve

#: the keys only an open-box match's finished replay may carry
OPEN_BOX_KEYS = {"seed", "salt", "first_seat", "actions"}


def _ended(message: dict[str, Any]) -> bool:
    return bool(message["type"] == "event" and message["event"]["kind"] == "match_ended")


async def _play_raw(client: RawClient, rng: random.Random, until: int | None = None) -> None:
    """Answer every fresh prompt with a random legal action until the match
    ends (or ``until`` actions have been sent)."""
    answered: set[int] = set()
    async with asyncio.timeout(20):
        while until is None or len(answered) < until:
            message = await client.next()
            if _ended(message):
                return
            if message["type"] == "prompt" and message["seq"] not in answered:
                answered.add(message["seq"])
                await client.send("act", action=rng.choice(message["actions"]))


async def _replay_frames(client: RawClient, match: str) -> list[bytes]:
    """Every page of a match's ``replay``, as the exact frames the server sent."""
    frames: list[bytes] = []
    from_seq: int | None = 1
    async with asyncio.timeout(10):
        while from_seq is not None:
            before = len(client.frames)
            page = await client.request("replay", match=match, from_seq=from_seq)
            assert page["type"] == "replay", page
            frames.append(next(f for f in client.frames[before:] if msgpack.unpackb(f) == page))
            from_seq = page.get("next_seq")
    return frames


def _pages(frames: list[bytes]) -> list[dict[str, Any]]:
    """The pages as plain maps, each checked to be exactly a protocol message."""
    pages = []
    for frame in frames:
        decoded = wire.decode_server_message(frame)
        assert isinstance(decoded, wire.ReplayPage), decoded
        assert wire.encode(decoded) == frame, "extra or reordered keys in a replay page"
        pages.append(msgpack.unpackb(frame))
    return pages


def _replay_event_frames(match: str, pages: list[dict[str, Any]]) -> list[bytes]:
    """The pages' events as the ``event`` frames a live receiver would have got."""
    frames = []
    for page in pages:
        for offset, event in enumerate(page["events"]):
            message = wire.Event(
                match=match, seq=page["from_seq"] + offset, event=_wire_event(event)
            )
            frames.append(wire.encode(message))
    return frames


def _wire_event(event: dict[str, Any]) -> wire.GameEvent:
    decoded = wire.decode_server_message(
        msgpack.packb({"v": 1, "type": "event", "match": "x", "seq": 1, "event": event})
    )
    assert isinstance(decoded, wire.Event)
    return decoded.event


def _assert_seen_live(replayed: list[bytes], client: RawClient) -> None:
    """The replay's events are, byte for byte, the ``event`` frames the client
    received live; the ones before those (the deal, R10–R11) came in its first
    snapshot, which reflects exactly that many events."""
    live = [f for f in client.frames if msgpack.unpackb(f)["type"] == "event"]
    snapshot = next(m for m in client.messages if m["type"] == "snapshot")
    setup = snapshot["seq"]
    assert setup > 0 and msgpack.unpackb(live[0])["seq"] == setup + 1
    assert replayed[setup:] == live


def _shown_private(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events whose private fields hold a card."""
    return [
        e
        for e in events
        if any(e.get(f) is not None for f in PRIVATE_EVENT_FIELDS.get(e["kind"], ()))
    ]


def _events(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for page in pages for event in page["events"]]


# -- a normal match: the box stays closed -----------------------------------------------------


@pytest.mark.parametrize("players", [2, 4])
async def test_r27_a_finished_matchs_replay_is_public_to_strangers_and_private_to_its_seat(
    players: int,
) -> None:
    """A stranger's replay is the spectator's live events, byte for byte, with no
    seed, salt, actions or private card; the seated player's is its own live
    events, with its own cards and nobody else's (R25–R27)."""
    async with serve(bot_delay=0.002) as running:
        ada = await RawClient.open(running.url, "Ada")
        spectator = await RawClient.open(running.url, "Spectator")
        stranger = await RawClient.open(running.url, "Stranger")
        bots = [{"seat": s, "strength": "easy"} for s in range(1, players)]
        joined = await ada.request("create_match", name="closed", seats=players, bots=bots)
        match = joined["match"]
        assert (await spectator.request("watch", match=match))["seat"] is None
        assert (await ada.request("start"))["type"] == "ok"
        await _play_raw(ada, random.Random(players), until=1)  # the opening
        # during play: a stranger sees public events; Ada her own view too
        (early,) = _pages(await _replay_frames(stranger, match))
        assert early["status"] == "running" and not OPEN_BOX_KEYS & set(early)
        assert "seat" not in early and not _shown_private(early["events"])
        (mine_early,) = _pages(await _replay_frames(ada, match))
        assert mine_early["seat"] == 0 and not OPEN_BOX_KEYS & set(mine_early)
        dealt = [e for e in mine_early["events"] if e["kind"] == "cards_dealt"]
        assert [e["cards"] is not None for e in dealt] == [s == 0 for s in range(players)]
        # waiting for that answer skipped whatever came meanwhile: a prompt again
        await ada.send("sync")
        await _play_raw(ada, random.Random(players))
        await spectator.next(_ended, timeout=20)

        public = _pages(await _replay_frames(stranger, match))
        mine = _pages(await _replay_frames(ada, match))
        for client in (ada, spectator, stranger):
            await client.close()

    assert public[-1]["status"] == "finished"
    for page in public:
        assert not OPEN_BOX_KEYS & set(page), f"a closed box's replay shows {page.keys()}"
        assert "seat" not in page
    assert not _shown_private(_events(public))
    _assert_seen_live(_replay_event_frames(match, public), spectator)

    for page in mine:
        assert not OPEN_BOX_KEYS & set(page) and page["seat"] == 0
    shown = _shown_private(_events(mine))
    assert shown and all(e["seat"] == 0 for e in shown)
    kinds = {e["kind"] for e in shown}
    assert {"cards_dealt", "opening_chosen", "card_drawn"} <= kinds
    _assert_seen_live(_replay_event_frames(match, mine), ada)
    state = next(m for m in ada.messages if m["type"] == "snapshot")["state"]
    assert all(page["points"] == state["points"] for page in public + mine)  # public (R30)
    hand = state["hand"]
    (dealt_to_ada,) = [e for e in _events(mine) if e["kind"] == "cards_dealt" and e["seat"] == 0]
    assert dealt_to_ada["cards"] == hand


async def test_r27_a_seat_is_recognised_by_player_not_by_connection() -> None:
    """Ada's seat's view comes back on a new connection of hers (her token), and
    without the join code; a stranger without the code is refused."""
    async with serve(bot_delay=0.002) as running:
        ada = await RawClient.open(running.url, "Ada")
        joined = await ada.request(
            "create_match", name="private", seats=2, bots=[{"seat": 1}], join_code="tulip"
        )
        match = joined["match"]
        assert (await ada.request("start"))["type"] == "ok"
        await _play_raw(ada, random.Random(3))
        assert ada.welcome is not None
        await ada.close()
        again = await RawClient.open(running.url, "Ada", token=ada.welcome["token"])
        (page, *_) = _pages(await _replay_frames(again, match))
        assert page["seat"] == 0 and _shown_private(page["events"])
        stranger = await RawClient.open(running.url, "Stranger")
        refused = await stranger.request("replay", match=match)
        assert (refused["type"], refused["code"]) == ("error", "bad_join_code")
        (public, *_) = _pages(await _replay_frames_with_code(stranger, match, "tulip"))
        assert "seat" not in public and not _shown_private(public["events"])
        await again.close()
        await stranger.close()


async def _replay_frames_with_code(client: RawClient, match: str, code: str) -> list[bytes]:
    before = len(client.frames)
    page = await client.request("replay", match=match, join_code=code)
    assert page["type"] == "replay", page
    return [f for f in client.frames[before:] if msgpack.unpackb(f) == page]


# -- an open-box match -------------------------------------------------------------------------


def _doc_snippet() -> str:
    """PROTOCOL.md's check of a finished open-box match (the one ```py block)."""
    (snippet,) = blocks("py")
    return snippet


async def test_r27_an_open_box_match_commits_to_its_seed_and_publishes_it_once_finished() -> None:
    """The lobby shows the open box before anyone sits; the deal publishes a
    commitment; nothing more until the end; then seed, salt and actions check
    against the commitment and replay through the engine to the public events."""
    async with serve(bot_delay=0.002) as running:
        ada = await RawClient.open(running.url, "Ada")
        stranger = await RawClient.open(running.url, "Stranger")
        bots = [{"seat": 1, "strength": "easy"}, {"seat": 2, "strength": "medium"}]
        joined = await ada.request("create_match", name="box", seats=3, bots=bots, open_box=True)
        match = joined["match"]
        listed = (await stranger.request("list_matches"))["matches"]
        (summary,) = [s for s in listed if s["match"] == match]
        assert summary["open_box"] is True and "seed_commitment" not in summary
        assert (await ada.request("start"))["type"] == "ok"
        running_update = await ada.next(
            lambda m: m["type"] == "match_update" and m["match"]["status"] == "running"
        )
        commitment = running_update["match"]["seed_commitment"]
        assert len(commitment) == 64 and int(commitment, 16) >= 0
        (during,) = _pages(await _replay_frames(stranger, match))
        assert not OPEN_BOX_KEYS & set(during), "an open box is closed until the end"
        await _play_raw(ada, random.Random(7))
        await stranger.next(
            lambda m: m["type"] == "match_update" and m["match"]["status"] == "finished",
            timeout=20,
        )
        listed = (await stranger.request("list_matches"))["matches"]
        (finished,) = [s for s in listed if s["match"] == match]
        assert finished["seed_commitment"] == commitment
        pages = _pages(await _replay_frames(stranger, match))
        log = running.lobby.matches[match].core.events()
        spectator_view = [views.event_to_wire(project_event(e, None)) for e in log]
        await ada.close()
        await stranger.close()

    last = pages[-1]
    assert last["status"] == "finished" and "first_seat" not in last  # chance chose (R12)
    for page in pages:
        assert {k: page.get(k) for k in OPEN_BOX_KEYS} == {k: last.get(k) for k in OPEN_BOX_KEYS}
    salt = bytes.fromhex(last["salt"])
    assert hashlib.sha256(salt + last["seed"].to_bytes(8, "big")).hexdigest() == commitment

    events = [_wire_event(e) for e in _events(pages)]
    assert events == spectator_view
    started = events[0]
    assert isinstance(started, wire.FestivalStarted)
    record = MatchRecord(
        ruleset=DEFAULT_RULESET,
        players=3,
        seed=last["seed"],
        first_seat=started.first_seat,
        actions=tuple((a["seat"], action_from_data(a["action"])) for a in last["actions"]),
    )
    replayed, complete = record.replay_events()
    assert replayed.is_over
    assert [views.event_to_wire(project_event(e, None)) for e in complete] == events

    # PROTOCOL.md's snippet runs as written, on this very page
    scope: dict[str, Any] = {"page": last, "commitment": commitment, "players": 3}
    exec(compile(_doc_snippet(), "PROTOCOL.md", "exec"), scope)
    assert scope["m"].is_over and scope["m"].scoring == replayed.scoring


async def test_r27_a_closed_box_never_shows_a_commitment() -> None:
    """A normal match's summary has neither the open-box mark nor a commitment."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        await ada.request("create_match", name="shut", seats=2, bots=[{"seat": 1}])
        assert (await ada.request("start"))["type"] == "ok"
        update = await ada.next(
            lambda m: m["type"] == "match_update" and m["match"]["status"] == "running"
        )
        assert "open_box" not in update["match"] and "seed_commitment" not in update["match"]
        await ada.close()


async def test_r27_open_box_and_its_salt_outlive_a_restart(tmp_path: Path) -> None:
    """An open-box match running at a restart keeps its choice and commitment, and
    once finished its published salt and seed still check; a closed match
    finished before the restart still shows no seed."""
    data = tmp_path / "data"
    async with in_process(data) as server:
        ada = await open_session(server.url, "Ada")
        token = ada.token
        shut = await ada.create_match(name="shut", seats=2, bots=[(1, "easy")])
        await ada.start()
        await play_randomly(ada, 0, random.Random(1))
        joined = await ada.create_match(name="box", seats=2, bots=[(1, "easy")], open_box=True)
        await ada.start()
        box = joined.match
        listed = {s.match: s for s in await ada.list_matches()}
        commitment = listed[box].seed_commitment
        assert listed[box].open_box and commitment is not None
        await ada.close()

    async with in_process(data) as server:
        viewer = await open_session(server.url, "Vic")
        listed = {s.match: s for s in await viewer.list_matches()}
        assert listed[box].open_box and listed[box].seed_commitment == commitment
        assert not listed[shut.match].open_box and listed[shut.match].seed_commitment is None
        closed = await viewer.request(wire.Replay, match=shut.match)
        assert isinstance(closed, wire.ReplayPage) and closed.status == "finished"
        assert (closed.seed, closed.salt, closed.actions) == (None, None, ())
        ada = await open_session(server.url, "Ada", token=token)
        await play_randomly(ada, 0, random.Random(2), tracker=Tracker(0))
        page = await viewer.request(wire.Replay, match=box)
        assert isinstance(page, wire.ReplayPage) and page.status == "finished"
        assert page.seed is not None and page.salt is not None and page.actions
        salt = bytes.fromhex(page.salt)
        assert hashlib.sha256(salt + page.seed.to_bytes(8, "big")).hexdigest() == commitment
        await ada.close()
        await viewer.close()


# -- bots ---------------------------------------------------------------------------------------


def _bot_draws(make: Callable[[], Bot]) -> list[float]:
    bot = make()
    return [bot.rng.random() for _ in range(4)]


def test_a_bots_generator_comes_from_the_secret_not_from_the_match_id() -> None:
    """The same secret, match and seat give the same generator; another secret
    another one, and neither is the generator the public id alone would give."""
    one, two = bytes(32), bytes([1]) * 32
    same = _bot_draws(lambda: Bot.for_seat("easy", "m1", 1, one))
    assert same == _bot_draws(lambda: Bot.for_seat("easy", "m1", 1, one))
    assert same != _bot_draws(lambda: Bot.for_seat("easy", "m1", 1, two))
    assert same != _bot_draws(lambda: Bot.for_seat("easy", "m1", 2, one))
    public = random.Random("m1:1")
    assert same != [public.random() for _ in range(4)]
    with pytest.raises(ValueError, match="strength"):
        Bot.for_seat("superb", "m1", 1, one)
    with pytest.raises(ValueError, match="secret"):
        Bot.for_seat("easy", "m1", 1, b"")


async def test_two_servers_give_the_same_match_id_different_bots() -> None:
    """Two servers, one match id: their bots draw different numbers, so knowing
    the id predicts nothing."""
    draws = []
    for _ in range(2):
        async with serve(new_id=lambda: "same") as running:
            ada = await RawClient.open(running.url, "Ada")
            bots = [{"seat": 1, "strength": "easy"}, {"seat": 2, "strength": "easy"}]
            await ada.request("create_match", name="twins", seats=3, bots=bots)
            room = running.lobby.matches["same"].core
            rngs = [room.seats[seat].bot.rng for seat in (1, 2)]  # type: ignore[union-attr]
            draws.append([rng.random() for rng in rngs])
            await ada.close()
    assert draws[0] != draws[1]
    assert draws[0][0] != random.Random("same:1").random()
