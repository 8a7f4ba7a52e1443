"""Hard bots think in worker processes: other matches keep their latency."""

from __future__ import annotations

import pytest

from client.loadgen.load import run_load

from .helpers import serve


@pytest.mark.slow
@pytest.mark.alone
async def test_hard_bots_thinking_leave_other_matches_p99_under_50_ms() -> None:
    """Three tables of hard bots at their full 300 ms budget play beside twenty
    measured matches; those keep p99 act->ok under the server target of 50 ms."""
    async with serve(bot_think_ms=300.0) as running:
        report = await run_load(
            running.url, matches=20, players=4, think=0.2, duration=8.0, ramp=1.0, hard_bots=3
        )
    assert report.errors == 0, report.error_kinds
    assert report.actions > 200
    assert report.percentile(99) < 50.0, report.lines()
