"""``--parent-pid``: a server run by a program of its own (``tulips play``)
stops when that program ends, even by SIGKILL — for real, with processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from client.localserver import LocalServer
from server.cli import parse_args

ROOT = Path(__file__).resolve().parents[2]

#: A parent that starts the server as tulips play does, prints its pid, and waits.
PARENT = """
import asyncio, sys, time
from client.localserver import LocalServer

server = LocalServer(bot_delay=0)
asyncio.run(server.start())
print(server.process.pid, flush=True)
time.sleep(60)
"""


def _gone(pid: int, within: float) -> bool:
    """Whether process ``pid`` has ended (or is a zombie nobody reaped) within ``within`` s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def test_the_local_server_ends_when_its_program_is_killed() -> None:
    """SIGKILL the program that runs tulips play's server: the server follows."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env
    )
    try:
        assert parent.stdout is not None
        server_pid = int(parent.stdout.readline())
        assert not _gone(server_pid, 1.0), "the server should run while its program does"
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert _gone(server_pid, 10.0), "the server outlived the program that ran it"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_the_flag_reaches_the_config_and_the_local_server_gives_it() -> None:
    """--parent-pid takes a process id; tulips play's server is given this one's."""
    assert parse_args(["--parent-pid", "4242"]).parent_pid == 4242
    assert parse_args([]).parent_pid is None
    command = LocalServer().command(8765)
    assert command[command.index("--parent-pid") + 1] == str(os.getpid())
