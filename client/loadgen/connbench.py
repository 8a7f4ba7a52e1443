"""tulips-loadtest connbench: how long a connection takes to set up, TLS against plain.

It times SDK sessions opened one after another — TCP, the TLS handshake (for
wss://, pinned by fingerprint), the WebSocket upgrade and hello/welcome — and
prints the median, 90th percentile and mean of each URL. With --spawn it
starts two local servers on 127.0.0.1 (ws:// and wss:// with a throw-away
self-signed certificate) and compares them; or give URLs you run yourself.

    tulips-loadtest connbench --spawn --count 300
    tulips-loadtest connbench wss://127.0.0.1:8765 --fingerprint SHA256:3F:A0:...
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import socket
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..localserver import HOST, LocalServer
from ..sdk import Session

__all__ = ["add_arguments", "main", "run_command", "time_opens"]

_FINGERPRINT = re.compile(r"TLS certificate fingerprint (SHA256:[0-9A-F:]+)")


async def time_opens(url: str, count: int, fingerprint: str | None) -> list[float]:
    """Seconds each of ``count`` sequential ``Session.open()`` took (closed after each)."""
    times = []
    for i in range(count):
        session = Session(url, f"bench{i}", reconnect=False, fingerprint=fingerprint)
        started = time.perf_counter()
        await session.open()
        times.append(time.perf_counter() - started)
        await session.close()
    return times


def _line(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return (
        f"{label:6} p50 {statistics.median(ordered) * 1000:7.2f} ms   p90 {p90 * 1000:7.2f} ms"
        f"   mean {statistics.fmean(ordered) * 1000:7.2f} ms   ({len(ordered)} connections)"
    )


@contextlib.contextmanager
def _servers() -> Iterator[tuple[str, str, str]]:
    """A plain and a TLS server on free local ports (:class:`LocalServer`):
    (ws URL, wss URL, fingerprint)."""
    with tempfile.TemporaryDirectory(prefix="tulips-connbench-") as folder:
        options = ["--no-storage", "--rate-limit", "1000"]
        log = Path(folder) / "tls.log"
        plain = LocalServer(options, bot_delay=None, log_level="INFO", follow_parent=False)
        secure = LocalServer(
            [*options, "--tls"],
            data_dir=Path(folder),
            bot_delay=None,
            log_level="INFO",
            follow_parent=False,
            log_path=log,
        )
        servers = [plain, secure]
        try:
            for server in servers:
                server.spawn()
            deadline = time.monotonic() + 20
            while not (found := _FINGERPRINT.search(log.read_text())) or not all(
                _listening(server.port) for server in servers
            ):
                if time.monotonic() > deadline or any(s.exit_code() is not None for s in servers):
                    raise SystemExit("connbench: the local servers did not start")
                time.sleep(0.05)
            yield f"ws://{HOST}:{plain.port}", f"wss://{HOST}:{secure.port}", found.group(1)
        finally:
            for server in servers:
                server.stop(10.0)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``tulips-loadtest connbench``."""
    parser.add_argument("urls", nargs="*", help="ws:// or wss:// URLs of running servers")
    parser.add_argument("--spawn", action="store_true", help="start a ws:// and a wss:// server")
    parser.add_argument("--fingerprint", help="the wss:// servers' certificate fingerprint")
    parser.add_argument("--count", type=int, default=200, help="connections per URL")


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Time the connections of the URLs given, or of two servers it starts; print them."""
    if bool(args.urls) == args.spawn or args.count < 1:
        parser.error("give URLs or --spawn (not both), and a --count of at least 1")

    async def run(targets: list[tuple[str, str | None]]) -> None:
        for url, pin in targets:
            await time_opens(url, 5, pin)  # warm up: imports, first handshakes
            label = url.split("://")[0]
            print(_line(label, await time_opens(url, args.count, pin)))

    if args.spawn:
        with _servers() as (plain, secure, pin):
            asyncio.run(run([(plain, None), (secure, pin)]))
    else:
        asyncio.run(
            run([(url, args.fingerprint if url.startswith("wss") else None) for url in args.urls])
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m client.loadgen.connbench`` (and ``tulips-loadtest connbench``)."""
    parser = argparse.ArgumentParser(
        prog="python -m client.loadgen.connbench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run_command(parser.parse_args(argv), parser)


if __name__ == "__main__":
    raise SystemExit(main())
