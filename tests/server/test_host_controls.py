"""The host's waiting room, on the match core with a fake clock: adding a
bot, freeing a seat, starting with those who came, and the spectator count.

Each refusal names its code; each change is on disk before anyone is told
(the driver checks ``joined`` against the stored row) and every member gets
the ``match_update`` that follows it.
"""

from __future__ import annotations

from typing import Any

from server.match import commands as c
from server.match.info import Status
from server.match.records import StoredSeat
from server.match.seats import Seat

from .core_driver import SEED, Conn, Driver, new_core, person


def _codes(driver: Driver, conn: Conn) -> list[str]:
    return [m["code"] for m in driver.replies(conn) if m["type"] == "error"]


def _seats(conn: Conn) -> list[dict[str, Any]]:
    return list(conn.last("match_update")["match"]["seats"])


def _open(seats: int = 3) -> tuple[Driver, Conn, Conn]:
    """Ada hosts in seat 0, Bea joins seat 1; the rest is free."""
    driver = Driver(new_core(seats))
    ada, bea = driver.connect("Ada"), driver.connect("Bea")
    driver.do(c.Open(ada.number, ada.who, 0, driver.request_id()))
    driver.do(c.Join(bea.number, bea.who, None, None, driver.request_id()))
    return driver, ada, bea


def _add(driver: Driver, conn: Conn, seat: int | None, strength: str = "hard") -> None:
    driver.do(c.AddBot(conn.number, conn.who, seat, strength, driver.request_id()))


def _remove(driver: Driver, conn: Conn, seat: int) -> None:
    driver.do(c.RemoveSeat(conn.number, conn.who, seat, driver.request_id()))


def test_the_host_adds_a_bot_to_the_lowest_free_seat_stored_before_everyone_is_told() -> None:
    driver, ada, bea = _open(4)
    _add(driver, ada, None)
    assert driver.replies(ada)[-1]["type"] == "ok"
    row = driver.stored_row()
    assert row is not None and row.seats[2].bot == "hard"
    for conn in (ada, bea):
        seat = _seats(conn)[2]
        assert (seat["kind"], seat["strength"]) == ("bot", "hard")
    _add(driver, ada, 3, "easy")
    assert _seats(bea)[3]["strength"] == "easy"


def test_adding_a_bot_is_refused_to_others_in_taken_or_unknown_seats_and_when_full() -> None:
    driver, ada, bea = _open(3)
    _add(driver, bea, None)
    _add(driver, ada, 1)
    _add(driver, ada, 5)
    assert _codes(driver, bea) == ["not_host"]
    assert _codes(driver, ada) == ["seat_taken", "bad_message"]
    _add(driver, ada, None)
    _add(driver, ada, None)
    assert _codes(driver, ada)[-1] == "seat_taken"  # no free seat is left
    assert [s.kind for s in driver.core.seats] == ["human", "human", "bot"]


def test_removing_a_bot_frees_its_seat() -> None:
    driver, ada, bea = _open(3)
    _add(driver, ada, 2)
    _remove(driver, ada, 2)
    assert driver.replies(ada)[-1]["type"] == "ok"
    assert _seats(bea)[2]["kind"] == "empty"
    row = driver.stored_row()
    assert row is not None and row.seats[2].bot is None


def test_a_removed_player_is_told_put_out_of_the_match_and_may_join_again() -> None:
    driver, ada, bea = _open(3)
    _remove(driver, ada, 1)
    assert bea.last("removed") == {"v": 1, "type": "removed", "match": "m1", "host": "Ada"}
    assert not bea.inside and bea.number not in driver.core.members
    assert _seats(ada)[1]["kind"] == "empty"
    row = driver.stored_row()
    assert row is not None and row.seats[1].player is None
    driver.do(c.Join(bea.number, bea.who, None, None, driver.request_id()))
    assert driver.replies(bea)[-1]["type"] == "joined" and bea.inside


def test_removing_is_refused_for_oneself_a_free_seat_others_and_once_started() -> None:
    driver, ada, bea = _open(3)
    _remove(driver, ada, 0)
    _remove(driver, ada, 2)
    _remove(driver, ada, 4)
    _remove(driver, bea, 0)
    assert _codes(driver, ada) == ["bad_message", "seat_taken", "bad_message"]
    assert _codes(driver, bea) == ["not_host"]
    _add(driver, ada, 2)
    driver.do(c.Start(ada.number, ada.who, SEED, None, driver.request_id()))
    assert driver.core.status is Status.RUNNING
    _remove(driver, ada, 1)
    _add(driver, ada, None)
    assert _codes(driver, ada)[-2:] == ["match_not_open", "match_not_open"]


