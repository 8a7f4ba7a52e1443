"""A headless Chromium driven over the DevTools protocol, for the browser tests
and ``python -m server.lab.web.measure --phone``.

Just enough of CDP for a player: open a page, type, press keys, tap (as a
finger on a phone's screen: :meth:`Browser.page` with ``phone=True`` emulates
one), run a line of JavaScript, take a screenshot, read the page's
performance metrics, and keep the WebSocket frames the page received (the
terminal's screen bytes) and the terminal sizes it sent. Every wait is
bounded. Chromium is started with its background networking off, so it
talks to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.client import ClientConnection, connect

from .probe import screen_text

__all__ = ["Browser", "Page", "chromium_path", "launch"]

#: seconds one DevTools command may take
COMMAND_TIMEOUT = 15.0

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

_QUIET = [
    "--headless=new",
    "--no-sandbox",  # CI runs as root
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-extensions",
    "--disable-sync",
    "--metrics-recording-only",
    "--no-pings",
    "--password-store=basic",
    "--use-mock-keychain",
    "--enable-unsafe-swiftshader",  # WebGL in software: xterm draws the terminal with it
]

_KEYS: dict[str, dict[str, Any]] = {
    "\r": {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"},
    "\x1b": {"key": "Escape", "code": "Escape", "windowsVirtualKeyCode": 27},
}


def chromium_path() -> str | None:
    """The Chromium (or Chrome) on PATH, if any."""
    return next((p for name in _CANDIDATES if (p := shutil.which(name))), None)


class Page:
    """One tab, over its DevTools WebSocket."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.frames: list[bytes] = []  #: binary WebSocket frames the page received
        #: the terminal sizes the page asked for, (columns, rows), each with the
        #: number of frames received before it: the socket's URL, then its resizes
        self.sizes: list[tuple[int, int, int]] = []
        self.sent: list[str] = []  #: the keys and mouse reports the page sent (stdin)
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._events: dict[str, asyncio.Event] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.connection:
            message = json.loads(raw)
            if "id" in message:
                future = self._pending.pop(message["id"], None)
                if future is not None and not future.done():
                    if "error" in message:
                        future.set_exception(RuntimeError(f"CDP: {message['error']}"))
                    else:
                        future.set_result(message.get("result", {}))
                continue
            method = message.get("method", "")
            if method == "Network.webSocketFrameReceived":
                response = message["params"]["response"]
                if response.get("opcode") == 2:
                    self.frames.append(base64.b64decode(response["payloadData"]))
            elif method == "Network.webSocketCreated":
                query = parse_qs(urlsplit(message["params"].get("url", "")).query)
                with contextlib.suppress(KeyError, ValueError):
                    size = int(query["width"][0]), int(query["height"][0])
                    self.sizes.append((len(self.frames), *size))
            elif method == "Network.webSocketFrameSent":
                self._sent(message["params"]["response"])
            self._events.setdefault(method, asyncio.Event()).set()

    def _sent(self, response: dict[str, Any]) -> None:
        """Note a ``["resize", {"width": W, "height": H}]`` the page sent."""
        if response.get("opcode") != 1:
            return
        with contextlib.suppress(ValueError, TypeError, KeyError):
            kind, data = json.loads(response["payloadData"])
            if kind == "stdin":
                self.sent.append(str(data))
            elif kind == "resize":
                self.sizes.append((len(self.frames), int(data["width"]), int(data["height"])))

    @property
    def size(self) -> tuple[int, int] | None:
        """The terminal size (columns, rows) the page asked for last, if any."""
        return self.sizes[-1][1:] if self.sizes else None

    async def call(self, method: str, /, **params: Any) -> dict[str, Any]:
        """One DevTools command and its result (within ``COMMAND_TIMEOUT`` seconds)."""
        number = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[number] = future
        await self.connection.send(json.dumps({"id": number, "method": method, "params": params}))
        async with asyncio.timeout(COMMAND_TIMEOUT):
            return await future

    async def open(self, url: str, timeout: float = 15.0) -> None:
        """Go to ``url`` and wait for its load event."""
        await self._loading("Page.navigate", timeout, url=url)

    async def reload(self, timeout: float = 15.0) -> None:
        """Reload the page (as F5 does) and wait for its load event."""
        await self._loading("Page.reload", timeout)

    async def _loading(self, method: str, timeout: float, **params: Any) -> None:
        loaded = self._events.setdefault("Page.loadEventFired", asyncio.Event())
        loaded.clear()
        await self.call(method, **params)
        async with asyncio.timeout(timeout):
            await loaded.wait()

    def screen_text(self, since: int = 0) -> str:
        """The text of the terminal frames received (from frame ``since`` on)."""
        return "".join(screen_text(frame) for frame in self.frames[since:])

    async def wait_for_text(self, words: str, since: int = 0, timeout: float = 20.0) -> None:
        """Wait until the terminal frames (from ``since``) hold ``words``."""
        async with asyncio.timeout(timeout):
            while words not in self.screen_text(since):
                await asyncio.sleep(0.05)

    async def wait_for(self, expression: str, timeout: float = 20.0) -> None:
        """Wait until a JavaScript expression is true in the page."""
        async with asyncio.timeout(timeout):
            while not await self.evaluate(expression):
                await asyncio.sleep(0.05)

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def type(self, text: str) -> None:
        """Type ``text`` into whatever has the focus; ``\\r`` is Enter, ``\\x1b`` Escape."""
        for char in text:
            key = _KEYS.get(char) or {"key": char, "text": char}
            await self.call("Input.dispatchKeyEvent", type="keyDown", **key)
            await self.call("Input.dispatchKeyEvent", type="keyUp", key=key["key"])

    async def tap(self, x: float, y: float, hold: float = 0.05) -> None:
        """A finger's tap at ``(x, y)`` CSS pixels of the page (touch emulation on:
        see :meth:`emulate`): touch start, ``hold`` seconds, touch end."""
        point = {"x": x, "y": y, "radiusX": 4, "radiusY": 4, "force": 1, "id": 1}
        await self.call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[point])
        await asyncio.sleep(hold)
        await self.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])

    async def swipe(self, x: float, y: float, dy: float, steps: int = 8) -> None:
        """A finger put at ``(x, y)`` and moved ``dy`` CSS pixels down (up if
        negative) in ``steps`` moves, then lifted."""
        point = {"x": x, "y": y, "radiusX": 4, "radiusY": 4, "force": 1, "id": 1}
        await self.call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[point])
        for step in range(1, steps + 1):
            await asyncio.sleep(0.02)
            moved = {**point, "y": y + dy * step / steps}
            await self.call("Input.dispatchTouchEvent", type="touchMove", touchPoints=[moved])
        await self.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])

    async def tap_element(self, selector: str) -> None:
        """Tap the middle of the page's element ``selector`` (a CSS selector)."""
        x, y = await self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        await self.tap(x, y)

    async def emulate(self, width: int, height: int, *, phone: bool = False) -> None:
        """Show the page at ``width`` x ``height`` CSS pixels: as a desktop window,
        or as a ``phone``'s screen (mobile viewport, device scale 2, touch on,
        portrait or landscape by the shape). Called again, it rotates or resizes."""
        params: dict[str, Any] = {
            "width": width,
            "height": height,
            "deviceScaleFactor": 2 if phone else 1,
            "mobile": phone,
        }
        if phone:
            upright = height >= width
            params["screenWidth"], params["screenHeight"] = width, height
            params["screenOrientation"] = {
                "type": "portraitPrimary" if upright else "landscapePrimary",
                "angle": 0 if upright else 90,
            }
        await self.call("Emulation.setDeviceMetricsOverride", **params)
        await self.call("Emulation.setTouchEmulationEnabled", enabled=phone, maxTouchPoints=5)

    async def metrics(self) -> dict[str, float]:
        """The page's performance metrics (``JSHeapUsedSize``, ``Nodes``, …)."""
        await self.call("Performance.enable")
        result = await self.call("Performance.getMetrics")
        return {m["name"]: float(m["value"]) for m in result.get("metrics", [])}

    async def screenshot(self) -> bytes:
        """A PNG of the page as it is drawn now (its visible part, in device pixels)."""
        width, height = await self.evaluate("[innerWidth, innerHeight]")
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
        result = await self.call("Page.captureScreenshot", format="png", clip=clip)
        return base64.b64decode(result["data"])

    async def close(self) -> None:
        """Stop listening to the tab."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
        await self.connection.close()


class Browser:
    """A headless Chromium process with one page."""

    def __init__(self, process: subprocess.Popen[bytes], profile: Path, port: int) -> None:
        self.process = process
        self.profile = profile
        self.port = port

    def _json(self, path: str, method: str = "GET") -> Any:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        with urllib.request.urlopen(request, timeout=5) as answer:
            return json.loads(answer.read())

    async def page(
        self, width: int = 1280, height: int = 800, *, new: bool = False, phone: bool = False
    ) -> Page:
        """The browser's first tab (or a ``new`` one), ``width`` × ``height`` CSS pixels
        (a ``phone``'s screen: see :meth:`Page.emulate`), with its page and network
        events on."""
        if new:
            target = await asyncio.to_thread(self._json, "/json/new?about:blank", "PUT")
        else:
            targets = await asyncio.to_thread(self._json, "/json/list")
            target = next(t for t in targets if t.get("type") == "page")
        connection = await connect(target["webSocketDebuggerUrl"], max_size=64 * 2**20)
        page = Page(connection)
        await page.call("Page.enable")
        await page.call("Network.enable")
        await page.emulate(width, height, phone=phone)
        return page

    def stop(self) -> None:
        """End Chromium and delete its profile."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)


@contextlib.asynccontextmanager
async def launch(executable: str, *, scale: int = 1) -> AsyncIterator[Browser]:
    """Start headless Chromium on a free DevTools port; stop it on the way out.

    ``scale`` is the device scale factor of its screen: 2 for pages shown as a
    phone's (:meth:`Page.emulate`), whose canvases are otherwise drawn at the
    wrong size (xterm sizes them by ResizeObserver's device pixels, which
    emulation alone does not scale)."""
    profile = Path(tempfile.mkdtemp(prefix="tulips-chromium-"))
    process = subprocess.Popen(
        [
            executable,
            *_QUIET,
            f"--force-device-scale-factor={scale}",
            f"--user-data-dir={profile}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    browser: Browser | None = None
    try:
        port_file = profile / "DevToolsActivePort"
        async with asyncio.timeout(30):
            while not port_file.exists() or not port_file.read_text().strip():
                if process.poll() is not None:
                    raise RuntimeError(f"chromium exited with status {process.returncode}")
                await asyncio.sleep(0.1)
        browser = Browser(process, profile, int(port_file.read_text().split()[0]))
        yield browser
    finally:
        if browser is None:
            browser = Browser(process, profile, 0)
        browser.stop()
