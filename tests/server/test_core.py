"""The match core on its own: a fake clock, no socket and no sleep.

Each test hands the core commands through :class:`~tests.server.core_driver.Driver`,
which carries out its outputs as the actor does, and checks what the core
asked for and in which order: every answer after its fact is stored, an act
answers the decision it names, a player who is back plays their own seat.
"""

from __future__ import annotations

from typing import Any

import protocol as wire
from server.match import commands as c
from server.match.info import Status
from server.match.outputs import AskBot, Entered, Reply, Send, Store
from server.match.records import AppendAction, SaveMatch

from .core_driver import Conn, Driver, fresh_prompt, new_core, seated


def _codes(driver: Driver, conn: Conn) -> list[str]:
    return [m["code"] for m in driver.replies(conn) if m["type"] == "error"]


def test_joined_goes_out_only_once_the_new_match_is_stored() -> None:
    """``create_match``'s ``joined`` waits for the match's row: the core first
    asks for the store and nothing else; once it is stored, joined, then the rest."""
    core = new_core(3, [(2, "easy")])
    driver = Driver(core)
    ada = driver.connect("Ada")
    first = core.handle(c.Open(ada.number, ada.who, 0, 1), 0.0, 0.0)
    assert len(first) == 1 and isinstance(first[0], Store) and first[0].wait
    (write,) = first[0].writes
    assert isinstance(write, SaveMatch) and write.row.seats[0].player == "ada"
    then = core.handle(c.Stored(), 0.0, 0.0)
    assert isinstance(then[0], Reply) and isinstance(then[0].message, wire.Joined)
    assert isinstance(then[1], Entered)


def test_a_new_match_that_cannot_be_stored_never_was() -> None:
    """If the new match's row cannot be stored, its creator hears
    ``storage_unavailable`` and the match goes; nobody was ever told of it."""
    driver = Driver(new_core(3, [(2, "easy")]))
    driver.failing = 1
    ada = driver.connect("Ada")
    driver.do(c.Open(ada.number, ada.who, 0, 1))
    assert _codes(driver, ada) == ["storage_unavailable"]
    assert driver.gone and not ada.inside


def test_a_join_waits_for_the_disk_and_one_that_cannot_be_stored_changes_nothing() -> None:
    """A join's seat is stored before ``joined``; when the disk refuses it,
    Bea hears ``storage_unavailable``, holds no seat, and is not in the match."""
    driver = Driver(new_core(3, [(2, "easy")]))
    ada, bea = driver.connect("Ada"), driver.connect("Bea")
    driver.do(c.Open(ada.number, ada.who, 0, 1))
    driver.failing = 1
    driver.do(c.Join(bea.number, bea.who, None, None, 2))
    assert _codes(driver, bea) == ["storage_unavailable"]
    assert driver.core.seats[1].player is None and bea.number not in driver.core.members
    driver.do(c.Join(bea.number, bea.who, None, None, 3))
    assert driver.replies(bea)[-1]["type"] == "joined"
    assert driver.stored_row().seats[1].player == "bea"  # type: ignore[union-attr]


def test_r11_an_opening_act_names_the_opening_prompt_while_others_choose() -> None:
    """R11: every seat chooses its opening at once; Bea's act naming the
    opening prompt's seq is hers even after Ada chose (the events moved on)."""
    driver, (ada, bea) = seated()
    ada_prompt, bea_prompt = fresh_prompt(ada), fresh_prompt(bea)
    assert ada_prompt["seq"] == bea_prompt["seq"] == 4
    driver.act(ada, ada_prompt["actions"][0], ada_prompt["seq"])
    driver.answer_bots()
    assert driver.core.seq > 4
    driver.act(bea, bea_prompt["actions"][0], bea_prompt["seq"])
    assert driver.replies(bea)[-1]["type"] == "ok"


