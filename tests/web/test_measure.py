"""``python -m server.lab.web.measure``, the command README's browser figures come
from, still runs and prints what it promises (numbers are not checked: it is
a measurement, not a test of speed)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from server.lab.web.cdp import chromium_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.soak
def test_measure_prints_memory_and_cpu_of_one_browser_session() -> None:
    """Idle and playing lines with RSS and CPU, and the match moved on."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.lab.web.measure",
            "--idle",
            "1",
            "--play",
            "4",
            "--flood",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    number = r"\d+\.\d"
    for phase in ("idle in the lobby", "playing vs 3 bots", "flooding keys"):
        line = re.search(
            rf"{phase} .* client RSS +{number} MiB \(peak {number}\), CPU +{number} %;"
            rf" tulips-server CPU +{number} %",
            done.stdout,
        )
        assert line, done.stdout
    turn = re.search(r"the match reached turn (\d+)", done.stdout)
    assert turn and int(turn.group(1)) >= 1, done.stdout
    share = re.search(
        rf"one address holds 2 tabs \(share 2\), the next: refused HTTP 503;"
        rf" per tab: client RSS {number} MiB, tulips-server [-+]\d+ KiB",
        done.stdout,
    )
    assert share, done.stdout


@pytest.mark.slow
@pytest.mark.skipif(chromium_path() is None, reason="needs Chromium on PATH")
def test_measure_phone_prints_the_time_to_a_table_and_the_tab_memory() -> None:
    """``--phone``: a phone's page, tapped from Play to a table, and its memory."""
    done = subprocess.run(
        [sys.executable, "-m", "server.lab.web.measure", "--phone", "--play", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(
        r"phone 844x390 \(scale 2\): terminal \d+x\d+ at 1[2-6] px;"
        r" tap on Play to the lobby \d+\.\d\d s",
        done.stdout,
    ), done.stdout
    assert re.search(r"tap on Play to a playable table \(2 more taps\) \d+\.\d\d s", done.stdout)
    for phase in ("at the table", r"after \d+ s, \d+ taps"):
        assert re.search(
            rf"{phase} +client RSS +\d+\.\d MiB; renderer RSS +\d+\.\d MiB,"
            rf" JS heap \d+\.\d MiB used of \d+\.\d",
            done.stdout,
        ), done.stdout
