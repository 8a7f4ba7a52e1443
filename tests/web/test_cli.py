"""``tulips-server --web`` from the command line: the flags, the address it
prints, a clean stop that leaves no client process, and clear errors."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from server.cli import WEB_PORT, parse_args
from server.lab.web.probe import Tab
from server.web.session import dies_with_parent

from .helpers import alive, wait_until

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = re.compile(rb"Browsers can play at http://127\.0\.0\.1:(\d+) \(at most 3 at once\)")


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


async def server(tmp: Path, *flags: str) -> asyncio.subprocess.Process:
    """``python -m server`` on 127.0.0.1, OS-picked game port, no storage; its
    temporary files (the tabs' token files) in ``tmp``."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", "0", "--no-storage",
        *flags, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp)},
    )  # fmt: skip


def test_web_flags() -> None:
    """--web alone takes the default port; --web PORT and --web-max-sessions N are read."""
    assert parse_args([]).web_port is None
    assert parse_args(["--web"]).web_port == WEB_PORT
    config = parse_args(["--web", "9000", "--web-max-sessions", "3"])
    assert (config.web_port, config.web_max_sessions) == (9000, 3)


def test_tab_limit_flags() -> None:
    """Issue 29's limits on tabs: the defaults, and the flags that change them
    (minutes and MiB on the command line, seconds and bytes inside)."""
    defaults = parse_args([])
    assert (defaults.web_sessions_per_address, defaults.web_tab_idle) == (2, 1800.0)
    assert defaults.web_tab_memory == 512 * 2**20
    config = parse_args(
        ["--web-sessions-per-address", "3", "--web-tab-idle", "2.5", "--web-tab-memory", "300"]
    )
    assert (config.web_sessions_per_address, config.web_tab_idle) == (3, 150.0)
    assert config.web_tab_memory == 300 * 2**20


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--web-max-sessions", "0"], "--web-max-sessions: must be at least 1, got 0"),
        (["--web", "70000"], "--web: a port is 0 to 65535, got 70000"),
        (["--web-sessions-per-address", "0"], "--web-sessions-per-address: must be at least 1"),
        (["--web-tab-idle", "0"], "--web-tab-idle: must be a number of minutes, more than 0"),
        (["--web-tab-memory", "x"], "--web-tab-memory: must be a whole number"),
    ],
)
def test_bad_web_flags_exit_2(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A limit under 1 or a port past 65535 is refused with a message."""
    with pytest.raises(SystemExit) as exit_:
        parse_args(flags)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_help_documents_web() -> None:
    """tulips-server --help explains --web and --web-max-sessions."""
    done = subprocess.run(
        [sys.executable, "-m", "server", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    flat = " ".join(done.stdout.split())
    assert "--web [PORT]" in flat and f"(default {WEB_PORT})" in flat
    assert "--web-max-sessions N" in flat


async def test_serves_browsers_and_stops_with_no_process_left(tmp_path: Path) -> None:
    """--web 0: the address to share is logged, a tab plays, and SIGTERM ends the
    server with status 0 and its tab's client process with it."""
    process = await server(tmp_path, "--web", "0", "--web-max-sessions", "3")
    try:
        assert process.stderr is not None
        async with asyncio.timeout(20):
            while not (found := BROWSERS.search(await process.stderr.readline())):
                assert process.returncode is None, "the server exited before serving"
        async with Tab(f"http://127.0.0.1:{int(found.group(1))}", "Ana") as tab:
            await tab.wait_for("Matches")
            (client,) = children(process.pid)
            assert len(list(tmp_path.glob("tulips-web-*"))) == 1
            process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(20):
                assert await process.wait() == 0
            async with asyncio.timeout(10):
                await tab.closed.wait()
        assert not alive(client)
        assert not list(tmp_path.glob("tulips-web-*"))  # the tabs' token files are gone
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.skipif(
    dies_with_parent(["x"]) == ["x"], reason="needs util-linux's setpriv --pdeathsig"
)
async def test_a_killed_server_takes_its_clients_along(tmp_path: Path) -> None:
    """SIGKILL leaves no time to clean up: the kernel ends the tab's client all the same."""
    process = await server(tmp_path, "--web", "0", "--web-max-sessions", "3")
    try:
        assert process.stderr is not None
        async with asyncio.timeout(20):
            while not (found := BROWSERS.search(await process.stderr.readline())):
                assert process.returncode is None, "the server exited before serving"
        async with Tab(f"http://127.0.0.1:{int(found.group(1))}", "Ana") as tab:
            await tab.wait_for("Matches")
            (client,) = children(process.pid)
            process.kill()
            await process.wait()
            await wait_until(lambda: not alive(client), 10)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_a_taken_web_port_is_one_clear_line_and_status_1(tmp_path: Path) -> None:
    """The port in use is named, the game server is stopped again, exit status 1."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await server(tmp_path, "--web", str(port))
        async with asyncio.timeout(30):
            _, err = await process.communicate()
    assert process.returncode == 1
    assert f"cannot serve browsers on 127.0.0.1:{port}: Address already in use".encode() in err
    assert b"Traceback" not in err


async def test_web_without_textual_serve_says_what_to_install() -> None:
    """Without the [web] extra, --web says which package is missing and how to get it."""
    code = (
        "import sys; sys.modules['textual_serve'] = None; from server.cli import main;"
        " sys.exit(main(['--host', '127.0.0.1', '--port', '0', '--no-storage', '--web', '0']))"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=ROOT, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(30):
        _, err = await process.communicate()
    assert process.returncode == 1
    assert b"--web needs textual_serve: pip install 'gift-of-tulips[web]'" in err


def test_the_client_takes_its_token_file_from_the_command_line() -> None:
    """``tulips connect --identity-file PATH``: what each browser tab's client runs with."""
    from client.tui.cli import parse_args as client_args

    args = client_args(["connect", "localhost:1", "--identity-file", "/tmp/seat.json"])
    assert args.identity_file == Path("/tmp/seat.json")
    assert client_args(["connect", "localhost:1"]).identity_file is None


async def test_a_killed_servers_token_dir_is_removed_at_the_next_start(tmp_path: Path) -> None:
    """Issue 29, "token files stay in the temp dir after a SIGKILL": the next
    server removes the directory of the one killed (its owner is gone)."""
    first = await server(tmp_path, "--web", "0", "--web-max-sessions", "3")
    second = None
    try:
        assert first.stderr is not None
        async with asyncio.timeout(20):
            while not BROWSERS.search(await first.stderr.readline()):
                assert first.returncode is None, "the server exited before serving"
        (left,) = tmp_path.glob("tulips-web-*")
        first.kill()
        await first.wait()
        assert left.is_dir()
        second = await server(tmp_path, "--web", "0", "--web-max-sessions", "3")
        assert second.stderr is not None
        async with asyncio.timeout(20):
            while not BROWSERS.search(await second.stderr.readline()):
                assert second.returncode is None, "the server exited before serving"
        (now,) = tmp_path.glob("tulips-web-*")
        assert now != left and not left.exists()
    finally:
        for process in (first, second):
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()


async def test_the_cli_gives_the_front_the_game_servers_tab_addresses() -> None:
    """``tulips-server --web`` wires the front to the game server: the tabs'
    passes go where the game server reads them, with the operator's limits
    and --allow-origin."""
    from server.app import TulipsServer
    from server.cli import _start_web

    config = parse_args(
        ["--host", "127.0.0.1", "--port", "0", "--no-storage", "--web", "0",
         "--web-sessions-per-address", "3", "--web-tab-idle", "1", "--web-tab-memory", "300",
         "--allow-origin", "http://tulips.lan:8080"]
    )  # fmt: skip
    game = TulipsServer(config)
    await game.start()
    try:
        web = await _start_web(config, game)
        try:
            assert web.tab_addresses is game.tab_addresses
            assert (web.per_address, web.idle_timeout, web.tab_memory) == (3, 60.0, 300 * 2**20)
            assert web.allowed_origins == ("http://tulips.lan:8080",)
        finally:
            await web.stop()
    finally:
        await game.stop()
