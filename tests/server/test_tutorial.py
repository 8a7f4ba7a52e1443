"""The tutorial match (``create_match.tutorial``): its fixed deal, what a
request for one may say, and that it is its creator's alone — over real
sockets, and stored settings that say it is a tutorial."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import DEFAULT_RULESET, Match, observe
from server.match.settings import MatchSettings
from server.match.tutorial import TUTORIAL_FIRST_SEAT, TUTORIAL_SEATS, TUTORIAL_SEED

from ..storage.helpers import in_process
from .helpers import RawClient, serve

BOTS = [{"seat": 1, "strength": "medium"}, {"seat": 2, "strength": "medium"}]


def _tutorial(**fields: Any) -> dict[str, Any]:
    """A ``create_match`` asking for a tutorial, with ``fields`` changed."""
    return {"name": "Ada learns", "seats": 3, "bots": BOTS, "tutorial": True, **fields}


async def _dealt(client: RawClient) -> dict[str, Any]:
    """Create a tutorial, start it, and return the first snapshot's state."""
    joined = await client.request("create_match", **_tutorial())
    assert (joined["type"], joined["seat"]) == ("joined", 0), joined
    assert (await client.request("start"))["type"] == "ok"
    snapshot = await client.next(lambda m: m["type"] == "snapshot")
    return dict(snapshot["state"])


def test_r8_the_fixed_deal_ties_on_the_first_turn() -> None:
    """The deal the tutorial is built on: seat 0 plays first, and its first
    draw added face up ties a colour and goes above it (R8)."""
    match = Match.new(TUTORIAL_SEATS, TUTORIAL_SEED, DEFAULT_RULESET, TUTORIAL_FIRST_SEAT)
    view = observe(match, 0)
    assert view.first_seat == 0
    assert [str(c) for c in view.hand] == ["purple-2", "orange-3"]
    assert [str(c) for c in view.festival] == ["pink-3", "purple-2"]
    for seat in range(TUTORIAL_SEATS):
        match.apply(seat, match.legal_actions(seat)[0])
    drawn = observe(match, 0).drawn
    assert str(drawn) == "blue-2"  # purple's total is 2: blue ties it and goes above


async def test_a_tutorial_is_dealt_the_same_cards_every_time() -> None:
    """Two tutorials, two players: the same festival, hand and first seat (the fixed deal)."""
    async with serve() as running:
        states = []
        for name in ("Ada", "Bea"):
            client = await RawClient.open(running.url, name)
            states.append(await _dealt(client))
            await client.close()
        first, second = states
        for state in states:
            assert state["first_seat"] == 0
            assert state["festival"] == ["pink-3", "purple-2"]
            assert state["hand"] == ["purple-2", "orange-3"]
        assert first["festival"] == second["festival"] and first["hand"] == second["hand"]


async def test_an_ordinary_match_is_not_dealt_the_tutorial_deal() -> None:
    """Without ``tutorial`` the seed is secret and random: the same request deals otherwise."""
    async with serve() as running:
        client = await RawClient.open(running.url, "Ada")
        hands = set()
        for _ in range(4):
            fields = _tutorial()
            del fields["tutorial"]
            await client.request("create_match", **fields)
            assert (await client.request("start"))["type"] == "ok"
            snapshot = await client.next(lambda m: m["type"] == "snapshot")
            hands.add((tuple(snapshot["state"]["festival"]), tuple(snapshot["state"]["hand"])))
            await client.request("leave")
        assert len(hands) > 1
        await client.close()


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        ({"seats": 4, "bots": [*BOTS, {"seat": 3, "strength": "easy"}]}, "seats", "3 seats"),
        ({"bots": BOTS[:1]}, "bots", "nobody else"),  # seat 2 free: a person could join
        ({"bots": [{"seat": 0, "strength": "easy"}, BOTS[1]]}, "bots", "seats 1 and 2"),
        ({"join_code": "tulip"}, "join_code", "no join_code"),
        ({"turn_timer": 30.0}, "turn_timer", "no turn_timer"),
        ({"first_seat": 1}, "first_seat", "no first_seat"),
        ({"open_box": True}, "open_box", "open-box"),
        ({"ruleset": "short"}, "ruleset", "printed rules"),
        ({"rated": True}, "rated", "never rated"),
    ],
)
async def test_a_tutorial_asked_for_otherwise_is_refused(
    fields: dict[str, Any], path: str, words: str
) -> None:
    """A human seat, another size or an option that does not apply: ``bad_message`` naming it."""
    async with serve() as running:
        client = await RawClient.open(running.url, "Ada")
        refused = await client.request("create_match", **_tutorial(**fields))
        assert (refused["type"], refused["code"]) == ("error", "bad_message"), refused
        assert refused["path"] == f"create_match.{path}"
        assert words in refused["message"]
        listed = await client.request("list_matches")
        assert listed["matches"] == []  # nothing was created
        await client.close()