def _to_ada_turn(driver: Driver, ada: Conn, bea: Conn) -> dict[str, Any]:
    """Both players make their openings; the bot too: Ada's first turn prompt."""
    for conn in (ada, bea):
        prompt = fresh_prompt(conn)
        driver.act(conn, prompt["actions"][0], prompt["seq"])
    driver.answer_bots()
    prompt = fresh_prompt(ada)
    assert prompt["actions"][0]["kind"] != "opening"
    return prompt


def test_a_late_act_after_the_timer_took_the_decision_is_refused() -> None:
    """R13 with a turn timer: the timer runs out and the server's stand-in
    takes Ada's decision (``by`` timer); her act naming that prompt then gets
    ``decision_taken`` and changes nothing, though an action of that kind is
    legal in the decision open now."""
    driver, (ada, bea) = seated(turn_timer=5.0)
    prompt = _to_ada_turn(driver, ada, bea)
    driver.advance(5.0)
    (ask,) = [a for a in driver.asks if a.seat == 0]
    driver.answer_bot(driver.asks.index(ask))
    assert driver.applied[-1].by == "timer"
    seq_after = driver.core.seq
    driver.act(ada, prompt["actions"][0], prompt["seq"])
    assert _codes(driver, ada)[-1] == "decision_taken"
    assert driver.core.seq == seq_after


def test_an_act_after_the_deadline_but_before_the_stand_in_is_refused_too() -> None:
    """Once the turn timer has run out, the decision is the timer's: an act
    that arrives while the stand-in thinks is refused (``decision_taken``), and
    the stand-in's answer is the one played."""
    driver, (ada, bea) = seated(turn_timer=5.0)
    prompt = _to_ada_turn(driver, ada, bea)
    driver.advance(5.0)
    driver.act(ada, prompt["actions"][0], prompt["seq"])
    assert _codes(driver, ada)[-1] == "decision_taken"
    driver.answer_bots()
    assert any(a.seat == 0 and a.by == "timer" for a in driver.applied)


def test_a_stale_act_never_lands_on_the_next_decision() -> None:
    """Ada keeps her first card (R13); an act that names the first card's
    prompt again — sent before she saw the second — is refused
    ``decision_taken``: the second card is not played for her."""
    driver, (ada, bea) = seated()
    prompt = _to_ada_turn(driver, ada, bea)
    driver.act(ada, {"kind": "keep"}, prompt["seq"])
    second = fresh_prompt(ada)
    assert second["seq"] > prompt["seq"]
    driver.act(ada, {"kind": "add_face_up"}, prompt["seq"])
    assert _codes(driver, ada)[-1] == "decision_taken"
    driver.act(ada, {"kind": "add_face_up"}, second["seq"])
    assert driver.replies(ada)[-1]["type"] == "ok"


def test_an_act_without_seq_answers_the_decision_open_when_it_arrives() -> None:
    """Within version 1 an act may leave ``seq`` out: it answers whatever
    decision is open then (which a late act may not be)."""
    driver, (ada, bea) = seated()
    _to_ada_turn(driver, ada, bea)
    driver.act(ada, {"kind": "keep"}, None)
    driver.act(ada, {"kind": "add_face_up"}, None)
    assert [m["type"] for m in driver.replies(ada)[-2:]] == ["ok", "ok"]


def test_a_seq_beyond_the_match_is_a_bad_message() -> None:
    """A seq no prompt ever had is the client's mistake: ``bad_message`` on act.seq."""
    driver, (ada, bea) = seated()
    prompt = _to_ada_turn(driver, ada, bea)
    driver.act(ada, prompt["actions"][0], prompt["seq"] + 50)
    error = driver.replies(ada)[-1]
    assert (error["code"], error["path"]) == ("bad_message", "act.seq")


