"""Hints in the match core (issue 32), driven with a fake clock and no sockets.

* A hint is asked of the actor (``AskHint``) with the seat's own observation
  (R24–R26) and never waited for: the match takes other commands meanwhile.
* When it comes back (``HintReady``) it is answered to the asking connection
  only, aligned with the prompt's actions — if the decision is still open;
  taken meanwhile, the answer is ``decision_taken``.
* One hint at a time per connection (``analysis_busy``); asked again for the
  same decision, the values come at once from the one computed.
"""

from __future__ import annotations

import dataclasses

from engine.analysis import hint
from server.match import commands as c
from server.match.outputs import AskHint

from .core_driver import SEED, Conn, Driver, fresh_prompt, new_core


def _hinted_match() -> tuple[Driver, list[Conn]]:
    """Ada (seat 0) and Bea (seat 1) in a started match that allows hints."""
    core = new_core(2, ())
    core.settings = dataclasses.replace(core.settings, hints=True)
    driver = Driver(core)
    ada, bea = driver.connect("Ada"), driver.connect("Bea")
    driver.do(c.Open(ada.number, ada.who, 0, driver.request_id()))
    driver.do(c.Join(bea.number, bea.who, None, None, driver.request_id()))
    driver.do(c.Start(ada.number, ada.who, SEED, None, driver.request_id()))
    return driver, [ada, bea]


def _ask(driver: Driver, conn: Conn, seq: int | None) -> tuple[int, list[AskHint]]:
    request = driver.request_id()
    outputs = driver.do(c.Hint(conn.number, conn.who, seq, request))
    return request, [o for o in outputs if isinstance(o, AskHint)]


def _ready(driver: Driver, ask: AskHint) -> None:
    values = hint(ask.observation, seed=ask.seed)
    driver.do(c.HintReady(ask.conn, ask.request, ask.seat, ask.decision, ask.seq, values))


def test_a_hint_is_computed_aside_and_answered_aligned_with_the_prompt() -> None:
    """Issue 32, R24–R26: the hint is computed from the asking seat's own
    observation, while the match goes on; its answer goes to that connection
    only and values each of the prompt's actions, in order."""
    driver, (ada, bea) = _hinted_match()
    prompt = fresh_prompt(ada)
    request, asks = _ask(driver, ada, prompt["seq"])
    assert len(asks) == 1
    ask = asks[0]
    assert ask.observation.viewer == 0 and ask.seat == 0
    assert ask.observation.legal_actions, "the seat's own decision"
    # the match does not wait: Bea acts meanwhile
    bea_prompt = fresh_prompt(bea)
    driver.act(bea, bea_prompt["actions"][0], bea_prompt["seq"])
    assert bea.last("ok")
    before = len(bea.messages)
    _ready(driver, ask)
    answer = next(m for m in ada.messages if m.get("id") == request)
    assert answer["type"] == "hint" and answer["seq"] == prompt["seq"]
    assert [o["action"] for o in answer["options"]] == prompt["actions"]
    assert len(bea.messages) == before, "a hint goes to the asking connection only"


def test_a_hint_for_a_decision_taken_meanwhile_is_refused() -> None:
    """Issue 32: Ada acts before her hint is ready: the hint's answer is
    `decision_taken`, and the match is as it was."""
    driver, (ada, _bea) = _hinted_match()
    prompt = fresh_prompt(ada)
    request, (ask,) = _ask(driver, ada, prompt["seq"])
    driver.act(ada, prompt["actions"][0], prompt["seq"])
    history = len(driver.core.match.history) if driver.core.match else 0
    _ready(driver, ask)
    answer = next(m for m in ada.messages if m.get("id") == request)
    assert answer["type"] == "error" and answer["code"] == "decision_taken"
    assert driver.core.match is not None and len(driver.core.match.history) == history


def test_one_hint_at_a_time_and_the_same_decision_costs_nothing_more() -> None:
    """Issue 32: a second hint while the first computes is `analysis_busy`;
    once computed, asking again for that decision is answered at once."""
    driver, (ada, _bea) = _hinted_match()
    prompt = fresh_prompt(ada)
    _, (ask,) = _ask(driver, ada, prompt["seq"])
    busy, asks = _ask(driver, ada, prompt["seq"])
    assert not asks
    refusal = next(m for m in ada.messages if m.get("id") == busy)
    assert refusal["code"] == "analysis_busy"
    _ready(driver, ask)
    first = next(m for m in ada.messages if m.get("id") == ask.request)
    again, asks = _ask(driver, ada, None)
    assert not asks, "not computed again"
    second = next(m for m in ada.messages if m.get("id") == again)
    assert second["options"] == first["options"]


def test_no_hints_without_the_hosts_leave_nor_for_a_stale_prompt() -> None:
    """Issue 32: `hints_off` in a match without hints; with hints, a `seq`
    older than the open decision is `decision_taken`."""
    driver, (ada, _bea) = _hinted_match()
    driver.core.settings = dataclasses.replace(driver.core.settings, hints=False)
    request, asks = _ask(driver, ada, None)
    assert not asks
    assert next(m for m in ada.messages if m.get("id") == request)["code"] == "hints_off"
    driver.core.settings = dataclasses.replace(driver.core.settings, hints=True)
    prompt = fresh_prompt(ada)
    driver.act(ada, prompt["actions"][0], prompt["seq"])
    request, asks = _ask(driver, ada, prompt["seq"])
    assert not asks
    assert next(m for m in ada.messages if m.get("id") == request)["code"] in (
        "decision_taken",
        "not_your_turn",
    )
