"""What clients that never read cost a server: ``python -m server.lab.bench``.

Starts ``python -m server`` (memory only) on 127.0.0.1, plays a bots-only
match to its end, notes the server's resident memory (VmRSS, from /proc), then
connects ``--clients`` clients that ask for that match's replay pages (about
10 KiB each) within the rate limit and never read a byte. It reports the
server's memory above idle at its peak, and once the server has let them all
go. Linux only (it reads /proc). A benchmark, not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import socket
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.protocol import State

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[2]
_LISTENING = re.compile(rb"port (\d+) \(ws://")


def rss(pid: int) -> int:
    """Resident memory of process ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def _start_server(flags: list[str]) -> tuple[asyncio.subprocess.Process, int]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--no-storage",
        "--bot-delay",
        "0",
        *flags,
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    async with asyncio.timeout(20):
        while True:
            line = await process.stderr.readline()
            if not line:
                raise RuntimeError("the server exited before it listened")
            found = _LISTENING.search(line)
            if found:
                return process, int(found.group(1))


async def _request(ws: ClientConnection, type_: str, **fields: Any) -> None:
    await ws.send(msgpack.packb({"v": 1, "type": type_, **fields}))


async def _finished_match(url: str) -> str:
    """A 5-seat bots-only match, played to its end; its id."""
    async with connect(url, compression=None) as ws:
        await _request(ws, "hello", client="bench/1", name="Host")
        bots = [{"seat": seat, "strength": "easy"} for seat in range(5)]
        await _request(ws, "create_match", name="bench", seats=5, bots=bots)
        match_id = None
        async with asyncio.timeout(60):
            async for frame in ws:
                message = msgpack.unpackb(frame)
                if message["type"] == "joined":
                    match_id = message["match"]
                    await _request(ws, "start")
                elif message["type"] == "match_update" and message["match"]["status"] == "finished":
                    return str(match_id)
    raise RuntimeError("the match did not finish")


async def _never_reads(port: int, name: str, match_id: str, stop_after: float) -> bool:
    """Say hello, then ask for replay pages (50 a second) without reading, until
    the server drops the connection; whether it did within ``stop_after`` s."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    ws = await connect(f"ws://127.0.0.1:{port}", sock=sock, compression=None, max_queue=1)
    ws.transport.pause_reading()
    deadline = time.monotonic() + stop_after
    try:
        await _request(ws, "hello", client="bench/1", name=name)
        while time.monotonic() < deadline:
            if ws.state is State.CLOSED:
                return True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(_request(ws, "replay", match=match_id, from_seq=1), 1)
            await asyncio.sleep(0.02)
        return False
    finally:
        ws.transport.abort()


async def run(clients: int, flags: list[str]) -> None:
    """Measure and print."""
    process, port = await _start_server(flags)
    try:
        url = f"ws://127.0.0.1:{port}"
        match_id = await _finished_match(url)
        await asyncio.sleep(1)
        idle = rss(process.pid)
        peak = idle
        attack = asyncio.gather(
            *(_never_reads(port, f"sloth{i}", match_id, 120) for i in range(clients))
        )
        while not attack.done():
            peak = max(peak, rss(process.pid))
            await asyncio.sleep(0.05)
        dropped = sum(await attack)
        await asyncio.sleep(7)  # the server hands freed memory back 5 s after a wave
        after = rss(process.pid)
        mib = 1024 * 1024
        print(f"clients that never read: {clients}, dropped by the server: {dropped}")
        print(f"server RSS idle:        {idle / mib:7.1f} MiB")
        print(f"server RSS peak:        {peak / mib:7.1f} MiB  (+{(peak - idle) / mib:.1f})")
        print(f"server RSS after:       {after / mib:7.1f} MiB  (+{(after - idle) / mib:.1f})")
    finally:
        process.terminate()
        await process.wait()


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``python -m server.lab.bench [--clients N] [-- server flags]``."""
    parser = argparse.ArgumentParser(prog="python -m server.lab.bench", description=__doc__)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("server_flags", nargs="*", help="passed to tulips-server (after --)")
    args = parser.parse_args(argv)
    asyncio.run(run(args.clients, args.server_flags))


if __name__ == "__main__":
    main()
