"""``python -m server``: it says where it listens, serves /healthz and
WebSocket clients, shuts down cleanly on SIGTERM and SIGINT, and refuses a
bad flag with exit code 2 and a message."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from pathlib import Path

import pytest

from client.sdk import connect
from server.cli import parse_args

from .helpers import get

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(rb"listening on 127\.0\.0\.1, port (\d+) \(ws://127\.0\.0\.1:(\d+)\)")


async def start_server(data_dir: Path, *flags: str) -> asyncio.subprocess.Process:
    """``python -m server`` on 127.0.0.1 and an OS-picked port, storing in ``data_dir``."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--data-dir",
        str(data_dir),
        *flags,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def listening_port(process: asyncio.subprocess.Process) -> int:
    """The port from the log line that says where the server listens."""
    assert process.stderr is not None
    async with asyncio.timeout(15):
        while True:
            line = await process.stderr.readline()
            assert line, "the server exited before it said where it listens"
            found = LISTENING.search(line)
            if found:
                assert found.group(1) == found.group(2)
                return int(found.group(1))


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_cli_serves_and_exits_cleanly_on_a_signal(
    stop: signal.Signals, tmp_path: Path
) -> None:
    """The CLI logs where it listens, serves /healthz and clients, and exits 0 on the signal."""
    process = await start_server(tmp_path, "--grace-period", "5", "--bot-delay", "0")
    try:
        port = await listening_port(process)
        async with asyncio.timeout(10):
            status, _, body = await asyncio.to_thread(get, f"http://127.0.0.1:{port}/healthz")
        assert status == 200
        assert json.loads(body)["status"] == "ok"
        async with connect(f"ws://127.0.0.1:{port}", name="Ada", reconnect=False) as ada:
            await ada.create_match(seats=2, bots=[(1, "easy")])
        process.send_signal(stop)
        async with asyncio.timeout(15):
            _, rest = await process.communicate()
        assert process.returncode == 0, rest.decode()
        assert b"shutting down" in rest
        assert b"Traceback" not in rest
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--port", "-5"], "--port: a port is 0 to 65535"),
        (["--port", "70000"], "--port: a port is 0 to 65535"),
        (["--port", "abc"], "--port"),
        (["--max-matches", "0"], "--max-matches: must be at least 1"),
        (["--max-connections", "-1"], "--max-connections: must be at least 1"),
        (["--grace-period", "-1"], "--grace-period"),
        (["--rate-limit", "0"], "--rate-limit"),
        (["--stop-timeout", "-1"], "--stop-timeout"),
        (["--no-such-flag"], "unrecognized arguments"),
    ],
)
async def test_cli_refuses_a_bad_flag_with_exit_code_2(
    flags: list[str], message: str, tmp_path: Path
) -> None:
    """A bad flag: exit code 2 and a message naming it on stderr, nothing served."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--host",
        "127.0.0.1",
        "--data-dir",
        str(tmp_path),
        *flags,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(15):
        out, err = await process.communicate()
    assert process.returncode == 2
    assert message in err.decode(), err.decode()
    assert b"listening" not in err and not out


def test_the_burst_is_twice_the_rate_limit_as_the_help_says() -> None:
    """--rate-limit R allows bursts of 2R frames (never fewer than 10), and the
    welcome tells exactly that: the help text, the setting and the wire agree."""
    assert parse_args([]).rate_burst == 100  # the default rate, 50
    assert parse_args(["--rate-limit", "5"]).rate_burst == 10
    assert parse_args(["--rate-limit", "2"]).rate_burst == 10
    assert parse_args(["--rate-limit", "120"]).rate_burst == 240
    assert parse_args(["--rate-limit", "2.6"]).rate_burst == 10
    limits = parse_args(["--rate-limit", "40"]).limits("192.0.2.1")
    assert (limits.rate_limit, limits.rate_burst) == (40, 80)
