"""What one browser player costs the host: ``python -m server.lab.web.measure``.

Starts ``tulips-server --web`` on free local ports, opens one scripted tab
(:class:`~server.lab.web.probe.Tab`: the same WebSocket traffic as a browser,
without the browser), and samples from ``/proc``:

- the tab's client process group: resident memory (RSS) and CPU, first idle
  in the lobby, then while it plays a match against three bots;
- the ``tulips-server`` process itself (game, bots and the relay): its CPU;
- then, from one address, as many tabs as the front lets it hold (its
  per-address share, ``--web-sessions-per-address``) and one more: how many it
  held, how the next was refused, and the memory per tab, of its client
  process and of ``tulips-server`` (the front's relay and the player);
- last, one tab that asks for a 1000 x 1000 terminal and sends keys as fast as
  its socket takes them (``--flood``): its client's memory and CPU.

With ``--phone`` (``844x390``, a phone on its side, or another size), it
opens a phone's page in headless Chromium instead (mobile viewport, device
scale 2, touch: :mod:`server.lab.web.cdp`) and, all by taps, prints the time
from tapping Play to the lobby and to a playable table ("new match" and
"Create" tapped as soon as they are drawn), and what the tab costs: its
client process's RSS, its renderer's RSS and JS heap (CDP
``Performance.getMetrics``), at the table and after ``--play`` seconds of
tapping options.

Linux only (it reads ``/proc``). Prints one line per phase.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from .cdp import Page, chromium_path, launch
from .probe import Tab

__all__ = ["Sample", "group_of", "main", "sample"]

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
_LISTENING = re.compile(rb"port (\d+) \(ws://")
_BROWSERS = re.compile(rb"Browsers can play at http://[^:]+:(\d+)")
#: Keys a player presses while playing: an opening choice, then keep, face up,
#: secretly, give (and a receiver), back. Whatever is not legal now is ignored.
_PLAY_KEYS = ("1", "k", "f", "s", "g", "2", "\x1b")


@dataclass(frozen=True, slots=True)
class Sample:
    """Resident memory (bytes) and CPU time used so far (seconds) by some processes."""

    rss: int
    cpu: float


def _stat(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()  # fields from the 3rd on


def group_of(pid: int) -> list[int]:
    """Every live process in ``pid``'s process group."""
    group = int(_stat(pid)[2])
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                if int(_stat(int(entry.name))[2]) == group:
                    members.append(int(entry.name))
    return members


def sample(pids: list[int]) -> Sample:
    """RSS and CPU time of ``pids`` together (processes gone meanwhile are left out)."""
    rss = cpu = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = _stat(pid)
            cpu += int(fields[11]) + int(fields[12])  # utime, stime
            rss += int(fields[21]) * _PAGE
    return Sample(rss, cpu / _TICK)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                if int(_stat(int(entry.name))[1]) == pid:
                    found.append(int(entry.name))
    return found


async def _line(stream: asyncio.StreamReader, pattern: re.Pattern[bytes]) -> int:
    async with asyncio.timeout(20):
        while line := await stream.readline():
            if found := pattern.search(line):
                return int(found.group(1))
    raise RuntimeError("tulips-server exited before it said where it listens")


async def _window(
    label: str, seconds: float, client: int, server: int, tab: Tab | None = None
) -> None:
    """Sample for ``seconds`` (pressing playing keys on ``tab``, if given) and print."""
    start, server_start, began = sample(group_of(client)), sample([server]), time.monotonic()
    peak = start.rss
    keys = itertools.cycle(_PLAY_KEYS)
    while (elapsed := time.monotonic() - began) < seconds:
        if tab is not None:
            await tab.press(next(keys))
        await asyncio.sleep(0.4)
        peak = max(peak, sample(group_of(client)).rss)
    end, server_end = sample(group_of(client)), sample([server])
    print(
        f"{label:<28} client RSS {end.rss / 2**20:6.1f} MiB (peak {peak / 2**20:.1f}),"
        f" CPU {100 * (end.cpu - start.cpu) / elapsed:5.1f} %;"
        f" tulips-server CPU {100 * (server_end.cpu - server_start.cpu) / elapsed:5.1f} %"
    )


async def _no_tabs(base_url: str) -> dict[str, int]:
    """Wait until the tabs measured before have given their seats back; ``/status``."""
    async with aiohttp.ClientSession() as http, asyncio.timeout(20):
        while True:
            async with http.get(base_url + "/status") as answer:
                status: dict[str, int] = json.loads(await answer.text())
            if status["sessions"] == 0:
                return status
            await asyncio.sleep(0.1)


