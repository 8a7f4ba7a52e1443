"""Where PROTOCOL.md and the server once disagreed, the server does what the
document says (real sockets, a bare protocol client)."""

from __future__ import annotations

from engine import ruleset_from_mapping
from server.match.views import points_to_wire

from .helpers import RawClient, serve


async def test_bots_may_hold_every_seat_and_the_creator_then_watches_and_hosts() -> None:
    """create_match: "the creator takes the lowest seat without a bot (or
    watches, if bots hold every seat)" — at 6 seats too; the creator hosts and
    starts the bots' match."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        bots = [{"seat": s, "strength": "easy"} for s in range(6)]
        joined = await ada.request("create_match", name="bots", seats=6, bots=bots)
        assert (joined["type"], joined.get("seat"), joined["host"]) == ("joined", None, True)
        assert (await ada.request("start"))["type"] == "ok"
        ended = await ada.next(
            lambda m: m["type"] == "event" and m["event"]["kind"] == "match_ended", timeout=20
        )
        assert ended["event"]["scoring"]["winners"]
        await ada.close()


async def test_play_again_by_a_spectator_is_not_in_match_as_the_error_table_says() -> None:
    """A spectator's ``play_again`` gets ``not_in_match``, whether the match is
    running or finished (only its players may ask for a rematch)."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        joined = await ada.request("create_match", name="m", seats=2, bots=[{"seat": 1}])
        await ada.request("start")
        cy = await RawClient.open(running.url, "Cy")
        assert (await cy.request("watch", match=joined["match"]))["type"] == "joined"
        answer = await cy.request("play_again")
        assert answer["code"] == "not_in_match", answer
        await ada.close()
        await cy.close()


async def test_a_player_who_left_still_replays_as_their_seat_saw_it() -> None:
    """``replay``: a player who left the match still gets their seat's view —
    their own opening cards shown — as R27 allows (what they knew stays theirs)."""
    async with serve() as running:
        ada = await RawClient.open(running.url, "Ada")
        joined = await ada.request(
            "create_match", name="m", seats=2, bots=[{"seat": 1}], first_seat=0
        )
        await ada.request("start")
        prompt = await ada.next(lambda m: m["type"] == "prompt")
        await ada.request("act", action=prompt["actions"][0], seq=prompt["seq"])
        assert (await ada.request("leave"))["type"] == "ok"
        page = await ada.request("replay", match=joined["match"])
        assert page["seat"] == 0
        (dealt,) = [e for e in page["events"] if e["kind"] == "cards_dealt" and e["seat"] == 0]
        assert dealt["cards"] is not None
        await ada.close()


async def test_the_points_tell_a_house_rulesets_reveal_size() -> None:
    """R19 with a house ruleset: ``points.reveal_size`` says how many secret
    cards the reveal turns up, in snapshots and replays alike."""
    house = ruleset_from_mapping({"name": "short", "reveal_size": 3})
    assert points_to_wire(house, 3).reveal_size == 3
    async with serve(rulesets={"standard": house}) as running:
        ada = await RawClient.open(running.url, "Ada")
        await ada.request("create_match", name="m", seats=2, bots=[{"seat": 1}])
        await ada.request("start")
        snapshot = await ada.next(lambda m: m["type"] == "snapshot")
        assert snapshot["state"]["points"]["reveal_size"] == 3
        await ada.close()
