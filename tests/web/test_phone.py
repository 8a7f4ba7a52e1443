"""A phone plays: headless Chromium as a phone (390 x 844 CSS pixels upright,
844 x 390 on its side, device scale 2, touch on) opens ``tulips-server --web``
and plays a whole match against three bots **by taps only** — no key is
pressed once the name is given.

What the page shows is read from the WebSocket frames it received, replayed
through a terminal emulator at the sizes the page asked for
(:mod:`server.lab.web.screen`); a tap's target is found by its text on that
screen and tapped at its cell, from the terminal's cell size on the page.

On its side the phone gets 80 columns and 24 rows or more, upright about 40
columns, where the client draws its narrow layout; either way the match is
played to its final scores.

``tests/web/fixtures/phone-portrait.png`` and ``phone-landscape.png`` are its
screenshots, for people to look at; ``TULIPS_UPDATE_WEB_FIXTURE=1`` writes them
anew.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from server.lab.web.screen import TOO_SMALL, cells, screen_of, settled, tap_option, tap_text

from .cdp import Page, chromium_path, launch
from .helpers import Front, front, png_size, wait_until

CHROMIUM = chromium_path()
FIXTURES = Path(__file__).parent / "fixtures"
PORTRAIT, LANDSCAPE = (390, 844), (844, 390)

pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None, reason="needs Chromium on PATH (Debian: apt-get install chromium)"
    ),
    pytest.mark.slow,
]


async def check_fit(page: Page, width: int, height: int) -> tuple[int, int]:
    """The page is the phone's width, the terminal fills it with a readable font:
    the terminal size (columns, rows) the app was given."""
    layout = await page.evaluate(
        "(() => { const t = document.querySelector('.xterm-screen').getBoundingClientRect();"
        " const box = document.getElementById('terminal').getBoundingClientRect();"
        " return { inner: innerWidth, scroll: document.documentElement.scrollWidth,"
        " font: Number(document.querySelector('#terminal').textual.terminal.options.fontSize),"
        " box: [box.width, box.height], screen: [t.width, t.height] }; })()"
    )
    assert layout["inner"] == width, layout  # the device's width, not 980 px zoomed out
    assert layout["scroll"] <= layout["inner"], layout  # nothing past the right edge
    assert layout["box"] == [width, height], layout  # the terminal is the whole screen
    assert 12 <= layout["font"] <= 16, layout
    grid = await cells(page)
    assert grid.columns * grid.width <= width and grid.rows * grid.height <= height
    assert grid.columns * grid.width > width - 2 * grid.width  # filled, less than a cell or two
    assert grid.rows * grid.height > height - 2 * grid.height
    assert page.size is not None
    return page.size


async def give_name(f: Front, page: Page, name: str) -> None:
    """The welcome page: a name typed (the phone's keyboard is fine there), Play tapped."""
    await page.open(f.url + "/")
    await page.type(name)
    await page.tap_element("button[type=submit]")
    # the lobby, or (upright, before the client's narrow layout) what it needs
    async with asyncio.timeout(30):
        while not any(words in page.screen_text() for words in (f"as {name}", TOO_SMALL)):
            await asyncio.sleep(0.05)
    assert await page.evaluate("location.pathname") == "/play"
    # a tap on the terminal does not bring the phone's keyboard up
    mode = "document.querySelector('.xterm-helper-textarea').getAttribute('inputmode')"
    assert await page.evaluate(mode) == "none"


async def play_by_taps(page: Page, limit: float = 240.0) -> int:
    """From the lobby: tap "new match", "Create", then the first option each
    time it is our move, until the final scores; how many options were tapped."""
    screen = screen_of(page)
    await tap_text(page, "new match", last=True)  # the button, not the empty lobby's hint
    await tap_text(page, "Create")  # four seats, three bots: it starts at once
    await page.wait_for_text("Your move", timeout=30)
    taps = 0
    async with asyncio.timeout(limit):
        for _ in range(400):
            if await tap_option(page):
                taps += 1
            elif "Final scores" in screen.text():
                return taps
            else:
                await asyncio.sleep(0.1)
    raise AssertionError(f"no final scores after {taps} taps:\n{screen.text()}")


def keep(shot: bytes, name: str, tmp_path: Path, size: tuple[int, int]) -> None:
    """Keep a screenshot in ``tmp_path`` (and as the fixture, when asked)."""
    assert png_size(shot) == (2 * size[0], 2 * size[1]) and len(shot) > 10_000  # not blank
    (tmp_path / name).write_bytes(shot)
    if os.environ.get("TULIPS_UPDATE_WEB_FIXTURE", "") not in ("", "0"):
        (FIXTURES / name).write_bytes(shot)
    assert png_size((FIXTURES / name).read_bytes()) == (2 * size[0], 2 * size[1])


async def test_a_phone_on_its_side_plays_a_whole_match_by_taps(tmp_path: Path) -> None:
    """844 x 390: 80 columns or more and 24 rows, a readable font, a match by taps."""
    assert CHROMIUM is not None
    async with front(max_sessions=1) as f, launch(CHROMIUM, scale=2) as browser:
        page = await browser.page(*LANDSCAPE, phone=True)
        try:
            await give_name(f, page, "Ana")
            columns, rows = await check_fit(page, *LANDSCAPE)
            assert columns >= 80 and rows >= 24, (columns, rows)
            taps = await play_by_taps(page)
            assert taps >= 5
            # a swipe up is the mouse wheel turned down, over where the finger is
            grid = await cells(page)
            sent = len(page.sent)
            await page.swipe(*grid.centre(10, 10), dy=-4 * grid.height)
            wheel_down = "\x1b[<65;11;"  # SGR mouse report: the wheel turned down, column 11
            await wait_until(lambda: sum(k.count(wheel_down) for k in page.sent[sent:]) >= 3, 5)
            await settled(page)
            keep(await page.screenshot(), "phone-landscape.png", tmp_path, LANDSCAPE)
            (actor,) = f.server.lobby.matches.values()
            assert actor.core.match is not None and actor.core.match.is_over
        finally:
            await page.close()


async def test_a_phone_upright_fits_and_turns(tmp_path: Path) -> None:
    """390 x 844: about 40 columns at a readable font; turned on its side, the
    terminal follows (80 columns or more); turned back, 40 again. Then the match
    by taps, upright — as far as the client's layout at 40 columns allows."""
    assert CHROMIUM is not None
    async with front(max_sessions=1) as f, launch(CHROMIUM, scale=2) as browser:
        page = await browser.page(*PORTRAIT, phone=True)
        try:
            await give_name(f, page, "Ben")
            columns, rows = await check_fit(page, *PORTRAIT)
            assert 38 <= columns <= 44 and rows >= 24, (columns, rows)

            await page.emulate(*LANDSCAPE, phone=True)  # turned on its side
            await page.wait_for(f"document.documentElement.clientWidth === {LANDSCAPE[0]}")
            await wait_for_size(page, lambda c, r: c >= 80 and r >= 24)
            await check_fit(page, *LANDSCAPE)

            await page.emulate(*PORTRAIT, phone=True)  # and back
            await wait_for_size(page, lambda c, r: c == columns and r == rows)
            await check_fit(page, *PORTRAIT)
            # the phone's keyboard comes up (Chrome shrinks the page): fewer rows, and
            # the same columns, though what is left is wider than it is tall
            await page.emulate(PORTRAIT[0], 300, phone=True)
            await wait_for_size(page, lambda c, r: c == columns and r < rows // 2)
            await page.emulate(*PORTRAIT, phone=True)
            await wait_for_size(page, lambda c, r: c == columns and r == rows)

            # the ⌨ button asks for the phone's keyboard, and puts it away
            mode = "document.querySelector('.xterm-helper-textarea').getAttribute('inputmode')"
            pressed = "document.getElementById('keyboard').getAttribute('aria-pressed')"
            await page.tap_element("#keyboard")
            assert (await page.evaluate(mode), await page.evaluate(pressed)) == ("text", "true")
            assert await page.evaluate(
                "document.activeElement === document.querySelector('.xterm-helper-textarea')"
            )
            await page.tap_element("#keyboard")
            assert (await page.evaluate(mode), await page.evaluate(pressed)) == ("none", "false")

            await settled(page)
            keep(await page.screenshot(), "phone-portrait.png", tmp_path, PORTRAIT)

            assert TOO_SMALL not in screen_of(page).text(), f"nothing drawn at {columns} columns"
            taps = await play_by_taps(page)
            assert taps >= 5
        finally:
            await page.close()


async def wait_for_size(
    page: Page, good: Callable[[int, int], bool], timeout: float = 10.0
) -> None:
    """Wait until the terminal size the page asked for last is ``good(columns, rows)``."""
    async with asyncio.timeout(timeout):
        while page.size is None or not good(*page.size):
            await asyncio.sleep(0.05)
