"""A real browser plays: headless Chromium opens ``tulips-server --web``, gives a
name, sees the lobby, creates a match with bots, makes a move, reloads the tab
and is back at its table; a second tab past the limit is told the seats are
taken. The frames the page received are read as text to know what it shows.

``tests/web/fixtures/table.png`` is this test's screenshot of the table, for
people to look at; ``TULIPS_UPDATE_WEB_FIXTURE=1`` writes it anew.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .cdp import Page, chromium_path, launch
from .helpers import Front, alive, front, png_size, session_pids, wait_until

CHROMIUM = chromium_path()
FIXTURE = Path(__file__).parent / "fixtures" / "table.png"
WIDTH, HEIGHT = 1280, 800

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Chromium on PATH (Debian: apt-get install chromium)"
)


async def focus_terminal(page: Page) -> None:
    """Give the keyboard to the terminal (as a click into it would)."""
    await page.wait_for("document.querySelector('.xterm-helper-textarea') !== null")
    await page.evaluate("document.querySelector('.xterm-helper-textarea').focus()")


async def play_a_move(f: Front, page: Page) -> None:
    """Name, lobby, a new match with three bots, and the opening choice 1."""
    await page.open(f.url + "/")
    assert "Gift of Tulips" in await page.evaluate("document.body.innerText")
    await page.type("Ana\r")  # the name box has the focus
    await page.wait_for_text("playing as Ana")
    assert "Matches" in page.screen_text()  # the lobby
    assert await page.evaluate("location.pathname") == "/play"
    await focus_terminal(page)
    mark = len(page.frames)
    await page.type("n")
    await page.wait_for_text("Create", since=mark)
    mark = len(page.frames)
    await page.type("\r")  # four seats, three bots: it starts at once
    await page.wait_for_text(" secret · ", since=mark)  # the opening choices
    (actor,) = f.server.lobby.matches.values()
    dealt = actor.core.match
    assert dealt is not None
    mark = len(page.frames)
    await page.type("1")
    await wait_until(lambda: any(seat == 0 for seat, _ in dealt.history))
    await page.wait_for_text("You put", since=mark)  # the move, as the table tells it
    await page.wait_for_text("You drew", since=mark)  # and play comes round to us


async def test_a_browser_tab_plays_and_a_reload_brings_it_back(tmp_path: Path) -> None:
    """Lobby, match, move, screenshot; F5 returns to the table, not the lobby."""
    assert CHROMIUM is not None
    async with front(max_sessions=1) as f, launch(CHROMIUM) as browser:
        page = await browser.page(WIDTH, HEIGHT)
        try:
            await play_a_move(f, page)
            shot = await page.screenshot()
            (first,) = session_pids(f.web)

            mark = len(page.frames)
            await page.reload()
            await page.wait_for_text("Festival", since=mark)
            assert "Matches" not in page.screen_text(mark)
            assert not alive(first)

            other = await browser.page(WIDTH, HEIGHT, new=True)
            try:
                await other.open(f.url + "/")
                text = await other.evaluate("document.body.innerText")
                assert "Every browser seat is taken (1 of 1)" in text
                await other.evaluate("sessionStorage.setItem('tulips-name', 'Ben')")
                await other.open(f.url + "/play")  # past the welcome page: refused anyway
                await other.wait_for("document.body.classList.contains('-closed')")
                await other.wait_for(
                    "document.getElementById('closed-message').textContent"
                    ".includes('Every browser seat is taken (1 of 1)')"
                )
            finally:
                await other.close()
            pids = session_pids(f.web)
        finally:
            await page.close()
    assert pids and not any(alive(pid) for pid in pids)
    assert png_size(shot) == (WIDTH, HEIGHT) and len(shot) > 30_000  # drawn, not blank
    (tmp_path / "table.png").write_bytes(shot)
    if os.environ.get("TULIPS_UPDATE_WEB_FIXTURE", "") not in ("", "0"):
        FIXTURE.write_bytes(shot)
    assert png_size(FIXTURE.read_bytes()) == (WIDTH, HEIGHT)
