"""Issue 29, "a storage lock held by someone else", in the match core alone
(a fake clock, no socket, no sleep): a store told ``StorageLocked`` is late,
not failed. An action is held — the match paused for everyone, its player not
answered, nothing played, timers stopped, the server still answering — and
once its ``Stored`` comes the match resumes by itself: ``ok``, the events,
``running``, the prompts and turn timers afresh. Any other change just goes on
waiting for its store."""

from __future__ import annotations

from typing import Any

import pytest

from server.errors import StorageError, StorageLocked
from server.match import commands as c
from server.match.info import Status
from server.match.outputs import Changed, Output, Store
from server.match.records import Write
from tests.server.core_driver import SEED, Conn, Driver, fresh_prompt, new_core

LOCKED = StorageLocked("the database x is locked by another process (pid 7)")


class LockedDriver(Driver):
    """A driver whose disk, while ``locked``, says each waiting store waits
    for the lock; :meth:`release` then stores what waited and says so."""

    def __init__(self, core: Any) -> None:
        super().__init__(core)
        self.locked = False
        self.waiting: tuple[Write, ...] = ()

    def _store(self, writes: tuple[Write, ...]) -> c.Stored:
        if not self.locked:
            return super()._store(writes)
        self.waiting = writes
        return c.Stored(LOCKED)

    def release(self, error: Exception | None = None) -> list[Output]:
        """The lock is gone (or, with ``error``, storage gave up): the store
        that waited is done, told to the match as the actor does, a command."""
        self.locked = False
        if error is None:
            for write in self.waiting:
                self._write(write)
        self.waiting = ()
        return self.do(c.Stored(error))


def locked_table(**options: Any) -> tuple[LockedDriver, Conn, Conn]:
    """Ada (the host) and Bea seated with an easy bot, the match started and
    the openings made; then the disk is locked."""
    driver = LockedDriver(new_core(3, [(2, "easy")], host="Ada", **options))
    ada, bea = driver.connect("Ada"), driver.connect("Bea")
    driver.do(c.Open(ada.number, ada.who, 0, driver.request_id()))
    driver.do(c.Join(bea.number, bea.who, None, None, driver.request_id()))
    driver.do(c.Start(ada.number, ada.who, SEED, None, driver.request_id()))
    for conn in (ada, bea):
        prompt = fresh_prompt(conn)
        driver.act(conn, prompt["actions"][0], prompt["seq"])
    driver.answer_bots()
    driver.locked = True
    return driver, ada, bea


def _to_act(driver: Driver, ada: Conn, bea: Conn) -> Conn:
    """Whoever of Ada and Bea must act now."""
    assert driver.core.match is not None
    (seat,) = driver.core.match.to_act
    return ada if seat == 0 else bea


def test_an_action_waiting_for_the_lock_pauses_the_match_then_it_resumes() -> None:
    """Issue 29: The action's store waits for the lock: everyone sees ``paused``, the
    player is not answered, no event goes out, the turn timer stops; a sync is
    answered and another act refused with ``match_paused``. Once stored: the
    player's ``ok``, the event, ``running``, and a fresh prompt with its timer."""
    driver, ada, bea = locked_table(turn_timer=10.0)
    player = _to_act(driver, ada, bea)
    other = bea if player is ada else ada
    prompt = fresh_prompt(player)
    seen = {conn.number: len(conn.messages) for conn in (ada, bea)}
    outputs = driver.act(player, prompt["actions"][0], prompt["seq"])
    core = driver.core
    assert core.status is Status.PAUSED and not core.waiting
    assert [o for o in outputs if isinstance(o, Changed)][-1].info.status is Status.PAUSED
    assert not driver.timers, "a timer runs while the match is paused"
    for conn in (ada, bea):
        new = conn.messages[seen[conn.number] :]
        assert not [m for m in new if m["type"] in ("event", "ok", "error")], new
        assert [m for m in new if m["type"] == "match_update"][-1]["match"]["status"] == "paused"
    driver.advance(60.0)  # no timer or bot plays meanwhile
    assert len(driver.stored_actions()) == len(core.match.history)  # type: ignore[union-attr]
    driver.do(c.Sync(other.number, driver.request_id()))
    assert other.messages[-1]["type"] == "snapshot"
    driver.act(other, prompt["actions"][0], None)
    assert other.messages[-1]["code"] == "match_paused"

    history = len(core.match.history)  # type: ignore[union-attr]
    mark = len(player.messages)
    driver.release()
    assert driver.core.info.status is Status.RUNNING
    assert core.match is not None and len(core.match.history) == history + 1
    assert len(driver.stored_actions()) == history + 1
    kinds = [m["type"] for m in player.messages[mark:]]
    assert "ok" in kinds and "event" in kinds, kinds
    update = next(m for m in player.messages[mark:] if m["type"] == "match_update")
    assert update["match"]["status"] == "running"
    assert driver.timers, "the turn timer runs again"
    nxt = _to_act(driver, ada, bea)
    assert fresh_prompt(nxt)["seq"] == core.seq


def test_an_action_whose_store_finally_fails_stays_paused_and_is_refused() -> None:
    """Issue 29: Storage gave up waiting (the server stops): the player hears
    ``match_paused``, nothing was applied, and the match stays paused."""
    driver, ada, bea = locked_table()
    player = _to_act(driver, ada, bea)
    prompt = fresh_prompt(player)
    history = len(driver.core.match.history)  # type: ignore[union-attr]
    driver.act(player, prompt["actions"][0], prompt["seq"])
    driver.release(StorageError("not stored: locked (the server stopped first)"))
    assert driver.core.status is Status.PAUSED
    assert len(driver.core.match.history) == history  # type: ignore[union-attr]
    errors = [m["code"] for m in driver.replies(player) if m["type"] == "error"]
    assert errors[-1:] == ["match_paused"]


def test_a_change_that_waits_for_the_lock_just_waits() -> None:
    """Issue 29: Not an action (a join): told ``StorageLocked``, the core still waits
    for that store, pausing nothing; once stored, Bea has joined."""
    core = new_core(3, [(2, "easy")])
    driver = Driver(core)
    ada, bea = driver.connect("Ada"), driver.connect("Bea")
    driver.do(c.Open(ada.number, ada.who, 0, 1))
    first = core.handle(c.Join(bea.number, bea.who, None, None, 2), 0.0, 0.0)
    assert isinstance(first[-1], Store) and first[-1].wait
    assert core.handle(c.Stored(LOCKED), 0.0, 0.0) == []
    assert core.waiting and core.status is Status.OPEN
    with pytest.raises(RuntimeError):  # nothing else may come in meanwhile
        core.handle(c.Sync(ada.number, 3), 0.0, 0.0)
    then = core.handle(c.Stored(), 0.0, 0.0)
    assert not core.waiting and core.seats[1].player is not None and then
