"""Post-game analyses and hints over real sockets (issue 32).

* A finished match's analysis of the requester's seat: every decision, each
  option valued, the choice, the best, the loss, the mark, the summary; the
  same as the engine's own analysis of that seat from the match's record;
  a second request is answered from storage with the same values.
* R27: another player's seat is refused, unless the match is a finished
  open-box match; an unfinished match is refused.
* Hints: refused without the host's leave, given in a match that allows
  them, aligned with the prompt's actions, from the seat's knowledge only
  (R24–R26: values, nothing else); a match with hints says so in the lobby
  and is never rated.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

import protocol as wire
from client.sdk import RequestError, Session, connect
from engine import DEFAULT_RULESET, Match
from engine.analysis import analyse_seat
from engine.record import MatchRecord
from server.analyses.service import analysis_seed
from server.match.views import action_from_wire, action_to_wire

from ..storage.helpers import in_process
from .helpers import Running, play_randomly, serve

#: few deals: the tests check the plumbing, the engine's tests the values
DEALS = 3


def _record_of(page: wire.ReplayPage, players: int) -> MatchRecord:
    """The engine's record of a finished open-box match, from its replay."""
    assert page.seed is not None
    first = Match.new(players, page.seed, DEFAULT_RULESET, page.first_seat).first_seat
    actions = tuple((a.seat, action_from_wire(a.action)) for a in page.actions)
    return MatchRecord(DEFAULT_RULESET, players, page.seed, first, actions)


async def _full_replay(session: Session, match: str) -> wire.ReplayPage:
    pages = [await session.replay(match)]
    while pages[-1].next_seq is not None:
        pages.append(await session.replay(match, from_seq=pages[-1].next_seq))
    last = pages[-1]
    actions = tuple(a for page in pages for a in page.actions)
    return wire.ReplayPage(
        match=match,
        status=last.status,
        ruleset=last.ruleset,
        from_seq=1,
        events=(),
        seed=pages[0].seed,
        salt=pages[0].salt,
        first_seat=pages[0].first_seat,
        actions=actions,
    )


async def _finish_against_bots(
    session: Session, seats: int, seed: int = 7, **options: Any
) -> tuple[str, list[wire.Prompt]]:
    """Play a match against bots to its end; its id and every prompt seen."""
    joined = await session.create_match(
        seats=seats, bots=[(s, "medium") for s in range(1, seats)], **options
    )
    await session.start()
    seen: list[object] = []
    await play_randomly(session, 0, random.Random(seed), seen=seen)
    return joined.match, [m for m in seen if isinstance(m, wire.Prompt)]


async def test_a_finished_match_gives_the_seats_analysis_then_the_same_from_storage(
    tmp_path: Path,
) -> None:
    """Issue 32: every decision of the requester's seat, each option valued from
    that seat's observation (the engine's own analysis of the record, same deals
    and seed), chosen and best among the options, loss and mark consistent;
    progress comes first; asked again (after a restart), the stored analysis
    answers with the same values and no progress."""
    async with in_process(tmp_path, analysis_deals=DEALS, bot_think_ms=5.0) as running:
        async with connect(running.url, name="Ada", reconnect=False) as ada:
            match, prompts = await _finish_against_bots(ada, 3, open_box=True)
            heard: list[wire.AnalysisProgress] = []
            report = await ada.analyse(match, progress=heard.append)
            page = await _full_replay(ada, match)
            token = ada.token
    assert report.match == match and report.seat == 0
    assert heard and heard[-1].done == heard[-1].total == len(report.decisions)
    assert all(p.seat == 0 and p.match == match for p in heard)

    record = _record_of(page, 3)
    engine_view = analyse_seat(record, 0, deals=DEALS, seed=analysis_seed(match))
    assert [d.index for d in report.decisions] == [d.index for d in engine_view.decisions]
    for sent, computed in zip(report.decisions, engine_view.decisions, strict=True):
        assert [o.expected_points for o in sent.options] == [
            o.expected_points for o in computed.options
        ]
        assert [o.action for o in sent.options] == [
            action_to_wire(o.action) for o in computed.options
        ]
        assert sent.options[sent.chosen].action == action_to_wire(computed.chosen)
        assert sent.options[sent.best].action == action_to_wire(computed.best)
        assert sent.loss == pytest.approx(computed.loss) and sent.mark == computed.mark
        assert sent.turn == computed.turn
    assert report.mean_loss == pytest.approx(engine_view.mean_loss)
    assert report.accuracy == pytest.approx(engine_view.accuracy)
    assert list(report.costliest) == [d.index for d in engine_view.costliest]
    # each decision's seq is the seq of the prompt the player answered
    prompted = {p.seq for p in prompts}
    assert {d.seq for d in report.decisions} <= prompted
    assert report.thresholds.mistake > report.thresholds.inaccuracy > 0

    async with in_process(tmp_path, analysis_deals=DEALS, bot_think_ms=5.0) as running:
        async with connect(running.url, name="Ada", token=token, reconnect=False) as ada:
            heard_again: list[wire.AnalysisProgress] = []
            again = await ada.analyse(match, progress=heard_again.append)
    assert heard_again == [], "a stored analysis is answered at once"
    assert again.decisions == report.decisions and again.mean_loss == report.mean_loss


