"""`tulips play` in a real terminal the size of a phone's (issue "Game night
on phones"): tmux with a 40×50 window runs it, as the browser front's
xterm.js would, and its screen, read back with ``capture-pane``, is the
narrow table — your move over the festival over the players, the tabs and
the key buttons, nothing wider than the window. The same pattern as
``test_terminal`` (a clean environment, the local server with bots), with
tmux as the terminal: it lays the text out as a real one does."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.loadgen.startup_bench import terminal_env

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux here")

WIDTH, HEIGHT = 40, 50


class Tmux:
    """One tmux server of our own (its own socket), one session in it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.socket = f"tulips-{uuid.uuid4().hex[:8]}"
        self.env = env

    def run(self, *args: str) -> str:
        """A tmux command on our server; its output."""
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return done.stdout

    def start(self, argv: list[str]) -> None:
        """A detached session of WIDTH×HEIGHT running ``argv``."""
        command = " ".join(map(shlex.quote, argv))
        size = ("-x", str(WIDTH), "-y", str(HEIGHT))
        self.run("-f", "/dev/null", "new-session", "-d", "-s", "phone", *size, command)

    def rows(self) -> list[str]:
        """The window now, one string per row."""
        return self.run("capture-pane", "-p", "-t", "phone").splitlines()

    def until(self, *texts: str, timeout: float = 30.0) -> list[str]:
        """Rows of the window once every one of ``texts`` is on it (and it is still)."""
        deadline = time.monotonic() + timeout
        rows: list[str] = []
        while time.monotonic() < deadline:
            rows = self.rows()
            screen = "\n".join(rows)
            if all(text in screen for text in texts):
                time.sleep(0.5)  # a frame may come in pieces: read the settled one
                return self.rows()
            time.sleep(0.2)
        raise AssertionError(f"no {texts} on screen:\n" + "\n".join(rows))

    def alive(self) -> bool:
        """Whether the session still runs."""
        return (
            subprocess.run(
                ["tmux", "-L", self.socket, "has-session", "-t", "phone"],
                env=self.env,
                capture_output=True,
                timeout=10,
            ).returncode
            == 0
        )

    def stop(self) -> None:
        """End our tmux server (ours alone: its own socket)."""
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"],
            env=self.env,
            capture_output=True,
            timeout=10,
        )


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    """A tmux server of our own, in a clean English environment."""
    env = terminal_env(str(tmp_path / "config"))
    env["TMUX_TMPDIR"] = str(tmp_path)
    env.pop("TMUX", None)
    for name in ("COLUMNS", "LINES"):  # a test before may have set them: they beat the pane's size
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path])
    terminal = Tmux(env)
    try:
        yield terminal
    finally:
        terminal.stop()


def _row(rows: list[str], text: str) -> int:
    return next(i for i, row in enumerate(rows) if text in row)


def test_tulips_play_shows_the_narrow_table_in_a_40x50_terminal(tmux: Tmux) -> None:
    """The opening at 40×50: the move first with its options one under the
    other, then the festival and the players; the tabs and the key buttons
    below; no key bar; no row wider than the window. q, then y, quits."""
    tmux.start([sys.executable, "-m", "client.tui", "play", "--players", "3", "--name", "Ada"])
    rows = tmux.until("Your move", "Festival", "Ada (you)", "Which card goes", "Table", "Log")
    assert len(rows) <= HEIGHT and all(len(row) <= WIDTH for row in rows)
    move, festival, players = (_row(rows, w) for w in ("Your move", "Festival", "Players"))
    assert move < festival < players, "\n".join(rows)
    options = [i for i, row in enumerate(rows) if re.match(r"│\s+[12]\s\s\S", row)]
    assert options and move < options[0] <= options[-1] < festival, "\n".join(rows)
    if len(options) == 1:  # a random deal of two equal cards has one distinct choice (R11)
        same = re.search(r"[12]\s\s(\S+) \S+ · (\S+) ", rows[options[0]])
        assert same and same[1] == same[2], "\n".join(rows)
    else:
        assert len(options) == 2, "\n".join(rows)
    for word in ("Table", "Log", "Chat", "rules", "quit"):
        assert _row(rows, word) > players, ("\n".join(rows), word)
    assert not any("Esc" in row for row in rows)  # the key bar is not drawn
    tmux.run("send-keys", "-t", "phone", "q")
    tmux.until("Quit?", timeout=10)
    tmux.run("send-keys", "-t", "phone", "y")
    deadline = time.monotonic() + 15
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not tmux.alive()