def test_a_change_the_disk_refuses_changes_nothing() -> None:
    driver, ada, bea = _open(3)
    driver.failing = 1
    _remove(driver, ada, 1)
    assert _codes(driver, ada) == ["storage_unavailable"]
    assert driver.core.seats[1].player == bea.who and bea.number in driver.core.members


def _rematch_table() -> tuple[Driver, Conn, Conn]:
    """A rematch as the lobby opens it: seats kept for Ada, Bea and Cy, a
    bot in seat 3; Ada (host) and Cy have accepted, Bea has not."""
    core = new_core(4, [(3, "easy")], first_seat=2)
    for index, name in enumerate(["Ada", "Bea", "Cy"]):
        core.seats[index].player = person(name)
        core.seats[index].reserved = True
    driver = Driver(core)
    ada, cy = driver.connect("Ada"), driver.connect("Cy")
    driver.do(c.Join(ada.number, ada.who, None, None, driver.request_id(), True))
    driver.do(c.Join(cy.number, cy.who, None, None, driver.request_id(), True))
    return driver, ada, cy


def test_a_rematch_shows_whose_kept_seat_is_not_accepted_yet_and_stores_it() -> None:
    driver, ada, _cy = _rematch_table()
    assert [s.get("reserved", False) for s in _seats(ada)] == [False, True, False, False]
    row = driver.stored_row()
    assert row is not None and [s.reserved for s in row.seats] == [False, True, False, False]


def test_starting_without_the_absent_drops_their_seats_and_renumbers_before_the_deal() -> None:
    driver, ada, cy = _rematch_table()
    driver.do(c.Start(ada.number, ada.who, SEED, None, driver.request_id(), True))
    core = driver.core
    assert core.status is Status.RUNNING and core.match is not None
    assert [s.index for s in core.seats] == [0, 1, 2] and len(core.match.history) == 0
    assert [s.player.name if s.player else s.kind for s in core.seats] == ["Ada", "Cy", "bot"]
    assert cy.last("joined")["seat"] == 1 and cy.last("snapshot")["seat"] == 1
    assert core.settings.first_seat == 1  # Cy's seat, renumbered with her (R12)
    row = driver.stored_row()
    assert row is not None and [s.player for s in row.seats] == ["ada", "cy", None]
    assert core.members == {ada.number: 0, cy.number: 1}


def test_starting_without_the_absent_needs_two_seats_left() -> None:
    driver = Driver(new_core(3))
    ada = driver.connect("Ada")
    driver.do(c.Open(ada.number, ada.who, 0, driver.request_id()))
    driver.do(c.Start(ada.number, ada.who, SEED, None, driver.request_id(), True))
    assert _codes(driver, ada) == ["match_not_ready"]
    assert len(driver.core.seats) == 3 and driver.core.status is Status.OPEN


def test_a_start_without_the_absent_that_cannot_be_stored_leaves_the_table_as_it_was() -> None:
    driver, ada, cy = _rematch_table()
    driver.failing = 1
    driver.do(c.Start(ada.number, ada.who, SEED, None, driver.request_id(), True))
    assert _codes(driver, ada) == ["storage_unavailable"]
    core = driver.core
    assert [s.index for s in core.seats] == [0, 1, 2, 3] and core.settings.first_seat == 2
    assert core.members == {ada.number: 0, cy.number: 2}


def test_the_players_see_the_spectators_come_and_go() -> None:
    driver, ada, _bea = _open(3)
    eve = driver.connect("Eve")
    driver.do(c.Watch(eve.number, eve.who, None, driver.request_id()))
    summary = ada.last("match_update")["match"]
    assert (summary["spectators"], summary["watching"]) == (1, ["Eve"])
    driver.do(c.Detach(eve.number))
    assert "spectators" not in ada.last("match_update")["match"]  # 0: the default


def test_seat_copies_keep_the_reservation() -> None:
    seat = Seat(1, player=person("Bea"), reserved=True)
    assert seat.copy().reserved and seat.stored().reserved


def test_a_kept_seat_is_stored_as_such_and_read_back_and_old_rows_read_the_same() -> None:
    kept = StoredSeat(player="bea", reserved=True)
    assert StoredSeat.from_data(kept.to_data()) == kept
    assert "reserved" not in StoredSeat(player="bea").to_data()  # rows as before
    assert StoredSeat.from_data({"player": "bea", "bot": None, "left": False}) == StoredSeat("bea")
