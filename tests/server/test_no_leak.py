"""The server leaks nothing a receiver may not know (R24–R26), checked on the
wire: two deals that differ only in cards hidden from a seat (or from a
spectator) are played through two servers with the same action plan, and
every frame that receiver gets is the same, byte for byte, up to the reveal.

The frames compared are everything after the connection's ``welcome``: the
welcome carries the connection's own random player id and resume token, which
differ between any two connections and say nothing about the match; the seats'
player ids, which the lobby's seats name, are replaced by their seat numbers.
No frame carries a timestamp, so nothing else is stripped.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
import pytest

from engine import Action, Match, Ruleset

from ..helpers_deals import Deal, hidden_places, mapped_moves, snapshot, swap_hidden
from .helpers import RawClient, action_wire, check_frame, serve

MATCH_ID = "noleak"


@dataclass
class Plan:
    """Two worlds and one plan of actions for both."""

    players: int
    viewer: int | None
    reveal_seed: int
    deal: Deal
    moves: list[tuple[int, Action]]
    other_deal: Deal
    other_moves: list[tuple[int, Action]]


def make_plan(players: int, viewer: int | None, seed: int) -> Plan:
    """A random deal and random legal moves to its end; the deal with the cards
    hidden from ``viewer`` permuted, and the same moves for it."""
    rng = random.Random(seed)
    deal = Deal.of(Match.new(players, rng.randrange(2**32), first_seat=rng.randrange(players)))
    reveal_seed = rng.randrange(2**32)
    base = deal.match(reveal_seed)
    moves: list[tuple[int, Action]] = []
    while not base.is_over:
        seat = rng.choice(base.to_act)  # during the opening, the seats choose in any order
        action = rng.choice(base.legal_actions(seat))
        base.apply(seat, action)
        moves.append((seat, action))
    places = hidden_places(deal, moves, viewer)
    permutation = list(range(len(places)))
    rng.shuffle(permutation)
    other = swap_hidden(deal, places, permutation)
    return Plan(players, viewer, reveal_seed, deal, moves, other, mapped_moves(deal, other, moves))


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until ``condition()`` holds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.005)


def ended(messages: Sequence[dict[str, Any]]) -> bool:
    """Whether ``match_ended`` is among the messages."""
    return any(m["type"] == "event" and m["event"]["kind"] == "match_ended" for m in messages)


async def play_world(
    deal: Deal,
    reveal_seed: int,
    moves: Sequence[tuple[int, Action]],
    viewer: int | None,
    features: Sequence[str] = (),
) -> tuple[list[bytes], Match]:
    """Play ``moves`` on ``deal`` through a fresh server, one scripted client per
    seat (and a spectator), one request at a time; the frames the viewer received
    after its welcome, and the server's match."""

    def factory(players: int, seed: int, ruleset: Ruleset, first_seat: int | None) -> Match:
        return deal.match(reveal_seed)

    async with serve(match_factory=factory, new_id=lambda: MATCH_ID) as running:
        seats = [
            await RawClient.open(running.url, f"seat{i}", features=features)
            for i in range(deal.players)
        ]
        spectator = (
            await RawClient.open(running.url, "spectator", features=features)
            if viewer is None
            else None
        )
        watcher = spectator if spectator is not None else seats[viewer or 0]
        assert len(watcher.frames) == 1  # its welcome, no more
        created = await seats[0].request("create_match", name="no leak", seats=deal.players)
        assert (created["type"], created["match"]) == ("joined", MATCH_ID), created
        if spectator is not None:
            assert (await spectator.request("watch", match=MATCH_ID))["type"] == "joined"
        for seat in range(1, deal.players):
            joined = await seats[seat].request("join", match=MATCH_ID, seat=seat)
            assert (joined["type"], joined["seat"]) == ("joined", seat), joined
        assert (await seats[0].request("start"))["type"] == "ok"
        for index, (seat, action) in enumerate(moves):
            answer = await seats[seat].request("act", action=action_wire(action))
            assert answer["type"] == "ok", f"move {index}, seat {seat} {action}: {answer}"
        await until(lambda: ended(watcher.messages))
        match = running.lobby.matches[MATCH_ID].core.match
        assert match is not None and match.is_over
        frames = [_anonymous(frame, seats) for frame in watcher.frames[1:]]
        for client in [*seats, *([spectator] if spectator else [])]:
            await client.close()
    return frames, match