async def test_only_your_own_seat_unless_a_finished_open_box_match(running: Running) -> None:
    """R27: a seat's analysis is its player's; a stranger, or a player naming
    another's seat, is refused (`not_your_seat`); in a finished open-box match
    anyone may ask for any seat; an unfinished match: `not_finished`."""
    async with (
        connect(running.url, name="Ada", reconnect=False) as ada,
        connect(running.url, name="Bo", reconnect=False) as bo,
    ):
        closed, _ = await _finish_against_bots(ada, 2)
        with pytest.raises(RequestError) as refused:
            await ada.analyse(closed, seat=1)
        assert refused.value.code == "not_your_seat"
        with pytest.raises(RequestError) as refused:
            await bo.analyse(closed)
        assert refused.value.code == "not_your_seat"
        with pytest.raises(RequestError) as refused:
            await bo.analyse(closed, seat=0)
        assert refused.value.code == "not_your_seat"

        joined = await bo.create_match(seats=2, bots=[(1, "medium")])
        await bo.start()
        with pytest.raises(RequestError) as refused:
            await bo.analyse(joined.match)
        assert refused.value.code == "not_finished"
        await bo.leave()

    async with serve(analysis_deals=DEALS) as other:
        async with (
            connect(other.url, name="Ada", reconnect=False) as ada,
            connect(other.url, name="Cy", reconnect=False) as cy,
        ):
            opened, _ = await _finish_against_bots(ada, 2, open_box=True)
            theirs = await cy.analyse(opened, seat=1)
            assert theirs.seat == 1 and theirs.decisions
            assert all(d.options for d in theirs.decisions)


async def test_hints_are_refused_without_the_hosts_leave(running: Running) -> None:
    """Issue 32: `hint` in a match whose host did not allow hints: `hints_off`."""
    async with connect(running.url, name="Ada", reconnect=False) as ada:
        await ada.create_match(seats=2, bots=[(1, "medium")])
        await ada.start()
        prompt = await ada.next_of(wire.Prompt, timeout=5)
        with pytest.raises(RequestError) as refused:
            await ada.hint(prompt.seq)
        assert refused.value.code == "hints_off"


async def test_a_hint_values_the_prompts_actions_from_the_seats_knowledge() -> None:
    """Issue 32, R24–R26: in a match with hints, `hint` answers the prompt's
    decision with one value per action of the prompt, in its order, and nothing
    else; the lobby shows `hints`, and such a match is unrated; a hint for a
    decision already taken is `decision_taken`; a spectator gets `not_in_match`."""
    async with serve(analysis_deals=DEALS) as running:
        async with (
            connect(running.url, name="Ada", reconnect=False) as ada,
            connect(running.url, name="Bo", reconnect=False) as bo,
        ):
            joined = await ada.create_match(seats=3, bots=[(1, "medium"), (2, "hard")], hints=True)
            listed = {m.match: m for m in await bo.list_matches()}
            summary = listed[joined.match]
            assert summary.hints and not summary.rated
            with pytest.raises(RequestError) as refused:
                await bo.create_match(seats=2, hints=True, rated=True)
            assert refused.value.code == "bad_message"
            await bo.watch(joined.match)
            await ada.start()

            prompts = 0
            rng = random.Random(3)
            async with asyncio.timeout(60):
                async for message in ada:
                    if isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                        break
                    if not isinstance(message, wire.Prompt):
                        continue
                    if prompts < 3:
                        hint = await ada.hint(message.seq)
                        assert hint.seq == message.seq and hint.seat == message.seat
                        assert [o.action for o in hint.options] == list(message.actions)
                        assert all(0.0 <= o.win_chance <= 1.0 for o in hint.options)
                        best = max(o.expected_points for o in hint.options)
                        assert hint.options[hint.best].expected_points == best
                        assert set(msgspec.to_builtins(hint)) <= _HINT_FIELDS
                        again = await ada.hint(message.seq)
                        assert again.options == hint.options, "asked again: the same values"
                        if prompts == 0:
                            with pytest.raises(RequestError) as refused:
                                await bo.hint(message.seq)
                            assert refused.value.code == "not_in_match"
                        prompts += 1
                    choice = rng.choice(message.actions)
                    await ada.answer(message, choice)
                    if prompts == 1:
                        with pytest.raises(RequestError) as refused:
                            await ada.hint(message.seq)
                        assert refused.value.code in ("decision_taken", "not_your_turn")
            assert prompts == 3


_HINT_FIELDS = {"v", "type", "id", "match", "seq", "seat", "options", "best", "exact", "deals"}
