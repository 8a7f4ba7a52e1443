"""A room whose action cannot be stored pauses: the player hears
``match_paused``, the match is exactly as it was before the action, everyone
sees the status ``paused``, and nothing more is played until a restart —
after which the match goes on from its last stored action.

Also: while an action is being written, nobody may see it carried out: the
match answers nothing else until it is stored."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import protocol as wire
from client.sdk import RequestError
from server.match.info import Status
from server.match.records import AppendAction, Write
from server.storage import FILE_NAME, StorageError

from .helpers import InProcess, Recorder, in_process, open_session, read_disk


@dataclass
class Table:
    """A started 2-seat match of two SDK clients, the openings made, seat 0 to play."""

    running: InProcess
    match: str
    ana: Recorder
    bea: Recorder
    prompt: wire.Prompt  #: Ana's prompt for the first card of turn 1

    async def views(self) -> dict[str, wire.Snapshot]:
        """Both players' snapshots now."""
        async with asyncio.timeout(5):
            return {"ana": await self.ana.session.sync(), "bea": await self.bea.session.sync()}


async def seat_two(running: InProcess) -> Table:
    """Ana hosts, Bea joins, both make their opening choice; Ana is to play."""
    ana = Recorder(await open_session(running.url, "Ana"))
    bea = Recorder(await open_session(running.url, "Bea"))
    async with asyncio.timeout(10):
        joined = await ana.session.create_match(name="pause", seats=2, first_seat=0)
        await bea.session.join(joined.match)
        await ana.session.start()
        for player in (ana, bea):
            opening = await player.wait_for(wire.Prompt)
            await player.session.answer(opening, opening.actions[0])
        prompt = await ana.wait_for(
            wire.Prompt, lambda m: not isinstance(m.actions[0], wire.Opening)
        )
    return Table(running, joined.match, ana, bea, prompt)


@contextlib.asynccontextmanager
async def table(data_dir: Path) -> AsyncIterator[Table]:
    """A :class:`Table` on an in-process server storing in ``data_dir``."""
    async with in_process(data_dir) as running:
        seated = await seat_two(running)
        try:
            yield seated
        finally:
            await seated.ana.close()
            await seated.bea.close()


def same_view(first: wire.Snapshot, second: wire.Snapshot) -> bool:
    """Two snapshots show the same thing (their request ids aside)."""
    return (first.match, first.seq, first.seat, first.state) == (
        second.match,
        second.seq,
        second.seat,
        second.state,
    )


async def act_and_expect_pause(seated: Table) -> None:
    """Ana's action cannot be stored: she hears ``match_paused``; the match is as
    before for everyone, who saw no event and a match_update saying ``paused``."""
    before = await seated.views()
    marks = {"ana": seated.ana.mark(), "bea": seated.bea.mark()}
    with pytest.raises(RequestError) as refused:
        async with asyncio.timeout(5):
            await seated.ana.session.answer(seated.prompt, seated.prompt.actions[0])
    assert refused.value.code == "match_paused"
    room = seated.running.lobby.matches[seated.match].core
    assert room.status is Status.PAUSED
    assert room.match is not None and len(room.match.history) == 2
    after = await seated.views()
    for name, player in (("ana", seated.ana), ("bea", seated.bea)):
        update = await player.wait_for(
            wire.MatchUpdate, lambda m: m.match.status == "paused", since=marks[name]
        )
        assert update.match.match == seated.match
        assert not player.since(marks[name], wire.Event), f"{name} was told of an event"
        assert same_view(after[name], before[name]), f"{name}'s view of the match changed"
    async with asyncio.timeout(5):
        page = await seated.bea.session.request(wire.Replay, match=seated.match)
        listed = await seated.bea.session.list_matches()
    assert isinstance(page, wire.ReplayPage) and page.status == "paused"
    assert page.seed is None and page.actions == ()
    assert {m.match: m.status for m in listed}[seated.match] == "paused"


