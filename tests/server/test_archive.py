"""Finished matches the server no longer keeps in memory (issues 31 and 32),
over real sockets, with real SQLite in a tmp folder.

A server that keeps one finished match in memory (``keep_finished`` 1) plays
several to the end; the older ones leave memory but not the disk:

* history lists them with ``replay`` true; ``replay`` answers each from
  storage with the requester's own view, exactly the events it saw live, and
  nothing R25–R27 hide (no other seat's card, no seed of a closed box); a
  finished open-box match publishes seed, salt and actions that replay
  through the engine to its public events;
* ``analyse`` answers them, and a second time from the stored analysis;
* someone else's seat is ``not_your_seat``, a tutorial is its creator's alone,
  a join code is asked for as in memory, an unknown match is ``no_such_match``;
* the revived matches are never listed, counted or written back; after a
  restart (same data directory) the same answers come;
* a damaged stored match gets a clear error, and the server goes on;
* without storage, an old match is gone as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from pathlib import Path
from typing import Any

import msgpack

import protocol as wire
from engine import DEFAULT_RULESET, project_event
from engine.record import MatchRecord, action_from_data
from server.match import views
from server.storage import FILE_NAME

from ..storage.helpers import in_process
from .helpers import PRIVATE_EVENT_FIELDS, RawClient, plain, serve

#: few deals: these tests check where the analysis comes from, not its values
DEALS = 3
#: the keys only a finished open-box match's replay may carry (R27)
OPEN_BOX_KEYS = {"seed", "salt", "first_seat", "actions"}
SETTINGS: dict[str, Any] = {"keep_finished": 1, "analysis_deals": DEALS, "bot_think_ms": 5.0}


def _is_end(message: dict[str, Any]) -> bool:
    return bool(message["type"] == "event" and message["event"]["kind"] == "match_ended")


async def _finish(client: RawClient, seats: int, seed: int, **fields: Any) -> str:
    """Create a match with easy bots in every other seat, start it and play
    it to its end with random legal actions; its id."""
    bots = fields.pop("bots", [{"seat": s, "strength": "easy"} for s in range(1, seats)])
    joined = await client.request("create_match", name="old", seats=seats, bots=bots, **fields)
    assert joined["type"] == "joined", joined
    assert (await client.request("start"))["type"] == "ok"
    rng = random.Random(seed)
    answered: set[int] = set()
    async with asyncio.timeout(30):
        while True:
            message = await client.next()
            if _is_end(message) and message["match"] == joined["match"]:
                return str(joined["match"])
            if message["type"] == "prompt" and message["seq"] not in answered:
                answered.add(message["seq"])
                await client.send("act", action=rng.choice(message["actions"]))


async def _replay(client: RawClient, match: str, **fields: Any) -> list[dict[str, Any]]:
    """Every page of a match's replay, each checked to be exactly a protocol
    message (no key beside the schema's)."""
    pages: list[dict[str, Any]] = []
    from_seq: int | None = 1
    async with asyncio.timeout(10):
        while from_seq is not None:
            before = len(client.frames)
            page = await client.request("replay", match=match, from_seq=from_seq, **fields)
            assert page["type"] == "replay", page
            frame = next(f for f in client.frames[before:] if msgpack.unpackb(f) == page)
            decoded = wire.decode_server_message(frame)
            assert isinstance(decoded, wire.ReplayPage) and wire.encode(decoded) == frame
            pages.append(page)
            from_seq = page.get("next_seq")
    return pages


def _events(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for page in pages for event in page["events"]]


def _private_shown(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events whose private fields hold a card."""
    return [
        e
        for e in events
        if any(e.get(f) is not None for f in PRIVATE_EVENT_FIELDS.get(e["kind"], ()))
    ]


def _live_events(client: RawClient, match: str) -> tuple[int, list[dict[str, Any]]]:
    """The seq of the first snapshot of ``match`` the client got, and every
    event of it it received live after that, in order."""
    snapshot = next(m for m in client.messages if m["type"] == "snapshot" and m["match"] == match)
    live = [m for m in client.messages if m["type"] == "event" and m["match"] == match]
    return snapshot["seq"], live


def _assert_own_view(pages: list[dict[str, Any]], client: RawClient, match: str) -> None:
    """A seated player's replay (seat 0): the events it received live, one
    for one, and its own cards only (R25, R27); no seed of a closed box."""
    events = _events(pages)
    setup, live = _live_events(client, match)
    assert setup > 0 and [m["seq"] for m in live] == list(range(setup + 1, len(events) + 1))
    assert events[setup:] == [m["event"] for m in live]
    for page in pages:
        assert page["seat"] == 0 and not OPEN_BOX_KEYS & set(page)
    shown = _private_shown(events)
    assert shown and {e["seat"] for e in shown} == {0}
    assert {"cards_dealt", "opening_chosen", "card_drawn"} <= {e["kind"] for e in shown}


def _assert_public(pages: list[dict[str, Any]], own: list[dict[str, Any]]) -> None:
    """A stranger's replay: no seat, no private card, the seated player's
    events with their own cards hidden."""
    for page in pages:
        assert "seat" not in page
    events = _events(pages)
    assert not _private_shown(events)
    assert len(events) == len(own)
    for theirs, mine in zip(events, own, strict=True):
        hidden = {f: None for f in PRIVATE_EVENT_FIELDS.get(mine["kind"], ())}
        assert theirs == {**mine, **hidden}


async def _analyse(
    client: RawClient, match: str, timeout: float = 60.0, **fields: Any
) -> tuple[dict[str, Any], int]:
    """The answer to ``analyse`` (``analysis`` or ``error``), and how many
    ``analysis_progress`` notices came before it."""
    request = await client.send("analyse", match=match, **fields)
    answer = await client.next(
        lambda m: m.get("id") == request and m["type"] in ("analysis", "error"), timeout
    )
    progress = [m for m in client.messages if m["type"] == "analysis_progress"]
    return answer, sum(m["id"] == request for m in progress)


async def _history(client: RawClient, matches: set[str]) -> dict[str, dict[str, Any]]:
    """The client's history entries of these matches, once the server has
    applied every one's result (bounded wait)."""
    async with asyncio.timeout(10):
        while True:
            page = await client.request("history", limit=20)
            assert page["type"] == "history", page
            listed = {m["match"]: m for m in page["matches"]}
            if matches <= set(listed):
                return listed
            await asyncio.sleep(0.05)


def _stored(data: Path, matches: list[str]) -> list[tuple[Any, ...]]:
    """The stored rows and actions of these matches, read beside the server."""
    marks = ",".join("?" * len(matches))
    uri = f"file:{data / FILE_NAME}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        rows = db.execute(f"SELECT * FROM matches WHERE id IN ({marks}) ORDER BY id", matches)
        found = rows.fetchall()
        actions = db.execute(
            f"SELECT * FROM actions WHERE match_id IN ({marks}) ORDER BY match_id, idx", matches
        )
        return found + actions.fetchall()


async def test_old_finished_matches_are_replayed_and_analysed_from_storage(
    tmp_path: Path,
) -> None:
    """Issues 31–32, R25–R27: with one finished match kept in memory, the two
    before it are in history with ``replay`` true; ``replay`` rebuilds each
    from storage as the requester saw it, hiding what R25–R27 hide; ``analyse``
    answers, then answers from the store; other seats, unknown matches and the
    lobby behave as for matches in memory; nothing is written back; a restart
    answers the same."""
    data = tmp_path / "data"
    async with in_process(data, **SETTINGS) as running:
        lobby = running.server.lobby
        ada = await RawClient.open(running.url, "Ada")
        closed = await _finish(ada, 3, seed=1)
        box = await _finish(ada, 2, seed=2, open_box=True)
        newest = await _finish(ada, 2, seed=3)
        assert (await ada.request("leave"))["type"] == "ok"
        assert set(lobby.matches) == {newest}, "only the newest finished match stays in memory"
        on_disk = _stored(data, [closed, box])

        listed = await _history(ada, {closed, box, newest})
        assert all(listed[m].get("replay", True) for m in (closed, box, newest))

        mine = await _replay(ada, closed)
        _assert_own_view(mine, ada, closed)
        revived = lobby.archive.revive(closed)
        assert revived is not None
        log = revived.core.events()
        assert _events(mine) == [plain(views.event_to_wire(project_event(e, 0))) for e in log]

        bo = await RawClient.open(running.url, "Bo")
        public = await _replay(bo, closed)
        _assert_public(public, _events(mine))
        assert all(not OPEN_BOX_KEYS & set(page) for page in public), "R26, R27: box closed"

        opened = await _replay(bo, box)
        last = opened[-1]
        assert last["status"] == "finished" and OPEN_BOX_KEYS - {"first_seat"} <= set(last)
        assert not _private_shown(_events(opened))
        started = _events(opened)[0]
        record = MatchRecord(
            ruleset=DEFAULT_RULESET,
            players=2,
            seed=last["seed"],
            first_seat=started["first_seat"],
            actions=tuple((a["seat"], action_from_data(a["action"])) for a in last["actions"]),
        )
        replayed, complete = record.replay_events()
        assert replayed.is_over
        assert [plain(views.event_to_wire(project_event(e, None))) for e in complete] == (
            _events(opened)
        )

        report, progress = await _analyse(ada, closed)
        assert report["type"] == "analysis", report
        assert (report["match"], report["seat"]) == (closed, 0) and report["decisions"]
        assert progress > 0, "computed now: its progress was told"
        again, progress = await _analyse(ada, closed)
        assert again["decisions"] == report["decisions"] and progress == 0, "from the store"

        for fields in ({}, {"seat": 0}):
            refused, _ = await _analyse(bo, closed, **fields)
            assert refused["code"] == "not_your_seat", refused
        refused, _ = await _analyse(ada, closed, seat=1)
        assert refused["code"] == "not_your_seat", "R27: not another's seat of a closed box"
        for request in ("replay", "analyse"):
            answer = await bo.request(request, match="nosuch01")
            assert (answer["type"], answer["code"]) == ("error", "no_such_match"), request

        # revived, but not the lobby's: not listed, not counted, not stored again
        assert set(lobby.matches) == {newest} and lobby.running_count() == 0
        assert closed in lobby.archive and box in lobby.archive
        browsing = await bo.request("list_matches")
        assert [m["match"] for m in browsing["matches"]] == [newest]
        assert _stored(data, [closed, box]) == on_disk
        token = ada.welcome["token"] if ada.welcome else None
        await ada.close()
        await bo.close()

    async with in_process(data, **SETTINGS) as running:
        assert set(running.server.lobby.matches) == {newest}
        ada = await RawClient.open(running.url, "Ada", token=token)
        listed = await _history(ada, {closed, box, newest})
        assert all(listed[m].get("replay", True) for m in (closed, box, newest))
        assert _events(await _replay(ada, closed)) == _events(mine)
        again, progress = await _analyse(ada, closed)
        assert again["decisions"] == report["decisions"] and progress == 0
        await ada.close()
    assert _stored(data, [closed, box]) == on_disk


async def test_an_old_tutorial_and_an_old_match_with_a_join_code_stay_guarded(
    tmp_path: Path,
) -> None:
    """R27 as in memory: an old tutorial is no match at all to anyone but its
    creator, who replays it; an old match with a join code asks a stranger for
    it (``bad_join_code``, then the public view), locks out an address that
    keeps guessing wrong, and keeps its seats' analyses their players'."""
    tutors = [{"seat": 1, "strength": "medium"}, {"seat": 2, "strength": "medium"}]
    async with in_process(tmp_path / "data", **SETTINGS) as running:
        ada = await RawClient.open(running.url, "Ada")
        tutorial = await _finish(ada, 3, seed=4, bots=tutors, tutorial=True)
        coded = await _finish(ada, 2, seed=5, join_code="tulip")
        newest = await _finish(ada, 2, seed=6)
        assert (await ada.request("leave"))["type"] == "ok"
        assert set(running.server.lobby.matches) == {newest}

        eve = await RawClient.open(running.url, "Eve")
        for request in ("replay", "analyse"):
            answer = await eve.request(request, match=tutorial)
            assert (answer["type"], answer["code"]) == ("error", "no_such_match"), request
        _assert_own_view(await _replay(ada, tutorial), ada, tutorial)

        answer = await eve.request("replay", match=coded)
        assert (answer["type"], answer["code"]) == ("error", "bad_join_code")
        public = await _replay(eve, coded, join_code="tulip")
        _assert_public(public, _events(await _replay(ada, coded)))
        refused, _ = await _analyse(eve, coded, join_code="tulip", seat=0)
        assert refused["code"] == "not_your_seat", refused
        tries = running.server.config.join_code_tries
        for _ in range(tries - 1):  # one wrong code was counted above already
            answer = await eve.request("replay", match=coded, join_code="tulpi")
            assert answer["code"] == "bad_join_code", answer
        answer = await eve.request("replay", match=coded, join_code="tulip")
        assert (answer["type"], answer["code"]) == ("error", "locked_out"), answer
        await ada.close()
        await eve.close()


async def test_a_damaged_old_match_gets_a_clear_error_and_the_server_goes_on(
    tmp_path: Path,
) -> None:
    """An old finished match whose stored actions are damaged: its ``replay``
    and ``analyse`` answer ``internal_error`` saying it cannot be read back
    (and history then says it cannot be replayed), while every other match is
    answered as before."""
    data = tmp_path / "data"
    async with in_process(data, **SETTINGS) as running:
        ada = await RawClient.open(running.url, "Ada")
        damaged = await _finish(ada, 2, seed=7)
        intact = await _finish(ada, 2, seed=8)
        newest = await _finish(ada, 2, seed=9)
        assert (await ada.request("leave"))["type"] == "ok"
        await _history(ada, {damaged, intact, newest})
        token = ada.welcome["token"] if ada.welcome else None
        await ada.close()
    with contextlib.closing(sqlite3.connect(data / FILE_NAME)) as db:
        gone = db.execute("DELETE FROM actions WHERE match_id = ? AND idx = 3", (damaged,))
        assert gone.rowcount == 1
        db.commit()

    async with in_process(data, **SETTINGS) as running:
        ada = await RawClient.open(running.url, "Ada", token=token)
        assert (await _history(ada, {damaged}))[damaged].get("replay", True)
        for request in ("replay", "analyse"):
            answer = await ada.request(request, match=damaged)
            assert (answer["type"], answer["code"]) == ("error", "internal_error"), answer
            assert damaged in answer["message"] and "cannot be read back" in answer["message"]
        listed = await _history(ada, {damaged, intact})
        assert listed[damaged]["replay"] is False and listed[intact].get("replay", True)
        assert (await _replay(ada, intact))[-1]["status"] == "finished"
        assert (await _replay(ada, newest))[-1]["status"] == "finished"
        await ada.close()


async def test_without_storage_an_old_match_is_gone_as_before() -> None:
    """``--no-storage``: a finished match that left memory is ``no_such_match``
    to ``replay`` and ``analyse``, and history says it cannot be replayed."""
    async with serve(**SETTINGS) as running:
        ada = await RawClient.open(running.url, "Ada")
        old = await _finish(ada, 2, seed=10)
        newest = await _finish(ada, 2, seed=11)
        assert (await ada.request("leave"))["type"] == "ok"
        assert set(running.server.lobby.matches) == {newest}
        for request in ("replay", "analyse"):
            answer = await ada.request(request, match=old)
            assert (answer["type"], answer["code"]) == ("error", "no_such_match"), request
        listed = await _history(ada, {old, newest})
        assert listed[old]["replay"] is False and listed[newest].get("replay", True)
        await ada.close()


async def test_one_player_waits_for_at_most_their_share_of_analyses(tmp_path: Path) -> None:
    """Issue 32 on a game night: with one analysis per player, a player who
    asks for two at once gets the first (asked twice: one analysis, answered
    twice) and ``analysis_busy`` for the second, saying it is their own limit;
    another player is served meanwhile; once the first is done, the second is
    granted."""
    settings = {**SETTINGS, "keep_finished": 50, "analyses_per_player": 1}
    async with in_process(tmp_path / "data", **settings) as running:
        ada = await RawClient.open(running.url, "Ada")
        bo = await RawClient.open(running.url, "Bo")
        first = await _finish(ada, 2, seed=12)
        second = await _finish(ada, 2, seed=13)
        bos = await _finish(bo, 2, seed=14)
        asked = [await ada.send("analyse", match=m) for m in (first, first, second)]
        theirs = await bo.send("analyse", match=bos)

        def answer(client: RawClient, request: int) -> Any:
            return client.next(
                lambda m: m.get("id") == request and m["type"] in ("analysis", "error"), 60
            )

        busy = await answer(ada, asked[2])
        assert (busy["type"], busy["code"]) == ("error", "analysis_busy"), busy
        assert "one player" in busy["message"]
        done = [await answer(ada, request) for request in asked[:2]]
        assert [d["type"] for d in done] == ["analysis", "analysis"]
        assert done[0]["decisions"] == done[1]["decisions"]
        assert (await answer(bo, theirs))["type"] == "analysis"
        granted, _ = await _analyse(ada, second)
        assert granted["type"] == "analysis" and granted["match"] == second
        assert ada.welcome is not None
        assert running.server.lobby.analyst.waiting_for(ada.welcome["player"]) == 0
        await ada.close()
        await bo.close()