async def _one_address(base_url: str, server: int) -> None:
    """Open tabs from one address until the front refuses one; print the figures."""
    share = int((await _no_tabs(base_url))["per_address"])
    before = sample([server]).rss
    tabs: list[Tab] = []
    refused = "none"
    try:
        for n in range(share + 1):
            tab = Tab(base_url, f"Tab {n + 1}")
            try:
                await tab.__aenter__()
            except aiohttp.WSServerHandshakeError as error:
                refused = f"HTTP {error.status}"
                break
            tabs.append(tab)
            await tab.wait_for("Matches")
        await asyncio.sleep(2.0)  # past the first screens
        clients = sum(sample(group_of(pid)).rss for pid in _children(server))
        grown = sample([server]).rss - before
        held = max(1, len(tabs))
        print(
            f"one address holds {len(tabs)} tabs (share {share}), the next: refused {refused};"
            f" per tab: client RSS {clients / held / 2**20:.1f} MiB,"
            f" tulips-server {grown / held / 2**10:+.0f} KiB"
        )
    finally:
        for tab in tabs:
            await tab.close()


async def _flood(tab: Tab) -> None:
    """What a hostile tab sends: the largest terminal, then arrow keys (in messages
    of 8 KB) as fast as its socket takes them."""
    await tab._send(["resize", {"width": 1000, "height": 1000}])
    while True:
        await tab.press("\x1b[A" * 1000)


async def _flooded(seconds: float, base_url: str, server: int) -> None:
    """One tab flooding for ``seconds``: its client's memory and CPU."""
    await _no_tabs(base_url)
    async with Tab(base_url, "Flood") as tab:
        await tab.wait_for("Matches")
        (client,) = _children(server)
        flood = asyncio.get_running_loop().create_task(_flood(tab))
        try:
            await _window(f"flooding keys ({seconds:.0f} s)", seconds, client, server)
        finally:
            flood.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await flood


@contextlib.asynccontextmanager
async def _tulips_server(bot_delay: float = 0.5) -> AsyncIterator[tuple[int, int]]:
    """``tulips-server --web`` on free local ports: its pid and its web port."""
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", "0",
        "--no-storage", "--web", "0", "--bot-delay", str(bot_delay), "--log-level", "INFO",
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    drain: asyncio.Task[bytes] | None = None
    try:
        assert server.stderr is not None
        await _line(server.stderr, _LISTENING)
        web_port = await _line(server.stderr, _BROWSERS)
        drain = asyncio.get_running_loop().create_task(server.stderr.read())
        yield server.pid, web_port
    finally:
        if drain is not None:
            drain.cancel()
        if server.returncode is None:
            server.terminate()
        async with asyncio.timeout(15):
            await server.wait()


async def measure(idle: float, play: float, flood: float = 0.0) -> None:
    """Start a server with ``--web``, open one tab and print its costs."""
    async with _tulips_server() as (server_pid, web_port):
        async with Tab(f"http://127.0.0.1:{web_port}", "Measure") as tab:
            await tab.wait_for("Matches")
            (client,) = _children(server_pid)
            print(f"one browser session: client pid {client}, tulips-server pid {server_pid}")
            await _window(f"idle in the lobby ({idle:.0f} s)", idle, client, server_pid)
            mark = tab.mark()
            await tab.press("n")
            await tab.wait_for("Create", since=mark)
            await tab.press("\r")  # four seats, three bots: the match starts at once
            await _window(f"playing vs 3 bots ({play:.0f} s)", play, client, server_pid, tab)
            turns = [int(n) for n in re.findall(r"Turn (\d+)", tab.text)]
            print(f"the match reached turn {max(turns, default=0)}")
        await _one_address(f"http://127.0.0.1:{web_port}", server_pid)
        if flood > 0:
            await _flooded(flood, f"http://127.0.0.1:{web_port}", server_pid)


def _renderer_rss(browser: int) -> int:
    """The resident memory of the largest Chromium renderer under ``browser``
    (the tab's: with one tab open, the others are spare or empty)."""
    largest = 0
    pending, seen = [browser], set[int]()
    while pending and len(seen) < 256:
        pid = pending.pop()
        seen.add(pid)
        pending.extend(child for child in _children(pid) if child not in seen)
        with contextlib.suppress(OSError):
            if b"--type=renderer" in Path(f"/proc/{pid}/cmdline").read_bytes():
                largest = max(largest, sample([pid]).rss)
    return largest