async def test_a_tutorial_is_its_creators_alone() -> None:
    """Unlisted; another player cannot join, watch or replay it (no such match);
    its seats cannot change; its summary says it is a tutorial."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        eve = await RawClient.open(running.url, "Eve")
        assert (await eve.request("list_matches"))["matches"] == []
        joined = await ada.request("create_match", **_tutorial())
        match = joined["match"]
        update = await ada.next(lambda m: m["type"] == "match_update")
        assert update["match"]["tutorial"] is True
        assert update["match"].get("rated", False) is False  # never a contest
        for request in ("add_bot", "remove_seat"):
            fields = {"seat": 1} if request == "remove_seat" else {}
            refused = await ada.request(request, **fields)
            assert (refused["code"], refused["path"]) == ("bad_message", request)
        assert (await ada.request("start"))["type"] == "ok"
        assert (await eve.request("list_matches"))["matches"] == []
        for request in ("join", "watch", "replay"):
            refused = await eve.request(request, match=match)
            assert (refused["type"], refused["code"]) == ("error", "no_such_match"), request
        page = await ada.request("replay", match=match)
        assert page["type"] == "replay"
        assert not any(
            m["type"] == "match_update" and m["match"]["match"] == match for m in eve.messages
        )
        await ada.close()
        await eve.close()


def test_settings_say_tutorial_and_read_back() -> None:
    """Stored settings keep the tutorial flag (and older ones without it read as none)."""
    settings = MatchSettings("t", "standard", DEFAULT_RULESET, first_seat=0, tutorial=True)
    data = settings.to_data()
    assert data["tutorial"] is True
    assert MatchSettings.from_data(data) == settings
    del data["tutorial"]
    assert MatchSettings.from_data(data).tutorial is False


async def test_a_tutorial_outlives_a_restart_as_a_tutorial(tmp_path: Path) -> None:
    """Stored with its settings: after a restart it is still a tutorial, still unlisted."""
    async with in_process(tmp_path) as running:
        ada = await RawClient.open(running.url, "Ada")
        state = await _dealt(ada)
        token = ada.welcome["token"] if ada.welcome else None
        await ada.close()
    async with in_process(tmp_path) as running:
        again = await RawClient.open(running.url, "Ada", token=token)
        update = await again.next(lambda m: m["type"] == "match_update")
        assert update["match"]["tutorial"] is True
        snapshot = await again.next(lambda m: m["type"] == "snapshot")
        assert snapshot["state"]["festival"][:2] == state["festival"][:2]
        eve = await RawClient.open(running.url, "Eve")
        assert (await eve.request("list_matches"))["matches"] == []
        await again.close()
        await eve.close()


async def test_a_tutorial_may_allow_hints_and_is_never_rated() -> None:
    """``hints`` is the one option a tutorial takes (the terminal client asks
    for it, so that h helps the learner); it stays unrated."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        joined = await ada.request("create_match", **_tutorial(hints=True))
        assert joined["type"] == "joined", joined
        update = await ada.next(lambda m: m["type"] == "match_update")
        assert update["match"]["tutorial"] is True and update["match"]["hints"] is True
        assert update["match"].get("rated", False) is False
        await ada.close()
