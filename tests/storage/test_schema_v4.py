"""Schema version 4: who chose each stored action, where the seat's own player
did not (``event.by``), so that a replay — after a restart too — shows the
table's stand-in and timer marks; a version-3 file is migrated in place, its
actions kept and unmarked."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import protocol as wire
from client.sdk import connect
from protocol.limits import MIN_TURN_TIMER
from server.storage import _MIGRATIONS, APPLICATION_ID, FILE_NAME, SCHEMA_VERSION

from .helpers import Recorder, fetch_replay, in_process
from .test_storage import opened


def _version_3_file(data_dir: Path) -> None:
    """A database as a version-3 server left it: one match with two actions."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        db.executescript(
            f"BEGIN;\n{_MIGRATIONS[1]}\n{_MIGRATIONS[2]}\n{_MIGRATIONS[3]}\n"
            f"PRAGMA application_id = {APPLICATION_ID};\nPRAGMA user_version = 3;\nCOMMIT;"
        )
        db.executemany(
            "INSERT INTO actions (match_id, idx, seat, action) VALUES (?, ?, ?, ?)",
            [("m", 0, 0, '{"kind":"keep"}'), ("m", 1, 1, '{"kind":"add_secret"}')],
        )
        db.commit()


async def test_a_version_3_file_is_migrated_and_its_actions_are_unmarked(tmp_path: Path) -> None:
    """Opening a version-3 file adds ``played_by``: the actions read back the
    same, none of them marked; a new action stores its mark."""
    _version_3_file(tmp_path)
    async with opened(tmp_path) as storage:
        assert storage.actions("m") == [(0, {"kind": "keep"}), (1, {"kind": "add_secret"})]
        assert storage.played_by("m") == {}
        await storage.append_action("m", 2, 0, {"kind": "keep"}, "timer")
        await storage.append_action("m", 3, 1, {"kind": "keep"})
        await storage.append_action("m", 4, 0, {"kind": "keep"}, "stand_in")
        assert storage.played_by("m") == {2: "timer", 4: "stand_in"}
        assert len(storage.actions("m")) == 5
    with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def _marks(pages: list[wire.ReplayPage]) -> dict[int, wire.PlayedBy]:
    """The marks of a replay's pages, by event number; each page's ``by`` is
    empty or as long as its events."""
    marks: dict[int, wire.PlayedBy] = {}
    for page in pages:
        assert len(page.by) in (0, len(page.events)), page
        assert page.by == () or any(page.by), "a page of marks that marks nothing"
        marks.update({page.from_seq + i: by for i, by in enumerate(page.by) if by is not None})
    return marks


async def test_a_replay_shows_who_chose_each_move_also_after_a_restart(tmp_path: Path) -> None:
    """Nobody makes their opening choice in a timed match, so the timer makes
    both (``by: timer``); Ana then plays her first card herself (no mark). Her
    replay carries exactly the marks the table saw live, and so does the
    replay from a server restarted on the same data directory."""
    async with in_process(tmp_path) as running:
        ana = await connect(running.url, name="Ana", reconnect=False)
        bea = await connect(running.url, name="Bea", reconnect=False)
        token = ana.token
        joined = await ana.create_match(seats=2, first_seat=0, turn_timer=MIN_TURN_TIMER)
        await bea.join(joined.match)
        seen = Recorder(ana)
        try:
            await ana.start()
            prompt = await seen.wait_for(
                wire.Prompt,
                lambda p: not isinstance(p.actions[0], wire.Opening),
                timeout=4 * MIN_TURN_TIMER + 5,
            )
            await ana.answer(prompt, prompt.actions[0])
            mine = await seen.wait_for(
                wire.Event, lambda e: e.seq > prompt.seq and getattr(e.event, "seat", None) == 0
            )
            live = {e.seq: e.by for e in seen.since(0, wire.Event) if e.by is not None}
            assert sorted(live.values()) == ["timer", "timer"] and mine.by is None
            pages, _ = await fetch_replay(ana, joined.match)
            # (her second card may meanwhile have been played by the timer: marked, later)
            assert {seq: by for seq, by in _marks(pages).items() if seq <= mine.seq} == live
        finally:
            await seen.close()
            await bea.close()
    async with in_process(tmp_path) as running:
        again = await connect(running.url, name="Ana", token=token, reconnect=False)
        try:
            pages, _ = await fetch_replay(again, joined.match)
            assert {seq: by for seq, by in _marks(pages).items() if seq <= mine.seq} == live
        finally:
            await again.close()