async def _phone_memory(label: str, page: Page, client: int, browser: int) -> None:
    """One line: the tab's client process group, its renderer and its JS heap."""
    metrics = await page.metrics()
    used = metrics.get("JSHeapUsedSize", 0.0) / 2**20
    total = metrics.get("JSHeapTotalSize", 0.0) / 2**20
    print(
        f"{label:<28} client RSS {sample(group_of(client)).rss / 2**20:6.1f} MiB;"
        f" renderer RSS {_renderer_rss(browser) / 2**20:6.1f} MiB,"
        f" JS heap {used:.1f} MiB used of {total:.1f}"
    )


async def measure_phone(width: int, height: int, play: float) -> int:
    """A phone's page (``width`` x ``height`` CSS pixels, scale 2, touch) in headless
    Chromium: the time from tapping Play to the lobby and to a playable table
    (tapping "new match" and "Create" as soon as they are drawn), and the tab's
    memory, at the table and after ``play`` seconds of tapping options."""
    from .screen import TOO_SMALL, first_option, screen_of, tap_option, tap_text  # pyte: dev

    chromium = chromium_path()
    if chromium is None:
        print("--phone needs Chromium on PATH (Debian: apt-get install chromium)")
        return 1
    async with _tulips_server() as (server_pid, web_port), launch(chromium, scale=2) as browser:
        page = await browser.page(width, height, phone=True)
        try:
            await page.open(f"http://127.0.0.1:{web_port}/")
            await page.type("Phone")
            began = time.monotonic()
            await page.tap_element("button[type=submit]")
            async with asyncio.timeout(60):
                while not any(w in page.screen_text() for w in ("as Phone", TOO_SMALL)):
                    await asyncio.sleep(0.02)
            lobby = time.monotonic() - began
            font = await page.evaluate("document.getElementById('terminal').dataset.fontSize")
            columns, rows = page.size or (0, 0)
            print(
                f"phone {width}x{height} (scale 2): terminal {columns}x{rows} at {font} px;"
                f" tap on Play to the lobby {lobby:.2f} s"
            )
            (client,) = _children(server_pid)
            if TOO_SMALL in screen_of(page).text():
                print(f"the client draws no screen at {columns} columns: no table to time")
                await _phone_memory("in the lobby", page, client, browser.process.pid)
                return 0
            await tap_text(page, "new match", timeout=30)
            await tap_text(page, "Create", timeout=30)
            async with asyncio.timeout(60):
                while first_option(screen_of(page)) is None:
                    await asyncio.sleep(0.02)
            table = time.monotonic() - began
            print(f"tap on Play to a playable table (2 more taps) {table:.2f} s")
            await _phone_memory("at the table", page, client, browser.process.pid)
            taps, start = 0, time.monotonic()
            while time.monotonic() - start < play and "Final scores" not in screen_of(page).text():
                taps += await tap_option(page)
            label = f"after {time.monotonic() - start:.0f} s, {taps} taps"
            await _phone_memory(label, page, client, browser.process.pid)
        finally:
            await page.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m server.lab.web.measure [--idle S] [--play S] [--phone [WxH]]``."""
    parser = argparse.ArgumentParser(
        prog="python -m server.lab.web.measure",
        description="What one browser player costs the host: starts tulips-server --web on"
        " free local ports, opens one scripted tab, and prints the memory and CPU of its"
        " client process (idle, then playing against bots) and the server's CPU; then how"
        " many tabs one address can hold and the memory per tab. Linux only.",
    )
    parser.add_argument("--idle", type=float, default=20.0, help="seconds idle in the lobby")
    parser.add_argument("--play", type=float, default=30.0, help="seconds playing")
    parser.add_argument(
        "--phone",
        metavar="WxH",
        nargs="?",
        const="844x390",
        help="instead: a phone's page in headless Chromium (default 844x390, on its side;"
        " 390x844 upright): the time from tapping Play to a playable table, and the"
        " memory of the tab (its client process, the renderer, its JS heap)",
    )
    parser.add_argument(
        "--flood",
        type=float,
        default=20.0,
        help="seconds a tab floods keys at a 1000x1000 terminal (0: skip)",
    )
    args = parser.parse_args(argv)
    if args.phone is not None:
        size = re.fullmatch(r"(\d{3,4})x(\d{3,4})", args.phone)
        if size is None:
            parser.error("--phone takes a size such as 390x844")
        width, height = int(size.group(1)), int(size.group(2))
        return asyncio.run(measure_phone(width, height, args.play))
    asyncio.run(measure(args.idle, args.play, args.flood))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
