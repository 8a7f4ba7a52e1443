"""python -m tests.lan.discovery_bench: how soon ``tulips servers`` lists a server.

On the private two-namespace LAN of :mod:`tests.lan.netns` (nothing is sent
on the machine's own network) it measures, over --runs runs:

- warm: the server already announced, the wall time of
  ``tulips servers --count 1`` (interpreter start included) and how long
  after browsing began the server was seen (its ``seen_after``);
- cold: the browser already running, the time from starting
  ``python -m server`` to the server being listed.

    python -m tests.lan.discovery_bench --runs 10
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

from .netns import ROOT, Lan, environment, private_lan, python


def _server(lan: Lan) -> subprocess.Popen[bytes]:
    argv = python(
        "-m", "server", "--host", lan.server_address, "--port", "8765", "--no-storage"
    )  # fmt: skip
    return subprocess.Popen(
        lan.command(lan.server_ns, argv),
        env=environment(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _servers(lan: Lan) -> list[str]:
    argv = python("-m", "client.tui.cli", "servers", "--json", "--count", "1", "--timeout", "20")
    return lan.command(lan.client_ns, argv)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(15)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="python -m tests.lan.discovery_bench")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    wall, seen, cold = [], [], []
    with private_lan() as lan:
        server = _server(lan)
        time.sleep(4)  # registration: probing takes about two seconds
        for _ in range(args.runs):
            started = time.perf_counter()
            out = subprocess.run(
                _servers(lan), env=environment(), cwd=ROOT, capture_output=True, timeout=60
            )
            wall.append(time.perf_counter() - started)
            seen.append(json.loads(out.stdout)[0]["seen_after"])
        _stop(server)
        for _ in range(args.runs):
            time.sleep(1.5)  # the goodbye of the last run has been heard
            browser = subprocess.Popen(
                _servers(lan), env=environment(), cwd=ROOT, stdout=subprocess.PIPE
            )
            time.sleep(2)  # the browser is up and has asked once
            started = time.perf_counter()
            server = _server(lan)
            browser.communicate(timeout=60)
            cold.append(time.perf_counter() - started)
            _stop(server)
    for label, values in (
        ("warm: tulips servers --count 1, wall", wall),
        ("warm: seen after browsing began", seen),
        ("cold: server start to listed", cold),
    ):
        print(
            f"{label:40} median {statistics.median(values) * 1000:6.0f} ms"
            f"   max {max(values) * 1000:6.0f} ms   ({len(values)} runs)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