async def test_a_failed_write_pauses_the_match_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The action's write fails (the disk is full, say): ``match_paused`` to
    the player, the match as before, status ``paused`` for everyone, and
    nothing more is played even once the disk works again — until a restart,
    after which the match goes on from its last stored action."""
    data = tmp_path / "data"
    async with table(data) as seated:
        storage = seated.running.storage
        write = storage.write

        def full_disk(writes: Sequence[Write], on_locked: Any = None) -> asyncio.Future[Any]:
            if not any(isinstance(w, AppendAction) for w in writes):
                return write(writes, on_locked)
            failed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            failed.set_exception(StorageError("cannot write: database or disk is full"))
            return failed

        with monkeypatch.context() as patch:
            patch.setattr(storage, "write", full_disk)
            await act_and_expect_pause(seated)
        before = await seated.views()
        with pytest.raises(RequestError) as again:  # the disk works again: still paused
            await seated.ana.session.answer(seated.prompt, seated.prompt.actions[0])
        assert again.value.code == "match_paused"
        assert len(read_disk(data).actions[seated.match]) == 2
        tokens = (seated.ana.session.token, seated.bea.session.token)

    async with in_process(data) as running:
        assert running.lobby.matches[seated.match].core.status is Status.RUNNING
        ana = Recorder(await open_session(running.url, "Ana", token=tokens[0]))
        bea = Recorder(await open_session(running.url, "Bea", token=tokens[1]))
        try:
            resumed = await ana.wait_for(wire.Snapshot)
            prompt = await ana.wait_for(wire.Prompt)
            assert (resumed.seq, resumed.state) == (before["ana"].seq, before["ana"].state)
            async with asyncio.timeout(5):
                await ana.session.answer(prompt, prompt.actions[0])
            assert len(read_disk(data).actions[seated.match]) == 3
            await bea.wait_for(wire.Event, lambda m: m.seq == resumed.seq + 1)
        finally:
            await ana.close()
            await bea.close()


async def test_a_real_write_error_pauses_the_match(tmp_path: Path) -> None:
    """Not a stand-in: the database itself refuses the write (another program
    put a row where the action goes), and the room pauses all the same."""
    data = tmp_path / "data"
    async with table(data) as seated:
        with contextlib.closing(sqlite3.connect(data / FILE_NAME)) as db:
            db.execute(
                "INSERT INTO actions (match_id, idx, seat, action) VALUES (?, 2, 1, ?)",
                (seated.match, '{"kind":"keep"}'),
            )
            db.commit()
        await act_and_expect_pause(seated)


async def test_nobody_sees_an_action_while_it_is_being_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While an action is being written, the match takes no other command: a
    sync and a spectator arriving wait behind the write, nobody receives an
    event, and once it is stored the player hears ``ok``, everyone the events,
    and the sync and the spectator's snapshot come after them, showing it."""
    async with table(tmp_path / "data") as seated:
        storage = seated.running.storage
        write = storage.write
        writing = asyncio.Event()
        go_on = asyncio.Event()

        def slow_disk(writes: Sequence[Write], on_locked: Any = None) -> asyncio.Future[Any]:
            if not any(isinstance(w, AppendAction) for w in writes):
                return write(writes, on_locked)

            async def held() -> Any:
                writing.set()
                await go_on.wait()
                return await write(writes, on_locked)

            return asyncio.ensure_future(held())

        monkeypatch.setattr(storage, "write", slow_disk)
        before = await seated.views()
        actor = seated.running.lobby.matches[seated.match]
        bea_mark = seated.bea.mark()
        acting = asyncio.ensure_future(
            seated.ana.session.answer(seated.prompt, seated.prompt.actions[0])
        )
        carla = Recorder(await open_session(seated.running.url, "Carla"))
        try:
            async with asyncio.timeout(5):
                await writing.wait()
                syncing = asyncio.ensure_future(seated.bea.session.sync())
                watching = asyncio.ensure_future(carla.session.watch(seated.match))
                while len(actor._mailbox) < 2:  # both wait behind the write
                    await asyncio.sleep(0.005)
                assert not acting.done() and not syncing.done() and not watching.done()
                assert not seated.bea.since(bea_mark, wire.Event), "an event before the write"
        finally:
            go_on.set()
        async with asyncio.timeout(5):
            await acting
            during = await syncing
            await watching
            watched = await carla.wait_for(wire.Snapshot)
        await carla.close()
        events = seated.bea.since(bea_mark, wire.Event)
        assert events and events[0].seq == before["bea"].seq + 1
        assert during.seq == events[-1].seq == watched.seq  # after the events, showing them
        assert during.state.deck_count == before["bea"].state.deck_count - 1
