"""Snapshots of the screens most people see, at 80×24 and 120×40.

Each app runs on a scripted session fed with fixed protocol messages (the
examples of PROTOCOL.md and hand-made ones), with a frozen clock and no
reveal pause, so the pictures are the same on every run. Update them with
``pytest tests/client/test_snapshots.py --snapshot-update`` and look at the
report before committing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from . import fakes
from .driver import until
from .screens import scripted, settle

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
SnapCompare = Callable[..., bool]


def _compare(
    snap_compare: SnapCompare,
    script: list[object],
    size: tuple[int, int],
    keys: tuple[str, ...] = (),
    **kwargs: Any,
) -> bool:
    app, session = scripted(script, **kwargs)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot, session)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()

    return snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_lobby(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """The lobby: an open private match, a running one, a finished one."""
    assert _compare(snap_compare, [], size, matches=fakes.lobby_matches())


@pytest.mark.parametrize("size", SIZES)
def test_table_mid_game(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """Turn 18 of four players: Ada's first card, its choices with their points."""
    assert _compare(snap_compare, fakes.mid_game(), size)


@pytest.mark.parametrize("size", SIZES)
def test_opening_choice(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """The opening: which of Ada's two cards goes to the secret festival."""
    assert _compare(snap_compare, fakes.opening(), size)


@pytest.mark.parametrize("size", SIZES)
def test_final_scoring(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """After the reveal: the breakdown per player, the majorities, the winner."""
    assert _compare(snap_compare, fakes.ending(), size)


@pytest.mark.parametrize("size", SIZES)
def test_player_away(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """Cy dropped in their turn: the countdown to the stand-in, Cy's timer for everyone."""
    assert _compare(snap_compare, fakes.away(), size)


@pytest.mark.parametrize("size", SIZES)
def test_timed_out_move(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """Ada's timer ran out on her first card; a bot plays for Cy; her second card, timed."""
    assert _compare(snap_compare, fakes.timed_out(), size)


@pytest.mark.parametrize(
    "size", [pytest.param((60, 16), id="60x16"), pytest.param((40, 12), id="40x12")]
)
def test_too_small(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """Below 80×24 the table says how big the window must be, and nothing else."""
    assert _compare(snap_compare, fakes.mid_game(), size)


@pytest.mark.parametrize("size", SIZES)
def test_replay_viewer(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """The replay of a finished match from the lobby, at turn 4: Ada has just
    added a card face up; the festival without the legend nobody sent."""
    app, session = scripted(
        [],
        matches=[*fakes.lobby_matches(), fakes.replayed_summary()],
        replay=fakes.replay_pages(fakes.short_match()),
    )

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot, session)
        await pilot.press("down", "down", "down", "v")
        await until(pilot, lambda: getattr(app.screen, "replay", None) is not None)
        await pilot.press("t", "4", "enter", "right", "right")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