def test_a_player_who_is_back_plays_their_own_seat() -> None:
    """Ada drops; after the grace period the stand-in is asked for her
    decision; she comes back before it answers: its answer is dropped, she is
    prompted for the decision still open, and her act is the one played."""
    driver, (ada, bea) = seated(grace_period=3.0)
    prompt = _to_ada_turn(driver, ada, bea)
    driver.do(c.Detach(ada.number))
    driver.advance(3.0)
    (ask,) = [a for a in driver.asks if a.seat == 0]
    assert driver.core.seats[0].autopilot
    back = driver.connect("Ada")
    driver.do(c.Attach(back.number, back.who))
    assert not driver.core.seats[0].autopilot
    kinds = [m["type"] for m in back.messages]
    assert kinds[:4] == ["joined", "match_update", "snapshot", "prompt"], kinds
    before = len(driver.applied)
    driver.answer_bot(driver.asks.index(ask))  # the stand-in's answer comes too late
    assert len(driver.applied) == before
    again = fresh_prompt(back)
    assert again["seq"] == prompt["seq"]
    driver.act(back, again["actions"][0], again["seq"])
    assert driver.replies(back)[-1]["type"] == "ok"
    assert driver.applied[-1].by is None  # hers, not the stand-in's


def test_an_action_that_cannot_be_stored_pauses_the_match_unchanged() -> None:
    """The disk refuses Ada's action: she hears ``match_paused``, nobody
    receives an event, the match is as it was, and nothing more is played."""
    driver, (ada, bea) = seated()
    prompt = _to_ada_turn(driver, ada, bea)
    log = driver.core.seq
    events_before = len([m for m in bea.messages if m["type"] == "event"])
    driver.failing = 1
    driver.act(ada, prompt["actions"][0], prompt["seq"])
    assert _codes(driver, ada)[-1] == "match_paused"
    assert driver.core.status is Status.PAUSED and driver.core.seq == log
    assert len([m for m in bea.messages if m["type"] == "event"]) == events_before
    assert bea.last("match_update")["match"]["status"] == "paused"
    driver.act(ada, prompt["actions"][0], prompt["seq"])
    assert _codes(driver, ada)[-1] == "match_paused"


def test_ok_comes_before_the_events_and_after_the_action_is_stored() -> None:
    """The order of one act's outputs: the store (waited for), then ``ok`` to
    the player, then each member's events, then the next prompt."""
    driver, (ada, bea) = seated()
    prompt = _to_ada_turn(driver, ada, bea)
    outputs = driver.act(ada, prompt["actions"][0], prompt["seq"])
    assert isinstance(outputs[0], Store) and isinstance(outputs[0].writes[0], AppendAction)
    assert isinstance(outputs[1], Reply) and outputs[1].conn == ada.number
    sends = [o for o in outputs[2:] if isinstance(o, Send)]
    assert sends and all(isinstance(o, Send | AskBot) for o in outputs[2:])


def test_a_sync_repeats_the_open_prompt_and_a_spectator_gets_none() -> None:
    """``sync``: the snapshot, then the prompt for the decision still open; a
    spectator's sync has no prompt, and a spectator cannot act."""
    driver, (ada, bea) = seated()
    prompt = _to_ada_turn(driver, ada, bea)
    driver.do(c.Sync(ada.number, 99))
    assert [m["type"] for m in ada.messages[-2:]] == ["snapshot", "prompt"]
    assert ada.messages[-1]["seq"] == prompt["seq"]
    cy = driver.connect("Cy")
    driver.do(c.Watch(cy.number, cy.who, None, 100))
    driver.do(c.Sync(cy.number, 101))
    assert cy.messages[-1]["type"] == "snapshot"
    driver.act(cy, prompt["actions"][0], prompt["seq"])
    assert _codes(driver, cy)[-1] == "not_in_match"


def test_a_turn_timer_is_told_to_a_member_after_its_snapshot() -> None:
    """A spectator who comes in while a turn timer runs gets the timers after
    the snapshot, the seconds left as the fake clock says."""
    driver, (ada, bea) = seated(turn_timer=10.0)
    _to_ada_turn(driver, ada, bea)
    driver.advance(4.0)
    cy = driver.connect("Cy")
    driver.do(c.Watch(cy.number, cy.who, None, 7))
    kinds = [m["type"] for m in cy.messages]
    assert kinds == ["joined", "match_update", "snapshot", "turn_timer"], kinds
    (timer,) = cy.messages[-1]["timers"]
    assert timer == {"seat": 0, "seconds": 6.0}


