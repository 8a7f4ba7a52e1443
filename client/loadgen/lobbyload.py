"""tulips-loadtest lobby: what lobby browsers cost a server while matches play.

It starts a server on 127.0.0.1 (memory only) and plays the same load twice,
each time on a fresh server: ``--matches`` matches of ``--players`` SDK
clients thinking ``--think`` seconds a move (each table plays on with its
rematch), first alone, then beside ``--browsers`` more connections that each
say hello, send ``list_matches`` once (a page of ``--page`` matches, as the
terminal client's lobby asks; ``--page 0`` sends it with no page, as clients
of earlier releases do) and then only read. It prints the server's CPU
seconds in each run, the matches' changes while measuring (the
``match_update``s their first seats received: each change of a match), the
frames and bytes the browsers received, and from these the server CPU and
the bytes sent to browsers per match change: what the lobby costs.

    tulips-loadtest lobby --browsers 2000 --matches 200 --duration 120

Run as ``python -m client.loadgen.lobbyload`` it takes the same flags, so a
copy of this file measures an earlier revision's server the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from .load import raise_fd_limit, run_load, spawned_server, wait_until_up
from .report import LoadReport

__all__ = ["Browsers", "add_arguments", "main", "run_command"]

#: Browsers connecting at once while they are set up.
_OPENING = 100


@dataclass
class Browsers:
    """What the lobby browsers received while measuring."""

    frames: int = 0
    bytes: int = 0
    measuring: bool = False
    #: browsers the server closed (one too slow to read what it is sent is closed)
    closed: int = 0


async def _browse(url: str, index: int, page: int, seen: Browsers, ready: asyncio.Event) -> None:
    """One lobby browser: hello, one ``list_matches``, then it only reads."""
    encode, decode = msgspec.msgpack.encode, msgspec.msgpack.decode
    hello = {
        "v": 1,
        "type": "hello",
        "id": 1,
        "client": "tulips-loadtest-lobby/1",
        "name": f"browser{index}",
        "features": ["batch"],
    }
    listing: dict[str, object] = {"v": 1, "type": "list_matches", "id": 2}
    if page:
        listing["limit"] = page
    socket: ClientConnection
    async with connect(url, max_size=2**20, compression=None) as socket:
        await socket.send(encode(hello))
        welcome = decode(await socket.recv(decode=False))
        if welcome.get("type") != "welcome":
            raise RuntimeError(f"the server did not welcome a browser: {welcome}")
        await socket.send(encode(listing))
        while True:
            try:
                frame = await socket.recv()
            except ConnectionClosed:
                seen.closed += 1
                return
            if not isinstance(frame, bytes):
                continue
            if not ready.is_set():
                answer = decode(frame)
                messages = answer.get("messages", [answer])
                if any(m.get("type") == "match_list" for m in messages):
                    ready.set()
                continue
            if seen.measuring:
                seen.frames += 1
                seen.bytes += len(frame)


async def _run(
    args: argparse.Namespace, url: str, pid: int, browsers: int
) -> tuple[LoadReport, Browsers]:
    await wait_until_up(url)
    seen = Browsers()
    tasks: list[asyncio.Task[None]] = []
    for start in range(0, browsers, _OPENING):
        batch = []
        for index in range(start, min(browsers, start + _OPENING)):
            ready = asyncio.Event()
            tasks.append(asyncio.create_task(_browse(url, index, args.page, seen, ready)))
            batch.append(ready.wait())
        async with asyncio.timeout(60):
            await asyncio.gather(*batch)

    def measuring(now: bool) -> None:
        seen.measuring = now

    report = await run_load(
        url,
        args.matches,
        args.players,
        args.think,
        args.duration,
        ramp=5.0,
        server_pid=pid,
        on_measuring=measuring,
    )
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return report, seen


def _measure(args: argparse.Namespace, browsers: int) -> tuple[LoadReport, Browsers]:
    with spawned_server("off") as server:
        return asyncio.run(_run(args, server.url, server.pid, browsers))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``tulips-loadtest lobby``."""
    parser.add_argument("--browsers", type=int, default=2000, help="lobby browsers")
    parser.add_argument("--page", type=int, default=32, help="matches a browser asks for")
    parser.add_argument("--matches", type=int, default=200, help="matches playing")
    parser.add_argument("--players", type=int, default=4, help="seats of each match")
    parser.add_argument("--think", type=float, default=1.0, help="seconds a move")
    parser.add_argument(
        "--duration", type=float, default=120.0, help="seconds measured (matches must end in it)"
    )


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Measure the load alone and with the browsers; print what the browsers cost."""
    if args.browsers < 1 or args.matches < 1 or not 2 <= args.players <= 6:
        parser.error("--browsers and --matches must be at least 1, --players 2 to 6")
    if not 0 <= args.page <= 32 or args.duration <= 0 or args.think < 0:
        parser.error("--page must be 0 to 32, --duration positive, --think not negative")
    raise_fd_limit()
    started = time.perf_counter()
    alone, _ = _measure(args, 0)
    loaded, seen = _measure(args, args.browsers)
    page = f"a page of {args.page}" if args.page else "no page (every match)"
    print(
        f"{args.matches} matches of {args.players} (think {args.think:g} s), "
        f"{args.duration:g} s measured; {args.browsers} browsers asking {page}"
    )
    for label, report in (("alone", alone), ("with browsers", loaded)):
        cpu = f"{report.server_cpu:.2f} s" if report.server_cpu is not None else "unknown"
        print(
            f"  {label:14} server CPU {cpu:>9}  actions {report.actions:>7}  "
            f"match changes {report.match_changes:>6}  errors {report.errors}"
        )
    if not loaded.match_changes:
        print("  no match changed while measuring: measure longer (--duration)")
        return 1
    changes = loaded.match_changes
    print(
        f"  browsers received {seen.frames} frames, {seen.bytes:,} bytes: "
        f"{seen.bytes / changes:,.0f} bytes and {seen.frames / changes:.1f} frames per match"
        f" change; {seen.closed} browsers closed by the server"
    )
    if alone.server_cpu is not None and loaded.server_cpu is not None:
        # the same load's CPU, normalised to the same number of actions
        rate = alone.server_cpu / max(1, alone.actions)
        extra = loaded.server_cpu - rate * loaded.actions
        print(
            f"  the browsers' server CPU: {extra:.2f} s, {extra / changes * 1e6:,.0f} µs"
            " per match change"
        )
    print(f"  ({time.perf_counter() - started:.0f} s in all)")
    return 0 if not (alone.errors or loaded.errors) else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m client.loadgen.lobbyload``: as ``tulips-loadtest lobby``."""
    parser = argparse.ArgumentParser(
        prog="tulips-loadtest lobby",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run_command(parser.parse_args(argv), parser)


if __name__ == "__main__":
    sys.exit(main())
