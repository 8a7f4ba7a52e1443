"""The trust dialog shows a certificate's fingerprint whole: on one line when the
terminal has the room, else broken only after a colon (Issue 30)."""

from __future__ import annotations

import re

import pytest

from client.tui.screens.trust import FingerprintView, TrustScreen, fingerprint_lines
from protocol.lan import fingerprint
from tests.client.driver import until
from tests.client.screens import running, screen_text

FP = fingerprint(b"the kitchen server's certificate")
PAIR = re.compile(r"[0-9A-F]{2}")
PAIRS = re.compile(r"[0-9A-F]{2}:[0-9A-F]{2}")


def _rows_with_pairs(text: str) -> list[str]:
    return [row.strip(" │╭╮╰╯─") for row in text.splitlines() if PAIRS.search(row)]


def test_a_sha256_fingerprint_is_32_pairs_too_long_for_80_columns() -> None:
    """Issue 30: what the dialog has to fit: SHA256: and 32 pairs, 102 characters."""
    assert FP.startswith("SHA256:") and len(FP[7:].split(":")) == 32 and len(FP) == 102


@pytest.mark.parametrize("width", range(10, 110))
def test_lines_break_only_after_a_colon(width: int) -> None:
    """Issue 30: at every width, the lines put back together are the fingerprint,
    each line but the last ends with its colon, and every pair is whole."""
    lines = fingerprint_lines(FP, width)
    assert "".join(line.strip() for line in lines) == FP
    assert all(line.endswith(":") for line in lines[:-1])
    for line in lines:
        pairs = line.strip().removeprefix("SHA256:").rstrip(":").split(":")
        assert all(PAIR.fullmatch(pair) for pair in pairs), line
    if width >= len(FP):
        assert lines == [FP]
    else:
        assert all(len(line) <= width for line in lines) or width < 10


def test_two_halves_of_16_pairs_at_the_dialogs_width() -> None:
    """Issue 30: the 64-column dialog (58 inside) shows 16 pairs, then the other 16."""
    first, second = fingerprint_lines(FP, 58)
    assert first == FP[:55] and second.strip() == FP[55:]
    assert first.index(":") + 1 == second.index(second.strip())  # under the first pair


@pytest.mark.parametrize(("size", "lines"), [((80, 24), 2), ((120, 40), 1)])
async def test_the_dialog_shows_the_fingerprint_whole(size: tuple[int, int], lines: int) -> None:
    """Issue 30: at 80x24, two lines broken after a colon; at 120x40, one line."""
    async with running(size=size) as (app, pilot, _):
        app.push_screen(TrustScreen("192.0.2.7:8765", FP))
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the dialog")
        await pilot.pause()
        view = app.screen.query_one(FingerprintView)
        rows = _rows_with_pairs(screen_text(app))
        assert len(rows) == lines, rows
        assert view.size.height == lines
        assert "".join(row.strip() for row in rows) == FP
        if lines == 1:
            assert rows == [FP]
        else:
            assert rows[0].endswith(":")
