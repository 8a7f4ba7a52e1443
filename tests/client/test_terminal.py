"""`tulips` as a person starts it: in a real pseudo-terminal, with its own
local server, and gone — server and all — when the player quits. Also the
command line's one-line errors."""

from __future__ import annotations

import pathlib
import socket
import subprocess
import sys

import pytest

from client.tui.cli import websocket_url
from client.tui.startup_bench import PseudoTerminal, measure, terminal_env

TULIPS = [sys.executable, "-m", "client.tui"]


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose parent is ``pid``."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            found.append((int(entry.name), cmdline))
    return found


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def env(tmp_path: pathlib.Path) -> dict[str, str]:
    """A clean environment: English, a 256-colour terminal, config in a temp dir."""
    return terminal_env(str(tmp_path / "config"))


@pytest.mark.parametrize("quit_key", [b"q", b"\x03"], ids=["q", "ctrl+c"])
def test_tulips_play_draws_the_table_in_a_terminal_and_cleans_up(
    env: dict[str, str], quit_key: bytes
) -> None:
    """`tulips play`: local server up, the table drawn, then q (or Ctrl+C) ends both."""
    argv = [*TULIPS, "play", "--players", "3", "--name", "Ada"]
    terminal = PseudoTerminal(argv, env, (100, 30))
    try:
        assert terminal.read_until(b"Festival", timeout=20), terminal.text()[-2000:]
        assert terminal.read_until(b"Ada (you)", timeout=10), terminal.text()[-2000:]
        servers = [pid for pid, cmd in _children(terminal.process.pid) if "-m server" in cmd]
        assert len(servers) == 1
        terminal.send(quit_key)
        assert terminal.wait(timeout=15) == 0
        assert not _alive(servers[0])
    finally:
        terminal.close()


def test_the_first_screen_is_drawn_quickly() -> None:
    """Process start to the title on the terminal: well under a second here (bound: 2 s)."""
    first, table = measure()
    assert first < 2.0 and first < table


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TULIPS, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )


def test_a_bad_address_is_one_line_and_status_2(env: dict[str, str]) -> None:
    """Not a ws:// address: argparse's usage line and one error line, exit status 2."""
    result = _run("connect", "http://example.org/x", env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith("(try ws://HOST:PORT)")
    assert "Traceback" not in result.stderr


def test_an_unreachable_server_is_one_line_and_status_1(env: dict[str, str]) -> None:
    """Nobody listening: one line on stderr, exit status 1, no traceback."""
    port = _free_port()
    result = _run("connect", f"127.0.0.1:{port}", "--name", "Ana", env=env)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines == [f"tulips: cannot reach ws://127.0.0.1:{port}: Connection refused"]


def test_errors_speak_the_players_language(env: dict[str, str]) -> None:
    """--lang de: the command line's own error in German."""
    result = _run("connect", "nope://x", "--lang", "de", env=env)
    assert result.returncode == 2 and "keine Serveradresse" in result.stderr


def test_websocket_url_accepts_what_people_type() -> None:
    """host, host:port and ws:// URLs all become ws://host:port."""
    assert websocket_url("192.168.1.5") == "ws://192.168.1.5:8765"
    assert websocket_url("tulips.local:9000") == "ws://tulips.local:9000"
    assert websocket_url("wss://example.org") == "wss://example.org:8765"
    assert websocket_url("ws://[::1]:8000/") == "ws://[::1]:8000"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
