"""How long ``tulips`` takes from process start to its first screen on a terminal.

    tulips-loadtest startup [--runs 5] [--size 80x24]

Each run starts ``python -m client.tui play`` on a fresh pseudo-terminal and
times, from just before the process is spawned, until the game's title is on
the terminal (escape sequences removed) — interpreter start-up, imports,
Textual's first layout and the bytes written, end to end. The local server
starts in the background after that first screen; the time until the table
(its festival) is drawn is reported too. Each run ends by sending ``q`` (and
``y`` to the question it asks while the match runs).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

__all__ = ["PseudoTerminal", "add_arguments", "main", "measure", "run_command"]

_ANSI = re.compile(rb"\x1b(\[[0-9;?<>=$ ]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def _take_terminal() -> None:
    """In the child, after setsid(): make its stdin, the pty, its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PseudoTerminal:
    """A command running on the slave side of a new pty of a given size, in a
    session of its own; ``controlling``: with the pty as that session's
    controlling terminal, as a terminal window's shell has it (closing it then
    sends SIGHUP)."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        size: tuple[int, int],
        *,
        controlling: bool = False,
    ) -> None:
        self.master, slave = os.openpty()
        cols, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.process = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            preexec_fn=_take_terminal if controlling else None,
        )
        os.close(slave)
        self.output = b""

    def text(self) -> bytes:
        """Everything written so far, escape sequences removed."""
        return _ANSI.sub(b"", self.output)

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.output += chunk
        return bool(chunk)

    def read_until(self, pattern: bytes, timeout: float) -> bool:
        """Read until ``pattern`` shows in the text; False on timeout or exit."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._read(0.02):
                return pattern in self.text()
            if pattern in self.text():
                return True
        return False

    def send(self, keys: bytes) -> None:
        """Type ``keys``."""
        os.write(self.master, keys)

    def wait(self, timeout: float) -> int | None:
        """Read on (a full pty would block the child) until it exits."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.05)
        return self.process.poll()

    def hang_up(self) -> None:
        """Close the terminal's side of the pty, as a closed window or killed tmux session does."""
        if self.master >= 0:
            os.close(self.master)
            self.master = -1

    def close(self) -> None:
        """Kill what is left and free the pty."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)
        self.hang_up()


def terminal_env(config_home: str) -> dict[str, str]:
    """A plain English 256-colour terminal, settings kept out of the user's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "TEXTUAL"))}
    env.update(TERM="xterm-256color", LANG="C.UTF-8", XDG_CONFIG_HOME=config_home)
    return env


def measure(size: tuple[int, int] = (80, 24), timeout: float = 20.0) -> tuple[float, float]:
    """Seconds from spawning ``tulips play`` to its first screen (the title),
    and to the table (the festival, once the local server has dealt)."""
    with tempfile.TemporaryDirectory() as home:
        argv = [sys.executable, "-m", "client.tui", "play", "--players", "2", "--lang", "en"]
        start = time.perf_counter()
        terminal = PseudoTerminal(argv, terminal_env(home), size)
        try:
            marks = []
            for text in (b"Gift of Tulips", b"Festival"):
                if not terminal.read_until(text, timeout):
                    raise RuntimeError(f"no {text!r} after {timeout} s: {terminal.text()[-500:]!r}")
                marks.append(time.perf_counter() - start)
            terminal.send(b"q")  # the match is on: q asks first, y confirms
            terminal.read_until(b"Quit?", 5)
            terminal.send(b"y")
            terminal.wait(10)
            return marks[0], marks[1]
        finally:
            terminal.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``tulips-loadtest startup``."""
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", default="80x24", help="terminal size, COLSxROWS")


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the measurement a few times and print each figure and the mean."""
    cols, rows = (int(n) for n in args.size.lower().split("x"))
    measure((cols, rows))  # warm the file system cache, not counted
    runs = [measure((cols, rows)) for _ in range(args.runs)]
    for i, (first, table) in enumerate(runs, 1):
        print(f"run {i}: first screen {first * 1000:.0f} ms, table {table * 1000:.0f} ms")
    for label, times in (
        ("first screen drawn", [r[0] for r in runs]),
        ("table drawn", [r[1] for r in runs]),
    ):
        print(
            f"{label}: mean {statistics.mean(times) * 1000:.0f} ms, "
            f"median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
            f"({args.runs} runs, {cols}x{rows})"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m client.loadgen.startup_bench`` (``tulips-loadtest startup``)."""
    parser = argparse.ArgumentParser(prog="python -m client.loadgen.startup_bench")
    add_arguments(parser)
    return run_command(parser.parse_args(argv), parser)


if __name__ == "__main__":
    raise SystemExit(main())