def test_an_open_match_everyone_left_goes_after_the_grace_period() -> None:
    """Its seated player dropped: the open match waits the grace period, then
    goes (and forgets its row); one whose player came back stays."""
    driver = Driver(new_core(3, [(2, "easy")], grace_period=3.0))
    ada = driver.connect("Ada")
    driver.do(c.Open(ada.number, ada.who, 0, 1))
    driver.do(c.Detach(ada.number))
    driver.advance(2.0)
    back = driver.connect("Ada")
    driver.do(c.Attach(back.number, back.who))
    driver.advance(5.0)
    assert not driver.gone
    driver.do(c.Detach(back.number))
    driver.advance(3.0)
    assert driver.gone


def test_restore_names_the_open_decisions_as_before_the_restart() -> None:
    """A match rebuilt from its actions names each open decision by the seq it
    opened at before: an act naming the opening prompt (seq 4) is still
    accepted after others chose and the server restarted."""
    driver, (ada, bea) = seated()
    opening = fresh_prompt(bea)
    driver.act(ada, fresh_prompt(ada)["actions"][0], fresh_prompt(ada)["seq"])
    actions = list(driver.core.match.history)  # type: ignore[union-attr]
    core = new_core(3, [(2, "easy")])
    core.seats[0].player, core.seats[1].player = ada.who, bea.who
    core.restore(driver.core.match.seed, actions)  # type: ignore[union-attr]
    again = Driver(core)
    again.preload(driver.disk)
    again.do(c.Resume())
    bea2 = again.connect("Bea")
    again.do(c.Attach(bea2.number, bea2.who))
    again.act(bea2, opening["actions"][0], opening["seq"])
    assert again.replies(bea2)[-1]["type"] == "ok"


def test_without_storage_nothing_is_written_and_nothing_waits() -> None:
    """A server without storage: the core asks for no store at all; a join is
    answered at once, an act's ``ok`` comes first and its events after, as
    with storage, and a late act is refused all the same."""
    driver, (ada, bea) = seated(durable=False)
    prompt = _to_ada_turn(driver, ada, bea)
    outputs = driver.act(ada, {"kind": "keep"}, prompt["seq"])
    assert isinstance(outputs[0], Reply) and outputs[0].conn == ada.number
    assert not driver.outputs_of(Store) and not driver.disk
    driver.act(ada, {"kind": "add_face_up"}, prompt["seq"])
    assert _codes(driver, ada)[-1] == "decision_taken"


def test_a_finished_match_keeps_its_actions_and_deals_its_events_again() -> None:
    """The engine is deterministic from (ruleset, seed, actions) (R1–R30): a
    finished match holds only its actions between commands, yet a replay of
    it gives every event Ada was sent live, and a snapshot its final scores."""
    driver, (ada,) = seated(players=("Ada",), bots=((1, "easy"),))
    for _ in range(500):
        core = driver.core
        if core.status is Status.FINISHED:
            break
        if core.match is not None and 0 in core.match.to_act:
            prompt = fresh_prompt(ada)
            driver.act(ada, prompt["actions"][0], prompt["seq"])
        else:
            driver.answer_bots()
    core = driver.core
    assert core.status is Status.FINISHED
    assert core._dealt is not None and not core._dealt.in_memory, "its actions, not its match"
    live = [m["event"] for m in ada.messages if m["type"] == "event"]
    assert len(live) == core.seq - 3  # the setup's three events came in the snapshot
    replayed: list[dict[str, Any]] = []
    while len(replayed) < core.seq:
        driver.do(c.Replay(ada.number, ada.who, None, len(replayed) + 1, driver.request_id()))
        replayed.extend(ada.last("replay")["events"])
    assert replayed[3:] == live
    driver.do(c.Sync(ada.number, driver.request_id()))
    assert ada.last("snapshot")["state"]["scoring"] is not None
    assert not core._dealt.in_memory, "dealt again for the command, let go after it"