def _anonymous(frame: bytes, seats: Sequence[RawClient]) -> bytes:
    """The frame with each seat's random player id (public, in ``SeatInfo.player``)
    put as a name of the same length that says only the seat."""
    for index, client in enumerate(seats):
        player = msgpack.unpackb(client.frames[0])["player"].encode()
        frame = frame.replace(player, f"seat{index}".encode().ljust(len(player), b"_"))
    return frame


def up_to_reveal(frames: list[bytes]) -> list[bytes]:
    """The frames before the one with the first ``secret_revealed`` event (R19)."""
    for index, frame in enumerate(frames):
        first = msgpack.unpackb(frame)
        for message in first["messages"] if first["type"] == "batch" else [first]:
            if message["type"] == "event" and message["event"]["kind"] == "secret_revealed":
                return frames[:index]
    raise AssertionError("the viewer never saw the reveal")


def assert_same_frames(one: list[bytes], two: list[bytes]) -> None:
    """Byte-for-byte equal, or the first difference, decoded."""
    for index, (a, b) in enumerate(zip(one, two, strict=False)):
        assert a == b, f"frame {index} differs:\n{msgpack.unpackb(a)}\n{msgpack.unpackb(b)}"
    assert len(one) == len(two), f"{len(one)} frames and {len(two)}"


async def check_no_leak(
    players: int, viewer: int | None, seed: int, features: Sequence[str] = ()
) -> None:
    """Both worlds look the same to ``viewer`` on the wire until the reveal."""
    plan = make_plan(players, viewer, seed)
    frames_one, one = await play_world(plan.deal, plan.reveal_seed, plan.moves, viewer, features)
    frames_two, two = await play_world(
        plan.other_deal, plan.reveal_seed, plan.other_moves, viewer, features
    )
    # not vacuous: the true states differ where the viewer cannot look
    assert snapshot(one) != snapshot(two)
    assert (one._removed, one._placed_secret) != (two._removed, two._placed_secret)
    shown_one, shown_two = up_to_reveal(frames_one), up_to_reveal(frames_two)
    # the whole match up to the reveal: its messages, one frame an action with batch
    assert len(shown_one) > (len(plan.moves) if features else 2 * len(plan.moves))
    assert_same_frames(shown_one, shown_two)
    for frame in frames_one + frames_two:
        check_frame(frame, viewer)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
async def test_r25_r26_a_seat_gets_the_same_frames_from_deals_that_differ_in_hidden_cards(
    players: int,
) -> None:
    """A seat gets the same bytes from deals differing in cards hidden from it (R24–R26)."""
    viewer = random.Random(players).randrange(players)
    await check_no_leak(players, viewer, seed=100 + players)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
async def test_r25_r26_a_spectator_gets_the_same_frames_from_deals_that_differ_in_private_cards(
    players: int,
) -> None:
    """A spectator gets the same bytes from deals differing in private cards (R24–R26)."""
    await check_no_leak(players, None, seed=200 + players)


@pytest.mark.parametrize("viewer", [1, None])
async def test_r25_r26_batches_keep_the_same_secrets(viewer: int | None) -> None:
    """With ``batch``, a seat and a spectator get the same bytes from deals that
    differ in what is hidden from them, every batched message checked (R24–R26)."""
    await check_no_leak(4, viewer, seed=300 + (viewer or 0), features=["batch"])
